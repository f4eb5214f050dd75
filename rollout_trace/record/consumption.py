"""The consumption log: on the trainer's main process, the fate of every training row TRL takes from its queue.

    trainer = AsyncGRPOTrainer(..., rollout_worker=RecordingHarnessRolloutWorker(record_dir=..., ...))
    record_consumption(trainer)   # the one call; a no-op on every process but the main one
    trainer.train()

Only the main process knows when a row is trained: the queue, TRL's staleness filter, its batcher and its
collator live there, accelerate collates one micro-batch ahead of the one being trained, and the global
step is the Trainer's. At `on_train_begin` (the dataloader exists, its iterator does not yet) the log puts
three taps in place, each forwarding every call unchanged, so nothing is taken, skipped or reordered:

1. the queue inside TRL's `RolloutQueueDataset`: each row taken is numbered (its ordinal, which is its
   position in the queue, as the worker's child numbered it), and a row taken but not yielded before the
   next take is one TRL's staleness filter dropped ("stale"), TRL's own decision;
2. the batcher's source: which rows were yielded; one yielded but overtaken by a later one in a
   micro-batch was skipped by TRL's token-budget batcher ("oversize");
3. the collate function: which micro-batch each row went into. Each micro-batch the Trainer trains
   (`on_substep_end`, `on_step_end`) is the oldest collated one, so its rows are "trained" at the global
   step of the next `on_step_end`. On resume the Trainer first fast-forwards its dataloader past the
   micro-batches of the steps already trained (transformers' `skip_first_batches`, unless
   `ignore_data_skip`): those rows are collated, never trained ("resume-skip").

At `on_train_end` the rest are "read-ahead" (collated, not trained) or "in-batcher" (taken, waiting
for a micro-batch); rows the worker recorded and nobody took are "in-queue", which the reader knows from
`consumed/<seg>.end.json`. A thread writes the rows (and hashes them for their fingerprints) to the segment's
consumption table (rollout_trace/artifact/run_shards.py), so the trainer's loop only files references.

Multi-process launches (accelerate launch, torchrun): every rank runs the script and calls
`record_consumption`; TRL gives the worker, its child and the queue to the main process only, and the
log there is the only one that writes. Other ranks get a log that does nothing.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from rollout_trace.artifact.run_format import CONSUMED_DIR, ConsumptionEnd, encode_file
from rollout_trace.artifact.run_schema import CONSUMED, ConsumedRecord, to_table
from rollout_trace.artifact.run_shards import ShardWriter
from rollout_trace.artifact.trl_part import fingerprint

from .build import iso
from .manifest import update_manifest
from .writer import atomic_write

log = logging.getLogger("rollout_trace.record")
# The trainer's arguments that decide what is trained (recorded in run.json's `config`). Not the config's
# queue_maxsize, max_inflight_tasks or fork_threshold_tokens: TRL applies those only to the worker it builds
# itself, never to one a script passes in (run.json's `worker` records what the worker really uses).
CONFIG_FIELDS = ("num_generations", "max_staleness", "weight_sync_steps", "temperature", "top_p", "top_k",
                 "epsilon", "epsilon_high", "loss_type", "beta", "per_device_train_batch_size",
                 "gradient_accumulation_steps", "learning_rate", "lr_scheduler_type", "warmup_steps", "max_steps",
                 "num_train_epochs", "seed", "token_budget", "max_completion_length", "max_grad_norm", "bf16",
                 "ignore_data_skip")


class _Row:
    """One row the trainer took, while its fate is open. Holds TRL's sample (a reference)."""

    __slots__ = ("ordinal", "sample", "state", "taken_at", "trainer_version")

    def __init__(self, ordinal: int, sample: Any, trainer_version: int):
        self.ordinal, self.sample, self.trainer_version = ordinal, sample, trainer_version
        self.state, self.taken_at = "taken", time.time()


class _TakeTap:
    """Stands in for the queue inside TRL's RolloutQueueDataset: the same `get`, `qsize`, everything."""

    def __init__(self, inner: Any, log_: ConsumptionLog):
        self._inner, self._log = inner, log_

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        self._log._before_take()
        sample = self._inner.get(*args, **kwargs)
        self._log._took(sample)
        return sample


class _YieldTap:
    """Stands in for the batcher's `dataset`: iterates TRL's RolloutQueueDataset unchanged."""

    def __init__(self, inner: Any, log_: ConsumptionLog):
        self._inner, self._log = inner, log_

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __iter__(self):
        for item in self._inner:
            self._log._yielded(item)
            yield item


SEAL_ROWS = 65_536  # consumption rows in a sealed shard (a row of it is about 100 bytes)


class ConsumptionLog(TrainerCallback):
    """Writes the segment's consumption table (rollout_trace/artifact/run_schema.py `ConsumedRecord`) for a
    recording worker's run."""

    def __init__(self, trainer: Any):
        self.trainer = trainer
        worker = getattr(trainer, "rollout_worker", None)
        self.root: Path | None = None
        if worker is not None and hasattr(worker, "record_dir") and trainer.accelerator.is_main_process:
            self.root = Path(worker.record_dir)
        self.active = self.root is not None
        self.segment: str | None = None
        self.taken = 0
        self._open: dict[int, _Row] = {}  # id(sample.input_ids) -> row (TRL's yielded dict holds that array)
        self._last: _Row | None = None
        self._collated: deque[list[_Row]] = deque()  # micro-batches collated, not trained yet
        self._training: list[list[_Row]] = []  # trained since the last optimizer step
        self._skip = 0  # micro-batches the Trainer fast-forwards past on resume
        self._lines: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self.counts: dict[str, int] = {}

    # -- taps (the trainer's main thread) -----------------------------------------------------------------

    def _before_take(self) -> None:
        last = self._last
        if last is not None and last.state == "taken":  # TRL pulled again without yielding it: stale
            self._settle(last, "stale")

    def _took(self, sample: Any) -> None:
        row = _Row(self.taken, sample, int(getattr(self.trainer, "model_version", -1)))
        self.taken += 1
        self._open[id(sample.input_ids)] = row
        self._last = row

    def _yielded(self, item: dict) -> None:
        row = self._open.get(id(item["input_ids"]))
        if row is not None and row.sample.input_ids is item["input_ids"]:
            row.state = "yielded"

    def _collate(self, collate: Any, examples: list) -> Any:
        try:
            self._note_micro_batch(examples)
        except Exception:  # the log must never change what the trainer does
            log.exception("rollout_trace: could not note a micro-batch")
        return collate(examples)

    def _note_micro_batch(self, examples: list) -> None:
        (rows,) = examples  # TRL's collator: one micro-batch of TreeRows per call
        mb = []
        for tree in rows:
            for ex in tree.samples:
                row = self._open.pop(id(ex["input_ids"]), None)
                if row is not None and row.sample.input_ids is ex["input_ids"]:
                    row.state = "collated"
                    mb.append(row)
        newest = max((r.ordinal for r in mb), default=-1)
        for row in [r for r in self._open.values() if r.state == "yielded" and r.ordinal < newest]:
            self._settle(row, "oversize")  # yielded, overtaken: TRL's token-budget batcher dropped it
        if self._skip > 0:
            self._skip -= 1
            for row in mb:
                self._settle(row, "resume-skip")
        else:
            self._collated.append(mb)

    # -- callbacks -----------------------------------------------------------------------------------------

    def on_train_begin(self, args, state, control, train_dataloader=None, **kwargs):
        if not self.active or train_dataloader is None or self._thread is not None:
            return
        worker = self.trainer.rollout_worker
        self.segment = worker.segment
        base = train_dataloader.base_dataloader  # accelerate's DataLoaderDispatcher wraps TRL's DataLoader
        batcher = base.dataset  # TRL's FixedCountBatcher or TokenBudgetBatcher
        source = batcher.dataset  # TRL's RolloutQueueDataset
        source.queue = _TakeTap(source.queue, self)
        batcher.dataset = _YieldTap(source, self)
        base.collate_fn = functools.partial(self._collate, base.collate_fn)
        if state.global_step > 0 and not args.ignore_data_skip and state.max_steps > 0:
            self._skip = (state.global_step % state.max_steps) * args.gradient_accumulation_steps
        assert self.root is not None
        (self.root / CONSUMED_DIR).mkdir(parents=True, exist_ok=True)
        update_manifest(self.root, config=self._config(args))
        self._thread = threading.Thread(target=self._write_lines, name="rollout-trace-consumption", daemon=True)
        self._thread.start()

    def on_substep_end(self, args, state, control, **kwargs):
        if self._thread is not None and self._collated:
            self._training.append(self._collated.popleft())

    def on_step_end(self, args, state, control, **kwargs):
        if self._thread is None:
            return
        getattr(self.trainer.rollout_worker, "recorder_problem", lambda: None)()  # a child's failure, logged here once
        if self._collated:
            self._training.append(self._collated.popleft())
        for mb in self._training:
            for row in mb:
                self._settle(row, "trained", step=state.global_step)
        self._training = []

    def on_train_end(self, args, state, control, **kwargs):
        if self._thread is None:
            return
        for mb in [*self._training, *self._collated]:
            for row in mb:
                self._settle(row, "read-ahead")
        for row in list(self._open.values()):
            self._settle(row, "in-batcher")
        self._training, self._collated, self._open = [], deque(), {}
        self._lines.put(None)
        self._thread.join(60)
        assert self.root is not None and self.segment is not None
        end = ConsumptionEnd(segment=self.segment, taken=self.taken, global_step=state.global_step,
                             ended_at=iso(time.time()))
        atomic_write(self.root / CONSUMED_DIR / f"{self.segment}.end.json", encode_file(end))
        self._thread = None

    # -- lines (the writer thread) -------------------------------------------------------------------------

    def _settle(self, row: _Row, fate: str, step: int | None = None) -> None:
        self._open.pop(id(row.sample.input_ids), None)
        row.state = fate
        self.counts[fate] = self.counts.get(fate, 0) + 1
        self._lines.put((row, fate, step))

    def _write_lines(self) -> None:
        """Each wake-up's fates appended to the segment's consumption tail as one batch (what was decided while
        the last batch was written), the tail sealed at the end."""
        assert self.root is not None and self.segment is not None
        out = ShardWriter(self.root / CONSUMED_DIR, self.segment, CONSUMED, seal_rows=SEAL_ROWS)
        done = False
        while not done:
            items = [self._lines.get()]
            while not self._lines.empty() and items[-1] is not None:
                items.append(self._lines.get())
            done = items[-1] is None
            try:
                out.append(to_table([self._record(*x) for x in items if x is not None], CONSUMED))
            except Exception:
                log.exception("rollout_trace: could not write consumption rows")
        try:
            out.close()
        except Exception:
            log.exception("rollout_trace: could not seal the consumption table's last shard")

    def _record(self, row: _Row, fate: str, step: int | None) -> ConsumedRecord:
        s = row.sample
        return ConsumedRecord(
            segment=self.segment or "", ordinal=row.ordinal,
            fingerprint=fingerprint(s.input_ids, s.completion_mask, s.old_log_probs, s.advantage),
            fate=fate, step=step, group_id=int(s.group_id), model_version=int(s.model_version),  # type: ignore[arg-type]
            trainer_version=row.trainer_version, taken_at=iso(row.taken_at))

    def _config(self, args: Any) -> dict:
        config = {k: getattr(args, k) for k in CONFIG_FIELDS
                  if isinstance(getattr(args, k, None), (int, float, bool, str))}
        config["num_processes"] = int(self.trainer.accelerator.num_processes)
        return config


def record_consumption(trainer: Any) -> ConsumptionLog:
    """Attach the consumption log to `trainer` (after building it, before `train()`), and return it.

    A no-op on every process but the main one, and for a trainer whose worker does not record."""
    worker = getattr(trainer, "rollout_worker", None)
    if worker is not None and not hasattr(worker, "record_dir"):
        raise TypeError(f"record_consumption needs the trainer's rollout_worker to be a RecordingHarnessRolloutWorker; "
                        f"it is a {type(worker).__name__}")
    cb = ConsumptionLog(trainer)
    if cb.active and worker is not None:  # the worker checks a folder that holds a run was trained with the same arguments
        worker.trainer_config = cb._config(trainer.args)
    trainer.add_callback(cb)
    return cb
