"""One page of a recorded run's index from its Arrow columns (rollout_trace/artifact/run_table.py), as the
collection index shows any collection (viewer/index/page.py) but without a Python object per row.

A run's index rows are its groups and their rollouts (rollout_trace/artifact/collection.py `run_records`
defines each field; this module computes the same fields over columns): the group rows are aggregated once
per run state, the filters (viewer/index/filters.py `Filters`) become one mask over the columns,
a sort is a precomputed order of one column (rows without the value last, ties by path: `sort_records`),
and only the shown page becomes `Record`s. No Gradio here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rollout_trace.analysis.findings import RULES
from rollout_trace.artifact.collection import Record
from rollout_trace.artifact.group import grpo_advantages, reward_spread
from rollout_trace.artifact.run_columns import NAME_PARTS, filled, has_artifact, name_columns, plain
from rollout_trace.artifact.run_schema import ROLLOUTS
from rollout_trace.artifact.run_table import FATE_COLUMNS, QueuedRow, Reduction, RowOutcome, RunTable, Step, register

from ..find.columns import RunFind, rules_in
from . import render
from .contract import FINDING_KEY, IndexPage
from .filters import QUERY_KEYS, Filters, from_query, to_query
from .page import (
    MAX_CHOICES,
    PAGE_SIZE,
    filter_values,
    finding_filter,
    model_choices,
    page_number,
    with_finding_query,
    with_findings,
)

# Record fields held as columns of the rows table (the others are the same for every row, or only shown)
_ROLLOUT = {"path": "path", "task_id": "task_id", "title": "title", "reward": "reward", "env_reward": "env_reward",
            "agent_turns": "agent_turns", "trained_turns": "trained_turns", "seed_trained_turns": "seed_trained_turns",
            "tokens": "tokens", "drift": "drift", "drifting_boundaries": "drifting_boundaries",
            "timed_out": "timed_out", "tool_calls": "tool_calls", "captured": "recorded_at", "group": "group",
            "rollout": "rollout", "advantage": "advantage", "segment": "segment", "policy_version": "policy_version",
            "group_id": "group_id", "rollout_id": "rollout_id", "status": "status",
            "trained_tokens": "trained_tokens", "trainer_tokens": "trainer_tokens", "trained_step": "trained_step",
            "dropped": "dropped", "tools": "tools"}
_TEXT = pa.string()
_GROUP_READS = ["reward", "timed_out", "agent_turns", "trained_turns", "seed_trained_turns", "tokens", "drift",
                "trained_tokens", "task_id", "title", "recorded_at", "segment", "policy_version", "group_id",
                *FATE_COLUMNS]
_FIRST = ("task_id", "title", "recorded_at", "segment", "policy_version", "group_id")  # a group's first rollout's
# each group's numbers over its rollouts, as partial aggregates (one per shard) that add up across shards
_SUMS = ("count", "reward_count", "reward_sum", "tokens", "known", "unknown_turns", "drifted", "trained_tokens",
         "trainer_tokens")
_MINS = ("row", "reward_min", "trained_step")
_MAXES = ("reward_max", "timed_out", "trained_turns", "seed")


def _partial(keys: np.ndarray, start: int, part: pa.Table) -> tuple[pa.Table, pa.Table]:
    """One shard's groups (rows `start`... of the view): each group's partial aggregates with its first
    rollout's fields, and (group, row, why) for its first rollout none of whose rows was trained."""
    n = part.num_rows
    rows_at = np.arange(start, start + n, dtype=np.int64)
    f = part  # its rollouts' fates: FATE_COLUMNS, made in the same pass (RunTable.reduced)
    known = has_artifact(part)  # a rollout with an artifact (the one with a path)
    reward = pc.if_else(pc.is_finite(part["reward"]), part["reward"], None)
    rows = pa.table({
        "g": keys[start:start + n], "reward": reward, "reward_n": pc.cast(pc.is_valid(reward), pa.int64()),
        "timed_out": pc.cast(part["timed_out"], pa.int64()),
        "trained_turns": pc.if_else(known, part["trained_turns"], None),
        "seed": pc.if_else(known, pc.fill_null(part["seed_trained_turns"], 0), None),
        "tokens": pc.if_else(known, pc.fill_null(part["tokens"], 0), None),
        "known": pc.cast(known, pa.int64()),
        "unknown_turns": pc.cast(pc.and_(known, pc.is_null(part["trained_turns"])), pa.int64()),
        "drifted": pc.cast(pc.and_(known, pc.equal(plain(part["drift"]), "drift")), pa.int64()),
        "trained_tokens": part["trained_tokens"], "trainer_tokens": f["trainer_tokens"],
        "trained_step": f["trained_step"], "row": rows_at})
    agg = rows.group_by("g", use_threads=False).aggregate([
        ("row", "min"), ("row", "count"), ("reward_n", "sum"), ("reward", "sum"), ("reward", "min"),
        ("reward", "max"), ("timed_out", "max"), ("trained_turns", "max"), ("seed", "max"), ("tokens", "sum"),
        ("known", "sum"), ("unknown_turns", "sum"), ("drifted", "sum"), ("trained_tokens", "sum"),
        ("trainer_tokens", "sum"), ("trained_step", "min")])
    at = pc.subtract(agg["row_min"], start)
    out = {"g": agg["g"], "row": agg["row_min"], "count": agg["row_count"], "reward_count": agg["reward_n_sum"],
           "reward_sum": agg["reward_sum"], "reward_min": agg["reward_min"], "reward_max": agg["reward_max"],
           "timed_out": agg["timed_out_max"], "trained_turns": agg["trained_turns_max"], "seed": agg["seed_max"],
           "tokens": agg["tokens_sum"], "known": agg["known_sum"], "unknown_turns": agg["unknown_turns_sum"],
           "drifted": agg["drifted_sum"], "trained_tokens": agg["trained_tokens_sum"],
           "trainer_tokens": agg["trainer_tokens_sum"], "trained_step": agg["trained_step_min"],
           **{c: plain(pc.take(part[c], at)) for c in _FIRST}}
    why = pa.table({"g": rows["g"], "row": rows_at, "dropped": plain(f["dropped"])}).filter(pc.is_valid(f["dropped"]))
    return pa.table(out), why


def _firsts(t: pa.Table, by: str) -> pa.Table:
    """Each group's row of `t` (one or more per group) with the least `by`."""
    t = t.sort_by([("g", "ascending"), (by, "ascending")])
    g = t["g"].to_numpy()
    return t.take(pa.array(np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.zeros(0, np.int64)))


def _group_partials(t: RunTable) -> tuple[Step, Callable[[], pa.Table]]:
    """The run's groups shard by shard (a reduction, `RunTable.reduced`): every shard's partial aggregates of its
    groups and each group's first rollout none of whose rows was trained, added up once every shard was read
    (`_added`); the partials are let go."""
    keys = t.group_keys()
    partials: list[pa.Table] = []
    whys: list[pa.Table] = []

    def step(start: int, part: pa.Table) -> None:
        got, why = _partial(keys, start, part)
        partials.append(got)
        whys.append(_firsts(why, "row"))

    def finish() -> pa.Table:
        if not partials:
            partials.append(_partial(keys, 0, pa.table({c: pa.array([], ROLLOUTS.field(c).type if c in ROLLOUTS.names
                                                                     else FATE_COLUMNS[c]) for c in _GROUP_READS}))[0])
        why = _firsts(pa.concat_tables(whys, promote_options="permissive"), "row") if whys else None
        every = pa.concat_tables(partials)
        partials.clear()
        return _added(every, why)

    return step, finish


def _added(every: pa.Table, why: pa.Table | None) -> pa.Table:
    """One row per group, in number order, from the shards' partial aggregates (`_partial`) and each group's first
    rollout none of whose rows was trained: what the run keeps of its groups (one copy: the index's group rows
    are made from its columns, `_groups`)."""
    if len(np.unique(every["g"].to_numpy())) == every.num_rows:  # the usual case: a group is in one shard
        agg = every.sort_by("g")
    else:  # a group's rollouts in more than one shard: its partial aggregates added up
        first = _firsts(every, "row")
        added = every.group_by("g", use_threads=False).aggregate(
            [(c, "sum") for c in _SUMS] + [(c, "min") for c in _MINS] + [(c, "max") for c in _MAXES]).sort_by("g")
        agg = pa.table({"g": added["g"], **{c: added[f"{c}_{op}"] for op, names in
                                            (("sum", _SUMS), ("min", _MINS), ("max", _MAXES)) for c in names},
                        **{c: first[c] for c in _FIRST}})
    # why none was trained: its first rollout's that says (`run_records`), none when one was trained
    dropped = pa.nulls(agg.num_rows, _TEXT) if why is None or not why.num_rows else \
        pc.take(pc.cast(why["dropped"], _TEXT), pc.index_in(agg["g"], why["g"]))
    return agg.append_column("dropped", pc.if_else(pc.is_valid(agg["trained_step"]), pa.scalar(None, _TEXT), dropped))


def _tool_names(t: RunTable) -> tuple[Step, Callable[[], list[str]]]:
    """The tool names the run's rollouts used (the tools filter's choices), shard by shard (a reduction)."""
    names: set[str] = set()

    def step(start: int, part: pa.Table) -> None:
        names.update(x for x in pc.unique(pc.list_flatten(part["tools"])).to_pylist() if x is not None)

    return step, lambda: sorted(names)[:MAX_CHOICES]


register("index_groups", Reduction(tuple(_GROUP_READS), _group_partials))
register("index_tools", Reduction(("tools",), _tool_names))


def _groups(t: RunTable) -> pa.Table:
    """One row per group (`run_records`' group row): aggregated over its rollouts (keyed by number: its segment's
    and its id), `first` its first rollout's row number in the view, `key` its number. Shard by shard: only the
    groups' numbers are kept, never a column of every rollout's text."""
    agg = t.reduced("index_groups")
    first = agg["row"]
    any_known = pc.greater(agg["known"], 0)
    mean = pc.if_else(pc.greater(agg["reward_count"], 0), pc.divide(agg["reward_sum"], pc.cast(agg["reward_count"],
                                                                                              pa.float64())), None)
    return pa.table({
        "kind": pa.array(["group"] * agg.num_rows, _TEXT), "path": t.take(first.to_numpy(), ["group"])["group"],
        "first": first, "key": agg["g"], "task_id": agg["task_id"], "title": agg["title"],
        "reward": mean, "reward_min": agg["reward_min"], "reward_max": agg["reward_max"],
        "k": agg["count"], "timed_out": pc.greater(agg["timed_out"], 0),
        # only as known as its rollouts' (`_max_known`)
        "trained_turns": pc.if_else(pc.and_(any_known, pc.equal(agg["unknown_turns"], 0)), agg["trained_turns"], None),
        "seed_trained_turns": agg["seed"],
        "tokens": pc.if_else(any_known, agg["tokens"], None),
        "drift": pc.if_else(pc.greater(agg["drifted"], 0), "drift", pc.if_else(any_known, "none", "unknown")),
        "captured": agg["recorded_at"], "segment": agg["segment"], "policy_version": agg["policy_version"],
        "group_id": agg["group_id"], "trained_tokens": agg["trained_tokens"], "trainer_tokens": agg["trainer_tokens"],
        "trained_step": agg["trained_step"], "dropped": agg["dropped"]})


@dataclass(frozen=True)
class RunIndex:
    """A run's index rows in its order (each group, then its rollouts with an artifact: the order of their names,
    `sort_records`' base order) without copying a column: each row is a group (`src` 0, `at` its row in
    `groups`) or a rollout (`src` 1, `at` its row in the view); `group` is each row's group's row in `groups`."""

    groups: pa.Table
    src: np.ndarray
    at: np.ndarray
    group: np.ndarray

    def __len__(self) -> int:
        return len(self.src)


def run_index(t: RunTable) -> RunIndex:
    """The index rows of the run in `t`, once per run state: ordered by number (segment, version, group id, the
    group before its rollouts, rollout index), the order their names sort in, without making a name per row."""
    def make() -> RunIndex:
        groups = _groups(t)
        keys = t.group_keys()
        art = np.flatnonzero(t.has_artifact().to_numpy(zero_copy_only=False))
        gkeys = groups["key"].to_numpy()  # sorted (`_groups`)
        version = groups["policy_version"].to_numpy(zero_copy_only=False)
        r_group = np.searchsorted(gkeys, keys[art]) if len(gkeys) else np.zeros(0, np.int64)
        rollout = pc.fill_null(t.column("rollout"), 0).to_numpy(zero_copy_only=False)[art]
        n = len(gkeys)
        order = _in_order(gkeys, version, r_group, rollout)
        if order is None:
            # each index row: (segment, version, group id, 0 for the group and 1 + index for a rollout)
            g_rows = (gkeys >> 40, version, gkeys & (2**40 - 1), np.zeros(len(gkeys), np.int64))
            r_rows = (gkeys[r_group] >> 40, version[r_group], gkeys[r_group] & (2**40 - 1), rollout + 1)
            cols = [np.concatenate([a, b]).astype(np.int64) for a, b in zip(g_rows, r_rows, strict=True)]
            order = np.lexsort(cols[::-1])
        src = (order >= n).astype(np.int8)
        # row numbers in 32 bits: each of these is an index row's worth (a million rollouts and their groups)
        at = np.where(src == 0, order, art[np.maximum(order - n, 0)]).astype(np.int32)
        group = np.where(src == 0, order, r_group[np.maximum(order - n, 0)]).astype(np.int32)
        return RunIndex(groups=groups, src=src, at=at, group=group)
    return t.memo("index_rows", make)


def _in_order(gkeys: np.ndarray, version: np.ndarray, r_group: np.ndarray, rollout: np.ndarray) -> np.ndarray | None:
    """The index rows' order (groups 0..n-1, then rollouts n...) without a sort when the run's rows already lie in
    it, as a recorder writes them: the groups (in number order) in version order within each segment, the rollouts
    by group and index. Then each group's row is followed by its rollouts'. None when they do not lie so."""
    n, m = len(gkeys), len(r_group)
    same_segment = (gkeys[1:] >> 40) == (gkeys[:-1] >> 40)
    if np.any(same_segment & (version[1:] < version[:-1])):
        return None
    step = np.diff(r_group)
    if np.any(step < 0) or np.any(np.diff(rollout)[step == 0] <= 0):
        return None
    counts = np.bincount(r_group, minlength=n) if m else np.zeros(n, np.int64)
    at = np.arange(n) + np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)  # each group's row's place
    order = np.empty(n + m, np.int64)
    order[at] = np.arange(n)
    rest = np.ones(n + m, dtype=bool)
    rest[at] = False
    order[rest] = n + np.arange(m)
    return order


def _values(t: RunTable, ix: RunIndex, name: str) -> pa.ChunkedArray | None:
    """The Record field `name` of every index row, in path order; None when the run's rows do not hold it."""
    view_name = _ROLLOUT.get(name)
    if name not in ix.groups.column_names and view_name is None:
        return None
    v = t.view()
    kind = ix.groups[name].type if name in ix.groups.column_names or view_name is None else plain(v[view_name]).type
    g = ix.groups[name] if name in ix.groups.column_names else pa.nulls(ix.groups.num_rows, kind)
    a = plain(v[view_name]) if view_name is not None else pa.nulls(len(t), kind)
    parts = [pc.cast(x, kind) for x in (g, a)]
    both = pa.chunked_array([c for x in parts for c in (x.chunks if isinstance(x, pa.ChunkedArray) else [x])], kind)
    return both.take(pa.array(np.where(ix.src == 0, ix.at, ix.at + ix.groups.num_rows)))


def _order(t: RunTable, ix: RunIndex, sort: str) -> np.ndarray:
    """The index rows sorted as `sort_records` sorts: by path (the index's order), then stably by the column,
    rows without its value (None, NaN) last either way. Once per run state and sort."""
    desc = sort.startswith("-")
    column = sort.lstrip("-")
    if column == "path":
        return np.arange(len(ix))[::-1].copy() if desc else np.arange(len(ix))

    def make() -> np.ndarray:
        col = _values(t, ix, column) if column in Record.__struct_fields__ else None
        if col is None:
            return np.arange(len(ix))
        if pa.types.is_list(col.type):  # as `sort_records` compares tools: joined by commas
            col = pc.binary_join(col, ",")
        if pa.types.is_floating(col.type):
            col = pc.if_else(pc.is_nan(col), None, col)
        return pc.array_sort_indices(col, order="descending" if desc else "ascending").to_numpy().astype(np.int64)
    return t.memo(f"index_order:{sort}", make)


def _bool(got: Any) -> np.ndarray:
    return pc.fill_null(got, False).to_numpy(zero_copy_only=False).astype(bool)


def _text(col: Any, test) -> np.ndarray:
    """`test` (a string kernel) of every value of `col`; of a dictionary-encoded column's few distinct values
    only, spread over its rows by their indices (never decoding the column)."""
    if isinstance(col, pa.ChunkedArray) and pa.types.is_dictionary(col.type):
        parts = [_bool(test(c.dictionary)).take(pc.fill_null(c.indices, 0).to_numpy()) if len(c.dictionary)
                 else np.zeros(len(c), dtype=bool) for c in col.chunks]
        got = np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
        return got & pc.is_valid(col).to_numpy(zero_copy_only=False)
    return _bool(test(col))


def _contains(col: Any, needle: str) -> np.ndarray:
    return _text(col, lambda c: pc.match_substring(c, needle, ignore_case=True))


class _Sides:
    """One filter over both kinds of index row: `test(columns)` on the groups' and on the rollouts' columns
    (by Record field), joined into one mask in the index's order."""

    def __init__(self, t: RunTable, ix: RunIndex):
        self.t, self.ix, self.v = t, ix, t.view()

    def group(self, name: str) -> Any:
        g = self.ix.groups
        return g[name] if name in g.column_names else pa.nulls(g.num_rows)

    def rollout(self, name: str) -> Any:
        return self.v[_ROLLOUT[name]] if name in _ROLLOUT else pa.nulls(len(self.t))

    def mask(self, gmask: np.ndarray, amask: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self.ix), dtype=bool)
        groups = self.ix.src == 0
        out[groups] = gmask[self.ix.at[groups]]
        out[~groups] = amask[self.ix.at[~groups]]
        return out

    def test(self, fn) -> np.ndarray:
        return self.mask(fn(self.group), fn(self.rollout))


def _tools_mask(sides: _Sides, tool: str) -> np.ndarray:
    """Whether each index row used `tool` (a group: any of its rollouts, found by the groups' numbers)."""
    tools = sides.v["tools"].combine_chunks()
    used = np.zeros(len(sides.t), dtype=bool)
    hit = _bool(pc.equal(pc.list_flatten(tools), tool))
    used[pc.list_parent_indices(tools).to_numpy()[hit]] = True
    return sides.mask(np.isin(sides.ix.groups["key"].to_numpy(), sides.t.group_keys()[used]), used)


def _names_of(t: RunTable, rows: np.ndarray) -> dict[str, Any]:
    """The `group` and `path` names of the rows `rows`, a path made whether or not the rollout has its files."""
    got = t.take(rows, list(NAME_PARTS))
    return name_columns({**{c: got[c] for c in NAME_PARTS}, "agent_turns": pa.array(np.zeros(len(rows), np.int64))})


def _paths_containing(t: RunTable, needle: str) -> np.ndarray:
    """Which rollouts' paths hold `needle` (ignoring case), as `_contains` of their path column says, without a path
    made for each of the run's rollouts (~100 MB at a million): a path is its group's name then its own ending
    ("/rollout-NN"), so the needle is looked for in each group's name, in each distinct ending, and across the two
    (a suffix of the name, then a prefix of the ending)."""
    if not len(t):
        return np.zeros(0, dtype=bool)
    keys, version = t.group_keys(), filled(t.column("policy_version"), -1)
    # a group's rows side by side, as recorded: each run of one group (and version) named once
    change = np.r_[True, (keys[1:] != keys[:-1]) | (version[1:] != version[:-1])]
    of_name = np.cumsum(change) - 1
    names = _names_of(t, np.flatnonzero(change))["group"]
    _, first, of_end = np.unique(filled(t.column("rollout"), 0), return_index=True, return_inverse=True)
    made = _names_of(t, first)  # one rollout of each index: its path's ending after its group's name
    endings = pa.array([p[len(g):] for p, g in zip(made["path"].to_pylist(), made["group"].to_pylist(), strict=True)],
                       pa.string())
    hit = _bool(pc.match_substring(names, needle, ignore_case=True))[of_name] | \
        _bool(pc.match_substring(endings, needle, ignore_case=True))[of_end]
    for k in range(1, len(needle)):  # a needle is at most 200 characters (filters.py): a pass over the names each
        tail = _bool(pc.ends_with(names, needle[:k], ignore_case=True))
        if not tail.any():
            continue
        head = _bool(pc.starts_with(endings, needle[k:], ignore_case=True))
        if head.any():
            hit |= tail[of_name] & head[of_end]
    return hit & t.has_artifact().to_numpy(zero_copy_only=False)


def _mask(t: RunTable, ix: RunIndex, f: Filters, model: str) -> np.ndarray | None:
    """The index rows passing every filter that is set (`filters.matches`, over columns); None when none is."""
    n = len(ix)
    s = _Sides(t, ix)
    parts: list[np.ndarray] = []
    if f.model and f.model.casefold() not in model.casefold():
        parts.append(np.zeros(n, dtype=bool))
    if f.task:
        task = f.task
        parts.append(s.test(lambda c: _text(c("task_id"), lambda x: pc.starts_with(x, task.lower()))
                            | _contains(c("title"), task)))
    for name, op in (("reward_min", pc.greater_equal), ("reward_max", pc.less_equal),
                     ("trained_min", pc.greater_equal), ("trained_max", pc.less_equal)):
        x = getattr(f, name)
        if x is not None:
            field = "reward" if name.startswith("reward") else "trained_turns"
            parts.append(s.test(lambda c, op=op, x=x, field=field: _bool(op(c(field), x))))
    if f.drift:
        drift = f.drift
        parts.append(s.test(lambda c: _text(c("drift"), lambda x: pc.equal(x, drift))))
    if f.timed_out is not None:
        timed_out = f.timed_out
        parts.append(s.test(lambda c: _bool(pc.equal(c("timed_out"), timed_out))))
    if f.tool:
        parts.append(_tools_mask(s, f.tool))
    if f.no_tool:
        parts.append(~_tools_mask(s, f.no_tool))
    if f.q:
        q = f.q

        def texts(c: Callable[[str], Any]) -> np.ndarray:
            return _contains(c("title"), q) | _contains(c("task_id"), q)
        parts.append(s.mask(texts(s.group) | _contains(s.group("path"), q), texts(s.rollout) | _paths_containing(t, q)))
    if f.kind:
        parts.append(ix.src == (0 if f.kind == "group" else 1) if f.kind != "run" else np.zeros(n, dtype=bool))
    if f.valid is False:  # every row of a run's index is read from its index line: valid
        parts.append(np.zeros(n, dtype=bool))
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = out & p
    return out


def _members(t: RunTable, ix: RunIndex, groups: np.ndarray) -> np.ndarray:
    """The row numbers of the rollouts of the index's groups `groups` (rows of `ix.groups`), in run order: one
    test of the run's group numbers."""
    if not len(groups):
        return np.zeros(0, np.int64)
    keys = ix.groups["key"].to_numpy()[groups]
    return np.flatnonzero(np.isin(t.group_keys(), keys))


def _records(t: RunTable, ix: RunIndex, shown: np.ndarray, model: str, trl: str) -> list[Record]:
    """The shown index rows as `Record`s (`run_records`' fields); a group's per-rollout tuples from its rollouts."""
    groups_at = ix.src[shown] == 0
    found = iter(ix.groups.take(pa.array(ix.at[shown][groups_at])).to_pylist())
    rollouts = iter(t.take(ix.at[shown][~groups_at], sorted(set(_ROLLOUT.values()))).to_pylist())
    picked: list[dict] = []
    for is_group in groups_at.tolist():
        if is_group:
            picked.append({"kind": "group", **next(found)})
        else:
            row = next(rollouts)
            picked.append({"kind": "artifact", **{field: row[col] for field, col in _ROLLOUT.items()}})
    members: dict[str, list[dict]] = {}
    rows = _members(t, ix, ix.at[shown][groups_at])
    if len(rows):
        got = t.take(rows, ["group", "rollout", "reward", "advantage", "status", "tools", "dropped", "path"]).to_pylist()
        for m in sorted(got, key=lambda m: m["rollout"]):
            members.setdefault(m["group"], []).append(m)
    out = []
    for r in picked:
        fields = {k: r[k] for k in Record.__struct_fields__ if k in r and k not in ("kind", "path")}
        if r["kind"] == "group":
            ms = members.get(r["path"], [])
            rewards = tuple(m["reward"] for m in ms)
            formula = grpo_advantages(list(rewards)) if any(m["advantage"] is None for m in ms) else [0.0] * len(ms)
            fields.update(
                rewards=rewards, statuses=tuple(m["status"] for m in ms),
                advantages=tuple(m["advantage"] if m["advantage"] is not None else a
                                 for m, a in zip(ms, formula, strict=True)),
                tools=tuple(sorted({x for m in ms for x in m["tools"] or ()})), reward=reward_spread(rewards)[2])
        else:
            fields["tools"] = tuple(r.get("tools") or ())
        out.append(Record(kind=r["kind"], path=r["path"], valid=True, model=model, trained_by=trl,
                          **{k: v for k, v in fields.items() if v is not None}))
    return out


def _queued(t: RunTable, ix: RunIndex, shown: np.ndarray,
            records: list[Record]) -> list[Sequence[QueuedRow] | Sequence[RowOutcome]]:
    """Each shown index row's TRL rows with their fates: a rollout's (`QueuedRow`), a group's rollouts' in rollout
    order (only what became of each, `RowOutcome`: a page of 50 groups of 64 is tens of thousands of rows). The
    fate column reads them (viewer/fate.py)."""
    groups_at = ix.src[shown] == 0
    own = ix.at[shown]
    members = _members(t, ix, own[groups_at])
    q = t.queued(own[~groups_at].tolist())
    outcomes = t.outcomes(members.tolist())
    of_group: dict[str, list[RowOutcome]] = {}
    for m, g in zip(members.tolist(), t.take(members, ["group"])["group"].to_pylist(), strict=True):
        of_group.setdefault(g, []).extend(outcomes.get(m, []))
    return [of_group.get(r.path, []) if g else q.get(int(a), [])
            for r, g, a in zip(records, groups_at.tolist(), own.tolist(), strict=True)]


def _bits(ix: RunIndex, find: RunFind) -> np.ndarray:
    """Every index row's finding rules as bits: a rollout's own, a group's every rule of any of its rollouts."""
    rows = find.row_bits()
    out = np.zeros(len(ix), rows.dtype)
    rollout = ix.src == 1
    out[rollout] = rows[ix.at[rollout]]
    per_group = np.zeros(ix.groups.num_rows, rows.dtype)
    np.bitwise_or.at(per_group, ix.group[rollout], out[rollout])
    out[~rollout] = per_group[ix.at[~rollout]]
    return out


def build_run_page(t: RunTable, src: str, params: Mapping[str, object], serial: int,
                   page_size: int = PAGE_SIZE, find: RunFind | None = None) -> IndexPage:
    """The index rows of the run in `t` passing the filters in `params` (URL query keys), sorted, one page;
    `find`: the run's findings (its column: viewer/find/columns.py), for the findings column and filter."""
    filters, notes = from_query({k: v for k, v in params.items() if k in QUERY_KEYS})  # type: ignore[misc]
    m = t.run_files.manifest
    model = m.model if m is not None else ""
    trl = f"TRL {m.versions.get('trl', '?')}" if m is not None else "TRL ?"
    ix = run_index(t)
    order = _order(t, ix, filters.sort)
    mask = _mask(t, ix, filters, model)
    if mask is not None:
        order = order[mask[order]]
    bits = t.memo("index_bits", lambda: _bits(ix, find)) if find is not None else None  # once per snapshot
    rules = find.present() if find is not None else []
    want, note = finding_filter(params.get(FINDING_KEY), {} if bits is not None else None, rules)
    notes = [*notes, note] if note else notes
    if want and bits is not None and len(order):
        picked = bits[order]
        keep = picked == 0 if want == "none" else picked != 0 if want == "any" else \
            (picked >> list(RULES).index(want)) & 1 == 1
        order = order[keep]
    matched = len(order)
    groups = int(np.count_nonzero(ix.src[order] == 0))
    pages = max(1, -(-matched // page_size))
    page = min(page_number(params), pages - 1)
    at = order[page * page_size:(page + 1) * page_size]
    shown = _records(t, ix, at, model, trl)
    queued = _queued(t, ix, at, shown)
    known: dict[str, Sequence[str]] | None = None if bits is None else {
        r.path: rules_in(int(b)) for r, b in zip(shown, bits[at].tolist(), strict=True)}
    tools = t.reduced("index_tools")
    return IndexPage(
        serial=serial, mode="index", src=src, query=with_finding_query(to_query(filters), want),
        filters={**filter_values(filters), **({FINDING_KEY: want} if want else {})},
        sort=filters.sort, page=page, pages=pages, page_size=page_size, total=len(ix), matched=matched,
        unlisted=len(t) - (len(ix) - ix.groups.num_rows),
        matched_groups=groups,
        first=page * page_size + 1 if len(shown) else 0, shown=len(shown), invalid=0, kind="folder",
        models=model_choices([model] if model else []), tools=tools,
        table=render.table([with_findings(render.index_row(r, q), known) for r, q in zip(shown, queued, strict=True)],
                           run=True),
        notes=render.notes(t.notes + notes), findings_known=bits is not None, finding_rules=rules)
