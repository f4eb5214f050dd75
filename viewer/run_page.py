"""A recorded TRL run as its page shows it: per-version numbers, health notes, versions → groups, one task
followed across versions, and the deep link that names a place in the run.

Pure functions over `rollout_trace.artifact.run.Run` (its index rows only: nothing here opens a rollout
folder), returning typed records (viewer/ui/run_view.py sends them to viewer/assets/run_page.js, which
writes every text with textContent and draws the charts from `RunBody.versions`). No Gradio here.

Definitions (the page says them too):
- **pass**: the rollout's verifier score (`env_reward`, the fraction of held-out tests passed) is 1.
- **pass rate**: passed rollouts over the rollouts with a verifier score (`pass_rate`, the one definition every
  number on the page uses: a version's, a task's group's, a task's per version).
- **zero spread**: every advantage of the group is 0 (all its scored rewards equal): GRPO learns nothing
  from it.
- **dropped**: a rollout none of whose rows was trained (`RunRow.dropped`: failed, no rows, stale,
  oversize, read-ahead, in-batcher, resume-skip, in-queue, unknown).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

import msgspec

from rollout_trace.artifact.numbers import finite_summary
from rollout_trace.artifact.run import Run, RunGroup, RunRow

from .untrusted import whole

ZERO_ADVANTAGE = 1e-9
MAX_NOTES = 8
UNSCORABLE_SHARE = 0.2  # a suffix of versions where at least this share of rollouts has no reward is noted
ZERO_SPREAD_SHARE = 0.5  # ... where at least half the groups teach GRPO nothing
TIMEOUT_SHARE = 0.2
MIN_HITS = 3  # one timed-out rollout in the last small version is not a trend


class VersionStats(msgspec.Struct, frozen=True, kw_only=True):
    """One policy version's numbers, over the groups TRL scored at it."""

    version: int
    groups: int
    rollouts: int
    scored: int  # rollouts with a reward
    reward_mean: float | None
    reward_sd: float | None  # population standard deviation over scored rollouts
    reward_min: float | None
    reward_max: float | None
    passed: int  # rollouts whose verifier score is 1
    pass_rate: float | None  # passed / rollouts with a verifier score
    zero_spread: int  # groups whose advantages are all 0
    trained_tokens: int
    trained: int  # rollouts with a trained row
    dropped: dict[str, int]  # cause -> rollouts
    timeouts: int
    unscorable: int  # no reward: TRL's NaN (unscorable) or a failed session
    # The trainer mismatch over its re-scored rollouts (`viewer rescore` in place: the run's rescored/ log), the
    # latest part of each: how far the trainer's logprobs are from the engine's, so staleness that grows shows.
    rescored: int = 0  # rollouts of this version with a rescore part
    mismatch_max: float | None = None  # the largest |log ratio| trainer - engine over their tokens
    outside_share: float | None = None  # share of their tokens with a ratio outside TRL's clip band [0.8, 1.2]


class RunGroupRow(msgspec.Struct, frozen=True, kw_only=True):
    """One group as the versions list shows it."""

    path: str  # its row in the run's collection (the group map opens it)
    segment: str
    group_id: int
    version: int
    task_id: str | None
    title: str
    k: int
    rewards: list[float | None]
    reward_mean: float | None
    zero_spread: bool
    passed: int
    trained_tokens: int
    dropped: int
    timeouts: int


class TaskRollout(msgspec.Struct, frozen=True, kw_only=True):
    rollout: int
    path: str | None  # None: failed before it produced an artifact (cannot be compared)
    reward: float | None
    passed: bool
    status: str
    verified: bool = False  # it has a verifier score: it counts in a pass rate


class TaskGroup(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    path: str
    group_id: int
    segment: str
    rollouts: list[TaskRollout]
    pass_rate: float | None


class TaskPoint(msgspec.Struct, frozen=True):
    """A followed task's pass rate at one version, over its rollouts with a verifier score there."""

    version: int
    pass_rate: float


class TaskTrack(msgspec.Struct, frozen=True, kw_only=True):
    """One task (prompt) followed across the versions it was scored at."""

    task_id: str
    title: str
    groups: list[TaskGroup]  # by version
    pass_rates: list[TaskPoint]  # by version: the page's pass-rate chart
    first_solved: int | None  # the first version at which a rollout of it passed
    versions: int  # how many versions it appeared at


class TaskChoice(msgspec.Struct, frozen=True):
    task_id: str
    title: str
    groups: int


class RunHead(msgspec.Struct, frozen=True, kw_only=True):
    """The top of the run page: what the run is, whether it is still being recorded, and the health notes."""

    serial: int
    src: str
    model: str
    trl: str
    started_at: str
    live: bool
    versions: int
    groups: int
    rollouts: int
    notes: list[str]  # plain-language health notes, most important first
    problems: list[str]  # what the reader found wrong (file, line, field)


class RunBody(msgspec.Struct, frozen=True, kw_only=True):
    """Versions → groups: every version's numbers; the groups of the open version; the tasks to follow."""

    serial: int
    src: str
    versions: list[VersionStats]
    open_version: int | None
    groups: list[RunGroupRow]  # of open_version
    tasks: list[TaskChoice]  # tasks seen at more than one version first, then by first appearance
    task: TaskTrack | None = None
    refresh: bool = False  # sent while following a growing run: the page keeps its open version and task


def collection_path(run: Run, path: str | None) -> str | None:
    """A run path as the run's collection names it (a zip holding the run folder adds its folder name)."""
    prefix = run.store.prefix if run.store is not None else ""
    return f"{prefix}/{path}" if prefix and path is not None else path


def passed(r: RunRow) -> bool:
    return r.env_reward is not None and r.env_reward >= 1.0


def pass_rate(rows: Sequence[RunRow]) -> float | None:
    """Passed rollouts over those with a verifier score; None when none has one."""
    verified = [r for r in rows if r.env_reward is not None]
    return sum(passed(r) for r in verified) / len(verified) if verified else None


def _zero_spread(g: RunGroup) -> bool:
    return all(abs(a) < ZERO_ADVANTAGE for a in g.advantages)


def mismatch(run: Run) -> dict[int, tuple[int, float | None, float | None]]:
    """Per version: (re-scored rollouts, max |log ratio|, share of tokens outside the clip band), over each
    rollout's latest rescore line."""
    version = {(r.segment, r.group_id, r.rollout): r.policy_version for r in run.rows}
    latest = {(x.segment, x.group_id, x.rollout): x for x in run.rescored}  # the log's later line wins
    by: dict[int, list] = defaultdict(list)
    for key, x in latest.items():
        if key in version:
            by[version[key]].append(x)
    out = {}
    for v, xs in by.items():
        ratios = [x.max_abs_log_ratio for x in xs if x.max_abs_log_ratio is not None]
        with_engine = sum(x.with_engine for x in xs)
        out[v] = (len(xs), max(ratios) if ratios else None,
                  sum(x.outside_clip for x in xs) / with_engine if with_engine else None)
    return out


def version_stats(run: Run) -> list[VersionStats]:
    """One VersionStats per policy version, in version order."""
    rescored = mismatch(run)
    rows_by: dict[int, list[RunRow]] = defaultdict(list)
    for r in run.rows:
        rows_by[r.policy_version].append(r)
    groups_by: dict[int, list[RunGroup]] = defaultdict(list)
    for g in run.groups:
        groups_by[g.policy_version].append(g)
    out = []
    for v in sorted(rows_by):
        rows = rows_by[v]
        reward = finite_summary(r.reward for r in rows)
        n_pass = sum(passed(r) for r in rows)
        out.append(VersionStats(
            version=v, groups=len(groups_by[v]), rollouts=len(rows), scored=reward.n,
            reward_mean=reward.mean, reward_sd=reward.sd, reward_min=reward.min, reward_max=reward.max,
            passed=n_pass, pass_rate=pass_rate(rows),
            zero_spread=sum(_zero_spread(g) for g in groups_by[v]),
            trained_tokens=sum(r.trainer_tokens for r in rows),  # the rows the trainer trained, not every row queued
            trained=sum(r.trained_step is not None for r in rows),
            dropped=dict(sorted(Counter(r.dropped for r in rows if r.dropped is not None).items())),
            timeouts=sum(r.timed_out for r in rows), unscorable=len(rows) - reward.n,
            rescored=rescored.get(v, (0, None, None))[0], mismatch_max=rescored.get(v, (0, None, None))[1],
            outside_share=rescored.get(v, (0, None, None))[2]))
    return out


# -- health notes ------------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{round(100 * x)}%"


def _num(x: float) -> str:
    return f"{x:g}" if x == round(x, 3) else f"{x:.3f}"


def _spans(versions: Sequence[int]) -> str:
    """[3, 4, 5, 9] -> "versions 3–5 and 9"; [12] -> "version 12"."""
    parts: list[list[int]] = []
    for v in versions:
        if parts and v == parts[-1][-1] + 1:
            parts[-1].append(v)
        else:
            parts.append([v])
    texts = [f"{p[0]}–{p[-1]}" if len(p) > 1 else str(p[0]) for p in parts]
    one = len(versions) == 1
    joined = texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]
    return ("version " if one else "versions ") + joined


def _since(stats: Sequence[VersionStats], part, whole, threshold: float) -> tuple[int, float] | None:
    """The earliest version from which on every version's share part/whole is at least `threshold`, and the
    share over those versions; None when the last version's share is below it."""
    start = None
    for i in range(len(stats) - 1, -1, -1):
        w = whole(stats[i])
        if not w or part(stats[i]) / w < threshold:
            break
        start = i
    if start is None:
        return None
    tail = stats[start:]
    total, hit = sum(whole(s) for s in tail), sum(part(s) for s in tail)
    return (stats[start].version, hit / total) if hit >= MIN_HITS else None


def _suffix_note(stats: Sequence[VersionStats], got: tuple[int, float] | None, what: str) -> str | None:
    if got is None:
        return None
    v, share = got
    if v == stats[0].version:
        return f"{_pct(share)} of {what} at every version" if len(stats) > 1 else f"{_pct(share)} of {what}"
    return f"{_pct(share)} of {what} since version {v}"


def recorder_notes(run: Run) -> list[str]:
    """What the recorder could not record, first on the page: groups it failed to write or lost, a start
    that failed, and the rows the trainer trained with nothing recorded behind them."""
    notes = []
    errors = sum(s.end.write_errors for s in run.segments if s.end is not None)
    lost = sum(s.end.groups_lost for s in run.segments if s.end is not None)
    first = next((s.end.first_error for s in run.segments if s.end is not None and s.end.first_error), None)
    if errors or lost:
        notes.append(f"the recorder could not write {errors + lost} scored group(s) ({errors} write errors, {lost} "
                     "still queued when it stopped): this run's record is incomplete"
                     + (f"; first: {first}" if first else ""))
    elif first:
        notes.append(f"the recorder failed: {first}")
    for s in run.segments:
        if s.end is not None and s.end.start_error:
            notes.append(f"segment {s.start.segment} recorded nothing: {s.end.start_error}")
    recorded = {(e.segment, r.ordinal) for e in run.entries.values() for r in e.rows}
    missing = [c for c in run.consumed if c.fate == "trained" and (c.segment, c.ordinal) not in recorded]
    if missing:
        steps = sorted({c.step for c in missing if c.step is not None})
        notes.append(f"{len(missing)} row(s) the trainer trained have nothing recorded behind them (step(s) "
                     f"{', '.join(map(str, steps[:6]))}): `python -m viewer check` names them")
    misfits = sum(r.problem is not None for r in run.rows)
    if misfits:
        notes.append(f"{misfits} rollout(s) recorded without their files (TRL's rows, reward and advantage kept)")
    return notes


def health_notes(stats: Sequence[VersionStats], run_rows: Sequence[RunRow] = (), live: bool = False) -> list[str]:
    """Plain-language notes where something is off, most important first (at most MAX_NOTES)."""
    notes: list[str] = []
    if not stats:
        return ["no rollout is recorded yet" + (": the run is being recorded, its first groups appear here"
                                                 if live else "")]
    same: dict[float, list[int]] = defaultdict(list)  # every reward at a version is one value
    by_version: dict[int, set[float]] = defaultdict(set)
    for r in run_rows:
        if r.reward is not None and math.isfinite(r.reward):
            by_version[r.policy_version].add(r.reward)
    for s in stats:
        values = by_version.get(s.version)
        if s.scored >= 2 and values is not None and len(values) == 1:
            same[next(iter(values))].append(s.version)
    for value, versions in sorted(same.items(), key=lambda kv: -len(kv[1])):
        notes.append(f"every reward at {_spans(versions)} is {_num(value)}: GRPO learns nothing there")
    for note in (
        _suffix_note(stats, _since(stats, lambda s: s.unscorable, lambda s: s.rollouts, UNSCORABLE_SHARE),
                     "rollouts unscorable (no reward)"),
        _suffix_note(stats, _since(stats, lambda s: s.zero_spread, lambda s: s.groups, ZERO_SPREAD_SHARE),
                     "groups with zero reward spread (GRPO learns nothing from them)"),
        _suffix_note(stats, _since(stats, lambda s: s.timeouts, lambda s: s.rollouts, TIMEOUT_SHARE),
                     "rollouts timed out"),
    ):
        if note is not None:
            notes.append(note)
    causes: Counter[str] = Counter()
    for s in stats:
        causes.update(s.dropped)
    waiting = causes.pop("in-queue", 0) if live else 0  # while training runs, recorded rows wait to be taken
    total = sum(s.rollouts for s in stats)
    never = sum(causes.values())
    if never:
        detail = ", ".join(f"{c} {n}" for c, n in causes.most_common())
        notes.append(f"{never} of {total} rollouts were never trained ({detail})")
    if waiting:
        notes.append(f"{waiting} rollouts recorded and not yet taken by the trainer (training runs)")
    if stats and all(s.passed == 0 for s in stats) and any(s.pass_rate is not None for s in stats):
        notes.append("no rollout passed every held-out test at any version")
    return notes[:MAX_NOTES]


# -- versions → groups, tasks ------------------------------------------------------------------------


def group_rows(run: Run, version: int) -> list[RunGroupRow]:
    members: dict[str, list[RunRow]] = defaultdict(list)
    for r in run.rows:
        if r.policy_version == version:
            members[r.group].append(r)
    out = []
    for g in run.groups:
        if g.policy_version != version:
            continue
        ms = members[g.path]
        out.append(RunGroupRow(
            path=collection_path(run, g.path) or g.path, segment=g.segment, group_id=g.group_id, version=version, task_id=g.task_id, title=g.title,
            k=g.k, rewards=list(g.rewards), reward_mean=g.reward_mean, zero_spread=_zero_spread(g),
            passed=sum(passed(m) for m in ms), trained_tokens=sum(m.trainer_tokens for m in ms),
            dropped=sum(m.dropped is not None for m in ms), timeouts=sum(m.timed_out for m in ms)))
    return out


def task_choices(run: Run, limit: int = 200) -> list[TaskChoice]:
    """The tasks of the run, those scored at more than one version first (they can be followed)."""
    seen: dict[str, tuple[str, set[int], int]] = {}
    for i, g in enumerate(run.groups):
        if g.task_id is None:
            continue
        title, versions, first = seen.get(g.task_id, (g.title, set(), i))
        versions.add(g.policy_version)
        seen[g.task_id] = (title, versions, first)
    order = sorted(seen.items(), key=lambda kv: (-(len(kv[1][1]) > 1), kv[1][2]))
    return [TaskChoice(tid, title, len(vs)) for tid, (title, vs, _) in order[:limit]]


def task_track(run: Run, task_id: str) -> TaskTrack | None:
    """Every group of one task, by version, its pass rate at each, and the first version that solved it."""
    rows: dict[str, list[RunRow]] = defaultdict(list)
    for r in run.rows:
        if r.task_id == task_id:
            rows[r.group].append(r)
    groups = []
    title = ""
    for g in run.groups:
        if g.task_id != task_id:
            continue
        title = title or g.title
        ms = sorted(rows[g.path], key=lambda r: r.rollout)
        groups.append(TaskGroup(
            version=g.policy_version, path=collection_path(run, g.path) or g.path, group_id=g.group_id, segment=g.segment,
            rollouts=[TaskRollout(rollout=m.rollout, path=collection_path(run, m.path), reward=m.reward, passed=passed(m),
                                  status=m.status, verified=m.env_reward is not None) for m in ms],
            pass_rate=pass_rate(ms)))
    if not groups:
        return None
    groups.sort(key=lambda t: (t.version, t.segment, t.group_id))
    solved = [t.version for t in groups if any(x.passed for x in t.rollouts)]
    return TaskTrack(task_id=task_id, title=title, groups=groups, pass_rates=_pass_rates(groups),
                     first_solved=min(solved) if solved else None, versions=len({t.version for t in groups}))


def _pass_rates(groups: Sequence[TaskGroup]) -> list[TaskPoint]:
    """Per version, over the task's rollouts with a verifier score (`pass_rate`'s rule)."""
    by: dict[int, list[bool]] = defaultdict(list)
    for g in groups:
        by[g.version] += [x.passed for x in g.rollouts if x.verified]
    return [TaskPoint(v, sum(xs) / len(xs)) for v, xs in sorted(by.items()) if xs]


# -- the deep link -----------------------------------------------------------------------------------


MAX_TEXT = 1000  # a source or a rollout path from the page
MAX_TASK = 64  # a task id (40 hex digits)


class RunRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What the run page asks (an event's data, a server function's request, a link's query), checked once:
    text cut to its bound, numbers whole and bounded or None. Any other shape is an empty request."""

    action: str = ""
    src: str = ""
    row: str = ""  # a group's or rollout's path in the run's collection
    a: str = ""  # compare: the two rollouts' paths
    b: str = ""
    task: str | None = None
    version: int | None = None
    turn: int = 0


def run_request(data: object) -> RunRequest:
    """`data` (untrusted: from the page or the URL) as a RunRequest."""
    if not isinstance(data, Mapping):
        return RunRequest()

    def text(key: str, most: int = MAX_TEXT) -> str:
        v = data.get(key)
        return v.strip()[:most] if isinstance(v, str) else ""

    return RunRequest(action=text("action", 16), src=text("src"), row=text("row"), a=text("a"), b=text("b"),
                      task=text("task", MAX_TASK) or None, version=whole(data.get("version")),
                      turn=whole(data.get("turn")) or 0)


def resolve_link(run: Run, params: Mapping[str, object]) -> tuple[str | None, str | None]:
    """(the group's path, a problem) for `version=V&group=G[&segment=S]`; (None, None) when the link names no
    group. Group ids restart in every segment: without `segment` the latest segment's group at V wins."""
    if "group" not in params:
        return None, None
    version, gid = whole(params.get("version")), whole(params.get("group"))
    if gid is None:
        return None, "the link's group is not a group id (a whole number)"
    seg = params.get("segment")
    found = [g for g in run.groups if g.group_id == gid and (version is None or g.policy_version == version)
             and (not isinstance(seg, str) or g.segment == seg)]
    if not found:
        where = f" at version {version}" if version is not None else ""
        return None, f"this run has no group {gid}{where}"
    return collection_path(run, found[-1].path), None
