"""One page of a recorded run's index from its Arrow columns (rollout_trace/artifact/run_table.py), as the
collection index shows any collection (viewer/index/page.py) but without a Python object per row.

A run's index rows are its groups and their rollouts (rollout_trace/artifact/collection.py `run_records`
defines each field; this module computes the same fields over columns): the group rows are aggregated once
per run state, the filters (rollout_trace/artifact/filters.py `Filters`) become one mask over the columns,
a sort is a precomputed order of one column (rows without the value last, ties by path: `sort_records`),
and only the shown page becomes `Record`s. No Gradio here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rollout_trace.artifact.collection import Record
from rollout_trace.artifact.filters import QUERY_KEYS, Filters, from_query, to_query
from rollout_trace.artifact.group import grpo_advantages, reward_spread
from rollout_trace.artifact.run_table import RunTable

from . import render
from .contract import IndexPage
from .page import MAX_CHOICES, PAGE_SIZE, filter_values, model_choices, page_number

# Record fields held as columns of the rows table (the others are the same for every row, or only shown)
_ROLLOUT = {"path": "path", "task_id": "task_id", "title": "title", "reward": "reward", "env_reward": "env_reward",
            "agent_turns": "turns", "trained_turns": "trained_turns", "seed_trained_turns": "seed_trained_turns",
            "tokens": "tokens", "drift": "drift", "drifting_boundaries": "drifting_boundaries",
            "timed_out": "timed_out", "tool_calls": "tool_calls", "captured": "recorded_at", "group": "group_path",
            "rollout": "rollout", "advantage": "advantage", "segment": "segment", "policy_version": "policy_version",
            "group_id": "group_id", "rollout_id": "rollout_id", "status": "status",
            "trained_tokens": "trained_tokens", "trainer_tokens": "trainer_tokens", "trained_step": "trained_step",
            "dropped": "dropped", "tools": "tools"}
_TEXT = pa.string()


def _plain(col: Any) -> pa.ChunkedArray | pa.Array:
    return pc.cast(col, col.type.value_type) if pa.types.is_dictionary(col.type) else col


def _groups(t: RunTable) -> pa.Table:
    """One row per group (`run_records`' group row): aggregated over its rollouts, `first` its first rollout's
    row number in the view."""
    v = t.view()
    known = pc.is_valid(v["path"])
    drift = _plain(v["drift"])
    rows = pa.table({
        "g": v["group_path"], "reward": pc.if_else(pc.is_finite(v["reward"]), v["reward"], None),
        "timed_out": pc.cast(v["timed_out"], pa.int64()),
        "trained_turns": pc.if_else(known, v["trained_turns"], None),
        "seed": pc.if_else(known, pc.fill_null(v["seed_trained_turns"], 0), None),
        "tokens": pc.if_else(known, pc.fill_null(v["tokens"], 0), None),
        "known": pc.cast(known, pa.int64()),
        "unknown_turns": pc.cast(pc.and_(known, pc.is_null(v["trained_turns"])), pa.int64()),
        "drifted": pc.cast(pc.and_(known, pc.equal(drift, "drift")), pa.int64()),
        "trained_tokens": v["trained_tokens"], "trainer_tokens": v["trainer_tokens"],
        "trained_step": v["trained_step"], "row": pa.array(np.arange(len(t), dtype=np.int64))})
    agg = rows.group_by("g", use_threads=False).aggregate([
        ("row", "min"), ("row", "count"), ("reward", "mean"), ("reward", "min"), ("reward", "max"),
        ("timed_out", "max"), ("trained_turns", "max"), ("seed", "max"), ("tokens", "sum"), ("known", "sum"),
        ("unknown_turns", "sum"), ("drifted", "sum"), ("trained_tokens", "sum"), ("trainer_tokens", "sum"), ("trained_step", "min")])
    first = agg["row_min"]
    any_known = pc.greater(agg["known_sum"], 0)
    # why none was trained: its first rollout's that says (`run_records`), none when one was trained
    why = rows.select(["g", "row"]).filter(pc.is_valid(v["dropped"])).group_by("g", use_threads=False).aggregate(
        [("row", "min")])
    at = pc.take(why["row_min"], pc.index_in(agg["g"], why["g"]))
    dropped = pc.if_else(pc.is_valid(agg["trained_step_min"]), pa.scalar(None, _TEXT),
                         _plain(pc.take(v["dropped"], at)))
    return pa.table({
        "kind": pa.array(["group"] * agg.num_rows, _TEXT), "path": agg["g"], "first": first,
        "task_id": _plain(pc.take(v["task_id"], first)), "title": _plain(pc.take(v["title"], first)),
        "reward": agg["reward_mean"], "reward_min": agg["reward_min"], "reward_max": agg["reward_max"],
        "k": agg["row_count"], "timed_out": pc.greater(agg["timed_out_max"], 0),
        # only as known as its rollouts' (`_max_known`)
        "trained_turns": pc.if_else(pc.and_(any_known, pc.equal(agg["unknown_turns_sum"], 0)),
                                    agg["trained_turns_max"], None),
        "seed_trained_turns": agg["seed_max"],
        "tokens": pc.if_else(any_known, agg["tokens_sum"], None),
        "drift": pc.if_else(pc.greater(agg["drifted_sum"], 0), "drift", pc.if_else(any_known, "none", "unknown")),
        "captured": pc.take(v["recorded_at"], first), "segment": _plain(pc.take(v["segment"], first)),
        "policy_version": pc.take(v["policy_version"], first), "group_id": pc.take(v["group_id"], first),
        "trained_tokens": agg["trained_tokens_sum"], "trainer_tokens": agg["trainer_tokens_sum"],
        "trained_step": agg["trained_step_min"], "dropped": dropped})


def rows_table(t: RunTable) -> pa.Table:
    """Every index row of the run (groups and the rollouts that have a folder) as columns, sorted by path:
    `kind`, the Record fields, `row` (a rollout's row number in the view; -1 for a group). Once per state."""
    def make() -> pa.Table:
        v = t.view()
        g = _groups(t)
        keep = pc.is_valid(v["path"])
        art = {"kind": pa.array(["artifact"] * len(t), _TEXT)}
        art.update({field: _plain(v[col]) for field, col in _ROLLOUT.items()})
        art["row"] = pa.array(np.arange(len(t), dtype=np.int64))
        arts = pa.table(art).filter(keep)
        groups = g.drop_columns(["first"]).append_column("row", pa.array(np.full(g.num_rows, -1, np.int64)))
        both = pa.concat_tables([groups, arts], promote_options="permissive")
        return both.take(pc.sort_indices(both, sort_keys=[("path", "ascending")]))
    return t.memo("index_rows", make)


def _order(t: RunTable, rows: pa.Table, sort: str) -> np.ndarray:
    """The rows table's positions sorted as `sort_records` sorts: by path (the table's order), then stably by
    the column, rows without its value (None, NaN) last either way."""
    desc = sort.startswith("-")
    column = sort.lstrip("-")
    if column == "path" or column not in rows.column_names:
        return np.arange(rows.num_rows)[::-1].copy() if desc and column == "path" else np.arange(rows.num_rows)

    def make() -> np.ndarray:
        col = rows[column]
        if pa.types.is_list(col.type):  # as `sort_records` compares tools: joined by commas
            col = pc.binary_join(col, ",")
        if pa.types.is_floating(col.type):
            col = pc.if_else(pc.is_nan(col), None, col)
        return pc.array_sort_indices(col, order="descending" if desc else "ascending").to_numpy()
    return t.memo(f"index_order:{sort}", make)


def _contains(col: Any, needle: str) -> np.ndarray:
    return pc.fill_null(pc.match_substring(col, needle, ignore_case=True), False).to_numpy(zero_copy_only=False)


def _tools_of(t: RunTable, rows: pa.Table, tool: str) -> np.ndarray:
    """Per index row: whether it used `tool` (a group: any of its rollouts)."""
    v = t.view()
    tools = v["tools"].combine_chunks()
    used = np.zeros(len(t), dtype=bool)
    hit = pc.equal(pc.list_flatten(tools), tool).to_numpy(zero_copy_only=False)
    used[pc.list_parent_indices(tools).to_numpy()[hit]] = True
    out = np.zeros(rows.num_rows, dtype=bool)
    row = rows["row"].to_numpy()
    art = row >= 0
    out[art] = used[row[art]]
    groups = set(pc.unique(pc.filter(v["group_path"], pa.array(used))).to_pylist())
    out[~art] = np.isin(rows["path"].to_numpy(zero_copy_only=False)[~art], list(groups))
    return out


def _mask(t: RunTable, rows: pa.Table, f: Filters, model: str) -> np.ndarray | None:
    """The rows passing every filter that is set (`filters.matches`, over columns); None when none is set."""
    n = rows.num_rows
    parts: list[np.ndarray] = []
    if f.model and f.model.casefold() not in model.casefold():
        parts.append(np.zeros(n, dtype=bool))
    if f.task:
        starts = pc.fill_null(pc.starts_with(rows["task_id"], f.task.lower()), False).to_numpy(zero_copy_only=False)
        parts.append(starts | _contains(rows["title"], f.task))
    for name, op in (("reward_min", pc.greater_equal), ("reward_max", pc.less_equal)):
        if getattr(f, name) is not None:
            parts.append(pc.fill_null(op(rows["reward"], getattr(f, name)), False).to_numpy(zero_copy_only=False))
    if f.drift:
        parts.append(pc.fill_null(pc.equal(rows["drift"], f.drift), False).to_numpy(zero_copy_only=False))
    for name, op in (("trained_min", pc.greater_equal), ("trained_max", pc.less_equal)):
        if getattr(f, name) is not None:
            parts.append(pc.fill_null(op(rows["trained_turns"], getattr(f, name)), False)
                         .to_numpy(zero_copy_only=False))
    if f.timed_out is not None:
        parts.append(pc.fill_null(pc.equal(rows["timed_out"], f.timed_out), False).to_numpy(zero_copy_only=False))
    if f.tool:
        parts.append(_tools_of(t, rows, f.tool))
    if f.no_tool:
        parts.append(~_tools_of(t, rows, f.no_tool))
    if f.q:
        parts.append(_contains(rows["title"], f.q) | _contains(rows["task_id"], f.q) | _contains(rows["path"], f.q))
    if f.kind:
        parts.append(pc.equal(rows["kind"], f.kind).to_numpy(zero_copy_only=False))
    if f.valid is False:  # every row of a run's index is read from its index line: valid
        parts.append(np.zeros(n, dtype=bool))
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = out & p
    return out


def _records(t: RunTable, rows: pa.Table, model: str, trl: str) -> list[Record]:
    """The shown rows as `Record`s (`run_records`' fields); a group's per-rollout tuples from its rollouts."""
    picked = rows.to_pylist()
    groups = [r["path"] for r in picked if r["kind"] == "group"]
    members: dict[str, list[dict]] = {}
    if groups:
        _, got = t.page(pc.field("group_path").isin(groups), limit=len(t),
                        columns=["group_path", "rollout", "reward", "advantage", "status", "tools", "dropped",
                                 "path"])
        for m in sorted(got, key=lambda m: m["rollout"]):
            members.setdefault(m["group_path"], []).append(m)
    out = []
    for r in picked:
        fields = {k: r[k] for k in Record.__struct_fields__ if k in r and k not in ("kind", "path")}
        if r["kind"] == "group":
            ms = members.get(r["path"], [])
            rewards = tuple(m["reward"] for m in ms)
            formula = grpo_advantages(list(rewards)) if any(m["advantage"] is None for m in ms) else [0.0] * len(ms)
            trained = r["trained_step"] is not None
            fields.update(
                rewards=rewards, statuses=tuple(m["status"] for m in ms),
                advantages=tuple(m["advantage"] if m["advantage"] is not None else a
                                 for m, a in zip(ms, formula, strict=True)),
                tools=tuple(sorted({x for m in ms for x in m["tools"] or ()})),
                reward=reward_spread(rewards)[2], dropped=None if trained else next(
                    (m["dropped"] for m in ms if m["dropped"]), None))
        else:
            fields["tools"] = tuple(r.get("tools") or ())
        out.append(Record(kind=r["kind"], path=r["path"], valid=True, model=model, trained_by=trl,
                          **{k: v for k, v in fields.items() if v is not None or k == "dropped"}))
    return out


def build_run_page(t: RunTable, src: str, params: Mapping[str, object], serial: int,
                   page_size: int = PAGE_SIZE) -> IndexPage:
    """The index rows of the run in `t` passing the filters in `params` (URL query keys), sorted, one page."""
    filters, notes = from_query({k: v for k, v in params.items() if k in QUERY_KEYS})  # type: ignore[misc]
    m = t.run_files.manifest
    model = m.model if m is not None else ""
    trl = f"TRL {m.versions.get('trl', '?')}" if m is not None else "TRL ?"
    rows = rows_table(t)
    order = _order(t, rows, filters.sort)
    mask = _mask(t, rows, filters, model)
    if mask is not None:
        order = order[mask[order]]
    matched = len(order)
    pages = max(1, -(-matched // page_size))
    page = min(page_number(params), pages - 1)
    shown_at = order[page * page_size:(page + 1) * page_size]
    shown = _records(t, rows.take(pa.array(shown_at, pa.int64())), model, trl)
    tools = t.memo("index_tools", lambda: sorted(x for x in pc.unique(pc.list_flatten(t.table["tools"])).to_pylist()
                                                   if x is not None)[:MAX_CHOICES])
    return IndexPage(
        serial=serial, mode="index", src=src, query=to_query(filters), filters=filter_values(filters),
        sort=filters.sort, page=page, pages=pages, page_size=page_size, total=rows.num_rows, matched=matched,
        first=page * page_size + 1 if len(shown) else 0, shown=len(shown), invalid=0, kind="folder",
        models=model_choices([model] if model else []), tools=tools,
        table_html=render.table([render.index_row(r) for r in shown], filters.sort),
        notes_html=render.notes(t.run_files.notes + notes))
