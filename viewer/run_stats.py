"""A recorded TRL run as its page shows it: per-version numbers, health notes, versions → groups, one task
followed across versions, and the deep link that names a place in the run.

Pure functions over a run's index as Arrow columns (`rollout_trace.artifact.run_table.RunTable`: nothing
here opens a rollout folder, and only the rows a record shows become Python objects; a `Run` read by
`open_run` is turned into one), returning typed records (viewer/ui/run_view.py sends them to viewer/assets/src/run_page.js, which
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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rollout_trace.artifact.group import grpo_advantages, reward_spread
from rollout_trace.artifact.numbers import finite_summary
from rollout_trace.artifact.run import Run
from rollout_trace.artifact.run_columns import codes_in, filled, plain, segment_values
from rollout_trace.artifact.run_table import Reduction, RunTable, Step, register

from .numbers import percent
from .page_link import MAX_SRC_CHARS
from .untrusted import number, whole

ZERO_ADVANTAGE = 1e-9
MAX_TASK_GROUPS = 24  # a followed task's groups listed with their rollouts (its chart has every version)
MAX_NOTES = 8
UNSCORABLE_SHARE = 0.2  # a suffix of versions where at least this share of rollouts has no reward is noted
ZERO_SPREAD_SHARE = 0.5  # ... where at least half the groups teach GRPO nothing
TIMEOUT_SHARE = 0.2
MIN_HITS = 3  # one timed-out rollout in the last small version is not a trend
SPANS_SHOWN = 8  # a note names at most this many runs of versions (a 2,000-version run's list is a wall of numbers)


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
    verified: int  # rollouts with a verifier score (a failed session has none): the pass rate's denominator
    pass_rate: float | None  # passed / verified
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
    verified: int  # its rollouts with a verifier score: what `passed` is out of, as a version's pass rate counts
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
    passed: int = 0  # its rollouts that passed there
    verified: int = 0  # ... that have a verifier score
    groups: int = 0  # its groups there


class TaskTrack(msgspec.Struct, frozen=True, kw_only=True):
    """One task (prompt) followed across the versions it was scored at."""

    task_id: str
    title: str
    groups: list[TaskGroup]  # by version: at most MAX_TASK_GROUPS of them, those nearest the version asked
    pass_rates: list[TaskPoint]  # by version, over every rollout of it: the page's pass-rate chart
    first_solved: int | None  # the first version at which a rollout of it passed
    versions: int  # how many versions it appeared at
    group_count: int = 0  # how many groups of it the run has (`groups` lists some)


class TaskChoice(msgspec.Struct, frozen=True):
    task_id: str
    title: str
    versions: int  # how many policy versions scored it (a task scored at one version cannot be followed)


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
    # while live, whether the page reads the run again: False for a copy of a live run (a zip, a Hub run pinned
    # to a commit), which no later read changes (RunTable.followed)
    followed: bool = False
    # while followed, how often the page sees the run read again when that is less often than it asks (a large
    # run, a Hub run: RunFollower.every_s); 0: at every ask
    every_s: float = 0.0
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
    # The link's view of the versions (kept in the URL as vsort= and smooth=, restored on load): the versions
    # table sorted by one of SORT_KEYS ("-KEY" descending, "" run order) and the line charts' EMA weight (None: the
    # link names none, the page's own: run_page.js smooths a long run)
    sort: str = ""
    smooth: float | None = None


RunLike = Run | RunTable
ROW = dict[str, Any]  # one rollout's columns, as RunTable.page gives them


def table_of(run: RunLike) -> RunTable:
    """The run's snapshot: every run, local, zipped or on the Hub, is read as one (a Run is a view of it)."""
    return run if isinstance(run, RunTable) else run.table


def collection_path(run: RunLike, path: str | None) -> str | None:
    """A run path as the run's collection names it (a zip holding the run folder adds its folder name)."""
    prefix = table_of(run).prefix
    return f"{prefix}/{path}" if prefix and path is not None else path


def passed(r: Any) -> bool:
    env = r["env_reward"] if isinstance(r, dict) else r.env_reward
    return env is not None and env >= 1.0


def pass_rate(rows: Sequence[Any]) -> float | None:
    """Passed rollouts over those with a verifier score; None when none has one."""
    verified = [r for r in rows if (r["env_reward"] if isinstance(r, dict) else r.env_reward) is not None]
    return sum(passed(r) for r in verified) / len(verified) if verified else None


def _verdicts(env: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Of rollouts' verifier scores (`env_reward`): which have one, and which passed (`passed`, in numbers)."""
    return pc.is_valid(env).to_numpy(zero_copy_only=False), _np(pc.greater_equal(env, 1.0), False).astype(bool)


def _advantages(members: Sequence[ROW]) -> list[float]:
    """TRL's advantage where it queued a row; the same formula only for a rollout without rows (run.py)."""
    if all(m["advantage"] is not None for m in members):
        return [m["advantage"] for m in members]
    formula = grpo_advantages([m["reward"] for m in members])
    return [m["advantage"] if m["advantage"] is not None else a for m, a in zip(members, formula, strict=True)]


def _zero(advantages: Sequence[float]) -> bool:
    return all(abs(a) < ZERO_ADVANTAGE for a in advantages)


def _rows(t: RunTable, where: pc.Expression) -> dict[str, list[ROW]]:
    """The rollouts matching `where` by group, each group's in rollout order, groups in run order."""
    return _by_group(t.page(where, limit=len(t), columns=_ROW_COLUMNS)[1])


def _by_group(rows: list[ROW]) -> dict[str, list[ROW]]:
    """Rollouts (rows of _ROW_COLUMNS) by group, each group's in rollout order, groups in run order."""
    by: dict[str, list[ROW]] = defaultdict(list)
    for r in sorted(rows, key=lambda r: (r["segment"], r["policy_version"], r["group_id"], r["rollout"])):
        by[r["group"]].append(r)
    return by


_ROW_COLUMNS = ["segment", "policy_version", "group_id", "group", "rollout", "path", "status", "reward",
                "env_reward", "advantage", "task_id", "title", "timed_out", "trainer_tokens", "dropped"]


def segments(run: RunLike) -> set[str]:
    """The segments the run's index names."""
    return set(pc.unique(pc.cast(table_of(run).table["segment"], pa.string())).to_pylist())


def mismatch(run: RunLike) -> dict[int, tuple[int, float | None, float | None]]:
    """Per version: (re-scored rollouts, max |log ratio|, share of tokens outside the clip band), over each
    rollout's latest rescore line."""
    t = table_of(run)
    latest = {(x.segment, x.group_id, x.rollout): x for x in t.run_files.rescored}  # the log's later line wins
    if not latest:
        return {}
    keys = pa.table({"segment": [k[0] for k in latest], "group_id": pa.array([k[1] for k in latest], pa.int64()),
                     "rollout": pa.array([k[2] for k in latest], pa.int64()), "i": pa.array(range(len(latest)))})
    mine = pa.table({"segment": pc.cast(t.table["segment"], pa.string()), "group_id": t.table["group_id"],
                     "rollout": t.table["rollout"], "version": t.table["policy_version"]})
    hit = keys.join(mine, ["segment", "group_id", "rollout"], join_type="inner")
    xs = list(latest.values())
    by: dict[int, list] = defaultdict(list)
    for i, v in zip(hit["i"].to_pylist(), hit["version"].to_pylist(), strict=True):
        by[v].append(xs[i])
    out = {}
    for v, got in by.items():
        ratios = [x.max_abs_log_ratio for x in got if x.max_abs_log_ratio is not None]
        with_engine = sum(x.with_engine for x in got)
        out[v] = (len(got), max(ratios) if ratios else None,
                  sum(x.outside_clip for x in got) / with_engine if with_engine else None)
    return out


def _np(col: pa.ChunkedArray | pa.Array, fill: Any) -> np.ndarray:
    if not len(col):
        return np.zeros(0)
    return filled(col, fill)


def _group_partial(keys: np.ndarray, version: np.ndarray, advantage: Any) -> np.ndarray:
    """Of some rows (one shard's): each group's key, least version, rows, rows whose advantage is 0 and rows
    without one, as the columns of one int64 array (a group cut by a shard has a partial in each)."""
    small = pc.fill_null(pc.less(pc.abs(advantage), ZERO_ADVANTAGE), False).to_numpy(zero_copy_only=False)
    missing = pc.is_null(advantage).to_numpy(zero_copy_only=False)
    return _by_key(keys, np.stack([version, np.ones(len(keys), np.int64), small.astype(np.int64),
                                   missing.astype(np.int64)], axis=1))


def _by_key(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """[key, least of column 0, sums of the others] per distinct key of `keys`, in key order: by adding each
    key's rows side by side when they are in key order (a run's groups, as recorded), else after a sort."""
    if not len(keys):
        return np.zeros((0, values.shape[1] + 1), np.int64)
    if not bool(np.all(keys[1:] >= keys[:-1])):
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return np.column_stack([keys[starts], np.minimum.reduceat(values[:, 0], starts),
                            np.add.reduceat(values[:, 1:], starts, axis=0)])


def _zero_spread(t: RunTable, parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(each group's version, whether its advantages are all 0), over every group of the run, from its shards'
    partials (`_group_partial`): in numbers where TRL gave every rollout an advantage, by the formula (Python,
    those groups' rows only) where it did not."""
    got = np.concatenate(parts) if parts else np.zeros((0, 5), np.int64)
    got = _by_key(got[:, 0], got[:, 1:]) if len(got) and not bool(np.all(got[1:, 0] > got[:-1, 0])) else got
    groups, vmin, count, small, missing = got.T
    zero = small == count
    if missing.any():
        key = t.group_keys()
        rows = np.flatnonzero(np.isin(key, groups[missing > 0]))
        members_of: dict[int, list[ROW]] = defaultdict(list)
        for k, m in zip(key[rows].tolist(), t.take(rows, _ROW_COLUMNS).to_pylist(), strict=True):
            members_of[k].append(m)
        at = {k: i for i, k in enumerate(groups.tolist())}
        for k, members in members_of.items():
            zero[at[k]] = _zero(_advantages(sorted(members, key=lambda m: m["rollout"])))
    return vmin, zero


# a version's numbers added up over the shards: what `_version_parts` sums per version, in this order
_SUMMED = ("rollouts", "timeouts", "tokens", "trained", "passed", "verified")
_VERSION_READS = ("policy_version", "reward", "env_reward", "timed_out", "advantage", "trainer_tokens",
                  "trained_step", "dropped")


def _version_parts(t: RunTable) -> tuple[Step, Callable[[], list[VersionStats]]]:
    """The per-version numbers shard by shard (a reduction, `RunTable.reduced`, in a pass of its own): no column
    of every rollout is held for them, only each shard's sums per version and group, and the finite rewards (every
    one, until the end: a version's sd is exact, `finite_summary`)."""
    keys = t.group_keys()
    versions: list[np.ndarray] = []
    sums: list[np.ndarray] = []
    rewards: dict[int, list[np.ndarray]] = defaultdict(list)
    groups: list[np.ndarray] = []
    dropped: dict[int, Counter[str]] = defaultdict(Counter)

    def step(start: int, part: pa.Table) -> None:
        n = part.num_rows
        ver = part["policy_version"].to_numpy()
        # a run's rows are in version order as recorded: then every column is read in place, not copied sorted
        order: Any = slice(None) if bool(np.all(ver[1:] >= ver[:-1])) else np.argsort(ver, kind="stable")
        ordered = ver[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if n else np.zeros(0, np.int64)
        verified, passes = _verdicts(part["env_reward"])
        summed = np.stack([np.ones(n, np.int64), _np(part["timed_out"], False).astype(np.int64),
                           _np(part["trainer_tokens"], 0).astype(np.int64),
                           pc.is_valid(part["trained_step"]).to_numpy(zero_copy_only=False).astype(np.int64),
                           passes.astype(np.int64), verified.astype(np.int64)], axis=1)
        if n:
            versions.append(ordered[starts])
            sums.append(np.add.reduceat(summed[order], starts, axis=0))
            reward = _np(part["reward"], math.nan)[order]
            for v, a, b in zip(ordered[starts].tolist(), starts.tolist(), [*starts[1:].tolist(), n], strict=True):
                got = reward[a:b]
                rewards[v].append(got[np.isfinite(got)])
        why = pa.table({"version": part["policy_version"], "dropped": plain(part["dropped"])}).filter(
            pc.is_valid(part["dropped"]))
        for x in why.group_by(["version", "dropped"]).aggregate([("version", "count")]).to_pylist():
            dropped[x["version"]][x["dropped"]] += x["version_count"]
        groups.append(_group_partial(keys[start:start + n], filled(part["policy_version"], np.iinfo(np.int64).max)
                                     .astype(np.int64), part["advantage"]))

    def finish() -> list[VersionStats]:
        every = np.concatenate(versions) if versions else np.zeros(0, np.int64)
        out = np.unique(every)
        if not len(out):
            return []
        total = np.zeros((len(out), len(_SUMMED)), np.int64)
        np.add.at(total, np.searchsorted(out, every), np.concatenate(sums))
        group_version, zero = _zero_spread(t, groups)
        at = np.searchsorted(out, group_version)
        col = dict(zip(_SUMMED, total.T.tolist(), strict=True))  # plain Python numbers, one list per column
        col["groups"] = np.bincount(at, minlength=len(out)).tolist()
        col["zeros"] = np.bincount(at, weights=zero.astype(np.int64), minlength=len(out)).astype(np.int64).tolist()
        rescored = mismatch(t)
        stats = []
        for i, version in enumerate(out.tolist()):
            summary = finite_summary(np.concatenate(rewards.pop(version)))
            mis = rescored.get(version, (0, None, None))
            rollouts, verified = col["rollouts"][i], col["verified"][i]
            stats.append(VersionStats(
                version=version, groups=col["groups"][i], rollouts=rollouts, scored=summary.n,
                reward_mean=summary.mean, reward_sd=summary.sd, reward_min=summary.min, reward_max=summary.max,
                passed=col["passed"][i], verified=verified, pass_rate=col["passed"][i] / verified if verified else None,
                zero_spread=col["zeros"][i],
                trained_tokens=col["tokens"][i],  # the rows the trainer trained, not every row queued
                trained=col["trained"][i], dropped=dict(sorted(dropped[version].items())),
                timeouts=col["timeouts"][i], unscorable=rollouts - summary.n,
                rescored=mis[0], mismatch_max=mis[1], outside_share=mis[2]))
        return stats

    return step, finish


# its pass makes the fates too (its columns lie beside the TRL rows'); the index's groups read reward and
# timed_out again, and on the Hub reading them again would fetch the advantages that lie between them and the rest
register("version_stats", Reduction(_VERSION_READS, _version_parts, alone=True, keep=("reward", "timed_out")))


def version_stats(run: RunLike) -> list[VersionStats]:
    """One VersionStats per policy version, in version order: once per run state (`RunTable.reduced`)."""
    t = table_of(run)
    return t.reduced("version_stats") if len(t) else []


# -- health notes ------------------------------------------------------------------------------------


def _num(x: float) -> str:
    return f"{x:g}" if x == round(x, 3) else f"{x:.3f}"


def _spans(versions: Sequence[int], most: int = SPANS_SHOWN) -> str:
    """[3, 4, 5, 9] -> "versions 3–5 and 9"; [12] -> "version 12"; past `most` runs of versions, the first ones,
    the last and how many versions in all: "versions 50, 100, … 2000 (40 versions)"."""
    parts: list[list[int]] = []
    for v in versions:
        if parts and v == parts[-1][-1] + 1:
            parts[-1].append(v)
        else:
            parts.append([v])
    texts = [f"{p[0]}–{p[-1]}" if len(p) > 1 else str(p[0]) for p in parts]
    if len(texts) > most:
        return f"versions {', '.join(texts[:most - 1])}, … {texts[-1]} ({len(versions)} versions)"
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
        return f"{percent(share)} of {what} at every version" if len(stats) > 1 else f"{percent(share)} of {what}"
    return f"{percent(share)} of {what} since version {v}"


def recorder_notes(run: RunLike) -> list[str]:
    """What the recorder could not record, first on the page: groups it failed to write or lost, a start
    that failed, and the rows the trainer trained with nothing recorded behind them."""
    t = table_of(run)
    segments = t.run_files.segments
    notes = []
    errors = sum(s.end.write_errors for s in segments if s.end is not None)
    lost = sum(s.end.groups_lost for s in segments if s.end is not None)
    first = next((s.end.first_error for s in segments if s.end is not None and s.end.first_error), None)
    if errors or lost:
        notes.append(f"the recorder could not write {errors + lost:,} scored group(s) ({errors:,} write errors, {lost:,} "
                     "still queued when it stopped): this run's record is incomplete"
                     + (f"; first: {first}" if first else ""))
    elif first:
        notes.append(f"the recorder failed: {first}")
    for s in segments:
        if s.end is not None and s.end.start_error:
            notes.append(f"segment {s.start.segment} recorded nothing: {s.end.start_error}")
    missing = t.unrecorded_trained()
    if missing.num_rows:
        steps = sorted({x for x in missing["step"].to_pylist() if x is not None})
        notes.append(f"{missing.num_rows:,} row(s) the trainer trained have nothing recorded behind them (step(s) "
                     f"{', '.join(map(str, steps[:6]))}): `python -m viewer check` names them")
    misfits = t.reduced("misfits")
    if misfits:
        notes.append(f"{misfits:,} rollout(s) recorded without their files (TRL's rows, reward and advantage kept)")
    return notes


def health_notes(stats: Sequence[VersionStats], live: bool = False) -> list[str]:
    """Plain-language notes where something is off, most important first (at most MAX_NOTES)."""
    notes: list[str] = []
    if not stats:
        return ["no rollout is recorded yet" + (": the run is being recorded, its first groups appear here"
                                                 if live else "")]
    same: dict[float, list[int]] = defaultdict(list)  # every reward at a version is one value
    for s in stats:  # its finite rewards' least and greatest are one value
        if s.scored >= 2 and s.reward_min is not None and s.reward_min == s.reward_max:
            same[s.reward_min].append(s.version)
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
        detail = ", ".join(f"{c} {n:,}" for c, n in causes.most_common())  # 1,024,000 as the head writes it
        notes.append(f"{never:,} of {total:,} rollouts were never trained ({detail})")
    if waiting:
        notes.append(f"{waiting:,} rollouts recorded and not yet taken by the trainer (it was still training)")
    if stats and all(s.passed == 0 for s in stats) and any(s.pass_rate is not None for s in stats):
        notes.append("no rollout passed every held-out test at any version")
    return notes[:MAX_NOTES]


# -- versions → groups, tasks ------------------------------------------------------------------------


def group_rows(run: RunLike, version: int) -> list[RunGroupRow]:
    """The groups of one version (its rows only are taken from the table)."""
    t = table_of(run)
    out = []
    for path, ms in _rows(t, pc.field("policy_version") == version).items():
        first = ms[0]
        rewards = [m["reward"] for m in ms]
        out.append(RunGroupRow(
            path=collection_path(t, path) or path, segment=first["segment"], group_id=first["group_id"],
            version=version, task_id=first["task_id"], title=first["title"], k=len(ms), rewards=rewards,
            reward_mean=reward_spread(rewards)[2], zero_spread=_zero(_advantages(ms)),
            passed=sum(passed(m) for m in ms), verified=sum(m["env_reward"] is not None for m in ms),
            trained_tokens=sum(m["trainer_tokens"] for m in ms),
            dropped=sum(m["dropped"] is not None for m in ms), timeouts=sum(m["timed_out"] for m in ms)))
    return out


def task_choices(run: RunLike, limit: int = 200) -> list[TaskChoice]:
    """The tasks of the run, those scored at more than one version first (they can be followed); once per
    run state."""
    t = table_of(run)
    return t.memo(f"task_choices:{limit}", lambda: _task_choices(t, limit))


# a task: its id, its first row's title, that row's place in the run's order, how many versions scored it
_TaskFirst = tuple[str, str | None, tuple[int, int, int, int], int]


def _task_rows(t: RunTable) -> tuple[Step, Callable[[], list[_TaskFirst] | None]]:
    """Each task's first row in the run's order (segment, version, group, row) with that row's title, and how many
    versions scored it, shard by shard (a reduction, `RunTable.reduced`), in numbers: a shard's task ids through
    their few distinct values (`codes_in`), never a million rollouts' ids and titles as strings (~130 MB)."""
    if not len(t):
        return (lambda start, part: None), lambda: None
    keys = t.group_keys()
    version = pc.fill_null(t.column("policy_version"), -1).to_numpy(zero_copy_only=False).astype(np.int64)
    first: dict[str, tuple[tuple[int, int, int, int], str | None]] = {}  # task: (first row's place, its title)
    versions: dict[str, set[int]] = defaultdict(set)

    def step(start: int, part: pa.Table) -> None:
        n = part.num_rows
        names = segment_values(part["task_id"])
        code = codes_in(part["task_id"], names)
        k, ver = keys[start:start + n], version[start:start + n]
        seg, gid, row = k >> 40, k & (2**40 - 1), np.arange(start, start + n, dtype=np.int64)
        order = np.lexsort((row, gid, ver, seg))
        order = order[code[order] >= 0]  # a rollout without a task id is no task's
        best = np.full(len(names), len(order), np.int64)
        np.minimum.at(best, code[order], np.arange(len(order)))  # each task's first row in the run's order
        tasks = np.flatnonzero(best < len(order))
        rows = order[best[tasks]]
        titles = plain(part["title"].take(pa.array(rows))).to_pylist()
        places = np.stack([seg[rows], ver[rows], gid[rows], row[rows]], axis=1).tolist()  # plain Python numbers
        for c, (s, v, g, r), title in zip(tasks.tolist(), places, titles, strict=True):
            task, place = names[c], (s, v, g, r)
            if task not in first or place < first[task][0]:
                first[task] = (place, title)
        scored = code >= 0
        vs, which = np.unique(ver[scored], return_inverse=True)  # the (task, version) pairs as one number each
        seen = vs.tolist()
        for pair in np.unique(code[scored].astype(np.int64) * len(vs) + which).tolist():
            versions[names[pair // len(vs)]].add(seen[pair % len(vs)])

    def finish() -> list[_TaskFirst]:
        return [(task, title, place, len(versions[task])) for task, (place, title) in first.items()]

    return step, finish


def _misfits(t: RunTable) -> tuple[Step, Callable[[], int]]:
    """How many rollouts were recorded without their files (their `problem` says why), shard by shard."""
    count = [0]

    def step(start: int, part: pa.Table) -> None:
        count[0] += part.num_rows - part["problem"].null_count

    return step, lambda: count[0]


register("task_rows", Reduction(("task_id", "title"), _task_rows))
register("misfits", Reduction(("problem",), _misfits))


def _task_choices(t: RunTable, limit: int) -> list[TaskChoice]:
    got = t.reduced("task_rows")
    if got is None:
        return []
    # those scored at more than one version first, each kind in the run's order
    ordered = sorted(got, key=lambda x: (x[3] <= 1, x[2]))
    return [TaskChoice(task, title or "", count) for task, title, _, count in ordered[:limit]]


def task_track(run: RunLike, task_id: str, near: int | None = None) -> TaskTrack | None:
    """One task followed across the versions it was scored at: its pass rate at each and the first version that
    solved it, from every rollout of it in numbers; and MAX_TASK_GROUPS of its groups with their rollouts, those
    nearest version `near` (else the latest): a task sampled at every step of a long run has thousands of groups,
    which no page lists (16,000 groups of 10 rollouts are 25 MB and 160,000 checkboxes)."""
    t = table_of(run)
    _, picked = t.select(pc.field("task_id") == task_id, limit=len(t))
    rows = picked.to_numpy(zero_copy_only=False).astype(np.int64)
    if not len(rows):
        return None
    got = t.take(rows, ["policy_version", "rollout", "env_reward"])
    version = _np(got["policy_version"], -1).astype(np.int64)
    verified, passes = _verdicts(got["env_reward"])
    keys = t.group_keys()[rows]
    versions, at = np.unique(version, return_inverse=True)
    n_verified = np.bincount(at, weights=verified, minlength=len(versions)).astype(np.int64)
    n_passed = np.bincount(at, weights=passes, minlength=len(versions)).astype(np.int64)
    gkeys, g_at = np.unique(keys, return_inverse=True)
    g_version = np.full(len(gkeys), np.iinfo(np.int64).max)
    np.minimum.at(g_version, g_at, version)
    per_version = np.bincount(np.searchsorted(versions, g_version), minlength=len(versions))
    points = [TaskPoint(v, p / n, passed=p, verified=n, groups=g) for v, p, n, g in zip(
        versions.tolist(), n_passed.tolist(), n_verified.tolist(), per_version.tolist(), strict=True) if n]
    solved = versions[n_passed > 0].tolist()
    # its groups in (version, segment, group id) order; those listed: a window of them around `near`, else the last
    order = np.lexsort((gkeys & (2**40 - 1), gkeys >> 40, g_version))
    n = len(order)
    at_near = n if near is None else np.searchsorted(g_version[order], near).tolist()
    start = max(0, min(n - MAX_TASK_GROUPS, at_near - MAX_TASK_GROUPS // 2))
    listed = rows[np.isin(keys, gkeys[order[start:start + MAX_TASK_GROUPS]])]
    first = rows[np.lexsort((_np(got["rollout"], 0), keys & (2**40 - 1), version, keys >> 40))[0]]
    title = t.take(np.array([first]), ["title"])["title"][0].as_py() or ""
    groups = []
    for path, ms in _by_group(t.take(listed, _ROW_COLUMNS).to_pylist()).items():
        groups.append(TaskGroup(
            version=ms[0]["policy_version"], path=collection_path(t, path) or path, group_id=ms[0]["group_id"],
            segment=ms[0]["segment"],
            rollouts=[TaskRollout(rollout=m["rollout"], path=collection_path(t, m["path"]), reward=m["reward"],
                                  passed=passed(m), status=m["status"], verified=m["env_reward"] is not None)
                      for m in ms],
            pass_rate=pass_rate(ms)))
    groups.sort(key=lambda g: (g.version, g.segment, g.group_id))
    return TaskTrack(task_id=task_id, title=title, groups=groups, pass_rates=points,
                     first_solved=solved[0] if solved else None, versions=len(versions), group_count=n)


# -- the deep link -----------------------------------------------------------------------------------


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
    sort: str = ""  # vsort=: a key of SORT_KEYS, "-" first for descending; "" when absent or not a column
    smooth: float | None = None  # smooth=: the charts' EMA weight in [0, MAX_SMOOTH]; None: the link names none


# The versions table's columns a link may sort by (run_page.js sorts by them, over every version the page holds).
SORT_KEYS = ("version", "groups", "rollouts", "reward_mean", "pass_rate", "zero_spread", "trained_tokens",
             "dropped", "timeouts", "mismatch_max")
MAX_SMOOTH = 0.99  # the weight 1 would freeze the curve at its first value


def sort_key(value: object) -> str | None:
    """`value` as a versions table sort (`KEY` or `-KEY`, KEY one of SORT_KEYS), "" for none, None when wrong."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or value.removeprefix("-") not in SORT_KEYS:
        return None
    return value


def run_request(data: object) -> RunRequest:
    """`data` (untrusted: from the page or the URL) as a RunRequest."""
    if not isinstance(data, Mapping):
        return RunRequest()

    def text(key: str, most: int = MAX_SRC_CHARS) -> str:
        v = data.get(key)
        return v.strip()[:most] if isinstance(v, str) else ""

    return RunRequest(action=text("action", 16), src=text("src"), row=text("row"), a=text("a"), b=text("b"),
                      task=text("task", MAX_TASK) or None, version=whole(data.get("version")),
                      turn=whole(data.get("turn")) or 0, sort=sort_key(data.get("vsort")) or "",
                      # a weight that is no number draws the curves raw (the link's note says so)
                      smooth=None if data.get("smooth") in (None, "") else number(data.get("smooth"), MAX_SMOOTH, 0.0) or 0.0)


def resolve_link(run: RunLike, params: Mapping[str, object]) -> tuple[str | None, str | None]:
    """(the group's path, a problem) for `version=V&group=G[&segment=S]`; (None, None) when the link names no
    group. Group ids restart in every segment: without `segment` the latest segment's group at V wins."""
    if "group" not in params:
        return None, None
    version, gid = whole(params.get("version")), whole(params.get("group"))
    if gid is None:
        return None, "the link's group is not a group id (a whole number)"
    seg = params.get("segment")
    where = pc.field("group_id") == gid
    if version is not None:
        where = where & (pc.field("policy_version") == version)
    if isinstance(seg, str):
        where = where & (pc.field("segment") == seg)
    found = list(_rows(table_of(run), where))  # in run order: the last is the latest segment's
    if not found:
        at = f" at version {version}" if version is not None else ""
        return None, f"this run has no group {gid}{at}"
    return collection_path(run, found[-1]), None
