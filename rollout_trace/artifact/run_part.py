"""A part of a recorded run as a Collection, from its snapshot's columns (rollout_trace/artifact/run_table.py): one
group, or the first groups in the run's order, without making a Python row of every rollout of the run.

A page that opens one group of eight needs eight rows, not a million: the part's rows are found by a filter over
one column, and only those become RunRows (run.py `rows_of`, the same rows `open_run` makes) and their collection
rows (`run_collection`).

    c = group_part(run_table(root), "groups/seg-v000007-g000012")   # that group and its rollouts
    c = first_part(run_table(root))                                 # the first MAX_RECORDS rows
"""

from __future__ import annotations

import dataclasses
import posixpath

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import collection
from .collection import Collection, run_collection
from .run import Run, rows_of
from .run_table import RunTable


def group_of(path: str) -> str:
    """The group a row path names: a group's own (`groups/<name>`), or a rollout's parent."""
    path = path.strip("/")
    return posixpath.dirname(path) if path.count("/") >= 2 else path


def group_rows(t: RunTable, group_path: str) -> np.ndarray:
    """The row numbers of the group named `group_path` (a filter over one column; empty when it is none)."""
    if not len(t):
        return np.zeros(0, np.int64)
    return np.flatnonzero(pc.fill_null(pc.equal(t.column("group"), group_path), False).to_numpy(
        zero_copy_only=False)).astype(np.int64)


def part_run(t: RunTable, rows: np.ndarray) -> Run:
    """The run of snapshot `t` whose rows are only `rows` (row numbers)."""
    run = Run(t)
    run.__dict__["rows"] = rows_of(t, rows)  # the part's rows in place of the whole run's (a cached property)
    return run


def group_part(t: RunTable, path: str) -> Collection:
    """The group `path` names (the group or one of its rollouts) with its rollouts, as a collection; no records
    when the run has no such group."""
    return run_collection(part_run(t, group_rows(t, group_of(path))))


def whole_rows(t: RunTable) -> int:
    """How many rows the whole run's index has: its groups and its rollouts with an artifact."""
    if not len(t):
        return 0
    return pc.count_distinct(t.column("group")).as_py() + len(t) - t.column("path").null_count


def first_part(t: RunTable, limit: int | None = None) -> Collection:
    """The run's first `limit` (the collection's MAX_RECORDS) index rows in its order (segment, version, group,
    rollout: `open_run`'s), as a collection whose notes say how many rows the whole run has."""
    if not len(t):
        return run_collection(part_run(t, np.zeros(0, np.int64)))
    keys = pa.table({"s": pc.cast(t.column("segment"), pa.string()), "v": t.column("policy_version"),
                     "g": t.column("group_id"), "r": t.column("rollout")})
    order = pc.sort_indices(keys, sort_keys=[("s", "ascending"), ("v", "ascending"), ("g", "ascending"),
                                             ("r", "ascending")])
    first = order.slice(0, collection.MAX_RECORDS if limit is None else limit)  # each row is at least one index row
    # whole groups only: a group cut at the edge would say it has fewer rollouts than it has
    groups = pc.unique(pc.take(t.column("group"), first))
    rows = np.flatnonzero(pc.fill_null(pc.is_in(t.column("group"), value_set=groups), False).to_numpy(
        zero_copy_only=False)).astype(np.int64)
    c = run_collection(part_run(t, rows))
    whole = whole_rows(t)
    cut = [n for n in c.notes if "; the index shows the first" not in n]
    if whole > len(c.records):
        cut.append(f"{whole:,} rows; the index shows the first {len(c.records):,}")
    return dataclasses.replace(c, notes=cut, part_of=whole if whole > len(c.records) else None)
