"""Read `trace.json` in both proxy dialects into one shape.

openenv 0.10's capture proxy records the engine's own `prompt_token_ids`, `completion_token_ids`,
`per_token_logps` and a `loss_mask` over prompt + completion. The older in-sandbox proxy recorded no
prompt ids and no mask, and sometimes only `completion_tokens` strings of the form "token_id:N".
Both become `TraceCall`s; fields a dialect lacks are None, never guessed.
"""

from __future__ import annotations

import re

import msgspec

from . import arrays
from .model import TraceCall
from .problems import ArtifactError, Findings, from_msgspec
from .schema import NO_RAW, TraceEntry, TraceFile

FILE = "trace.json"
_TOKEN_ID = re.compile(r"^token_id:(\d+)$")


def _array(raw: msgspec.Raw, parse, findings: Findings, i: int, name: str):
    if memoryview(raw) == bytes(NO_RAW):
        return None
    try:
        return parse(raw)
    except arrays.ArrayError as e:
        findings.add(FILE, str(e), turn=i, field=name, expected=e.expected, found=e.found)
        return None


def _ids_from_strings(tokens: list[str], findings: Findings, i: int):
    ids = []
    for k, tok in enumerate(tokens):
        m = _TOKEN_ID.match(tok)
        if not m:
            findings.add(FILE, "unreadable token string", turn=i, field=f"completion_tokens[{k}]",
                         expected='"token_id:N"', found=repr(tok[:40]))
            return None
        ids.append(int(m.group(1)))
    return arrays.token_ids(msgspec.json.encode(ids))


def normalise(entries: list[TraceEntry], findings: Findings) -> list[TraceCall]:
    calls = []
    for i, e in enumerate(entries):
        openenv = bytes(e.prompt_token_ids) != bytes(NO_RAW) or bytes(e.loss_mask) != bytes(NO_RAW)
        messages = e.request.get("messages")
        if not isinstance(messages, list):
            findings.add(FILE, "request has no message list", turn=i, field="request.messages",
                         expected="a list of chat messages", found=type(messages).__name__)
            messages = []
        choices = e.response.get("choices") or [{}]
        choice = choices[0] if isinstance(choices, list) and isinstance(choices[0], dict) else {}
        prompt_ids = _array(e.prompt_token_ids, arrays.token_ids, findings, i, "prompt_token_ids")
        completion = _array(e.completion_token_ids, arrays.token_ids, findings, i, "completion_token_ids")
        if completion is None and e.completion_tokens:
            completion = _ids_from_strings(e.completion_tokens, findings, i)
        logprobs = _array(e.per_token_logps, arrays.logprobs, findings, i, "per_token_logps")
        mask = _array(e.loss_mask, arrays.mask_values, findings, i, "loss_mask")
        if completion is not None and logprobs is not None and logprobs.size not in (0, completion.size):
            findings.add(FILE, "one logprob per completion token", turn=i, field="per_token_logps",
                         expected=f"{completion.size} values", found=f"{logprobs.size}")
        if mask is not None and prompt_ids is not None and completion is not None:
            if mask.size != prompt_ids.size + completion.size:
                findings.add(FILE, "loss_mask covers prompt + completion", turn=i, field="loss_mask",
                             expected=f"{prompt_ids.size} + {completion.size} = {prompt_ids.size + completion.size}",
                             found=f"{mask.size}")
        tools = e.request.get("tools")
        calls.append(TraceCall(
            index=i,
            dialect="openenv" if openenv else "legacy",
            messages=messages,
            tools=tools if isinstance(tools, list) else None,
            reply=choice.get("message") or {},
            finish_reason=choice.get("finish_reason") or e.finish_reason,
            engine_prompt_ids=prompt_ids,
            completion_ids=completion,
            logprobs=logprobs,
            loss_mask=mask,
            metadata=e.metadata,
        ))
    return calls


def calls_from_entries(entries: list[dict]) -> list[TraceCall]:
    """Proxy entries as fetched (dicts) through the same reader trace.json goes through."""
    findings = Findings()
    try:
        decoded = msgspec.json.decode(msgspec.json.encode({"turns": entries}), type=TraceFile)
    except msgspec.ValidationError as e:
        raise ArtifactError([from_msgspec(FILE, e, b"")]) from None
    calls = normalise(decoded.turns, findings)
    findings.raise_if_any()
    return calls
