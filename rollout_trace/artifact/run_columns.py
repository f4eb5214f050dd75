"""Arrow helpers of a run's columns (rollout_trace/artifact/run_table.py): reading text columns
dictionary-encoded, turning them into numbers without a Python string per row, naming a rollout's place, and
the checks a shard's rows pass before they stand (valid UTF-8, a place the recorder writes). Pure functions of
Arrow arrays and tables.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .problems import Problem
from .run_format import MAX_WHOLE

# Text columns with few distinct values, read dictionary-encoded (as Parquet stores them): a million rollouts'
# segment names are a few integers and one string each, not a million strings
DICTIONARY = ("segment", "status", "cause", "drift", "task_id", "title", "problem", "fate")
MAX_ROLLOUT = 2**16  # a rollout's index in its group: TRL's num_generations is far below this


def utf8_fixed(table: pa.Table, name: str, problems: list[Problem]) -> pa.Table:
    """`table` with every string that is not UTF-8 replaced (U+FFFD) and named: a shard is data, and Arrow's
    string kernels assume valid UTF-8."""
    for i, f in enumerate(table.schema):
        encoded = pa.types.is_dictionary(f.type)  # a scan's DICTIONARY columns: checked and fixed as plain text
        kind = f.type.value_type if pa.types.is_list(f.type) or encoded else f.type
        if not pa.types.is_string(kind):
            continue
        col = table.column(i)
        try:
            col.validate(full=True)
            continue
        except pa.ArrowInvalid:
            pass
        col = pc.cast(col, kind) if encoded else col
        flat = pc.list_flatten(col) if pa.types.is_list(f.type) else col
        raw = flat.cast(pa.binary()).to_pylist()
        bad = [k for k, v in enumerate(raw) if v is not None and not _valid(v)]
        problems.append(Problem(name, "text that is not UTF-8, shown with replacement characters", field=f.name,
                                expected="UTF-8", found=f"{len(bad)} invalid value(s)"))
        fixed = pa.array([None if v is None else v.decode("utf-8", "replace") for v in raw], pa.string())
        if pa.types.is_list(f.type):
            combined = col.combine_chunks()
            fixed = pa.ListArray.from_arrays(combined.offsets, fixed, mask=combined.is_null())
        elif encoded:
            fixed = pc.dictionary_encode(fixed).cast(f.type)
        table = table.set_column(i, f, fixed)
    return table


def take_rows(col: pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """Rows `rows` of a column of many chunks, each taken from its own chunk (a take over the whole column would
    join its chunks first: a copy of a million values for a page of fifty)."""
    if col.num_chunks <= 1 or len(rows) > len(col) // 8:
        return col.take(pa.array(rows)).combine_chunks() if len(rows) else col.slice(0, 0).combine_chunks()
    starts = np.cumsum([0] + [len(c) for c in col.chunks])
    which = np.searchsorted(starts, rows, side="right") - 1
    order = np.argsort(which, kind="stable")
    parts = [col.chunk(int(k)).take(pa.array(rows[order][which[order] == k] - starts[k])) for k in np.unique(which)]
    got = pa.concat_arrays(parts) if parts else col.slice(0, 0).combine_chunks()
    return got.take(pa.array(np.argsort(order, kind="stable")))


def utf8_valid(table: pa.Table) -> bool:
    """Every string of `table` is UTF-8 (one validation per string column)."""
    for f, col in zip(table.schema, table.columns, strict=True):
        kind = f.type.value_type if pa.types.is_list(f.type) or pa.types.is_dictionary(f.type) else f.type
        if pa.types.is_string(kind):
            try:
                col.validate(full=True)
            except pa.ArrowInvalid:
                return False
    return True


def _valid(v: bytes) -> bool:
    try:
        v.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


NAME_PARTS = ("segment", "policy_version", "group_id", "rollout", "agent_turns")  # what a group's and path's name is


def has_artifact(c: Any) -> Any:
    """Which rows are rollouts with an artifact (their files, a path, text and findings): those whose turns were
    counted (`agent_turns`; a rollout recorded without its files has none). Of a table's or a dict's columns."""
    return pc.is_valid(c["agent_turns"])


def name_columns(c: Any) -> dict[str, Any]:
    """`group` and `path` from NAME_PARTS' columns (arrays, chunked or not, or a table's columns)."""
    group = pc.binary_join_element_wise(
        "groups/", pc.cast(c["segment"], pa.string()), "-v",
        pc.utf8_lpad(pc.cast(c["policy_version"], pa.string()), 6, "0"), "-g",
        pc.utf8_lpad(pc.cast(c["group_id"], pa.string()), 6, "0"), "")
    path = pc.binary_join_element_wise(group, "/rollout-", pc.utf8_lpad(pc.cast(c["rollout"], pa.string()), 2, "0"), "")
    return {"group": group, "path": pc.if_else(has_artifact(c), path, pa.scalar(None, pa.string()))}


def as_scanned(f: pa.Field) -> pa.Field:
    """A column as a scan reads it: the DICTIONARY columns dictionary-encoded."""
    return f.with_type(pa.dictionary(pa.int32(), f.type)) if f.name in DICTIONARY and f.type == pa.string() else f


def codes_in(col: Any, names: list[str]) -> np.ndarray:
    """Each value of a text column as its position in `names` (-1: not there, or null), in 32 bits; a
    dictionary-encoded column through its few distinct values (never decoding a million strings)."""
    want = pa.array(names, pa.string())
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    if len(chunks) > 1 and all(pa.types.is_dictionary(c.type) for c in chunks):
        try:  # a run's shards' chunks: their dictionaries made one, its values looked up once for every chunk
            chunks = pa.chunked_array(chunks).unify_dictionaries().chunks
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            pass  # chunks of different dictionary types: each looked up on its own
        else:
            return _codes_of(chunks, want)
    parts = [_codes_of([chunk], want) if pa.types.is_dictionary(chunk.type) else
             pc.fill_null(pc.index_in(pc.cast(chunk, pa.string()), value_set=want), -1).to_numpy(
                 zero_copy_only=False).astype(np.int32) for chunk in chunks]
    return np.concatenate(parts) if parts else np.zeros(0, np.int32)


def _codes_of(chunks: list[pa.DictionaryArray], want: pa.Array) -> np.ndarray:
    """`codes_in` of dictionary chunks sharing one dictionary (one chunk, or a run's shards' made one)."""
    of_value = pc.fill_null(pc.index_in(pc.cast(chunks[0].dictionary, pa.string()), value_set=want), -1).to_numpy(
        zero_copy_only=False).astype(np.int32)
    indices = np.concatenate([filled(c.indices, 0) for c in chunks])
    got = of_value[indices] if len(of_value) else np.full(len(indices), -1, np.int32)
    if any(c.null_count for c in chunks):
        got[np.concatenate([c.is_null().to_numpy(zero_copy_only=False) for c in chunks])] = -1
    return got


def as_read(name: str, chunk: pa.Array) -> pa.Array:
    """A chunk of column `name` as every chunk of it is held: a DICTIONARY column dictionary-encoded."""
    if name in DICTIONARY and not pa.types.is_dictionary(chunk.type):
        return pc.dictionary_encode(chunk).cast(pa.dictionary(pa.int32(), pa.string()))
    return chunk


def narrowed(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column as narrow as its values let it be held: whole numbers in 32 bits, a text's dictionary indices in 8
    (the consumption table of a million-rollout run, 1.4M rows: 14 MB instead of 33); as read where one does not
    fit. Its values stay the same."""
    t = col.type
    narrow = pa.int32() if pa.types.is_int64(t) else \
        pa.dictionary(pa.int8(), t.value_type) if pa.types.is_dictionary(t) and t.index_type.bit_width > 8 else None
    if narrow is None:
        return col
    try:
        return col.cast(narrow, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a value past the narrow type: kept as it was read
        return col


def uniform(table: pa.Table) -> pa.Table:
    """`table` with its DICTIONARY columns dictionary-encoded whichever way they were read (a scan, a file, a tail),
    so the tables of a run's shards concatenate."""
    for i, name in enumerate(table.column_names):
        if name in DICTIONARY and not pa.types.is_dictionary(table.schema.field(i).type):
            col = table.column(i)
            table = table.set_column(i, name, pa.chunked_array([as_read(name, c) for c in col.chunks],
                                                               pa.dictionary(pa.int32(), pa.string())))
    return table


def filled(col: Any, fill: Any) -> np.ndarray:
    """A column's values as numpy, a null as `fill` (a column without nulls is read as it is: no pass to fill none)."""
    return (pc.fill_null(col, fill) if col.null_count else col).to_numpy(zero_copy_only=False)


def list_lengths(col: Any) -> np.ndarray:
    """How many values each row's list holds (a missing list: 0): what parallel list columns are checked by."""
    return pc.fill_null(pc.list_value_length(col), 0).to_numpy(zero_copy_only=False)


def plain(col: Any) -> Any:
    """A dictionary-encoded column as its plain values (what a few readers of single values want)."""
    return pc.cast(col, col.type.value_type) if pa.types.is_dictionary(col.type) else col


def segment_values(col: Any) -> list[str]:
    """The distinct values of a text column (a run's segment names, a shard's task ids), sorted, through its
    dictionaries when it is dictionary-encoded."""
    values = [c.dictionary for c in col.chunks] if pa.types.is_dictionary(col.type) else [pc.unique(col)]
    return sorted({x for v in values for x in pc.cast(v, pa.string()).to_pylist() if x is not None})


# A rollout's place: each of these columns in [0, bound) (a version is a whole number a float holds exactly)
PLACE_BOUNDS = (("policy_version", MAX_WHOLE + 1), ("group_id", 2**34), ("rollout", MAX_ROLLOUT))


def fits(t: pa.Table, seg: np.ndarray, names: list[str]) -> np.ndarray:
    """Which rows have a place the recorder writes: a segment name (letters, digits, `_.-`), a version, a group id
    and an index of 0 or more (their names, `group` and `path`, are made from these). `seg`: each row's segment as
    its number in `names` (-1: none)."""
    if not t.num_rows:
        return np.zeros(0, dtype=bool)
    good = np.array([bool(re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", n)) for n in names] + [False])
    segment_ok = good[seg]  # -1 (no segment) reads the last, False
    if _all_within(t, PLACE_BOUNDS):
        return segment_ok  # the usual run: every place fits, found from each column's bounds (no row-wise arrays)
    ok = np.ones(t.num_rows, dtype=bool)
    for name, bound in PLACE_BOUNDS:  # a null is no place
        ok &= pc.fill_null(pc.and_(pc.greater_equal(t[name], 0), pc.less(t[name], bound)), False).to_numpy(
            zero_copy_only=False)
    return ok & segment_ok


def _all_within(t: pa.Table, bounds: tuple[tuple[str, int], ...]) -> bool:
    """Whether each named column has no null and every value in [0, bound)."""
    for name, bound in bounds:
        col = t[name]
        if col.null_count:
            return False
        got = pc.min_max(col)
        lo, hi = got["min"].as_py(), got["max"].as_py()
        if lo is None or lo < 0 or hi >= bound:
            return False
    return True
