"""A rollout as the text a search and the findings rules read, with the way back from a character to its token.

Per agent turn there are three searchable pieces: what the model generated (the turn's output tokens), its tool
calls (name and arguments, as the proxy parsed them), and the tool output the environment added before the turn
(the prompt tokens past the prefix shared with the turn before: rollout_trace/analysis/spans.py's context
delta). Generated text and tool output are decoded token by token from the display table
(rollout_trace/analysis/tokens.py), so every character knows the token it came from; a tool call's position is
where its name first appears in the turn's generated text, else the turn's first generated token.

Positions are a turn's full sequence (prompt + output), the token view's "full" scope. No Gradio here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from rollout_trace.artifact import Artifact

from .alignment import align
from .continuity import boundaries
from .spans import context_deltas
from .tokens import Vocab, token_texts
from .tools import ToolCall, tool_calls

Field = Literal["generated", "tool-call", "tool-output"]
FIELDS: tuple[Field, ...] = ("generated", "tool-call", "tool-output")
# opencode's system prompt names the folder the agent works in
_WORKDIR = re.compile(r"Working directory:\s*(\S+)")


@dataclass(frozen=True)
class Piece:
    """One searchable text of a turn. `offsets[i]` is where token `start + i` begins in `text`; None when the
    text has no tokens of its own (a tool call as parsed): then every character is at token `start`."""

    field: Field
    turn: int
    text: str
    start: int
    offsets: np.ndarray | None = None

    def token_at(self, char: int) -> int:
        if self.offsets is None or not self.offsets.size:
            return self.start
        return self.start + max(0, int(np.searchsorted(self.offsets, char, side="right")) - 1)

    def tokens_of(self, lo: int, hi: int) -> tuple[int, int]:
        """The token range [a, b) that characters [lo, hi) fall in."""
        a = self.token_at(lo)
        return a, max(a + 1, self.token_at(max(lo, hi - 1)) + 1)


@dataclass(frozen=True)
class TurnText:
    index: int
    n_prompt: int
    output_ids: np.ndarray
    generated: Piece
    context: Piece  # the tool output (and template glue) this turn's prompt adds
    calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    content: str | None = None  # the reply's text as the proxy parsed it; None without trace.json
    shared: int = 0  # prompt tokens shared with the turn before
    continuous: bool = True  # the prompt starts with the turn before's prompt + output
    log_ratio: np.ndarray | None = None  # trainer minus engine logprob per output token, where re-scored
    rescored_by: str | None = None

    def call_token(self, call: ToolCall) -> int:
        """Where a tool call sits among the turn's tokens: its name's first place in the generated text."""
        k = self.generated.text.find(call.name) if call.name else -1
        return self.generated.token_at(k) if k >= 0 else self.n_prompt

    def call_pieces(self) -> list[Piece]:
        out = []
        for c in self.calls:
            args = c.arguments if isinstance(c.arguments, str) else _json(c.arguments)
            out.append(Piece("tool-call", self.index, f"{c.name or '?'} {args}", self.call_token(c)))
        return out


@dataclass(frozen=True)
class RolloutText:
    turns: tuple[TurnText, ...]
    expected_outputs: tuple[str, ...] = ()  # the held-out tests' outputs
    workdir: str | None = None
    max_output_tokens: int | None = None
    notes: tuple[str, ...] = field(default=())

    def pieces(self) -> list[Piece]:
        out: list[Piece] = []
        for t in self.turns:
            out.append(t.generated)
            out.extend(t.call_pieces())
            if t.index > 0 and t.context.text:  # turn 0's new context is the task, not a tool's output
                out.append(t.context)
        return out


def _json(value: object) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def decoded(vocab: Vocab | None, ids: np.ndarray) -> tuple[str, np.ndarray]:
    """The text of `ids` and where each token starts in it (ids shown as ⟨id⟩ without a vocabulary)."""
    texts = token_texts(vocab, ids).text
    lengths = np.fromiter((len(s) for s in texts.tolist()), dtype=np.int64, count=len(texts))
    starts = np.zeros(len(texts), dtype=np.int64)
    if len(texts) > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    return "".join(texts.tolist()), starts


def _log_ratios(a: Artifact) -> tuple[str | None, list[np.ndarray | None]]:
    """Trainer minus engine logprob per output token of each turn, from the first rescore part (None: not re-scored)."""
    if not a.rescores:
        return None, [None] * len(a.turns)
    name, part = next(iter(sorted(a.rescores.items())))
    out: list[np.ndarray | None] = []
    for t in a.turns:
        trainer = part.logprobs[part.turn_slice(t.index)].astype(np.float64)
        engine = t.logprobs.astype(np.float64) if t.logprobs.size == t.n_output else np.full(t.n_output, np.nan)
        out.append(trainer - engine if trainer.size == engine.size else None)
    return name, out


def rollout_text(a: Artifact, vocab: Vocab | None) -> RolloutText:
    """What search and the findings read of one loaded artifact."""
    alignment = align(a)
    calls = [c for c in alignment.calls if c is not None]
    paired = len(calls) == len(a.turns)
    by_turn: dict[int, list[ToolCall]] = {}
    if paired:
        for tc in tool_calls(calls, a.trace):
            by_turn.setdefault(tc.turn, []).append(tc)
    deltas = context_deltas(a.turns)
    bounds = boundaries(a.turns, None)
    rescored_by, ratios = _log_ratios(a)
    turns = []
    for t in a.turns:
        text, offsets = decoded(vocab, t.output_ids)
        d = deltas[t.index]
        ctx_ids = t.prompt_ids[d.shared:]
        ctx, ctx_offsets = decoded(vocab, ctx_ids)
        call = alignment.calls[t.index]
        turns.append(TurnText(
            index=t.index, n_prompt=t.n_prompt, output_ids=t.output_ids,
            generated=Piece("generated", t.index, text, t.n_prompt, offsets),
            context=Piece("tool-output", t.index, ctx, d.shared, ctx_offsets),
            calls=tuple(by_turn.get(t.index, ())), finish_reason=call.finish_reason if call else None,
            content=_content(call.reply) if call else None, shared=d.shared,
            continuous=t.index == 0 or bounds[t.index - 1].continuous, log_ratio=ratios[t.index],
            rescored_by=rescored_by))
    system = next((c.system_prompt for c in calls if c.system_prompt), None) if calls else None
    m = _WORKDIR.search(system or "")
    cap = a.summary.capture or {}
    limit = cap.get("max_output_tokens") if isinstance(cap, dict) else None
    return RolloutText(
        turns=tuple(turns),
        expected_outputs=tuple(tc.output for tc in a.held_out_tests or ()),
        workdir=m.group(1) if m else None,
        max_output_tokens=limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
        notes=() if paired or a.trace is None else (alignment.note or "",))


def _content(reply: dict) -> str:
    c = reply.get("content")
    if isinstance(c, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in c)
    return "" if c is None else str(c)
