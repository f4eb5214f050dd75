"""Which captured model calls are agent turns, and the original capture script's `trained` flag.

opencode also calls the model for bookkeeping (session titles, summaries) without tools or with
another system prompt. The training example keeps only calls whose request offers tools and whose
system prompt equals the first tool-enabled call's. The original capture script marks a turn trained
when it made a tool call (`has_tool_call`, turns.json's `trained`); TRL 1.16 trains OpenEnv's loss
mask on every call instead (rollout_trace/analysis/training.py asks TRL).
"""

from __future__ import annotations

from rollout_trace.artifact import TraceCall


def select_agent_calls(calls: list[TraceCall]) -> list[TraceCall]:
    first = next((c for c in calls if c.tools), None)
    if first is None:
        return []
    return [c for c in calls if c.tools and c.system_prompt == first.system_prompt]


def has_tool_call(call: TraceCall) -> bool:
    return bool(call.reply.get("tool_calls"))
