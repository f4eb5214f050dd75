"""Which captured model calls are agent turns, and which of those training reinforces.

opencode also calls the model for bookkeeping (session titles, summaries) without tools or with
another system prompt. The training example keeps only calls whose request offers tools and whose
system prompt equals the first tool-enabled call's; of those, only turns that made a tool call are
trained ("reinforce only action turns").
"""

from __future__ import annotations

from artifact import TraceCall


def select_agent_calls(calls: list[TraceCall]) -> list[TraceCall]:
    first = next((c for c in calls if c.tools), None)
    if first is None:
        return []
    return [c for c in calls if c.tools and c.system_prompt == first.system_prompt]


def has_tool_call(call: TraceCall) -> bool:
    return bool(call.reply.get("tool_calls"))
