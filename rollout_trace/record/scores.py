"""TRL's reward and advantage for every rollout of a scored group, rows or not, from TRL's own `_score_group`.

TRL's `_score_group` computes a reward and an advantage for each rollout of a group (a failed session's
empty completion included: a user reward function scores it, and it counts in the group's baseline), but
stamps them only on the `RolloutSample`s it builds, and a rollout without a training row has none. To
record what TRL computed for such a rollout, the recorder calls TRL's `_score_group` once more, on the
writer thread, over a stand-in of the group: the same lists, every rollout given one one-token sequence
so that each gets a sample, and each reward function replaced by the list it returned when TRL called it
(loop.py notes them). TRL's own lines then sum the columns and compute the advantages; nothing restates
them. For the rollouts that do have rows, the stand-in's values must equal the ones on TRL's real samples,
which is checked: a mismatch is a recorder fault, raised.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import threading
from typing import Any

from trl.experimental.async_grpo.async_rollout_worker import TrainingSequence

from rollout_trace.artifact.errors import RolloutTraceError

SCORING_LOGGER = "trl.experimental.async_grpo.async_rollout_worker"


class RecorderFault(RolloutTraceError, RuntimeError):
    """The recorder's own code (or what it assumes of TRL) failed: never a property of one rollout."""


class _Replayed:
    """A reward function that returns, for the stand-in group, the list TRL got from the real one."""

    def __init__(self, name: str, result: Any):
        self.__name__, self.result = name, result

    async def __call__(self, **_: Any) -> Any:
        return self.result


class _ReplayLoop:
    """TRL's loop object as `_score_group` reads it, with replayed reward functions."""

    def __init__(self, loop: Any, results: list[Any]):
        self._loop = loop
        self.reward_funcs = [_Replayed(getattr(f, "__name__", "reward"), r)
                             for f, r in zip(loop.reward_funcs, results, strict=True)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loop, name)


class _NotFromThisThread(logging.Filter):
    """Keeps the stand-in call's "Rollout metrics" info line out of TRL's log (it already logged the real one)."""

    def __init__(self, thread: threading.Thread):
        super().__init__()
        self.thread_id = thread.ident

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread != self.thread_id


def quiet_scoring_log(thread: threading.Thread) -> logging.Filter:
    f = _NotFromThisThread(thread)
    logging.getLogger(SCORING_LOGGER).addFilter(f)
    return f


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def trl_scores(score_group: Any, loop: Any, group: Any, results: list[Any], samples: list[Any],
               rows_per_rollout: list[int]) -> list[tuple[dict[str, float], float]]:
    """(TRL's metrics, TRL's advantage) per rollout of `group`, from `score_group` (TRL's `_score_group`,
    unbound) over the stand-in; `results` are the reward functions' lists, `samples` TRL's real ones."""
    if len(results) != len(loop.reward_funcs) or any(r is None for r in results):
        raise RecorderFault(f"the results of {sum(r is not None for r in results)} of the group's "
                            f"{len(loop.reward_funcs)} reward functions were noted")
    one = TrainingSequence(input_ids=[0], completion_mask=[1], old_log_probs=[0.0], rollout_id="stand-in")
    stand_in = dataclasses.replace(group, completions_sequences=[[one] for _ in group.completions])
    got = asyncio.run(score_group(_ReplayLoop(loop, results), stand_in))
    if len(got) != len(group.completions):
        raise RecorderFault(f"TRL's _score_group gave {len(got)} samples for {len(group.completions)} one-row rollouts")
    out = [(dict(s.metrics), float(s.advantage)) for s in got]
    offset = 0
    for i, n in enumerate(rows_per_rollout):  # where TRL's real samples exist, the stand-in agrees with them
        for s in samples[offset:offset + n]:
            if not (_same(float(s.advantage), out[i][1]) and _same(float(s.metrics["reward"]), out[i][0]["reward"])):
                raise RecorderFault(f"TRL's _score_group over the stand-in group disagrees with its real samples at "
                                    f"rollout {i}: advantage {out[i][1]} vs {s.advantage}")
        offset += n
    return out
