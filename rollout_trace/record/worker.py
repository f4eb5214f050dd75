"""`RecordingHarnessRolloutWorker`: TRL's `HarnessRolloutWorker`, recording every group it scores.

A subclass, not a wrapper: TRL's trainer saves the rollout position for resume only for an
`AsyncRolloutWorker`, and reads the worker's queue, version and health exactly as before. The only
changes are its loop class (loop.py, which observes and never changes) and three things the main process
does around TRL's own `start()` and `stop()`: the run's small files before the child spawns (run.json,
the tokenizer, segments/<seg>.json; manifest.py), a new segment per start (TRL's group ids restart at 0
in every child, a resume included), and, when asked, a background push of the run folder to a Hub dataset
(hub.py) with a last commit after the child stopped. Building the worker touches no disk: on a
multi-GPU launch every rank builds one and TRL keeps only the main process's.

Before the first start the worker takes the run folder's lock (manifest.py `RunLock`: a second trainer
recording into the same folder is refused while this one runs) and checks that a folder already holding
a run holds this run (same model, dataset and config) and that this start resumes it; anything else is
refused with what differs. A recorder that cannot start in TRL's child says why in this process's error
and ends its segment; a recorder failure in the child while it runs is logged here too, once, from
check_health (which TRL's trainer calls while it waits for rows) and at stop.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from pathlib import Path
from typing import Any

from trl.experimental.async_grpo.openenv_harness import HarnessRolloutWorker

from . import pins
from .build import iso
from .hub import HubPush
from .loop import RecordingHarnessLoop
from .manifest import RunLock, begin_segment, check_same_run, new_segment, prepare_folder, update_manifest
from .writer import end_path, end_with_start_error, error_marker

log = logging.getLogger("rollout_trace.record")


class RecordingHarnessRolloutWorker(HarnessRolloutWorker):
    """`HarnessRolloutWorker(**kwargs)` that records the run into `record_dir` (docs/runs.md).

    Args:
        record_dir: the run folder; created when training starts. Reuse it to resume: each start of the
            worker's child is a new segment of the same run.
        push_to_dataset: a Hub dataset repo id ("org/name") to push the run folder to in the background
            (huggingface_hub's CommitScheduler, every `push_every_minutes`); None records locally only.
        hub_token: the token for that push (default: huggingface_hub's own lookup, HF_TOKEN or the login).
        private: create the dataset repo private (when it does not exist yet).
        **kwargs: exactly HarnessRolloutWorker's (harness_session_factory, model_name, dataset, ...).
    """

    _loop_cls = RecordingHarnessLoop  # type: ignore[assignment]

    def __init__(self, *, record_dir: str | os.PathLike, push_to_dataset: str | None = None,
                 hub_token: str | None = None, push_every_minutes: float = 5.0, private: bool | None = None,
                 **kwargs: Any):
        pins.require()
        if kwargs.get("harness_adapter") is not None:
            raise ValueError("RecordingHarnessRolloutWorker records loop-owning mode (harness_adapter=None, the agent "
                             "owns the loop and OpenEnv's training trace holds its calls); with a harness adapter "
                             "TRL samples the turns itself and there is no training trace to record")
        super().__init__(**kwargs)
        self.record_dir = Path(record_dir)
        self.segment: str | None = None
        self._push_args = (push_to_dataset, hub_token, push_every_minutes, private)
        self._push: HubPush | None = None
        self._lock: RunLock | None = None
        self._started_before = False  # this worker started a segment of the run already (this process)
        self._reported: set[str] = set()  # segments whose recorder failure was logged here
        self.trainer_config: dict | None = None  # record_consumption sets it: the trainer's arguments
        if not self._loop_kwargs.get("queue_maxsize"):
            warnings.warn("rollout_trace: queue_maxsize=0 (AsyncRolloutWorker's default) leaves TRL's rollout queue "
                          "unbounded: the worker can score thousands of groups ahead of the trainer, and the recorder "
                          "writes every one (measured: 5 GB in 9 minutes with fast sessions). Pass queue_maxsize, "
                          "e.g. the AsyncGRPOConfig default of 1024.", UserWarning, stacklevel=2)

    def start(self) -> None:
        if self._process is None:  # a new child: a new segment
            if self._lock is None:
                self._lock = RunLock(self.record_dir)  # refuses a folder another trainer records into
            try:
                prepare_folder(self.record_dir)
                if not self._started_before:
                    check_same_run(self.record_dir, self._loop_kwargs, self.model_version, self.trainer_config)
            except BaseException:
                self._release()
                raise
            self.segment = new_segment()
            begin_segment(self.record_dir, self.segment, self._loop_kwargs, self.model_version, self.trainer_config)
            self._started_before = True
            self._loop_kwargs.update(record_dir=str(self.record_dir.resolve()), record_segment=self.segment,
                                     record_model=str(self._loop_kwargs.get("model_name")))
            repo = self._push_args[0]
            if repo and self._push is None:
                self._push = HubPush(self.record_dir, repo, token=self._push_args[1],
                                     every_minutes=self._push_args[2], private=self._push_args[3])
            try:
                super().start()
            except BaseException as e:
                self._start_failed(e)
                raise
            return
        super().start()

    def _start_failed(self, e: BaseException) -> None:
        """TRL's child did not start: end the segment (so no page says "recording"), and raise the recorder's
        cause here when the child wrote one (TRL's own error points at the child's stderr)."""
        seg = self.segment
        assert seg is not None
        cause = None
        try:
            import msgspec

            from rollout_trace.artifact.run_format import SegmentEnd

            cause = msgspec.json.decode(end_path(self.record_dir, seg).read_bytes(), type=SegmentEnd).start_error
        except (OSError, ValueError):
            pass
        end_with_start_error(self.record_dir, seg, cause or f"TRL's worker child did not start: {type(e).__name__}: {e}")
        update_manifest(self.record_dir, ended_at=iso(time.time()))
        self._release()
        if cause is not None:
            raise RuntimeError(f"rollout_trace: {cause} (run folder {self.record_dir}, segment {seg}); "
                               "training did not start") from e

    def _release(self) -> None:
        if self._push is not None:
            self._push.finish()
            self._push = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def recorder_problem(self) -> str | None:
        """The first recorder failure of the running segment, logged here once (a stat per call otherwise)."""
        seg = self.segment
        if seg is None or seg in self._reported:
            return None
        try:
            line = error_marker(self.record_dir, seg).read_text(errors="replace").strip()
        except OSError:
            return None
        self._reported.add(seg)
        log.error("rollout_trace: the recorder failed in TRL's worker child (%s). Training goes on unchanged; the run "
                  "folder %s is incomplete from there: `python -m viewer check %s` names the trained rows with "
                  "nothing recorded behind them (the child's log has the traceback)", line, self.record_dir,
                  self.record_dir)
        return line

    def check_health(self, stale_after_s: float) -> None:
        self.recorder_problem()
        super().check_health(stale_after_s)

    def stop(self) -> None:
        was_running = self._process is not None
        super().stop()
        if not was_running:
            return
        self.recorder_problem()
        update_manifest(self.record_dir, ended_at=iso(time.time()))
        self._release()
