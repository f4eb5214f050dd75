"""Scored groups built by TRL's own code, in-process, for the recorder's writer tests.

A group here is what TRL's harness worker hands the recorder: a real `RolloutGroup` of the repo's scripted
trace (OpenEnv's TrainingTrace, TRL's `_turns_from_training_trace` and `_chain_to_sequences` rows), scored
by TRL's real `_score_group` with the given user reward functions and the harness's reward column, so
the samples, rewards and advantages are TRL's. `scored_group` returns the recorder's `ScoredGroup`, with
the same `scores` hook the recording loop attaches (rollout_trace/record/loop.py).
"""

from __future__ import annotations

import asyncio
import functools
import time
from types import SimpleNamespace
from typing import Any

REWARDS = [1.0, 0.0, 0.5, -0.1]


def scored_group(g: int, ordinal: int, *, segment: str = "seg", version: int = 0, fail: tuple = (),
                 reward_funcs: tuple = ()) -> Any:
    from accelerate.state import PartialState
    from openenv.core.harness import TrainingTrace
    from openenv.core.harness.rollout import VerifyResult
    from trl.experimental.async_grpo.async_rollout_worker import RolloutGroup, _AsyncRolloutLoop, _chain_to_sequences
    from trl.experimental.async_grpo.openenv_harness import _messages_from_trace, _turns_from_training_trace

    from rollout_trace.record.build import ScoredGroup, ScoredRollout
    from rollout_trace.record.scores import trl_scores
    from rollout_trace.record.sessions import SessionRecord

    from .trl_replay import SCRIPTED_TRACE, load_trace

    PartialState()  # TRL logs through accelerate's logger, which needs it (TRL's child makes one)
    entries = load_trace(SCRIPTED_TRACE)
    trace = TrainingTrace.from_entries(entries)
    seqs, tally = _chain_to_sequences(_turns_from_training_trace(trace), "r", 0)
    prompt = entries[-1]["request"]["messages"][:2]
    completion = _messages_from_trace(trace.to_trace_entries())
    k = len(REWARDS)
    group = RolloutGroup(
        prompts=[prompt] * k, reward_kwargs={}, completions=[[] if i in fail else list(completion) for i in range(k)],
        completions_ids=[[] for _ in range(k)], completions_sequences=[[] if i in fail else seqs for i in range(k)],
        tool_call_counts=[0] * k, tool_failure_counts=[0] * k, model_version=version, group_id=g,
        env_rewards=[None] * k, rollout_rewards=[None if i in fail else REWARDS[i] for i in range(k)])
    loop = SimpleNamespace(reward_funcs=list(reward_funcs), _env_reward_types=[], _provides_rollout_reward=True,
                           reward_func_names=[f.__name__ for f in reward_funcs] + ["harness_reward"])
    samples = asyncio.run(_AsyncRolloutLoop._score_group(loop, group))  # TRL's own scoring
    results = [f(completions=group.completions) for f in reward_funcs]  # what the loop notes
    rows = [len(s) for s in group.completions_sequences]
    rollouts, offset = [], 0
    for i in range(k):
        if i in fail:
            rec = SessionRecord(rollout_id=f"g{g}r{i}", create_error="RuntimeError: the sandbox failed to start")
        else:
            rec = SessionRecord(rollout_id=f"g{g}r{i}", created=True, training_trace=trace,
                                verify=VerifyResult(env_reward=REWARDS[i], done=True), ended_at=time.time(),
                                session_metrics={"turns": 4, "sequences": len(seqs), "tally": tally})
        n = rows[i]
        rollouts.append(ScoredRollout(i, rec, prompt, samples[offset:offset + n],
                                      list(range(ordinal + offset, ordinal + offset + n)), 0, 0))
        offset += n
    scores = functools.partial(trl_scores, _AsyncRolloutLoop._score_group, loop, group, results, samples, rows) \
        if 0 in rows else None
    return ScoredGroup(segment, g, version, g, "tiny-llama", list(loop.reward_func_names), rollouts,
                       scores=scores), samples
