"""Every private (or experimental) TRL name the recorder relies on, checked against the installed TRL.

The recorder observes TRL 1.16.0's async GRPO from the inside: its harness loop class, the worker's
loop kwargs, the shape of its groups and samples, the trainer's queue dataset and batchers. None of that
is public API, so each name is pinned here and `check()` says which one changed, by name. The recording
worker calls `require()` when it is built, so an incompatible TRL fails before training starts instead of
recording something wrong; tests/test_record_pins.py runs the same checks. It includes the TRL functions
the recorder calls on every rollout through rollout_trace/analysis/training.py (`_turns_from_training_trace`,
`_chain_to_sequences`, `TurnRecord`) and the `_score_group` it calls again for rollouts without rows
(scores.py). A name that breaks after the check passed (a patched TRL, say) fails loudly at the first
group instead (writer.py).

The one private Gradio name the viewer reads (`EventData._data`) is pinned beside the UI that reads it,
viewer/ui/gradio_pins.py (Gradio is imported only in the UI layer).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable

from rollout_trace.artifact.errors import RolloutTraceError

TRL_TESTED = "1.16.0"


class RecorderIncompatible(RolloutTraceError, RuntimeError):
    """The installed TRL changed a name the recorder relies on; the message names each."""


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _params(fn: Callable) -> list[str]:
    return list(inspect.signature(fn).parameters)


def _source_has(fn: Callable, *needles: str) -> bool:
    src = inspect.getsource(fn)
    return all(n in src for n in needles)


def _pins() -> list[tuple[str, Callable[[], bool]]]:
    from accelerate.data_loader import DataLoaderDispatcher
    from trl.experimental.async_grpo import async_grpo_trainer as T
    from trl.experimental.async_grpo import async_rollout_worker as W
    from trl.experimental.async_grpo import openenv_harness as H
    from trl.experimental.async_grpo import packing as P

    loop, base, worker = H._HarnessRolloutLoop, W._AsyncRolloutLoop, W.AsyncRolloutWorker
    return [
        ("openenv_harness.HarnessRolloutWorker._loop_cls is _HarnessRolloutLoop",
         lambda: H.HarnessRolloutWorker._loop_cls is loop and issubclass(H.HarnessRolloutWorker, worker)),
        ("openenv_harness._HarnessRolloutLoop(_AsyncRolloutLoop)", lambda: issubclass(loop, base)),
        ("_HarnessRolloutLoop.__init__(harness_session_factory, harness_adapter, rollout_reward_fn, **loop_kwargs)",
         lambda: {"harness_session_factory", "harness_adapter", "rollout_reward_fn", "loop_kwargs"} <= set(_params(loop.__init__))),
        ("_HarnessRolloutLoop.__init__ calls harness_session_factory(sampling=...)",
         lambda: _source_has(loop.__init__, "harness_session_factory(sampling=")),
        ("_HarnessRolloutLoop._run_session(self, prompt, group_id=0)",
         lambda: _params(loop._run_session) == ["self", "prompt", "group_id"]),
        ("_HarnessRolloutLoop._run_session creates sessions as create(prompt, seed=..., episode_id=rollout_id)",
         lambda: _source_has(loop._run_session, "self._factory.create(prompt, seed=seed, episode_id=rollout_id)")),
        ("_HarnessRolloutLoop._run_session returns self._EMPTY_ROLLOUT for an unscorable rollout",
         lambda: _source_has(loop._run_session, "return self._EMPTY_ROLLOUT, None")),
        ("_HarnessRolloutLoop._EMPTY_ROLLOUT == ([], [], [], 0, 0, None)",
         lambda: loop.__dict__.get("_EMPTY_ROLLOUT") == ([], [], [], 0, 0, None)),
        ("_HarnessRolloutLoop logs through the openenv_harness module's logger",
         lambda: H.__name__ == "trl.experimental.async_grpo.openenv_harness" and _source_has(loop._run_session, "logger.warning(")),
        ("_AsyncRolloutLoop._score_group(self, group) is a coroutine",
         lambda: _params(base._score_group) == ["self", "group"] and inspect.iscoroutinefunction(base._score_group)),
        ("_AsyncRolloutLoop._score_loop queues _score_group's samples in order",
         lambda: _source_has(base._score_loop, "samples = await self._score_group(group)", "self.rollout_buffer.put_nowait(sample)")),
        ("_AsyncRolloutLoop.run(self)", lambda: _params(base.run) == ["self"]),
        ("_AsyncRolloutLoop attributes reward_funcs, reward_func_names, rollout_buffer, dataset, queue_maxsize",
         lambda: _source_has(base.__init__, "self.reward_funcs = ", "self.reward_func_names = ", "self.rollout_buffer = ",
                             "self.dataset = ", "self.queue_maxsize = ")),
        ("_AsyncRolloutLoop._repeat_iterator counts group_id from 0 per child",
         lambda: _source_has(base._repeat_iterator, "group_id = 0", "group_id += 1")),
        ("RolloutGroup fields", lambda: _fields(W.RolloutGroup) >= {
            "prompts", "completions", "completions_sequences", "tool_call_counts", "tool_failure_counts",
            "model_version", "group_id", "rollout_rewards"}),
        ("RolloutSample fields", lambda: _fields(W.RolloutSample) >= {
            "input_ids", "completion_mask", "old_log_probs", "advantage", "model_version", "group_id", "metrics"}),
        ("AsyncRolloutWorker keeps _loop_kwargs and _process, and starts the child with _loop_cls",
         lambda: _source_has(worker.__init__, "self._loop_kwargs = loop_kwargs", "self._process")
         and _source_has(worker.start, "self._loop_cls", "self._loop_kwargs")),
        ("AsyncGRPOTrainer keeps rollout_worker, rollout_queue and model_version",
         lambda: _source_has(T.AsyncGRPOTrainer.__init__, "self.rollout_worker = ", "self.rollout_queue = ")),
        ("AsyncGRPOTrainer saves rollout_state.json for an AsyncRolloutWorker (a subclass keeps resume)",
         lambda: _source_has(T.AsyncGRPOTrainer._save_checkpoint, "isinstance(self.rollout_worker, AsyncRolloutWorker)")),
        ("the worker starts in _TrainBeginCallback.on_train_begin",
         lambda: _source_has(T._TrainBeginCallback.on_train_begin, "rollout_worker.start()")),
        ("RolloutQueueDataset reads self.queue.get(...) and drops stale samples with continue",
         lambda: _source_has(T.RolloutQueueDataset.__iter__, "self.queue.get(", "staleness > self.max_staleness")),
        ("FixedCountBatcher and TokenBudgetBatcher read self.dataset",
         lambda: _source_has(T.FixedCountBatcher.__iter__, "self.dataset")
         and _source_has(T.TokenBudgetBatcher.__iter__, "self.dataset")),
        ("DataCollatorForRollout.torch_call takes one micro-batch of TreeRows: (rows,) = examples",
         lambda: _source_has(T.DataCollatorForRollout.torch_call, "(rows,) = examples")),
        ("packing.TreeRow.samples", lambda: "samples" in inspect.getsource(P.TreeRow.__init__)),
        ("accelerate DataLoaderDispatcher.base_dataloader",
         lambda: "self.base_dataloader" in inspect.getsource(DataLoaderDispatcher)),
        ("trl.trainer.utils.is_async_callable", lambda: callable(_import_is_async())),
        # called on every rollout through rollout_trace/analysis/training.py
        ("openenv_harness._turns_from_training_trace(trace)",
         lambda: _params(H._turns_from_training_trace) == ["trace"]),
        ("async_rollout_worker._chain_to_sequences(turns, rollout_id, fork_threshold) returns (sequences, tally)",
         lambda: _params(W._chain_to_sequences)[:3] == ["turns", "rollout_id", "fork_threshold"]
         and _source_has(W._chain_to_sequences, "return ")),
        ("async_rollout_worker.TurnRecord(prompt_ids, output_ids, output_log_probs, output_mask)",
         lambda: [f.name for f in dataclasses.fields(W.TurnRecord)][:4] == ["prompt_ids", "output_ids",
                                                                            "output_log_probs", "output_mask"]),
        ("TrainingSequence(input_ids, completion_mask, old_log_probs, rollout_id)",
         lambda: _fields(W.TrainingSequence) >= {"input_ids", "completion_mask", "old_log_probs", "rollout_id"}),
        # scores.py calls _score_group again over a stand-in group: the attributes it reads and its lines
        ("_AsyncRolloutLoop._score_group reads reward_funcs, _env_reward_types, _provides_rollout_reward, "
         "reward_func_names and stamps metrics['reward'] and advantage",
         lambda: _source_has(base._score_group, "self.reward_funcs", "self._env_reward_types",
                             "self._provides_rollout_reward", "self.reward_func_names", '"reward": float(reward)',
                             "advantage=float(advantage)")),
        ("RolloutGroup is a dataclass with completions_sequences", lambda: "completions_sequences" in _fields(W.RolloutGroup)),
    ]


def _import_is_async():
    from trl.trainer.utils import is_async_callable

    return is_async_callable


def check() -> list[str]:
    """The pinned names that do not hold in the installed TRL (empty when every one does)."""
    import trl

    broken = []
    for name, holds in _pins():
        try:
            ok = holds()
        except Exception as e:  # a name that is gone raises AttributeError/ImportError: the pin is broken
            ok, name = False, f"{name} ({type(e).__name__}: {e})"
        if not ok:
            broken.append(name)
    if broken and trl.__version__ != TRL_TESTED:
        broken.insert(0, f"the recorder is built for TRL {TRL_TESTED}; this is TRL {trl.__version__}")
    return broken


def require() -> None:
    broken = check()
    if broken:
        raise RecorderIncompatible("rollout_trace.record cannot observe this TRL; what changed:\n  - "
                                   + "\n  - ".join(broken))
