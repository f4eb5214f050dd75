"""The rollout at a glance: the numbers a summary line, the `check` command and the header show."""

from __future__ import annotations

from dataclasses import dataclass

from rollout_trace.artifact import Artifact
from rollout_trace.artifact.group import trl_reward
from rollout_trace.recipe.reward import Step, reward_waterfall

from .continuity import Boundary, Verdict, boundaries, verdict
from .tokens import Vocab
from .training import Training

REWARD_TOLERANCE = 1e-6


@dataclass(frozen=True)
class RewardCheck:
    steps: list[Step]
    recomputed: float | None
    recorded: float | None
    matches: bool
    by: str = "recipe"  # who computes the reward: "recipe", or "TRL's reward columns" (a recorded run)


def reward_check(a: Artifact) -> RewardCheck:
    s = a.summary
    if s.run is not None:  # a rollout of a recorded TRL run: its reward is TRL's sum of its reward columns
        columns = list(s.run.rewards.items())
        steps = [Step(name, v, v, "a TRL reward column" if v is not None else
                      "a TRL reward column: its function returned None (NaN in TRL), left out of the sum")
                 for name, v in columns]
        steps.append(Step("final", None, trl_reward([v for _, v in columns]), "TRL's sum of its reward columns"))
        by = "TRL's reward columns"
    else:
        steps, by = reward_waterfall(s.env_reward, s.tool_calls_by_name, s.timed_out), "recipe"
    got, want = steps[-1].value, s.reward_after_penalties
    same = (got is None and want is None) or (got is not None and want is not None and abs(got - want) <= REWARD_TOLERANCE)
    return RewardCheck(steps, got, want, same, by)


@dataclass(frozen=True)
class Report:
    model: str
    turns: int
    trained_turns: int  # agent turns TRL trains a token of (rollout_trace/analysis/training.py)
    trained_by: str  # who decides what is trained: TRL (its version), or the capture script's rule
    seed_trained_turns: int  # turns.json's `trained`: the original capture script's rule
    captured_calls: int
    prompt_tokens: int
    output_tokens: int
    trained_tokens: int  # tokens in TRL's loss, over every call of its training trace
    max_context: int
    reward: RewardCheck
    boundaries: list[Boundary]
    continuity: Verdict


def report(a: Artifact, training: Training, vocab: Vocab | None = None) -> Report:
    bounds = boundaries(a.turns, vocab)
    return Report(
        model=a.summary.model,
        turns=len(a.turns),
        trained_turns=training.trained_turns, trained_by=training.by,
        seed_trained_turns=sum(t.seed_trained for t in a.turns),
        captured_calls=len(a.trace) if a.trace is not None else a.summary.captured_calls,
        prompt_tokens=sum(t.n_prompt for t in a.turns),
        output_tokens=sum(t.n_output for t in a.turns),
        trained_tokens=training.total_trained_tokens,
        max_context=max((t.n_prompt + t.n_output for t in a.turns), default=0),
        reward=reward_check(a),
        boundaries=bounds,
        continuity=verdict(bounds, len(a.turns)),
    )


def fmt_reward(v: float | None) -> str:
    return "unscorable" if v is None else f"{v:+.3f}"
