"""Which captured call each turn of turns.json came from.

turns.json holds the agent turns only; trace.json holds every call, bookkeeping included. The
recipe's selection (rollout_trace/recipe/agent_turns.py) picks the agent calls; they pair with turns by position,
and the pairing is confirmed by the output ids when both files have them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rollout_trace.artifact import Artifact, TraceCall
from rollout_trace.recipe.agent_turns import select_agent_calls


@dataclass(frozen=True)
class Alignment:
    calls: list[TraceCall | None]  # one per turn
    note: str | None  # why the pairing is partial, when it is


def align(artifact: Artifact) -> Alignment:
    if artifact.trace is None:
        return Alignment([None] * len(artifact.turns), "trace.json is absent: no per-call detail")
    agent = select_agent_calls(artifact.trace)
    if len(agent) != len(artifact.turns):
        return Alignment([None] * len(artifact.turns),
                         f"trace.json has {len(agent)} agent calls by the recipe's rule, turns.json has "
                         f"{len(artifact.turns)} turns: calls are not paired with turns")
    mismatched = [t.index for t, c in zip(artifact.turns, agent, strict=True)
                  if c.completion_ids is not None and not np.array_equal(c.completion_ids, t.output_ids)]
    note = None
    if mismatched:
        note = f"output ids differ between trace.json and turns.json at turns {mismatched[:10]}"
    return Alignment(list(agent), note)
