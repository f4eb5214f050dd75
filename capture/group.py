"""A GRPO group: K rollouts of one task, P at a time, written as one folder (group.json + rollout-NN).

`capture_group(cfg, k, parallel)` runs the single-rollout capture (capture/run.py) K times on the same
task, each in its own sandbox behind its own capture-proxy session, with rollout seeds
`rollout_seed .. rollout_seed + K - 1` (each also sent to the engine as the request `seed`). The
scale-out is a plain ThreadPoolExecutor(P) over those existing engines: P opencode processes share
one endpoint that vLLM batches (local), or P Hugging Face sandboxes run at once (hf-sandbox).

A rollout that fails does not lose the others: it is kept with its status and error (and its
artifact when it wrote one), its reward null (TRL's NaN) and its advantage 0. Cancel stops them all
and writes nothing. The whole group is built in a hidden sibling folder, every rollout and
group.json are validated with the readers the viewer uses, and only then is it renamed into place.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import msgspec

from rollout_trace.artifact import Artifact, ArtifactError, Task, load_artifact
from rollout_trace.artifact.group import (
    GROUP_FILE,
    GroupFile,
    GroupRollout,
    encode_group,
    format_version_for,
    grpo_advantages,
    load_group,
)

from .agent import Cancelled
from .live import LiveCallback
from .progress import Reporter
from .run import (
    CaptureConfig,
    CaptureError,
    _capture,
    _check_out_dir,
    import_before_threads,
    local_model_config,
    local_model_served_by,
    push,
    serving_local_model,
)
from .tasks import TaskError, build_tasks, load_rows, select_task, tasks_from_example

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
    status: str = "pending"  # pending, running, ok, timed-out, failed
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


def rollout_folder(index: int) -> str:
    return f"rollout-{index:02d}"


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


@contextmanager
def _endpoint(cfg: CaptureConfig, say: Reporter) -> Iterator[tuple[CaptureConfig, str | None]]:
    """The config the rollouts use, and who serves the model: with --local-model, ONE vLLM server for all K."""
    if not cfg.local_model:
        yield cfg, None
        return
    with serving_local_model(say, "for the whole group", timeout_s=LOCAL_SERVER_START_S) as url:
        yield local_model_config(cfg, url), local_model_served_by()


def _task(cfg: CaptureConfig):
    """The one task of the group, built once up front: a bad dataset fails before any sandbox starts
    (and the dataset cache is warm before K threads read it)."""
    try:
        tasks = (tasks_from_example(Path(cfg.example), cfg.n_prompts, cfg.seed) if cfg.example
                 else build_tasks(load_rows(cfg.dataset), cfg.n_prompts, cfg.seed))
        return select_task(tasks, cfg.task_index)
    except TaskError as e:
        raise CaptureError(str(e)) from None


CaptureFn = Callable[..., Artifact]  # run._capture's shape: (cfg, say, cancel, sandbox_factory, served_by=)


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
    `capture_fn` replaces the single capture (tests).
    """
    if not 1 <= k <= MAX_GROUP_SIZE:
        raise CaptureError(f"--group-size must be between 1 and {MAX_GROUP_SIZE}, not {k}")
    if parallel is not None and parallel < 1:
        raise CaptureError(f"--parallel must be at least 1, not {parallel}")
    cancel = cancel or threading.Event()
    run_one = capture_fn or _capture
    start = time.monotonic()
    say = _GroupReporter(None, progress, start)
    out = _check_out_dir(cfg)
    if cfg.backend not in ("local", "hf-sandbox") and not cfg.local_model:
        raise CaptureError(f"--backend must be local or hf-sandbox, not {cfg.backend!r}")
    base_seed = cfg.rollout_seed if cfg.rollout_seed is not None else cfg.seed
    say(f"building the task from {cfg.example or cfg.dataset} (n_prompts={cfg.n_prompts}, seed={cfg.seed}, "
        f"task_index={cfg.task_index})", stage="task")
    task = _task(cfg)
    backend = "local" if cfg.local_model else cfg.backend
    if send_seed is None:
        send_seed = not cfg.local_model
    p = parallel or default_parallel(backend, k)
    p = min(p, k)
    say(f"group of {k} rollouts of task {task.task_id[:12]}, {p} at a time, rollout seeds "
        f"{base_seed}..{base_seed + k - 1}" + (" (sent as the request seed)" if send_seed else
                                               " (recorded; not sent to the engine)"))
    outcomes = [RolloutOutcome(i, base_seed + i) for i in range(k)]
    import_before_threads()  # here, not in P threads at once (transformers' first import is not thread-safe)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.group-partial-", dir=out.parent))
    try:
        with _endpoint(cfg, say) as (run_cfg, served_by):
            _run_all(run_cfg, outcomes, p, staging, progress, cancel, sandbox_factory, run_one, served_by, start,
                     send_seed, live)
        if cancel.is_set():
            raise Cancelled("capture cancelled")
        if all(o.artifact is None for o in outcomes):  # nothing to compare: say why instead of an empty group
            raise CaptureError(f"no rollout of the group produced an artifact; rollout 0: {outcomes[0].error}")
        group = _group_file(cfg, run_cfg, task, outcomes, p, time.monotonic() - start)
        say(_summary_line(group), stage="write")
        _write_task(staging, task)
        (staging / GROUP_FILE).write_bytes(encode_group(group))
        artifacts = _validate(staging, group)
        staging.chmod(0o755)  # mkdtemp makes it private; a group is meant to be shared
        if out.exists():
            out.rmdir()  # _check_out_dir allowed only an empty folder
        staging.rename(out)
    except BaseException as e:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(e, Cancelled):
            say("cancelled: every rollout's agent and sandbox were stopped; nothing is written", stage="cancelled")
        raise
    artifacts = [replace(a, source=str(out / o.folder), root=out / o.folder,
                         tokenizer_dir=(out / o.folder / a.tokenizer_dir.name) if a.tokenizer_dir else None)
                 if a is not None and o.folder else None for a, o in zip(artifacts, outcomes, strict=False)]
    say(f"wrote {out}", stage="write")
    if cfg.push_to_dataset:
        push(out, cfg.push_to_dataset, cfg.hf_token, say, message=f"Capture a GRPO group of {k} opencode rollouts")
    say("done", stage="done")
    return GroupResult(out, group, outcomes, artifacts)


class _GroupReporter(Reporter):
    """A capture Reporter whose lines carry the rollout's index (None: the group)."""

    def __init__(self, rollout: int | None, callback: GroupCallback | None, start: float):
        super().__init__(None)
        self.rollout, self._group_cb, self._start = rollout, callback, start

    def emit(self, line: str, elapsed_s: float) -> None:
        if self._group_cb:
            self._group_cb(RolloutProgress(self.rollout, self.stage, line, self.turns, elapsed_s))


def _run_all(cfg: CaptureConfig, outcomes: list[RolloutOutcome], parallel: int, staging: Path,
             progress: GroupCallback | None, cancel: threading.Event, sandbox_factory: Callable | None,
             run_one: CaptureFn, served_by: str | None, start: float, send_seed: bool,
             live: LiveCallback | None = None) -> None:
    def job(o: RolloutOutcome) -> None:
        say = _GroupReporter(o.index, progress, start)
        if cancel.is_set():  # queued behind the first P: never start once cancelled
            return
        one = replace(cfg, out_dir=str(staging / rollout_folder(o.index)), rollout_seed=o.rollout_seed,
                      request_seed=o.rollout_seed if send_seed else None, push_to_dataset=None, local_model=False)
        o.status, o.started, o.started_at = "running", time.monotonic(), _now()
        say(f"rollout seed {o.rollout_seed}", stage="task")
        try:
            kw: dict = {"served_by": served_by} if served_by else {}
            if live is not None:
                kw["live"] = lambda u, i=o.index: live(replace(u, rollout=i))
            o.artifact = run_one(one, say, cancel, sandbox_factory, **kw)
            o.status = "timed-out" if o.artifact.summary.timed_out else "ok"
        except Cancelled:
            o.status = "cancelled"
        except CaptureError as e:
            o.status, o.error = "failed", _one_line(e)
        except Exception as e:  # one rollout's surprise must not lose the others; a message, not a traceback
            o.status, o.error = "failed", _one_line(f"unexpected {type(e).__name__}: {e}")
        finally:
            o.ended = time.monotonic()
        if o.status == "failed":
            say(f"failed: {o.error}", stage="failed")
        elif o.status != "cancelled":
            say(f"{o.status}: reward {o.reward}", stage="done")

    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="rollout")
    try:
        for f in [pool.submit(job, o) for o in outcomes]:
            f.result()
    except BaseException:  # Ctrl-C in the CLI: tell every rollout to stop before waiting for them
        cancel.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # every rollout's sandbox is gone before we go on


def _group_file(cfg: CaptureConfig, run_cfg: CaptureConfig, task, outcomes: list[RolloutOutcome], parallel: int,
                wall_s: float) -> GroupFile:
    rewards = [o.reward for o in outcomes]
    advantages = grpo_advantages(rewards)
    rollouts = [GroupRollout(index=o.index, folder=o.folder, status=o.status, reward=o.reward, advantage=a,
                             rollout_seed=o.rollout_seed, started_at=o.started_at, wall_s=o.wall_s, error=o.error)
                for o, a in zip(outcomes, advantages, strict=False)]
    return GroupFile(task_id=task.task_id, k=len(outcomes), rollouts=rollouts, model=run_cfg.model,
                     task_index=task.index, rollout_seed=outcomes[0].rollout_seed, parallel=parallel,
                     backend="local" if cfg.local_model else cfg.backend, created_at=_now(), wall_s=round(wall_s, 3),
                     format_version=format_version_for(rollouts))


def _summary_line(g: GroupFile) -> str:
    cells = [f"{r.index}:{r.status}/{'null' if r.reward is None else f'{r.reward:.3g}'}/{r.advantage:+.2f}"
             for r in g.rollouts]
    return f"group: {' '.join(cells)} (rollout:status/reward/advantage)"


def _write_task(root: Path, task) -> None:
    """task.json beside group.json: the index titles the group from it even when every rollout failed."""
    data = msgspec.json.encode(Task(task.task_id, task.index, task.instruction))
    (root / "task.json").write_bytes(msgspec.json.format(data, indent=2))


def _validate(root: Path, group: GroupFile) -> list[Artifact | None]:
    """Every rollout and group.json read back with the viewer's readers, and the group checked against
    its rollouts the way `viewer check` does; a CaptureError names what is wrong."""
    from rollout_trace.artifact.collection import open_collection

    try:
        load_group(root)
        artifacts = [load_artifact(root / r.folder) if r.folder else None for r in group.rollouts]
        c = open_collection(str(root))
        try:
            bad = [r for r in c.records if not r.valid]
        finally:
            c.close()
    except ArtifactError as e:
        raise CaptureError(f"the captured group does not read back valid: {e}") from None
    if bad:
        raise CaptureError("the captured group does not read back valid: "
                           + "; ".join(f"{r.path or '.'}: {r.problem}" for r in bad))
    return artifacts


__all__ = ["DEFAULT_PARALLEL", "GroupCallback", "GroupResult", "RolloutOutcome", "RolloutProgress", "StageBoard",
           "capture_group", "default_parallel", "print_group_progress", "rollout_folder"]
