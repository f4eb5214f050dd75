"""The reward recipe as a waterfall of steps: verifier score, each penalty, final.

Rules (docs/design.md): no verifier score -> unscorable (None, never 0.0);
no `bash` call at all -> the reward is -0.1; timed out -> base 0; otherwise base = fraction of
held-out tests passed; then minus 0.03 per tool call beyond 30, at most 0.5 in total.
"""

from __future__ import annotations

from dataclasses import dataclass

NO_BASH_REWARD = -0.1
FREE_TOOL_CALLS = 30
STEP_PENALTY = 0.03
MAX_STEP_PENALTY = 0.5


@dataclass(frozen=True, slots=True)
class Step:
    label: str
    delta: float | None  # change this step makes; None for the starting value and the total
    value: float | None  # running reward after this step; None = unscorable
    why: str


def reward_waterfall(env_reward: float | None, tool_calls_by_name: dict[str, int], timed_out: bool) -> list[Step]:
    """Each step of the recipe in order; the last step's value is the reward."""
    steps = [Step("verifier score", None, env_reward,
                  "fraction of held-out tests passed" if env_reward is not None else "no verifier score")]
    if env_reward is None:
        return steps + [Step("final", None, None, "unscorable: excluded from the group baseline, not punished")]
    value = env_reward
    if tool_calls_by_name.get("bash", 0) == 0:
        steps.append(Step("no-bash penalty", NO_BASH_REWARD - value, NO_BASH_REWARD, "the agent never ran bash"))
        return steps + [Step("final", None, NO_BASH_REWARD, "")]
    steps.append(Step("no-bash penalty", 0.0, value, "bash was called"))
    if timed_out:
        steps.append(Step("timeout", -value, 0.0, "the agent timed out: base is 0"))
        value = 0.0
    else:
        steps.append(Step("timeout", 0.0, value, "finished in time"))
    n = sum(tool_calls_by_name.values())
    penalty = min(MAX_STEP_PENALTY, STEP_PENALTY * max(0, n - FREE_TOOL_CALLS))
    value -= penalty
    steps.append(Step("step penalty", -penalty if penalty else 0.0, value,
                      f"{n} tool calls; {STEP_PENALTY} each beyond {FREE_TOOL_CALLS}, at most {MAX_STEP_PENALTY}"))
    return steps + [Step("final", None, value, "")]


def reward(env_reward: float | None, tool_calls_by_name: dict[str, int], timed_out: bool) -> float | None:
    return reward_waterfall(env_reward, tool_calls_by_name, timed_out)[-1].value
