"""A recorded run's index as Arrow columns: read from its JSONL files, queried in place, cached per run state.

The recorder's JSONL stays the written format (rollout_trace/artifact/run_format.py: what `datasets` reads,
what a crash leaves whole). For a run of 10^5-10^6 rollouts, decoding every line into Python objects costs
seconds and gigabytes per open; here Arrow's multi-threaded JSON reader turns each index file into typed
columns (one explicit schema, only the columns a page asks about, text dictionary-encoded; each chunk of a
file read once into one buffer and parsed in place, the next chunk read and parsed while this one is shaped),
and queries run in Arrow's compute kernels:

    t = run_table("runs/my-run")                 # cached per run state: a second open is a lookup
    t.per_version("reward")                      # one row per policy version: count, sum, min, max, mean
    t.page(pc.field("reward") > 0.5, sort=[("reward", "descending")], offset=0, limit=50)
    t.follow()                                   # the grown tails only; True when something was read
    per_version("runs/my-run", "timed_out", ("sum", "count"))   # the same as plain rows, for other modules

Per-version aggregates are computed once per state and, when the run grows, again only for the versions
the new lines touch. A line file truncated or rewritten (not appended to) is read again whole. A file
that Arrow cannot parse (a bad line) is read line by line with the run format's own decoder instead, so a
bad line costs speed, not the rows around it; `rollout_trace.artifact.run.read_run` names the bad lines.

Local folders only (a zip or a Hub run is read by `open_run`); no Gradio, no pages here.
"""

from __future__ import annotations

import os
import posixpath
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from .errors import RolloutTraceError
from .problems import Problem
from .run import MAX_LINE_FILE_BYTES, QueuedRow, RunSegment, _lines, _one
from .run_format import (
    CONSUMED_DIR,
    INDEX_DIR,
    MANIFEST,
    RESCORED_DIR,
    SEGMENTS_DIR,
    ConsumptionEnd,
    IndexEntry,
    Rescored,
    RunManifest,
    SegmentEnd,
    SegmentStart,
)

# The index columns held, with their Arrow types (IndexEntry's fields of one value; `rows` as its length).
COLUMNS: dict[str, pa.DataType] = {
    "segment": pa.string(), "policy_version": pa.int64(), "group_id": pa.int64(), "rollout": pa.int64(),
    "rollout_id": pa.string(), "group_path": pa.string(), "path": pa.string(), "status": pa.string(),
    "cause": pa.string(), "reward": pa.float64(), "env_reward": pa.float64(), "advantage": pa.float64(),
    "trained_tokens": pa.int64(), "task_id": pa.string(), "title": pa.string(), "dataset_index": pa.int64(),
    "turns": pa.int64(), "tokens": pa.int64(), "drift": pa.string(), "timed_out": pa.bool_(),
    "tool_calls": pa.int64(), "recorded_at": pa.string(), "trained_turns": pa.int64(),
    "seed_trained_turns": pa.int64(), "drifting_boundaries": pa.int64(), "problem": pa.string(),
    "tools": pa.list_(pa.string()),
}
_ROW = pa.struct([("ordinal", pa.int64()), ("tokens", pa.int64()), ("trained_tokens", pa.int64()),
                  ("turns", pa.list_(pa.int64()))])
_ORDINALS = pa.schema([("segment", pa.string()), ("ordinal", pa.int64()), ("entry", pa.int64()),
                       ("tokens", pa.int64()), ("trained_tokens", pa.int64()), ("turns", pa.list_(pa.int64()))])
_SCHEMA = pa.schema([*COLUMNS.items(), ("rows", pa.list_(_ROW))])
_CONSUMED = pa.schema([("segment", pa.string()), ("ordinal", pa.int64()), ("fate", pa.string()),
                      ("step", pa.int64())])
# What the consumption log says of each rollout (run.py's join, in Arrow): `trained_step` the first step a row
# of it was trained at, `trainer_tokens` its trained rows' tokens, `dropped` why none was (None: one was).
FATE_COLUMNS: dict[str, pa.DataType] = {"trained_step": pa.int64(), "trainer_tokens": pa.int64(),
                                        "dropped": pa.string()}
_TEXT = ("segment", "status", "cause", "task_id", "title", "drift", "problem")  # few distinct values: dictionary-encoded
AGGREGATES = ("count", "sum", "min", "max", "mean")
MAX_TABLES = 4  # run states kept (each holds its columns)
BLOCK_BYTES = 2**20  # measured: 1 MB blocks parse faster than 4 or 16 MB (more of them run at once)
CHUNK_BYTES = 64 * 2**20  # read and parsed at a time: memory is the columns, not the file
MARK_BYTES = 64
_T = TypeVar("_T")


class RunTableError(RolloutTraceError, ValueError):
    """A folder that is not a run (no index/), or a column a query names that the table does not hold."""


def _empty(schema: pa.Schema) -> pa.Table:
    """No rows of `schema` (Schema.empty_table imports pandas: a second on the first open)."""
    return pa.Table.from_batches([], schema)


def _parse(data: memoryview, schema: pa.Schema) -> pa.Table:
    """JSON lines -> a table of `schema`; a file Arrow rejects is decoded line by line, bad lines left out.
    `data` is read in place (a view of the chunk read, no copy of it), whitespace only is no table."""
    if not data or (bytes(data[:256]).isspace() and bytes(data).isspace()):
        return _empty(schema)
    try:
        return pj.read_json(pa.BufferReader(pa.py_buffer(data)), read_options=pj.ReadOptions(block_size=BLOCK_BYTES),
                            parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    keep = [f.name for f in schema]
    decoder = msgspec.json.Decoder(IndexEntry) if "policy_version" in keep else None
    rows = []
    for line in bytes(data).split(b"\n"):
        if not line.strip():
            continue
        try:
            got = msgspec.to_builtins(decoder.decode(line)) if decoder is not None else msgspec.json.decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError):
            continue
        if isinstance(got, dict):
            rows.append({k: got.get(k) for k in keep})
    try:
        return pa.Table.from_pylist(rows, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return _empty(schema)


_NAME = r"[A-Za-z0-9_.-]+"  # sources.py `subfolder_ok`'s part, ASCII; "." and ".." are refused apart
MAX_PROBLEMS = 20  # lines left out that are named one by one


def _inside(raw: pa.Table, name: str, problems: list[Problem]) -> pa.Table:
    """`raw` without the lines whose folders lie outside the run's groups (run.py `_inside`, over columns: an
    index line is data, it may name only `groups/<name>` and, for a rollout, `<its group>/<name>`)."""
    if not raw.num_rows:
        return raw
    group, path = raw["group_path"], raw["path"]
    ok = pc.and_(pc.match_substring_regex(group, rf"^groups/{_NAME}$"),
                 pc.invert(pc.match_substring_regex(group, r"^groups/\.\.?$")))
    # one anchored pass splits a rollout's path into its group and its name (no match: null, left out)
    parts = pc.extract_regex(path, rf"^(?P<g>groups/{_NAME})/(?P<r>{_NAME})$")
    inner = pc.and_(pc.equal(pc.struct_field(parts, "g"), group),
                    pc.invert(pc.is_in(pc.struct_field(parts, "r"), value_set=pa.array([".", ".."]))))
    keep = pc.fill_null(pc.and_kleene(ok, pc.or_kleene(pc.is_null(path), inner)), False)
    if pc.all(keep).as_py():
        return raw
    bad = raw.filter(pc.invert(keep)).select(["group_id", "rollout", "group_path", "path"]).to_pylist()
    for x in bad[:MAX_PROBLEMS - len(problems)] if len(problems) < MAX_PROBLEMS else []:
        found = x["path"] if x["path"] is not None and x["group_path"] is not None and \
            x["path"] != x["group_path"] else x["group_path"]
        problems.append(Problem(name, "a rollout's folder lies outside the run's groups",
                                field=f"group {x['group_id']} rollout {x['rollout']}",
                                expected="groups/<group>[/<rollout>]", found=repr(str(found)[:80])))
    return raw.filter(keep)


def _shape(raw: pa.Table) -> pa.Table:
    """The held columns: `rows` becomes `n_rows`, text with few values dictionary-encoded."""
    cols = {name: raw[name] for name in COLUMNS}
    for name in _TEXT:
        cols[name] = pc.dictionary_encode(cols[name])
    cols["n_rows"] = pc.fill_null(pc.list_value_length(raw["rows"]), 0)
    return pa.table(cols).combine_chunks()  # one chunk per CHUNK_BYTES read, not one per JSON block


def _ordinals(raw: pa.Table, first: int) -> pa.Table:
    """(segment, ordinal, entry): one row per TRL row of each entry, `entry` its position in the whole table."""
    lengths = pc.fill_null(pc.list_value_length(raw["rows"]), 0)
    parents = pc.list_parent_indices(raw["rows"])
    flat = pc.list_flatten(raw["rows"])
    if not len(lengths):
        return _empty(_ORDINALS)
    return pa.table({"segment": pc.take(raw["segment"], parents), "ordinal": pc.struct_field(flat, "ordinal"),
                     "entry": pc.add(parents, pa.scalar(first, pa.int64())),
                     "tokens": pc.fill_null(pc.struct_field(flat, "tokens"), 0),
                     "trained_tokens": pc.fill_null(pc.struct_field(flat, "trained_tokens"), 0),
                     "turns": pc.struct_field(flat, "turns")}, schema=_ORDINALS)


@dataclass
class _File:
    read_to: int = 0
    stamp: tuple = ()
    mark: bytes = b""


@dataclass
class RunFiles:
    """A run's small files as the page needs them: run.json, its segments' start and end, the consumption log's
    ends, the rescore log, and what was wrong with any of them (the reader's problems and notes)."""

    manifest: RunManifest | None = None
    segments: list[RunSegment] = field(default_factory=list)
    ends: dict[str, int] = field(default_factory=dict)  # segment -> rows the trainer took (its consumption end)
    logged: frozenset[str] = frozenset()  # segments with a consumption log
    rescored: list[Rescored] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def live(self) -> bool:
        """A segment has not ended (training is running, or was killed before it could say so)."""
        return any(s.end is None for s in self.segments)


@dataclass
class RunTable:
    """One run's index as columns (`table`), what it read of each line file, and its per-version aggregates."""

    root: Path | None
    table: pa.Table
    ordinals: pa.Table  # _ORDINALS: (segment, ordinal, entry, tokens, trained_tokens, turns) of every TRL row
    consumed: pa.Table  # (segment, ordinal, fate, step) of every consumption line
    files: dict[str, _File] = field(default_factory=dict)
    run_files: RunFiles = field(default_factory=RunFiles)
    prefix: str = ""  # where the run sits in its collection (a zip holding the run's folder names it)
    line_problems: list[Problem] = field(default_factory=list)  # index lines left out, and why
    small: dict[str, tuple] = field(default_factory=dict, repr=False)  # the small files' stamps
    _aggregates: dict[tuple[str, tuple[str, ...]], pa.Table] = field(default_factory=dict, repr=False)
    _fates: pa.Table | None = field(default=None, repr=False)  # FATE_COLUMNS, one row per rollout
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)
    _making: dict[str, threading.Lock] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # queries of one run at a time: each builds columns as long as the run, so visitors' memory stays one's
    _query: threading.Lock = field(default_factory=threading.Lock, repr=False)
    changes: int = 0  # how many times the table changed (a run state's serial, for what is kept per state)

    def __len__(self) -> int:
        return self.table.num_rows

    @property
    def state(self) -> tuple:
        return (self.changes, len(self), self.consumed.num_rows, len(self.run_files.segments), self.run_files.live)

    @classmethod
    def from_run(cls, run: Any) -> RunTable:
        """A run read by `open_run` (a zip, a Hub run) as a table: its reader rows, fates already joined."""
        rows = run.rows
        cols: dict[str, Any] = {}
        for name, kind in COLUMNS.items():
            attr = {"group_path": "group"}.get(name, name)
            cols[name] = pa.array([getattr(r, attr) for r in rows], kind)
        for name in _TEXT:
            cols[name] = pc.dictionary_encode(cols[name])
        cols["n_rows"] = pa.array([r.rows for r in rows], pa.int64())
        fates = pa.table({name: pa.array([getattr(r, name) for r in rows], kind)
                          for name, kind in FATE_COLUMNS.items()})
        ordinals = pa.Table.from_pylist([{"segment": r.segment, "ordinal": q.ordinal, "entry": i, "tokens": q.tokens,
                                          "trained_tokens": q.trained_tokens, "turns": q.turns}
                                         for i, r in enumerate(rows) for q in r.queued], schema=_ORDINALS)
        consumed = pa.Table.from_pylist([{k: getattr(c, k) for k in _CONSUMED.names} for c in run.consumed],
                                        schema=_CONSUMED)
        files = RunFiles(manifest=run.manifest, segments=list(run.segments),
                         ends={x.start.segment: x.consumption.taken for x in run.segments if x.consumption},
                         logged=frozenset(posixpath.basename(p).split(".", 1)[0] for p in run.read_to
                                          if p.startswith(CONSUMED_DIR + "/")),
                         rescored=list(run.rescored), problems=list(run.problems), notes=list(run.notes))
        t = cls(root=None, table=pa.table(cols), ordinals=ordinals, consumed=consumed, run_files=files,
                prefix=run.store.prefix if run.store is not None else "")
        t._fates = fates
        return t

    def problems(self) -> list[Problem]:
        """What the reader found wrong: the small files' problems, and a segment indexed without its start."""
        if self.root is None:  # open_run said it already
            return self.run_files.problems + self.line_problems
        started = {x.start.segment for x in self.run_files.segments}
        named = pc.unique(pc.cast(self.table["segment"], pa.string())).to_pylist() if len(self) else []
        links = []
        for folder in (INDEX_DIR, CONSUMED_DIR):
            try:
                links += [f"{folder}/{e.name}" for e in os.scandir(self.root / folder) if e.is_symlink()]
            except OSError:
                continue
        return self.run_files.problems + self.line_problems[:MAX_PROBLEMS] + [
            Problem(name, "cannot be read (a symbolic link, not followed)") for name in sorted(links)] + [
            Problem(f"{INDEX_DIR}/{name}.jsonl", "a segment without its start file",
                    expected=f"{SEGMENTS_DIR}/{name}.json", found="none") for name in sorted(set(named) - started)]

    # -- queries -------------------------------------------------------------------------------------

    def view(self) -> pa.Table:
        """The held columns and FATE_COLUMNS, one row per rollout."""
        fates = self.fates()
        t = self.table
        for name in FATE_COLUMNS:
            t = t.append_column(name, fates[name])
        return t

    def column(self, name: str) -> pa.ChunkedArray:
        if name == "trained":
            return self.trained()
        if name in FATE_COLUMNS:
            return self.fates()[name]
        if name not in self.table.column_names:
            raise RunTableError(f"no column {name!r}: expected one of {', '.join(self.table.column_names)}, "
                                f"{', '.join(FATE_COLUMNS)}, trained")
        return self.table[name]

    def trained(self) -> pa.ChunkedArray:
        """Per rollout: whether any of its TRL rows was trained (its consumption lines' fate)."""
        return pa.chunked_array([pc.is_null(self.fates()["dropped"].combine_chunks())])

    def fates(self) -> pa.Table:
        """Per rollout (run.py's `join`, in Arrow): the first step a row of it was trained at, its trained rows'
        tokens, and why none of its rows was trained (None: one was). Once per run state."""
        with self._lock:
            if self._fates is not None:
                return self._fates
        return self.memo("__fates", lambda: _fates(self))

    def row_fates(self) -> pa.Table:
        """Per TRL row, in `ordinals`' order: its fate and the step it was trained at. Once per run state."""
        return self.memo("__row_fates", lambda: _row_fates(self))

    def queued(self, rows: Sequence[int]) -> dict[int, list[QueuedRow]]:
        """The TRL rows of the rollouts at table rows `rows`, with their fates (run.py's QueuedRow), by row number."""
        o = self.ordinals
        if not o.num_rows or not len(rows):
            return {}
        pick = pc.is_in(o["entry"], value_set=pa.array(list(rows), pa.int64()))
        got = pa.Table.from_arrays([*o.columns, *self.row_fates().columns],
                                   names=[*o.column_names, "fate", "step"]).filter(pick).to_pylist()
        out: dict[int, list[QueuedRow]] = {}
        for x in got:
            out.setdefault(x["entry"], []).append(QueuedRow(
                ordinal=x["ordinal"], turns=None if x["turns"] is None else tuple(x["turns"]), tokens=x["tokens"],
                trained_tokens=x["trained_tokens"], fate=x["fate"], step=x["step"]))
        return out

    def memo(self, key: str, make: Callable[[], Any]) -> Any:
        """`make()` once per run state (what a page builds from the whole table: shared by every visitor; ten
        visitors asking at once wait for the one computing it, so its memory is spent once)."""
        with self._lock:
            if key in self._memo:
                return self._memo[key]
            making = self._making.setdefault(key, threading.Lock())
        with making:
            with self._lock:
                if key in self._memo:
                    return self._memo[key]
                state = self.changes
            got = make()
            with self._lock:
                if self.changes == state:  # the run did not grow meanwhile
                    self._memo[key] = got
                self._making.pop(key, None)
        return got

    def per_version(self, column: str, aggregates: Sequence[str] = AGGREGATES) -> pa.Table:
        """One row per policy version, in version order: `version` and `<column>_<aggregate>` for each of
        `aggregates` (count counts non-null values; NaN and ±inf are left out of every aggregate; a mean of
        finite values is finite, a sum past the float range is inf).
        Computed once per run state; after `follow`, again only for the versions the new lines touch."""
        bad = [a for a in aggregates if a not in AGGREGATES]
        if bad:
            raise RunTableError(f"no aggregate {bad[0]!r}: expected one of {', '.join(AGGREGATES)}")
        key = (column, tuple(aggregates))
        with self._lock:
            hit = self._aggregates.get(key)
        if hit is not None:
            return hit
        got = self._aggregate(column, tuple(aggregates), None)
        with self._lock:
            self._aggregates[key] = got
        return got

    def _aggregate(self, column: str, aggregates: tuple[str, ...], versions: pa.Array | None) -> pa.Table:
        values = self.column(column)
        versions_col = self.table["policy_version"]
        if versions is not None:
            keep = pc.is_in(versions_col, value_set=versions)
            values, versions_col = values.filter(keep), versions_col.filter(keep)
        scale = 1.0
        if pa.types.is_floating(values.type):
            values = pc.if_else(pc.is_finite(values), values, pa.scalar(None, values.type))
            top = pc.max(pc.abs(values)).as_py()
            if top is not None and top > 2.0**1000:  # near the float limit: add scaled (exact, a power of two)
                scale = 2.0**64
        elif pa.types.is_boolean(values.type):
            values = pc.cast(values, pa.int64())
        scaled = pc.multiply(values, 1 / scale) if scale != 1.0 else values
        t = pa.table({"version": versions_col, "v": values, "s": scaled})
        out = t.group_by("version").aggregate([("s" if a in ("sum", "mean") else "v", a) for a in aggregates])
        cols = {"version": out["version"]}
        for a in aggregates:
            got = out[f"{'s' if a in ('sum', 'mean') else 'v'}_{a}"]
            if scale != 1.0 and a in ("sum", "mean"):
                got = pc.multiply(got, scale)  # a mean is at most the largest value: finite; a sum may be inf
            cols[f"{column}_{a}"] = got
        return pa.table(cols).sort_by("version")

    def _narrow(self, where: pc.Expression | None, names: Sequence[str]) -> pa.Table:
        """The columns `where` and `names` name (found in the expression's text), and each row's number: a
        filter or a sort touches these only, never the long text columns it does not name."""
        text = str(where) if where is not None else ""
        whole = self.view()
        keep = [c for c in whole.column_names if c in names or re.search(rf"\b{re.escape(c)}\b", text)]
        t = whole.select(keep)
        return t.append_column("__row", self._rows())

    def _rows(self) -> pa.Array:
        return self.memo("__rows", lambda: pa.array(np.arange(len(self), dtype=np.int64)))

    def order(self, column: str, descending: bool = False) -> np.ndarray:
        """Every row's number sorted by `column` (nulls and NaN last, ties by row number: Arrow's sort is
        stable): computed once per run state and column, so a sorted page is a slice of it, not a sort."""
        def make() -> np.ndarray:
            values = self.column(column)
            if pa.types.is_dictionary(values.type):
                values = pc.cast(values, values.type.value_type)
            return pc.array_sort_indices(values, order="descending" if descending else "ascending").to_numpy().astype(np.int64)
        return self.memo(f"__order:{column}:{descending}", make)

    def page(self, where: pc.Expression | None = None, sort: Sequence[tuple[str, str]] = (), offset: int = 0,
             limit: int = 50, columns: Sequence[str] | None = None) -> tuple[int, list[dict]]:
        """(rows matching `where`, one page of them as dicts) sorted by `sort` [(column, "ascending" |
        "descending")]: the filter and the sort run in Arrow over the columns they name, and only the page's
        rows are taken from the whole table and become Python objects."""
        total, picked = self.select(where, sort, offset, limit)
        return total, self.take(picked.to_numpy(), columns).to_pylist()

    def take(self, rows: np.ndarray, columns: Sequence[str] | None = None) -> pa.Table:
        """The view's rows `rows` (row numbers, in that order), of `columns`: taken chunk by chunk (a take
        over the whole chunked table joins its chunks first, a copy of every column)."""
        view = self.view() if columns is None else self.view().select(list(columns))
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return view.slice(0, 0)
        batches = view.to_batches()
        starts = np.cumsum([0] + [b.num_rows for b in batches])
        chunk = np.searchsorted(starts, rows, side="right") - 1
        order = np.argsort(chunk, kind="stable")
        parts = [batches[k].take(pa.array(rows[order][chunk[order] == k] - starts[k])) for k in np.unique(chunk)]
        got = pa.Table.from_batches(parts, schema=view.schema)
        return got.take(pa.array(np.argsort(order, kind="stable")))  # back in the order asked

    def select(self, where: pc.Expression | None = None, sort: Sequence[tuple[str, str]] = (), offset: int = 0,
               limit: int = 50) -> tuple[int, pa.Array]:
        """(rows matching `where`, the row numbers of one page of them sorted by `sort`)."""
        for name, _ in sort:
            self.column(name)
        offset, limit = max(0, int(offset)), max(0, int(limit))
        with self._query:
            return self._select(where, sort, offset, limit)

    def _select(self, where: pc.Expression | None, sort: Sequence[tuple[str, str]], offset: int,
                limit: int) -> tuple[int, pa.Array]:
        if len(sort) == 1:  # one sort key: the page is a slice of the precomputed order, filtered
            order = self.order(sort[0][0], sort[0][1] == "descending")
            if where is not None:
                mask = np.zeros(len(self), dtype=bool)
                mask[self._filtered(where)["__row"].to_numpy()] = True
                order = order[mask[order]]
            return len(order), pa.array(order[offset:offset + limit])
        t = self._filtered(where, [n for n, _ in sort])
        total = t.num_rows
        k = min(total, offset + limit)
        if sort and k:
            top = t.take(pc.select_k_unstable(t, k=k, sort_keys=list(sort)))
            # select_k leaves the top k unordered: order those (a page's worth), ties by row number
            rows = top.sort_by([*sort, ("__row", "ascending")])["__row"]
        else:
            rows = t["__row"]
        return total, rows.slice(offset, limit).combine_chunks()

    def _filtered(self, where: pc.Expression | None, names: Sequence[str] = ()) -> pa.Table:
        t = self._narrow(where, names)
        if where is None:
            return t
        try:
            return t.filter(where)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            raise RunTableError(f"the filter cannot be applied: {e}") from e

    # -- following -----------------------------------------------------------------------------------

    def follow(self) -> bool:
        """Read what the recorder appended since (the grown tails); True when the table changed. A line file
        truncated or rewritten is read again whole (the run is read again)."""
        if self.root is None:
            return False
        small = _small_files(self.root)
        moved = small != self.small
        if moved:  # first: the consumption log's ends decide the fate of the rows it did not take
            self.small, self.run_files = small, _read_files(self.root)
            with self._lock:
                self._fates, self._memo = None, {}
                self._aggregates = {k: v for k, v in self._aggregates.items() if k[0] not in _DERIVED}
        grown = self._follow_lines()
        if moved or grown:
            self.changes += 1
        return moved or grown

    def _follow_lines(self) -> bool:
        assert self.root is not None
        listed = _line_files(self.root)
        if {p: s for p, s in listed.items()} == {p: f.stamp for p, f in self.files.items()}:
            return False
        for path, f in self.files.items():
            now = listed.get(path)
            if now is None or now[0] < f.read_to or (now != f.stamp and now[0] == f.stamp[0]) or \
                    (f.mark and _read(self.root / path, f.read_to - len(f.mark), len(f.mark)) != f.mark):
                again = _read_table(self.root)
                self.__dict__.update({k: getattr(again, k) for k in ("table", "ordinals", "consumed", "files",
                                                                     "small", "run_files", "line_problems")})
                with self._lock:
                    self._aggregates, self._fates, self._memo = {}, None, {}
                return True
        shaped, ordinals, consumed, versions = [self.table], [self.ordinals], [self.consumed], []
        first = self.table.num_rows
        for path, stamp in sorted(listed.items()):
            f = self.files.setdefault(path, _File())
            if stamp == f.stamp:
                continue
            index = path.startswith(INDEX_DIR + "/")
            schema = _SCHEMA if index else _CONSUMED
            # one chunk at a time (the file's bytes are never all in memory), the next one read and parsed
            # while this one is shaped
            for size, tail, raw in _ahead((len(d), bytes(d[-MARK_BYTES:]), _parse(d, schema))
                                          for d in _chunks(self.root / path, f.read_to, stamp[0])):
                f.read_to += size
                f.mark = (f.mark + tail)[-MARK_BYTES:]
                if not index:
                    consumed.append(raw)
                    continue
                raw = _inside(raw, path, self.line_problems)
                ordinals.append(_ordinals(raw, first))
                shaped.append(_shape(raw))
                versions.append(raw["policy_version"])
                first += raw.num_rows
            # a half-written last line: read again once it has grown
            f.stamp = stamp if f.read_to == stamp[0] else (f.read_to, *stamp[1:])
        if len(shaped) == 1 and len(consumed) == 1:
            return False
        self.table = pa.concat_tables(shaped, promote_options="permissive")
        self.ordinals = pa.concat_tables(ordinals)
        self.consumed = pa.concat_tables(consumed)
        cons = self.consumed.slice(consumed[0].num_rows)
        touched = pc.unique(pa.chunked_array(versions, pa.int64())) if versions else None
        with self._lock:
            old = dict(self._aggregates)
            self._fates, self._memo = None, {}
        fresh: dict[tuple[str, tuple[str, ...]], pa.Table] = {}
        for (column, aggs), prior in old.items():
            if cons.num_rows and column in _DERIVED or touched is None:
                fresh[(column, aggs)] = self._aggregate(column, aggs, None)  # a fate can change any version
                continue
            kept = prior.filter(pc.invert(pc.is_in(prior["version"], value_set=touched)))
            fresh[(column, aggs)] = pa.concat_tables([kept, self._aggregate(column, aggs, touched)]).sort_by("version")
        with self._lock:
            self._aggregates = fresh
        return True


def _ahead(items: Iterator[_T]) -> Iterator[_T]:
    """`items`, each next one made on a worker thread while the caller works on this one (Arrow's reader
    and kernels let go of the GIL: reading and parsing a chunk overlaps shaping the one before)."""
    with ThreadPoolExecutor(1, thread_name_prefix="run-table-read") as pool:
        done = object()
        step = lambda: next(items, done)  # noqa: E731
        coming = pool.submit(step)
        while (got := coming.result()) is not done:
            coming = pool.submit(step)
            yield got  # type: ignore[misc]


def _chunks(path: Path, start: int, end: int) -> Iterator[memoryview]:
    """The whole lines of `path` between `start` and `end`, in chunks of about CHUNK_BYTES cut at newlines,
    each a view of one read (never joined to the next: a chunk's cut-off last line is read again with the
    next chunk, a few hundred bytes, where gluing it on would copy the whole chunk)."""
    try:
        f = open(path, "rb", buffering=0)
    except OSError:
        return
    with f:
        at = start
        while at < end:
            f.seek(at)
            got = f.read(min(CHUNK_BYTES, end - at))
            if not got:
                break
            cut = got.rfind(b"\n") + 1
            if not cut and len(got) == CHUNK_BYTES:  # a line longer than a chunk: the rest read at once
                got = _read(path, at, end - at)
                cut = got.rfind(b"\n") + 1
            if not cut:
                break  # a last line without its newline yet
            at += cut
            yield memoryview(got)[:cut]


def _read(path: Path, offset: int, size: int) -> bytes:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, offset))
            return f.read(max(0, size))
    except OSError:
        return b""


def _line_files(root: Path) -> dict[str, tuple]:
    """index/*.jsonl and consumed/*.jsonl -> (size, mtime_ns, inode); hidden (half-written) files left out."""
    out = {}
    for folder in (INDEX_DIR, CONSUMED_DIR):
        try:
            entries = list(os.scandir(root / folder))
        except OSError:
            continue
        for e in entries:
            if e.name.endswith(".jsonl") and not e.name.startswith(".") and e.is_file(follow_symlinks=False):
                st = e.stat(follow_symlinks=False)
                out[f"{folder}/{e.name}"] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def _read_table(root: Path) -> RunTable:
    if not (root / INDEX_DIR).is_dir():
        raise RunTableError(f"{root}: not a recorded run (no {INDEX_DIR}/ folder)")
    t = RunTable(root=root, table=_shape(_empty(_SCHEMA)), ordinals=_ordinals(_empty(_SCHEMA), 0),
                 consumed=_empty(_CONSUMED))
    t.follow()  # the first read is a follow from nothing
    return t


_DERIVED = ("trained", *FATE_COLUMNS)  # columns a new consumption line can change at any version
_SMALL_DIRS = (SEGMENTS_DIR, CONSUMED_DIR, RESCORED_DIR)


def _small_files(root: Path) -> dict[str, tuple]:
    """run.json, segments/*.json, consumed/*.end.json and rescored/*.jsonl -> their stamps, and the names of
    the consumption logs (which segments have one; their growth is followed as line files)."""
    out: dict[str, tuple] = {}
    try:
        st = os.stat(root / MANIFEST)
        out[MANIFEST] = (st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        pass
    for folder in _SMALL_DIRS:
        try:
            entries = list(os.scandir(root / folder))
        except OSError:
            continue
        for e in entries:
            if e.name.startswith(".") or not e.is_file(follow_symlinks=False):
                continue
            if folder == CONSUMED_DIR and e.name.endswith(".jsonl"):
                out[f"{folder}/{e.name}"] = ()
            else:
                st = e.stat(follow_symlinks=False)
                out[f"{folder}/{e.name}"] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def _read_files(root: Path) -> RunFiles:
    """The run's small files, decoded with the run format's records (problems named, never raised)."""
    problems: list[Problem] = []
    notes: list[str] = []
    manifest = _one(MANIFEST, _read(root / MANIFEST, 0, 16 * 2**20) or None, RunManifest, problems)
    starts: dict[str, SegmentStart] = {}
    stops: dict[str, SegmentEnd] = {}
    ends: dict[str, ConsumptionEnd] = {}
    rescored: list[Rescored] = []
    logged = set()
    for folder in _SMALL_DIRS:
        try:
            names = sorted(e.name for e in os.scandir(root / folder)
                           if not e.name.startswith(".") and e.is_file(follow_symlinks=False))
        except OSError:
            continue
        for n in names:
            path = f"{folder}/{n}"
            if folder == CONSUMED_DIR and n.endswith(".jsonl"):
                logged.add(n.split(".", 1)[0])
                continue
            data = _read(root / path, 0, MAX_LINE_FILE_BYTES)
            if folder == RESCORED_DIR:
                if n.endswith(".jsonl"):
                    rescored += _lines(path, data, Rescored, problems, notes)
            elif not n.endswith(".json"):
                continue
            elif folder == CONSUMED_DIR:
                if n.endswith(".end.json") and (c := _one(path, data, ConsumptionEnd, problems)) is not None:
                    ends[c.segment] = c
            elif n.endswith(".end.json"):
                if (end := _one(path, data, SegmentEnd, problems)) is not None:
                    stops[end.segment] = end
            elif (start := _one(path, data, SegmentStart, problems)) is not None:
                starts[start.segment] = start
    segments = [RunSegment(starts[x], stops.get(x), ends.get(x)) for x in sorted(starts)]
    for part in segments:
        if part.end is not None and (part.end.groups_lost or part.end.write_errors):
            notes.append(f"segment {part.start.segment}: {part.end.groups_lost} scored groups were still waiting to "
                         f"be written when the worker stopped, {part.end.write_errors} could not be written")
    if any(x.end is None for x in segments):
        notes.append("a segment has not ended: training is running (or the worker was killed before it could say so)")
    for name, (size, *_) in _line_files(root).items():  # an ended segment's cut line is never completed: say so
        if name.startswith(INDEX_DIR) and size and name[len(INDEX_DIR) + 1:].split(".", 1)[0] in stops \
                and _read(root / name, size - 1, 1) != b"\n":
            notes.append(f"{name}: the last line has no newline (a write cut short when the recorder stopped); skipped")
    return RunFiles(manifest=manifest, segments=segments, ends={k: v.taken for k, v in ends.items()},
                    logged=frozenset(logged), rescored=rescored, problems=problems, notes=notes)


def _row_fates(t: RunTable) -> pa.Table:
    """run.py's `join` over columns: each TRL row's fate, in `t.ordinals`' order (its consumption line, the later
    one when the log has two; else "in-queue" past what the trainer took or while its log is open, else
    "unknown"), and the step it was trained at."""
    o = t.ordinals
    files = t.run_files
    if not o.num_rows:
        return pa.table({"fate": pa.array([], pa.string()), "step": pa.array([], pa.int64())})
    c = t.consumed.append_column("__i", pa.array(np.arange(t.consumed.num_rows, dtype=np.int64)))
    last = c.group_by(["segment", "ordinal"], use_threads=False).aggregate([("__i", "max")])
    c = c.take(last["__i_max"]).select(["segment", "ordinal", "fate", "step"])
    keyed = o.select(["segment", "ordinal"]).append_column(
        "__k", pa.array(np.arange(o.num_rows, dtype=np.int64)))  # Acero joins no list column (turns)
    j = keyed.join(c, ["segment", "ordinal"], join_type="left outer").sort_by("__k")
    fate = j["fate"].combine_chunks()
    step = j["step"].combine_chunks()
    if fate.null_count:
        seg, ordinal = j["segment"].combine_chunks(), j["ordinal"].combine_chunks()
        fallback = pa.nulls(len(fate), pa.string())
        for name in pc.unique(pc.filter(seg, pc.is_null(fate))).to_pylist():
            here = pc.equal(seg, name)
            if name in files.ends:
                got = pc.if_else(pc.greater_equal(ordinal, files.ends[name]), "in-queue", "unknown")
            else:
                got = pa.array(["in-queue" if name in files.logged else "unknown"] * len(fate), pa.string())
            fallback = pc.if_else(here, got, fallback)
        fate = pc.coalesce(fate, fallback)
    return pa.table({"fate": fate, "step": pc.if_else(pc.equal(fate, "trained"), step, pa.scalar(None, pa.int64()))})


def _fates(t: RunTable) -> pa.Table:
    """Per rollout, from its rows' fates (`_row_fates`): its first trained step, trained rows' tokens, and why
    none was trained."""
    n = len(t)
    o = t.ordinals
    rf = t.row_fates()
    entry = o["entry"].to_numpy() if o.num_rows else np.zeros(0, np.int64)
    fates = rf["fate"].to_numpy(zero_copy_only=False) if o.num_rows else np.zeros(0, object)
    tokens = o["trained_tokens"].to_numpy() if o.num_rows else np.zeros(0, np.int64)
    steps = pc.fill_null(rf["step"], -1).to_numpy() if o.num_rows else np.zeros(0, np.int64)
    took = fates == "trained"
    trained = np.zeros(n, dtype=bool)
    trained[entry[took]] = True
    trainer_tokens = np.bincount(entry[took], weights=tokens[took], minlength=n).astype(np.int64)
    first_step = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    stepped = took & (steps >= 0)
    np.minimum.at(first_step, entry[stepped], steps[stepped])
    trained_step = pa.array(first_step, mask=first_step == np.iinfo(np.int64).max)
    # the first row's fate stands for all when none was trained (run.py `_dropped`)
    head = np.full(n, -1, dtype=np.int64)
    if len(entry):
        firsts = np.flatnonzero(np.r_[True, entry[1:] != entry[:-1]])
        head[entry[firsts]] = firsts
    first_fate = pa.array([None] * n, pa.string()) if not len(fates) else \
        pc.take(pa.array(fates, pa.string()), pa.array(head, mask=head < 0))
    status = pc.cast(t.table["status"], pa.string()) if n else pa.array([], pa.string())
    no_rows = pc.if_else(pc.equal(status, "failed"), "failed", "no rows")
    dropped = pc.if_else(pa.array(trained), pa.scalar(None, pa.string()), pc.coalesce(first_fate, no_rows))
    return pa.table({"trained_step": trained_step, "trainer_tokens": pa.array(trainer_tokens),
                     "dropped": dropped})


_cache: OrderedDict[Path, RunTable] = OrderedDict()
_cache_lock = threading.Lock()
_open_locks: dict[Path, threading.Lock] = {}


def run_table(folder: str | Path) -> RunTable:
    """The run at `folder` as a RunTable, shared: a second call while its files are unchanged is a lookup; a
    grown run is followed (its tails read), not read again. One reader per run at a time."""
    root = Path(folder).expanduser().resolve()
    with _cache_lock:
        lock = _open_locks.setdefault(root, threading.Lock())
    with lock:
        with _cache_lock:
            hit = _cache.get(root)
        if hit is None:
            hit = _read_table(root)
        else:
            hit.follow()
        with _cache_lock:
            _cache[root] = hit
            _cache.move_to_end(root)
            while len(_cache) > MAX_TABLES:
                gone, _ = _cache.popitem(last=False)
                _open_locks.pop(gone, None)
        return hit


def per_version(folder: str | Path, column: str, aggregates: Sequence[str] = AGGREGATES) -> list[dict]:
    """Any index column's per-version aggregates of the run at `folder`, as plain rows
    [{"version": v, "<column>_<aggregate>": ...}] in version order (shared and cached: `run_table`)."""
    return run_table(folder).per_version(column, aggregates).to_pylist()
