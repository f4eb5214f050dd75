"""Two recorded runs side by side: each one's per-version numbers (the run page draws them overlaid), the tasks
both ran, and one such task across both (each side's groups and rollouts of it, their rewards and fates).

Pure functions over two `rollout_trace.artifact.run.Run`s and their `VersionStats` (viewer/run_stats.py computes
those once per run state), returning typed records: the run page (viewer/ui/run_view.py `versus`), the MCP tool
`compare_runs` (viewer/ui/mcp_tools.py) and `python -m viewer compare-runs` (viewer/cli/compare.py) send them. No Gradio here.

A task is matched by its task id (the dataset row's digest, the same prompt in both runs); a task of one run
whose id the other does not have is matched by its title when exactly one task of the other has that title
(a run of a re-built dataset gives its tasks new ids).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rollout_trace.artifact.run import Run

from .run_stats import TaskTrack, VersionStats, task_track

MAX_SHARED = 200  # tasks listed in the picker


class RunSide(msgspec.Struct, frozen=True, kw_only=True):
    """One of the two runs: what it is and its numbers per policy version."""

    src: str  # the source as the visitor named it
    model: str
    versions: list[VersionStats]
    groups: int
    rollouts: int
    pass_rate: float | None  # over the whole run (`pass_rate`'s rule)
    reward_mean: float | None  # over every scored rollout of the run


class SharedTask(msgspec.Struct, frozen=True, kw_only=True):
    """A task both runs scored: its id in each (equal unless matched by title) and at how many versions."""

    task_id: str  # in run A
    b_task_id: str  # in run B
    title: str
    by: str  # "id" or "title": how the two were matched
    a_versions: int
    b_versions: int


class RunCompare(msgspec.Struct, frozen=True, kw_only=True):
    """Two runs compared: A is the run whose page this is, B the one the visitor chose."""

    serial: int
    a: RunSide
    b: RunSide
    tasks: list[SharedTask]  # tasks both ran, those at the most versions first
    task: SharedTask | None  # the one followed across both
    a_task: TaskTrack | None  # its groups and rollouts in A
    b_task: TaskTrack | None  # ... in B
    notes: list[str]  # what differs in kind (model, trainer) or could not be matched


class VersionPair(msgspec.Struct, frozen=True, kw_only=True):
    """One policy version in both runs (None on a side that has no such version)."""

    version: int
    a: VersionStats | None
    b: VersionStats | None


def by_version(c: RunCompare) -> list[VersionPair]:
    """The two runs' versions aligned: every version either has, in order."""
    a, b = {s.version: s for s in c.a.versions}, {s.version: s for s in c.b.versions}
    return [VersionPair(version=v, a=a.get(v), b=b.get(v)) for v in sorted(a.keys() | b.keys())]


def side(src: str, run: Run, stats: Sequence[VersionStats]) -> RunSide:
    """One run's side, from its columns (a run of any size: no Python row per rollout)."""
    t = run.table
    reward = pc.fill_null(t.column("reward"), math.nan).to_numpy(zero_copy_only=False).astype(np.float64)
    scored = reward[np.isfinite(reward)]
    env = t.column("env_reward")
    verified = len(env) - env.null_count
    passed = pc.sum(pc.fill_null(pc.greater_equal(env, 1.0), False).cast(pa.int64())).as_py() or 0
    return RunSide(src=src, model=run.manifest.model, versions=list(stats), groups=len(np.unique(t.group_keys())),
                   rollouts=len(t), pass_rate=passed / verified if verified else None,
                   reward_mean=float(scored.mean()) if len(scored) else None)


def _tasks(run: Run) -> dict[str, tuple[str, set[int]]]:
    """Each task of the run: its title (its first group's) and the versions it was scored at."""
    t = run.table
    if not len(t):
        return {}
    got = pa.table({"task": pc.cast(t.column("task_id"), pa.string()), "title": pc.cast(t.column("title"), pa.string()),
                    "version": t.column("policy_version")}).filter(pc.is_valid(t.column("task_id")))
    versions = got.group_by(["task", "version"], use_threads=False).aggregate([])
    first = got.group_by("task", use_threads=False).aggregate([("title", "first")])
    out: dict[str, tuple[str, set[int]]] = {k: (title, set()) for k, title in
                                            zip(first["task"].to_pylist(), first["title_first"].to_pylist(), strict=True)}
    for k, v in zip(versions["task"].to_pylist(), versions["version"].to_pylist(), strict=True):
        out[k][1].add(v)
    return out


def shared_tasks(a: Run, b: Run) -> list[SharedTask]:
    """The tasks both runs scored, by id, else by a title unique in B; most versions (both sides) first."""
    ta, tb = _tasks(a), _tasks(b)
    titles: dict[str, list[str]] = defaultdict(list)
    for tid, (title, _) in tb.items():
        titles[title].append(tid)
    out = []
    for tid, (title, versions) in ta.items():
        if tid in tb:
            bid, by = tid, "id"
        elif len(titles.get(title, ())) == 1:
            bid, by = titles[title][0], "title"
        else:
            continue
        out.append(SharedTask(task_id=tid, b_task_id=bid, title=title, by=by, a_versions=len(versions),
                              b_versions=len(tb[bid][1])))
    out.sort(key=lambda t: (-(t.a_versions + t.b_versions), t.title))
    return out


def compare(a_src: str, a: Run, a_stats: Sequence[VersionStats], b_src: str, b: Run, b_stats: Sequence[VersionStats],
            task: str | None = None, serial: int = 0) -> RunCompare:
    """A and B side by side; with `task` (a task id of A, as `shared_tasks` names it) that task in both."""
    tasks = shared_tasks(a, b)
    chosen = next((t for t in tasks if t.task_id == task), None) if task else None
    notes = []
    if a_src.strip() == b_src.strip():
        notes.append("both sides are the same run: each line lies on the other")
    if a.manifest.model != b.manifest.model:
        notes.append(f"the runs trained different models ({a.manifest.model} and {b.manifest.model})")
    ta, tb = a.manifest.versions.get("trl"), b.manifest.versions.get("trl")
    if ta != tb:
        notes.append(f"the runs were recorded with different TRL versions ({ta or '?'} and {tb or '?'})")
    if not tasks:
        notes.append("the runs share no task (by task id or title)")
    elif by_title := sum(t.by == "title" for t in tasks):
        notes.append(f"{by_title} of the {len(tasks)} shared tasks were matched by title (their task ids differ)")
    if task and chosen is None:
        notes.append("the other run has no task matching the one asked for")
    return RunCompare(serial=serial, a=side(a_src, a, a_stats), b=side(b_src, b, b_stats), tasks=tasks[:MAX_SHARED],
                      task=chosen, a_task=task_track(a, chosen.task_id) if chosen else None,
                      b_task=task_track(b, chosen.b_task_id) if chosen else None, notes=notes)
