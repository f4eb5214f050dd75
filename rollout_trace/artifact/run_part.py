"""A part of a recorded run as a Collection, from its Arrow columns (rollout_trace/artifact/run_table.py): one
group, or the first groups in the run's order, without reading the whole run into Python rows.

`open_run` decodes every index line into a RunRow: at a million rollouts tens of seconds and gigabytes, for
a page that opens one group of eight. Here the part's rows are found by a filter over the columns, only
those become IndexEntry records, and run.py's own `join_fates` and `groups_of` make their RunRows and
groups, so a part's rows are the ones `open_run` would have made (the same fates, trained steps, group
advantages); `run_collection` makes its collection rows. Its `run` holds only the part: `consumed` and
`entries` are left empty (the part's fates are already joined into its rows).

    c = group_part(run_table(root), "groups/seg-v000007-g000012", store)   # that group and its rollouts
    c = first_part(run_table(root), store)                               # the first MAX_RECORDS rows
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections import defaultdict

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import collection
from .collection import Collection, run_collection
from .problems import ArtifactError, Problem
from .run import Run, RunStore, groups_of, join_fates
from .run_format import IndexEntry
from .run_table import COLUMNS, RunTable


def group_of(path: str) -> str:
    """The group folder a row path names: a group's own (`groups/<name>`), or a rollout's parent."""
    path = path.strip("/")
    return posixpath.dirname(path) if path.count("/") >= 2 else path


def group_rows(t: RunTable, group_path: str) -> np.ndarray:
    """The row numbers of the group at `group_path` (a filter over one column; empty when it is none)."""
    if not len(t):
        return np.zeros(0, np.int64)
    return np.flatnonzero(pc.fill_null(pc.equal(t.table["group_path"], group_path), False).to_numpy(
        zero_copy_only=False)).astype(np.int64)


def _run(t: RunTable, rows: np.ndarray, store: RunStore) -> Run:
    """Run.rows and Run.groups of the table's rows `rows` (row numbers), joined as `open_run` joins them."""
    files = t.run_files
    if files.manifest is None:
        raise ArtifactError([Problem(store.store.label, "run.json cannot be read")])
    values = t.take(rows, list(COLUMNS)).to_pylist()
    o = t.ordinals.filter(pc.is_in(t.ordinals["entry"], value_set=pa.array(rows, pa.int64()))) \
        if len(rows) and t.ordinals.num_rows else t.ordinals.slice(0, 0)
    refs: dict[int, list[dict]] = defaultdict(list)
    for x in o.to_pylist():  # placeholders where the columns hold nothing: the join reads ordinals, tokens, turns
        refs[x["entry"]].append({"ordinal": x["ordinal"], "fingerprint": "", "tokens": x["tokens"],
                                 "trained_tokens": x["trained_tokens"], "turns": x["turns"]})
    # the consumption lines of these rows only; a later line of the same row wins, as in `join`
    c = t.consumed
    if o.num_rows and c.num_rows:
        c = c.filter(pc.and_(pc.is_in(c["segment"], value_set=pc.unique(o["segment"])),
                             pc.is_in(c["ordinal"], value_set=pc.unique(o["ordinal"]))))
    by_key = {(x["segment"], x["ordinal"]): (x["fate"], x["step"]) for x in c.to_pylist()} if o.num_rows else {}
    entries, seen = [], set()
    for at, v in zip(rows.tolist(), values, strict=True):
        key = (v["segment"], v["group_id"], v["rollout"])
        if key in seen:  # a rollout indexed twice: the first line stands (`read_run`)
            continue
        seen.add(key)
        entries.append(msgspec.convert({**v, "rows": refs.get(at, [])}, IndexEntry))
    run_rows = join_fates(entries, by_key, files.ends, files.logged)
    return Run(source=store.store.label, kind=store.store.kind, manifest=files.manifest, segments=list(files.segments),
               rows=run_rows, groups=groups_of(run_rows), consumed=[], rescored=list(files.rescored),
               problems=t.problems(), notes=list(files.notes), store=store)


def group_part(t: RunTable, path: str, store: RunStore) -> Collection:
    """The group `path` names (the group's folder or one of its rollouts') with its rollouts, as a collection;
    no records when the run has no such group."""
    return run_collection(_run(t, group_rows(t, group_of(path)), store))


def whole_rows(t: RunTable) -> int:
    """How many rows the whole run's index has: its groups and its rollouts with a folder."""
    if not len(t):
        return 0
    return pc.count_distinct(t.table["group_path"]).as_py() + len(t) - t.table["path"].null_count


def first_part(t: RunTable, store: RunStore, limit: int | None = None) -> Collection:
    """The run's first `limit` (the collection's MAX_RECORDS) index rows in its order (segment, version, group, rollout: `open_run`'s), as a
    collection whose notes say how many rows the whole run has: what a reader of every rollout (the text
    search) covers at most, read without the whole run's rows."""
    if not len(t):
        return run_collection(_run(t, np.zeros(0, np.int64), store))
    keys = pa.table({"s": pc.cast(t.table["segment"], pa.string()), "v": t.table["policy_version"],
                     "g": t.table["group_id"], "r": t.table["rollout"]})
    order = pc.sort_indices(keys, sort_keys=[("s", "ascending"), ("v", "ascending"), ("g", "ascending"),
                                             ("r", "ascending")])
    first = order.slice(0, collection.MAX_RECORDS if limit is None else limit)  # each row is at least one index row
    # whole groups only: a group cut at the edge would say it has fewer rollouts than it has
    groups = pc.unique(pc.take(t.table["group_path"], first))
    rows = np.flatnonzero(pc.fill_null(pc.is_in(t.table["group_path"], value_set=groups), False).to_numpy(
        zero_copy_only=False)).astype(np.int64)
    c = run_collection(_run(t, rows, store))
    whole = whole_rows(t)
    cut = [n for n in c.notes if "; the index shows the first" not in n]
    if whole > len(c.records):
        cut.append(f"{whole:,} rows; the index shows the first {len(c.records):,}")
    return dataclasses.replace(c, notes=cut, part_of=whole if whole > len(c.records) else None)
