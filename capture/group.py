"""A GRPO group: K rollouts of one task, P at a time, written as one folder (group.json + rollout-NN).

`capture_group(cfg, k, parallel)` runs the single rollout (capture/run.py `capture`: the capture, the
rescore with `--rescore`, everything one rollout does) K times on the same task, each in its own
sandbox behind its own capture-proxy session, with rollout seeds `rollout_seed .. rollout_seed + K - 1`
(each also sent to the engine as the request `seed`). The scale-out is a plain ThreadPoolExecutor(P)
over those existing engines: P opencode processes share one endpoint that vLLM batches (local), or P
Hugging Face sandboxes run at once (hf-sandbox).

A rollout that fails does not lose the others: it is kept with its status and error, its reward null
(TRL's NaN) and its advantage 0. Cancel stops them all and writes nothing. The group is written
atomically by rollout_trace/artifact/write.py's GroupBuild: built in a hidden sibling folder, every
rollout and group.json validated with the readers the viewer uses, and only then renamed into place.
"""

from __future__ import annotations

import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from rollout_trace.analysis.report import fmt_reward
from rollout_trace.artifact import Artifact, ArtifactError, OutDirExists, Task
from rollout_trace.artifact.group import GroupFile, GroupRollout, format_version_for, grpo_advantages, rollout_folder
from rollout_trace.artifact.write import GroupBuild

from .agent import Cancelled
from .errors import RescoreFailed
from .live import LiveCallback
from .progress import Progress, Reporter
from .run import (
    CaptureConfig,
    CaptureError,
    capture,
    import_before_threads,
    local_model_config,
    push,
    serving_local_model,
)
from .tasks import task_for

# How many rollouts run at once by default. local: P opencode + P proxy processes on this machine
# share one endpoint (vLLM batches their calls); more than 4 mostly queues on a small machine.
# hf-sandbox: every rollout is a remote sandbox, so the bound is the endpoint's batch, not our CPU.
DEFAULT_PARALLEL = {"local": 4, "hf-sandbox": 8}
MAX_GROUP_SIZE = 64
# vLLM CPU starts in about a minute on an idle 2-core machine, and took over 5 on a loaded one; a group
# runs for many minutes anyway, so waiting longer beats failing the whole group at the start.
LOCAL_SERVER_START_S = 900.0


@dataclass(frozen=True)
class RolloutProgress:
    """One progress line of a group: `rollout` is the rollout's index, None for the group as a whole."""

    rollout: int | None
    stage: str
    line: str
    turns: int
    elapsed_s: float


GroupCallback = Callable[[RolloutProgress], None]


@dataclass
class RolloutOutcome:
    """What one rollout of the group came to (kept in memory; group.json holds the same facts)."""

    index: int
    rollout_seed: int
    status: str = "pending"  # pending, running, ok, timed-out, failed, cancelled
    artifact: Artifact | None = None
    error: str | None = None
    started: float | None = None  # time.monotonic(), for the overlap check and the benchmark
    ended: float | None = None
    started_at: str | None = None  # ISO 8601, recorded in group.json

    @property
    def folder(self) -> str | None:
        return rollout_folder(self.index) if self.artifact is not None else None

    @property
    def reward(self) -> float | None:
        return self.artifact.summary.reward_after_penalties if self.artifact is not None else None

    @property
    def wall_s(self) -> float | None:
        return round(self.ended - self.started, 3) if self.started is not None and self.ended is not None else None


@dataclass
class GroupResult:
    root: Path  # the group folder: group.json + rollout-NN
    group: GroupFile
    outcomes: list[RolloutOutcome]
    artifacts: list[Artifact | None]  # re-read from `root`; None for a rollout that wrote none


class StageBoard:
    """The latest progress of each rollout, for a UI that shows the K rollouts side by side.

    Pass `board.update` as the progress callback (or call it from yours); `snapshot()` is safe to call
    from another thread while the group runs.
    """

    def __init__(self, k: int):
        self._lock = threading.Lock()
        self._rows: list[RolloutProgress] = [RolloutProgress(i, "queued", "waiting for a free slot", 0, 0.0)
                                             for i in range(k)]
        self.group: RolloutProgress = RolloutProgress(None, "task", "starting", 0, 0.0)

    def update(self, p: RolloutProgress) -> None:
        with self._lock:
            if p.rollout is None:
                self.group = p
            elif 0 <= p.rollout < len(self._rows):
                self._rows[p.rollout] = p

    def snapshot(self) -> list[RolloutProgress]:
        with self._lock:
            return list(self._rows)


def default_parallel(backend: str, k: int) -> int:
    return max(1, min(k, DEFAULT_PARALLEL.get(backend, 4)))


_PRINT_LOCK = threading.Lock()


def print_group_progress(p: RolloutProgress) -> None:
    """The CLI's lines: `[rollout k]` (or `[group]`) before the single capture's format."""
    who = "group" if p.rollout is None else f"rollout {p.rollout}"
    with _PRINT_LOCK:  # rollouts report from their own threads: one whole line at a time
        print(f"[{who}] [{p.elapsed_s:6.1f}s {p.stage:>9}] {p.line}", flush=True)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _one_line(text: str, n: int = 400) -> str:
    return " ".join(str(text).split())[:n]


def _local_model_url(cfg: CaptureConfig, say: Reporter):
    """With --local-model, ONE vLLM server for all K rollouts (its URL); else nothing to serve (None)."""
    if not cfg.local_model:
        return nullcontext(None)
    return serving_local_model(say, "for the whole group", timeout_s=LOCAL_SERVER_START_S)


def _check_shape(cfg: CaptureConfig, k: int, parallel: int | None) -> None:
    if not 1 <= k <= MAX_GROUP_SIZE:
        raise CaptureError(f"--group-size must be between 1 and {MAX_GROUP_SIZE}, not {k}")
    if parallel is not None and parallel < 1:
        raise CaptureError(f"--parallel must be at least 1, not {parallel}")
    if cfg.backend not in ("local", "hf-sandbox") and not cfg.local_model:
        raise CaptureError(f"--backend must be local or hf-sandbox, not {cfg.backend!r}")


CaptureFn = Callable[..., Artifact]  # capture.run.capture's shape: (cfg, progress=, cancel=, sandbox_factory=, ...)


def capture_group(cfg: CaptureConfig, k: int, parallel: int | None = None, progress: GroupCallback | None = None,
                  cancel: threading.Event | None = None, sandbox_factory: Callable | None = None,
                  capture_fn: CaptureFn | None = None, send_seed: bool | None = None,
                  live: LiveCallback | None = None) -> GroupResult:
    """Capture K rollouts of `cfg`'s task, P at a time, and write them as one group at `cfg.out_dir`.

    `progress` gets a RolloutProgress per line, from worker threads. Raises CaptureError when the
    group cannot run at all (bad task, endpoint down for every rollout is NOT this: those rollouts
    are kept as failed), Cancelled when `cancel` is set (nothing is written).
    `send_seed`: send each rollout's seed as the request `seed` (default: yes, except with --local-model:
    vLLM 0.32's CPU build crashes its engine on a seeded request, "CPU Generator does not use offset").
    `live` gets every rollout's live updates (capture/live.py), each tagged with its rollout's index.
    `capture_fn` replaces the single rollout, capture.run.capture (tests).
    """
    _check_shape(cfg, k, parallel)
    cancel = cancel or threading.Event()
    start = time.monotonic()
    say = _GroupReporter(None, progress, start)
    base_seed = cfg.first_rollout_seed
    say(f"building the task from {cfg.example or cfg.dataset} (n_prompts={cfg.n_prompts}, seed={cfg.seed}, "
        f"task_index={cfg.task_index})", stage="task")
    # built once up front: a bad dataset fails before any sandbox starts (and its cache is warm for K threads)
    task = task_for(cfg)
    backend = "local" if cfg.local_model else cfg.backend
    if send_seed is None:
        send_seed = not cfg.local_model
    p = min(parallel or default_parallel(backend, k), k)
    say(f"group of {k} rollouts of task {task.task_id[:12]}, {p} at a time, rollout seeds "
        f"{base_seed}..{base_seed + k - 1}" + (" (sent as the request seed)" if send_seed else
                                               " (recorded; not sent to the engine)"))
    outcomes = [RolloutOutcome(i, base_seed + i) for i in range(k)]
    try:
        build = GroupBuild(cfg.out_dir)
    except OutDirExists:
        raise CaptureError(f"{cfg.out_dir} already exists and is not empty: choose another or remove it",
                           "out_dir") from None
    import_before_threads(cfg.rescore)  # here, not in P threads at once (transformers' first import is not thread-safe)
    try:
        with build:
            with _local_model_url(cfg, say) as url:  # stopped before the group is checked and written
                _run_all(cfg, outcomes, p, build, progress, cancel, sandbox_factory, capture_fn or capture, url,
                         start, send_seed, live)
            if cancel.is_set():
                raise Cancelled("capture cancelled")
            if all(o.artifact is None for o in outcomes):  # nothing to compare: say why instead of an empty group
                raise CaptureError(f"no rollout of the group produced an artifact; rollout 0: {outcomes[0].error}")
            model = local_model_config(cfg, url or "").model if cfg.local_model else cfg.model
            group = _group_file(cfg, model, task.task_id, task.index, outcomes, p, time.monotonic() - start)
            say(_summary_line(group), stage="write")
            try:
                artifacts = build.commit(group, Task(task.task_id, task.index, task.instruction))
            except ArtifactError as e:
                raise CaptureError(f"the captured group does not read back valid: {e}") from None
    except Cancelled:
        say("cancelled: every rollout's agent and sandbox were stopped; nothing is written", stage="cancelled")
        raise
    out = build.out
    say(f"wrote {out}", stage="write")
    if cfg.push_to_dataset:
        push(out, cfg.push_to_dataset, cfg.hf_token, say, message=f"Capture a GRPO group of {k} opencode rollouts")
    say("done", stage="done")
    return GroupResult(out, group, outcomes, artifacts)


class _GroupReporter(Reporter):
    """A capture Reporter whose lines carry the rollout's index (None: the group), timed from the group's start."""

    def __init__(self, rollout: int | None, callback: GroupCallback | None, start: float):
        super().__init__(None)
        self.rollout, self._group_cb, self._start = rollout, callback, start

    def emit(self, line: str, elapsed_s: float) -> None:
        if self._group_cb:
            self._group_cb(RolloutProgress(self.rollout, self.stage, line, self.turns, elapsed_s))

    def relay(self, p: Progress) -> None:
        """A line of the rollout's own capture (a `capture` progress callback), told as this rollout's."""
        self(p.line, stage=p.stage, turns=p.turns)


def _run_all(cfg: CaptureConfig, outcomes: list[RolloutOutcome], parallel: int, build: GroupBuild,
             progress: GroupCallback | None, cancel: threading.Event, sandbox_factory: Callable | None,
             run_one: CaptureFn, local_model_url: str | None, start: float, send_seed: bool,
             live: LiveCallback | None = None) -> None:
    def job(o: RolloutOutcome) -> None:
        say = _GroupReporter(o.index, progress, start)
        if cancel.is_set():  # queued behind the first P: never start once cancelled
            return
        folder = build.rollout_dir(o.index)
        one = replace(cfg, out_dir=str(folder), rollout_seed=o.rollout_seed,
                      request_seed=o.rollout_seed if send_seed else None, push_to_dataset=None)
        o.status, o.started, o.started_at = "running", time.monotonic(), _now()
        say(f"rollout seed {o.rollout_seed}", stage="task")
        try:
            kw: dict = {"local_model_url": local_model_url} if local_model_url else {}
            if live is not None:
                kw["live"] = lambda u, i=o.index: live(replace(u, rollout=i))
            o.artifact = run_one(one, progress=say.relay, cancel=cancel, sandbox_factory=sandbox_factory, **kw)
            o.status = "timed-out" if o.artifact.summary.timed_out else "ok"
        except Cancelled:
            o.status = "cancelled"
        except RescoreFailed as e:  # its folder is left out below: the group holds only what it promised
            o.status, o.error = "failed", _one_line(f"captured, but re-scoring it failed: {e.reason}")
        except CaptureError as e:
            o.status, o.error = "failed", _one_line(str(e))
        except Exception as e:  # one rollout's surprise must not lose the others; a message, not a traceback
            o.status, o.error = "failed", _one_line(f"unexpected {type(e).__name__}: {e}")
        finally:
            o.ended = time.monotonic()
        if o.status == "failed":
            shutil.rmtree(folder, ignore_errors=True)  # written before its rescore failed: not part of the group
            say(f"failed: {o.error}", stage="failed")
        elif o.status != "cancelled":
            say(f"{o.status}: reward {fmt_reward(o.reward)}", stage="done")

    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="rollout")
    try:
        for f in [pool.submit(job, o) for o in outcomes]:
            f.result()
    except BaseException:  # Ctrl-C in the CLI: tell every rollout to stop before waiting for them
        cancel.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # every rollout's sandbox is gone before we go on


def _group_file(cfg: CaptureConfig, model: str, task_id: str, task_index: int, outcomes: list[RolloutOutcome],
                parallel: int, wall_s: float) -> GroupFile:
    rewards = [o.reward for o in outcomes]
    advantages = grpo_advantages(rewards)
    # every outcome has ended by now: ok, timed-out or failed
    rollouts = [GroupRollout(index=o.index, folder=o.folder, status=o.status,  # type: ignore[arg-type]
                             reward=o.reward, advantage=a, rollout_seed=o.rollout_seed, started_at=o.started_at, wall_s=o.wall_s, error=o.error)
                for o, a in zip(outcomes, advantages, strict=False)]
    return GroupFile(task_id=task_id, k=len(outcomes), rollouts=rollouts, model=model,
                     task_index=task_index, rollout_seed=outcomes[0].rollout_seed, parallel=parallel,
                     backend="local" if cfg.local_model else cfg.backend, created_at=_now(), wall_s=round(wall_s, 3),
                     format_version=format_version_for(rollouts))


def _summary_line(g: GroupFile) -> str:
    cells = [f"{r.index}:{r.status}/{fmt_reward(r.reward)}/{r.advantage:+.3f}"
             for r in g.rollouts]
    return f"group: {' '.join(cells)} (rollout:status/reward/advantage)"


__all__ = ["DEFAULT_PARALLEL", "GroupCallback", "GroupResult", "RolloutOutcome", "RolloutProgress", "StageBoard",
           "capture_group", "default_parallel", "print_group_progress", "rollout_folder"]
