"""A part of a recorded run as a Collection, from its snapshot's columns (rollout_trace/artifact/run_table.py): one
group without making a Python row of every rollout of the run.

A page that opens one group of eight needs eight rows, not a million: the part's rows are found by the group's
number, and only those become RunRows (run.py `rows_of`, the same rows `open_run` makes) and their collection
rows (`run_collection`).

    c = group_part(run_table(root), "groups/seg-v000007-g000012")   # that group and its rollouts
"""

from __future__ import annotations

import posixpath

import numpy as np

from rollout_trace.artifact.collection import Collection, run_collection
from rollout_trace.artifact.run import Run
from rollout_trace.artifact.run_table import RunTable


def group_of(path: str) -> str:
    """The group a row path names: a group's own (`groups/<name>`), or a rollout's parent."""
    path = path.strip("/")
    return posixpath.dirname(path) if path.count("/") >= 2 else path


def group_rows(t: RunTable, group_path: str) -> np.ndarray:
    """The row numbers of the group named `group_path` (empty when it is none), found by its number
    (`RunTable.named`): no name is made for the run's other rollouts."""
    return t.named("group", group_path)


def part_run(t: RunTable, rows: np.ndarray) -> Run:
    """The run of snapshot `t` whose rows are only `rows` (row numbers)."""
    return Run(t, at=np.asarray(rows, dtype=np.int64))


def group_part(t: RunTable, path: str) -> Collection:
    """The group `path` names (the group or one of its rollouts) with its rollouts, as a collection; no records
    when the run has no such group."""
    return run_collection(part_run(t, group_rows(t, group_of(path))))


def whole_rows(t: RunTable) -> int:
    """How many rows the whole run's index has: its groups and its rollouts with an artifact."""
    return t.index_rows()
