"""`RecordingHarnessRolloutWorker`: TRL's `HarnessRolloutWorker`, recording every group it scores.

A subclass, not a wrapper: TRL's trainer saves the rollout position for resume only for an
`AsyncRolloutWorker`, and reads the worker's queue, version and health exactly as before. The only
changes are its loop class (loop.py, which observes and never changes) and three things the main process
does around TRL's own `start()` and `stop()`: the run's small files before the child spawns (run.json,
the tokenizer, segments/<seg>.json; manifest.py), a new segment per start (TRL's group ids restart at 0
in every child, a resume included), and, when asked, a background push of the run folder to a Hub dataset
(hub.py) with a last commit after the child stopped. Building the worker touches no disk: on a
multi-GPU launch every rank builds one and TRL keeps only the main process's.
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
from .manifest import begin_segment, new_segment, update_manifest

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
        if not self._loop_kwargs.get("queue_maxsize"):
            warnings.warn("rollout_trace: queue_maxsize=0 (AsyncRolloutWorker's default) leaves TRL's rollout queue "
                          "unbounded: the worker can score thousands of groups ahead of the trainer, and the recorder "
                          "writes every one (measured: 5 GB in 9 minutes with fast sessions). Pass queue_maxsize, "
                          "e.g. the AsyncGRPOConfig default of 1024.", UserWarning, stacklevel=2)

    def start(self) -> None:
        if self._process is None:  # a new child: a new segment
            self.segment = new_segment()
            self.record_dir.mkdir(parents=True, exist_ok=True)
            begin_segment(self.record_dir, self.segment, self._loop_kwargs, self.model_version)
            self._loop_kwargs.update(record_dir=str(self.record_dir.resolve()), record_segment=self.segment,
                                     record_model=str(self._loop_kwargs.get("model_name")))
            repo = self._push_args[0]
            if repo and self._push is None:
                self._push = HubPush(self.record_dir, repo, token=self._push_args[1],
                                     every_minutes=self._push_args[2], private=self._push_args[3])
        super().start()

    def stop(self) -> None:
        was_running = self._process is not None
        super().stop()
        if not was_running:
            return
        update_manifest(self.record_dir, ended_at=iso(time.time()))
        if self._push is not None:
            self._push.finish()
            self._push = None
