"""The recorder's half in TRL's worker child: `RecordingHarnessLoop`, the harness worker's loop class.

TRL's `HarnessRolloutWorker` runs `_loop_cls` (TRL's `_HarnessRolloutLoop`) in a spawned child. The
recording worker names this subclass instead, which only observes:

- the session factory TRL makes (sessions.py: same `create` arguments, pass-through sessions);
- `_run_session`: the session's record is filed under the completion list TRL returns, which the group
  then holds (TRL's lists are in the order rollouts finished);
- `_EMPTY_ROLLOUT`: TRL returns one shared tuple for every unscorable rollout; a fresh, equal tuple per
  call tells those rollouts apart by identity. Every value TRL computes from it is the same;
- reward functions (only when the user passed some): each is called exactly as TRL calls it, and its
  result is noted, so that TRL's reward and advantage of a rollout it built no row for can be had from
  TRL's own `_score_group` (scores.py) on the writer thread;
- `_score_group`: after TRL scored the group, its own objects (the samples it returns, in the order its
  score loop queues them, and the group's lists) go to the writer thread (writer.py). Each sample's
  ordinal is its position in TRL's queue within the segment: the key the trainer's consumption log uses.

Nothing here raises into TRL: a recorder failure is logged (loudly, the first time: writer.py) and the
rollout is trained as it would be.
`run()` gives the writer until shortly before TRL's `stop()` would terminate the child (15 s).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from pathlib import Path
from typing import Any

from trl.experimental.async_grpo.openenv_harness import _HarnessRolloutLoop

from .build import ScoredGroup, ScoredRollout
from .scores import trl_scores
from .sessions import FailureNotes, SessionRecord, describe, recording_factory
from .writer import GroupWriter, end_with_start_error

log = logging.getLogger("rollout_trace.record")
DRAIN_S = 10.0  # TRL terminates the child 15 s after stop(); the writer gets this long to finish
WARN_QUEUED_SAMPLES = 8192  # TRL's rollout queue this deep: the child runs far ahead of the trainer
HARNESS_LOGGER = "trl.experimental.async_grpo.openenv_harness"
SESSION_FIELDS = ("turns", "sequences", "tally", "loop_exhausted", "duration_s", "tool_calls_by_name",
                  "tool_failures_by_name")


class _ObservedReward:
    """A user reward function, called exactly as TRL calls it; its result is noted for the recorder."""

    def __init__(self, func: Any, index: int, notes: dict, lock: threading.Lock):
        self.func, self.index, self._notes, self._lock = func, index, notes, lock
        self.__name__ = getattr(func, "__name__", type(func).__name__)

    def _note(self, kwargs: dict, result: Any) -> Any:
        with self._lock:
            self._notes.setdefault(id(kwargs.get("completions")), {})[self.index] = result
        return result

    def __call__(self, **kwargs):
        return self._note(kwargs, self.func(**kwargs))


class _ObservedAsyncReward(_ObservedReward):
    async def __call__(self, **kwargs):
        return self._note(kwargs, await self.func(**kwargs))


def _observed(func: Any, index: int, notes: dict, lock: threading.Lock) -> _ObservedReward:
    from trl.trainer.utils import is_async_callable

    cls = _ObservedAsyncReward if is_async_callable(func) else _ObservedReward
    return cls(func, index, notes, lock)


class RecordingHarnessLoop(_HarnessRolloutLoop):
    """TRL's `_HarnessRolloutLoop`, observed. Built by TRL in its child with the worker's loop kwargs."""

    def __init__(self, *, record_dir: str, record_segment: str, record_model: str,
                 harness_session_factory: Any, **kwargs: Any):
        self._current = threading.local()  # the SessionRecord of the rollout this pool thread runs
        self._sessions: dict[int, tuple[Any, SessionRecord]] = {}
        self._lock = threading.Lock()
        self._reward_notes: dict[int, dict[int, Any]] = {}
        self._segment, self._model = record_segment, record_model
        self._ordinal = 0  # samples _score_group returned so far = their positions in TRL's queue
        self._handoff_s = 0.0
        self._max_queued = 0
        self._warned_queue = False
        self._start_index = int(kwargs.get("dataset_start_index", 0) or 0)
        try:
            self._writer = GroupWriter(Path(record_dir), record_segment, record_model)
        except Exception as e:  # the main process's worker reads the cause from the end file and raises it
            end_with_start_error(Path(record_dir), record_segment, f"the recorder's writer could not start: {describe(e)}")
            raise
        self._notes = FailureNotes(self._current)
        logging.getLogger(HARNESS_LOGGER).addHandler(self._notes)
        factory = functools.partial(recording_factory, harness_session_factory, self._current)
        super().__init__(harness_session_factory=factory, **kwargs)
        self.reward_funcs = [_observed(f, i, self._reward_notes, self._lock) for i, f in enumerate(self.reward_funcs)]

    @property
    def _EMPTY_ROLLOUT(self):  # noqa: N802 (TRL's name)
        return ([], [], [], 0, 0, None)

    def _run_session(self, prompt, group_id=0):
        rec = self._current.record = SessionRecord()
        try:
            result, metrics = super()._run_session(prompt, group_id)
        finally:
            self._current.record = None
        rec.ended_at = time.time()
        if metrics is not None:  # TRL pops from this dict on the event loop later: keep the plain fields now
            rec.session_metrics = {k: metrics[k] for k in SESSION_FIELDS if k in metrics}
        with self._lock:
            self._sessions[id(result[0])] = (result[0], rec)
        return result, metrics

    async def _score_group(self, group):
        samples = await super()._score_group(group)
        t0 = time.perf_counter()
        try:
            self._hand_off(group, samples)
        except Exception as e:  # the recorder never changes what TRL does, not even by raising
            self._writer.errors += 1
            self._writer.fault(f"group {group.group_id} could not be handed to the writer", e)
        self._handoff_s += time.perf_counter() - t0
        return samples

    def _hand_off(self, group, samples: list) -> None:
        base, self._ordinal = self._ordinal, self._ordinal + len(samples)  # first, so ordinals never drift
        with self._lock:
            notes = self._reward_notes.pop(id(group.completions), {})
        rollouts, offset = [], 0
        for i, (completion, sequences) in enumerate(zip(group.completions, group.completions_sequences, strict=True)):
            with self._lock:
                kept = self._sessions.pop(id(completion), None)
            rec = kept[1] if kept is not None and kept[0] is completion else None
            n = len(sequences)
            rollouts.append(ScoredRollout(
                index=i, record=rec, prompt=group.prompts[i], samples=samples[offset:offset + n],
                ordinals=list(range(base + offset, base + offset + n)),
                tool_calls=group.tool_call_counts[i], tool_failures=group.tool_failure_counts[i]))
            offset += n
        if offset != len(samples):
            raise RuntimeError(f"TRL queued {len(samples)} samples for {offset} rows")
        self._watch_queue()
        rows = [len(s) for s in group.completions_sequences]
        results = [notes.get(k) for k in range(len(self.reward_funcs))]
        scores = functools.partial(trl_scores, _HarnessRolloutLoop._score_group, self, group, results, samples, rows) \
            if 0 in rows else None
        self._writer.put(ScoredGroup(
            segment=self._segment, group_id=int(group.group_id), model_version=int(group.model_version),
            dataset_index=self._dataset_index(int(group.group_id)),
            model=self._model, reward_func_names=list(self.reward_func_names), rollouts=rollouts, scores=scores))

    def _dataset_index(self, group_id: int) -> int | None:
        """The dataset row of group `group_id`'s prompt: TRL walks the dataset from its start index, wrapping."""
        try:
            n = len(self.dataset)
        except TypeError:  # a streaming dataset has no length
            return None
        return (self._start_index + group_id) % n if n else None

    def _watch_queue(self) -> None:
        try:
            depth = self.rollout_buffer.qsize()
        except (NotImplementedError, OSError):  # macOS has no sem_getvalue
            return
        self._max_queued = max(self._max_queued, depth)
        if depth > WARN_QUEUED_SAMPLES and not self._warned_queue:
            self._warned_queue = True
            log.warning("rollout_trace: TRL's rollout queue holds %d samples: the worker runs far ahead of the "
                        "trainer (queue_maxsize=%s) and the recorder writes every group it scores", depth,
                        self.queue_maxsize or "0, unbounded")

    def run(self) -> None:
        try:
            super().run()
        finally:  # here, not at exit: the child hangs in multiprocessing's exit hooks until TRL terminates it
            with self._lock:
                unscored = len(self._sessions)
            self._writer.close(DRAIN_S, rollouts_never_scored=unscored, handoff_s=round(self._handoff_s, 4),
                               max_queued_samples=self._max_queued)
            logging.getLogger(HARNESS_LOGGER).removeHandler(self._notes)

