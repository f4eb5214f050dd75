"""Build and run TRL 1.16's real harness worker and real AsyncGRPOTrainer on CPU, with or without the recorder.

Used by the recorder's tests, its benchmark and examples/make_trl_run.py, so all of them run the same
thing: the stand-ins of trl_cpu.py (and nothing else replaced) and the replayed sessions of trl_replay.py.
`worker(...)` builds the plain `HarnessRolloutWorker` or the `RecordingHarnessRolloutWorker` (the one
changed line of a training script); `trainer(...)` builds an `AsyncGRPOTrainer` around one and, when it
records, attaches the consumption log (the one documented call).
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from . import trl_cpu, trl_replay

SCRIPTED = str(trl_replay.SCRIPTED_TRACE)
# The scripted rollout and two shorter sessions of it (its first 2 and 3 calls): rows of 70+68, 70, and 70+51
# trained tokens, so which rows a step trains shows in TRL's own per-step token count.
MIXED = [SCRIPTED, f"{SCRIPTED}:2", f"{SCRIPTED}:3"]


def timing(key: str) -> bool:
    """A metric that measures time or momentary queue depth: it differs from run to run."""
    return (key.startswith("perf/") or key.endswith(("_s", "_per_second", "tok_s")) or key == "train_runtime"
            or any(x in key for x in ("queue_size", "time_in_queue", "inflight", "latency")))


def worker(record_dir: Path | None, *, traces: list[str], tok: Any, gate: str | None = None, n_prompts: int = 16,
           inflight: int = 1, gate_fn: Any = None, session_s: float = 0.0, fail: tuple = (), no_reward: tuple = (),
           timeout: tuple = (), queue_maxsize: int = 64, model: str = "tiny-llama", num_generations: int = 4,
           reward_funcs: tuple = (), **record: Any):
    trl_cpu.apply()
    from accelerate.state import PartialState
    from trl.experimental.async_grpo.openenv_harness import HarnessRolloutWorker

    PartialState()  # the worker logs through accelerate's logger, which needs it (a trainer makes one)

    from rollout_trace.record import RecordingHarnessRolloutWorker

    kwargs = dict(
        harness_session_factory=functools.partial(
            trl_replay.ReplayFactory, traces, num_generations, gate_path=gate, gate=gate_fn, session_s=session_s, fail=fail,
            no_reward=no_reward, timeout=timeout),
        harness_adapter=None, model_name=model, processing_class=tok, dataset=trl_cpu.prompts(n_prompts),
        reward_funcs=list(reward_funcs), eos_token_ids=[tok.eos_token_id], num_generations=num_generations, max_inflight_tasks=inflight,
        vllm_server_url="http://127.0.0.1:9", max_tokens=512, queue_maxsize=queue_maxsize, child_ready_timeout=600)
    if record_dir is None:
        return HarnessRolloutWorker(**kwargs)
    return RecordingHarnessRolloutWorker(record_dir=record_dir, **record, **kwargs)  # the one changed line


def drain(w) -> threading.Event:
    """Empty the worker's queues in a thread until the returned event is set: with nothing left unflushed in
    its queues the child exits by itself, instead of being terminated 15 s after stop()."""
    done = threading.Event()

    def run():
        while not done.is_set() and w._process is not None:  # until stop() has ended the child
            for q in (w.rollout_buffer, w.metrics_queue):
                try:
                    q.get(timeout=0.02)
                except (queue.Empty, OSError, ValueError):
                    pass

    threading.Thread(target=run, daemon=True).start()
    return done


CONSUMER_GATE = functools.partial(trl_replay.consumer_version, groups_per_version=2)


def consume(w, n_groups: int, gate: str | None) -> tuple[list, list[dict]]:
    """Play the trainer on the real queue: take every sample of groups 0..n_groups-1, moving the policy version to
    g // 2 on the first sample of group g (two groups a version); returns the samples and the worker's metrics.
    With the gate (`gate_fn=CONSUMER_GATE`) the child then waits at a fixed point, so every run scores the same."""
    if gate:
        trl_replay.write_gate(gate, 0)
    w.start()
    samples, version = [], 0
    while True:
        s = w.rollout_buffer.get(timeout=300)
        if s.group_id >= n_groups:
            break
        samples.append(s)
        if s.group_id // 2 > version:
            version = s.group_id // 2
            w.update_model_version(version)
            if gate:
                trl_replay.write_gate(gate, version)
    time.sleep(1.0)  # the child reaches the gate: the metrics cover the same rollouts in every run
    metrics = []
    while True:
        try:
            metrics.append(w.metrics_queue.get(timeout=0.3))
        except queue.Empty:
            break
    done = drain(w)
    w.stop()
    done.set()
    return samples, metrics


def metric_totals(payloads: list[dict]) -> dict:
    """Every worker metric summed over the run, timings left out (how pushes split them is timing)."""
    tot: dict = defaultdict(lambda: [0.0, 0.0])
    for p in payloads:
        for k, v in p.items():
            if timing(k):
                continue
            num, den = v if isinstance(v, tuple) else (v, 1.0)
            tot[k][0] += num
            tot[k][1] += den
    return {k: tuple(round(x, 6) for x in v) for k, v in sorted(tot.items())}


def sample_key(s) -> tuple:
    import json

    return (s.group_id, s.model_version, float(s.advantage), s.input_ids.tobytes(), s.completion_mask.tobytes(),
            s.old_log_probs.tobytes(), json.dumps(s.prompt), json.dumps(s.completion),
            json.dumps(s.metrics, sort_keys=True, default=str))


def trainer(out: Path, w, tok: Any, model_dir: str, *, max_steps: int, gate: str | None = None, batch: int = 8,
            record: bool = False, **config: Any):
    """TRL's real AsyncGRPOTrainer around worker `w`; returns (trainer, step logs)."""
    trl_cpu.apply()
    from transformers import TrainerCallback
    from trl.experimental.async_grpo import AsyncGRPOConfig, AsyncGRPOTrainer

    from rollout_trace.record import record_consumption

    base = dict(output_dir=str(out), per_device_train_batch_size=batch, gradient_accumulation_steps=1,
                num_generations=4, max_steps=max_steps, learning_rate=1e-3, logging_steps=1, save_strategy="no",
                report_to="none", seed=0, use_cpu=True, bf16=False, token_budget=0, activation_checkpointing=False,
                max_staleness=4, max_completion_length=512, disable_tqdm=True)
    args = AsyncGRPOConfig(**(base | config))
    t = AsyncGRPOTrainer(model=model_dir, args=args, train_dataset=w._loop_kwargs["dataset"], processing_class=tok,
                         rollout_worker=w, weight_transfer=trl_cpu.NoOpWeightTransfer())
    logs: list[dict] = []

    class Steps(TrainerCallback):
        """Publishes the trainer's version for the gate; keeps the step logs; drains the queues at the end."""

        def on_train_begin(self, a, state, control, **kw):
            if gate:
                trl_replay.write_gate(gate, t.model_version)

        def on_step_end(self, a, state, control, **kw):
            if gate:  # after TRL's own weight-sync callback: the new version
                trl_replay.write_gate(gate, t.model_version)

        def on_log(self, a, state, control, logs=None, **kw):
            if logs and "loss" in logs:
                steps.append(dict(logs))

        def on_train_end(self, a, state, control, **kw):
            drain(w)  # after the consumption log's on_train_end; lets the child exit without TRL's terminate

    steps = logs
    from transformers.trainer_callback import PrinterCallback

    t.remove_callback(PrinterCallback)  # the step logs are kept above, not printed
    if record:
        record_consumption(t)  # the one documented call
    t.add_callback(Steps())
    return t, logs


def _from_the_child(key: str) -> bool:
    """A metric the worker's child pushes on its own queue: which step's log drains it is timing (the worker
    test compares their totals); tools/call_frequency and tools/failure_frequency come with the samples."""
    return key.startswith(("rollout/", "completions/")) or (key.startswith("tools/") and key.endswith(("_total", "_s")))


def step_metrics(logs: list[dict]) -> list[dict]:
    """The trainer's step logs without timings and without the child's own metrics."""
    return [{k: v for k, v in log.items() if not timing(k) and not _from_the_child(k)} for log in logs]
