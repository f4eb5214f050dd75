"""Tool calls with their arguments, paired with their results by call id, and tool failures.

The calls come from each agent turn's reply; the results are the `tool` messages of later requests
(opencode sends the whole history every call, so the last request holds every result). A result is
a failure by TRL's rule: its text mentions error, failed, traceback or exception.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from rollout_trace.artifact import TraceCall

FAILURE_WORDS = ("error", "failed", "traceback", "exception")


@dataclass(frozen=True, slots=True)
class ToolCall:
    turn: int
    call_id: str | None
    name: str | None
    arguments: object  # parsed JSON when it parses, else the raw string
    arguments_ok: bool
    result: str | None  # None: no result recorded (the rollout ended, or the call was never run)
    failed: bool


def _text(content) -> str:
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def is_failure(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in FAILURE_WORDS)


def tool_results(calls: list[TraceCall]) -> dict[str, str]:
    """Every tool result seen in any request, by call id (later requests win)."""
    out: dict[str, str] = {}
    for c in calls:
        for m in c.messages:
            if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id") is not None:
                out[str(m["tool_call_id"])] = _text(m.get("content"))
    return out


def tool_calls(agent_calls: list[TraceCall], all_calls: list[TraceCall] | None = None) -> list[ToolCall]:
    """Each tool call of each agent turn (turn = position in `agent_calls`), with its result."""
    results = tool_results(all_calls if all_calls is not None else agent_calls)
    out = []
    for turn, c in enumerate(agent_calls):
        for tc in c.reply.get("tool_calls") or []:
            fn = tc.get("function") or tc
            raw = fn.get("arguments")
            try:
                args, ok = (json.loads(raw), True) if isinstance(raw, str) else (raw, raw is not None)
            except json.JSONDecodeError:
                args, ok = raw, False
            cid = tc.get("id")
            result = results.get(str(cid)) if cid is not None else None
            out.append(ToolCall(turn, cid, fn.get("name"), args, ok, result,
                                failed=result is not None and is_failure(result)))
    return out
