"""The consumption log's taps on TRL's own data path: a real `RolloutQueueDataset` (its staleness filter), a real
`TokenBudgetBatcher` (its oversize drop), TRL's real collator, and accelerate's real `DataLoaderDispatcher`
(its read-ahead), fed from a queue of real `RolloutSample`s and driven the way the Trainer drives them: one
micro-batch trained per step. TRL decides every drop; the log only says which row met which fate.

The full trainer (tests/test_record_trainer.py) cannot make these drops deterministically; this can.
"""

from __future__ import annotations

import json
import queue
from collections import defaultdict
from types import SimpleNamespace

import numpy as np
import pyarrow.parquet as pq
import pytest

from rollout_trace.artifact.trl_part import fingerprint


def _sample(i: int, version: int, n_tokens: int = 30):
    from trl.experimental.async_grpo.async_rollout_worker import RolloutSample

    ids = np.arange(1000 * i, 1000 * i + n_tokens, dtype=np.int64)  # no token shared: every row costs its length
    mask = np.r_[np.zeros(n_tokens // 2, np.int64), np.ones(n_tokens - n_tokens // 2, np.int64)]
    return RolloutSample(prompt=[], completion=[], input_ids=ids, completion_mask=mask,
                         old_log_probs=np.full(n_tokens, -0.5, np.float32), advantage=float(i % 3 - 1),
                         model_version=version, group_id=i, metrics={"reward": 1.0})


@pytest.fixture
def fed(tmp_path):
    """TRL's data path over a queue holding 14 rows: row 2 two versions behind (max_staleness=1), row 3
    longer than the token budget; the trainer is at version 5 and trains two steps."""
    import os

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from accelerate import Accelerator, DataLoaderConfiguration
    from torch.utils.data import DataLoader
    from trl.experimental.async_grpo.async_grpo_trainer import (
        DataCollatorForRollout,
        RolloutQueueDataset,
        TokenBudgetBatcher,
    )

    from rollout_trace.artifact.run_schema import CONSUMED
    from rollout_trace.record import ConsumptionLog

    q: queue.Queue = queue.Queue()
    samples = [_sample(i, 3 if i == 2 else 5, 150 if i == 3 else 30) for i in range(14)]
    for s in samples:
        q.put(s)
    sink: dict = defaultdict(list)
    source = RolloutQueueDataset(q, model_version_fn=lambda: 5, check_health_fn=lambda s: None, stale_after_s=60,
                                 metrics=sink, max_staleness=1, poll_interval_s=0.05)
    batcher = TokenBudgetBatcher(source, 1, 100, sink)  # three 30-token rows fit a micro-batch
    acc = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(dispatch_batches=True, split_batches=True))
    loader = acc.prepare(DataLoader(batcher, batch_size=1, num_workers=0,
                                    collate_fn=DataCollatorForRollout(0, metrics=sink, token_budget=100)))
    trainer = SimpleNamespace(accelerator=acc, model_version=5, callbacks=[],
                              rollout_worker=SimpleNamespace(record_dir=tmp_path, segment="seg-a"))
    trainer.add_callback = trainer.callbacks.append
    log = ConsumptionLog(trainer)
    args = SimpleNamespace(ignore_data_skip=True, gradient_accumulation_steps=1, max_staleness=1)
    state = SimpleNamespace(global_step=0, max_steps=2)
    log.on_train_begin(args, state, None, train_dataloader=loader)
    batches = iter(loader)
    for _ in range(2):  # the Trainer: fetch a micro-batch, train it, end the step
        next(batches)
        state.global_step += 1
        log.on_step_end(args, state, None)
    log.on_train_end(args, state, None)
    # the segment's consumption table, sealed at train end: one Parquet shard, no open tail left
    assert sorted(p.name for p in (tmp_path / "consumed").iterdir()) == ["seg-a-00000.parquet", "seg-a.end.json"]
    table = pq.read_table(tmp_path / "consumed" / "seg-a-00000.parquet")
    assert table.schema.equals(CONSUMED)
    lines = table.to_pylist()
    end = json.loads((tmp_path / "consumed" / "seg-a.end.json").read_text())
    return samples, lines, end, sink


def test_every_fate_is_trls_decision(fed):
    samples, lines, end, sink = fed
    fate = {x["ordinal"]: (x["fate"], x["step"]) for x in lines}
    assert fate[2] == ("stale", None) and sink["sample/dropped_stale_total"] == [1.0]  # TRL's filter dropped it
    assert fate[3] == ("oversize", None) and sink["batch/dropped_oversize_total"] == [1.0]  # TRL's batcher did
    assert [o for o, (f, s) in sorted(fate.items()) if f == "trained" and s == 1] == [0, 1, 4]
    assert [o for o, (f, s) in sorted(fate.items()) if f == "trained" and s == 2] == [5, 6, 7]
    assert [o for o, (f, _) in sorted(fate.items()) if f == "read-ahead"] == [8, 9, 10]  # accelerate's next batch
    assert [o for o, (f, _) in sorted(fate.items()) if f == "in-batcher"] == [11]  # taken, its batch not closed
    assert end["taken"] == 12 and len(lines) == 12  # rows 12 and 13 were never taken: "in-queue" to the reader


def test_rows_carry_the_training_rows_they_name(fed):
    samples, lines, _, _ = fed
    for x in lines:
        s = samples[x["ordinal"]]
        assert x["fingerprint"] == fingerprint(s.input_ids, s.completion_mask, s.old_log_probs, s.advantage)
        assert (x["group_id"], x["model_version"], x["trainer_version"]) == (s.group_id, s.model_version, 5)


def test_other_ranks_record_nothing(tmp_path):
    """On a multi-process launch TRL gives every rank but the main one no worker: their log does nothing."""
    from rollout_trace.record import record_consumption

    trainer = SimpleNamespace(accelerator=SimpleNamespace(is_main_process=False), rollout_worker=None, callbacks=[])
    trainer.add_callback = trainer.callbacks.append
    log = record_consumption(trainer)
    assert not log.active and trainer.callbacks == [log]
    log.on_train_begin(SimpleNamespace(), SimpleNamespace(global_step=0), None, train_dataloader=object())
    log.on_step_end(None, None, None)
    log.on_train_end(None, None, None)
    assert list(tmp_path.iterdir()) == []
    plain = SimpleNamespace(accelerator=SimpleNamespace(is_main_process=True), rollout_worker=object())
    with pytest.raises(TypeError, match="RecordingHarnessRolloutWorker"):
        record_consumption(plain)
