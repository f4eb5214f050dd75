"""Record a TRL 1.16 async-GRPO training run, rollout by rollout, exactly as TRL trains on it (docs/runs.md).

    from rollout_trace.record import RecordingHarnessRolloutWorker, record_consumption

    worker = RecordingHarnessRolloutWorker(record_dir="runs/my-run", **the_same_kwargs)  # was HarnessRolloutWorker
    trainer = AsyncGRPOTrainer(..., rollout_worker=worker)
    record_consumption(trainer)
    trainer.train()

The worker's loop class observes TRL in its worker child and writes, off TRL's path, one folder per scored
group: our rollout artifacts (trace, turns, task, reward, tools) plus what TRL decided (policy version,
group, segment, rollout id, advantage, and the exact rows and masks it queued). The consumption log, on the
trainer's main process, writes the fate of every row: trained at global step N, or why not. The run is read
by rollout_trace/artifact/run.py (`open_run`), listed by `python -m viewer ls RUN` and checked by `python -m viewer check RUN`.
"""

from __future__ import annotations

from .consumption import ConsumptionLog, record_consumption
from .pins import RecorderIncompatible
from .worker import RecordingHarnessRolloutWorker

__all__ = ["ConsumptionLog", "RecorderIncompatible", "RecordingHarnessRolloutWorker", "record_consumption"]
