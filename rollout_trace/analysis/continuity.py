"""Prefix continuity: does each turn's prompt start with exactly the tokens of the turn before?

Training chains a rollout's turns into one row only when turn k+1's prompt begins with turn k's
prompt + output ("token-in = token-out"). When it does not, the model is trained on tokens it never
produced, or the row forks. This module finds the first divergent position at every boundary,
decodes a few tokens of both sides, and names the most likely cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rollout_trace.artifact import Turn

from .spans import common_prefix_len
from .tokens import Vocab, decode

WINDOW = 8
_WS = re.compile(r"\s+")
_REASONING = ("<think>", "</think>", "<reasoning>", "</reasoning>")


@dataclass(frozen=True, slots=True)
class Boundary:
    before: int  # turn k
    after: int  # turn k + 1
    continuous: bool
    held: int  # len(turn k prompt + output)
    diverge_at: int | None  # first position where turn k+1's prompt differs from turn k's tokens
    in_output: bool  # the divergence lies inside turn k's output (not its prompt)
    held_ids: tuple[int, ...]  # a few ids of turn k from the divergence on
    next_ids: tuple[int, ...]  # the same positions in turn k+1's prompt
    held_text: str
    next_text: str
    cause: str | None


def _cause(vocab: Vocab | None, held_tail: np.ndarray, next_tail: np.ndarray, held_text: str, next_text: str) -> str:
    firsts = [int(x[0]) for x in (held_tail, next_tail) if x.size]
    if vocab is not None and any(0 <= i < vocab.size and vocab.special[i] for i in firsts):
        return "end-of-turn token: the model's stop token is not what the template renders"
    if next_tail.size == 0:
        return "the next prompt is shorter than the tokens before it (history cut or compacted)"
    if any(tag in held_text for tag in _REASONING) and not any(tag in next_text for tag in _REASONING):
        return "stripped reasoning: the template drops the model's thinking from the history"
    a, b = _WS.sub("", held_text), _WS.sub("", next_text)
    if a and (b.startswith(a) or a.startswith(b)):
        if held_text == next_text[: len(held_text)]:
            return "re-tokenized: same text, different token ids"
        return "whitespace: the same text with different spacing or newlines"
    return "re-rendered template: the history was written back differently from what the model produced"


def boundary(prev: Turn, nxt: Turn, vocab: Vocab | None) -> Boundary:
    held = prev.ids
    at = common_prefix_len(held, nxt.prompt_ids)
    if at == held.size:
        return Boundary(prev.index, nxt.index, True, held.size, None, False, (), (), "", "", None)
    tail = held[at: held.size]
    nxt_tail = nxt.prompt_ids[at: at + max(WINDOW, tail.size)]
    held_text, next_text = decode(vocab, tail[:64]), decode(vocab, nxt_tail[:64])
    return Boundary(
        prev.index, nxt.index, False, held.size, at, at >= prev.n_prompt,
        tuple(tail[:WINDOW].tolist()), tuple(nxt_tail[:WINDOW].tolist()),
        decode(vocab, tail[:WINDOW]), decode(vocab, nxt_tail[:WINDOW]),
        _cause(vocab, tail, nxt_tail, held_text, next_text),
    )


def boundaries(turns: list[Turn], vocab: Vocab | None) -> list[Boundary]:
    return [boundary(turns[k], turns[k + 1], vocab) for k in range(len(turns) - 1)]


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: Literal["single", "clean", "drift"]
    text: str


def verdict(bounds: list[Boundary], turns: int = 1) -> Verdict:
    """The rollout's continuity in words, for its `turns` agent turns' boundaries `bounds`."""
    drifting = sum(not b.continuous for b in bounds)
    if not bounds:
        return Verdict("single", "no agent turn: no boundary to check" if turns == 0 else "single turn: no boundary to check")
    if drifting == 0:
        return Verdict("clean", "token-in = token-out")
    return Verdict("drift", f"{drifting} of {len(bounds)} boundaries drift")
