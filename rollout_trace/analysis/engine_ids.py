"""Engine prompt ids against the chat-template re-rendering of the same request.

The engine's `prompt_token_ids` (openenv 0.10 proxy) are what the model actually saw. The seed
re-tokenized each request with the tokenizer's chat template instead, and such re-renders are known
to differ (openenv measured 0 of 28 turns matching on one Qwen model). Where they differ is what a
trainer needs to see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from rollout_trace.artifact import TraceCall, Turn

from .spans import common_prefix_len
from .tokens import Vocab, decode

WINDOW = 8


@dataclass(frozen=True, slots=True)
class EngineCheck:
    turn: int
    status: Literal["same", "differ", "no_engine_ids", "no_retokenized_ids"]
    engine_len: int | None = None
    retok_len: int | None = None
    diverge_at: int | None = None
    engine_text: str = ""
    retok_text: str = ""


def _pair(turn: Turn, call: TraceCall | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(engine ids, re-tokenized ids) for this turn, from wherever the artifact keeps them."""
    if turn.prompt_source == "engine":
        return turn.prompt_ids, turn.retokenized_prompt_ids
    engine = call.engine_prompt_ids if call is not None else None
    return engine, turn.prompt_ids


def engine_check(turn: Turn, call: TraceCall | None, vocab: Vocab | None) -> EngineCheck:
    engine, retok = _pair(turn, call)
    if engine is None:
        return EngineCheck(turn.index, "no_engine_ids")
    if retok is None:
        return EngineCheck(turn.index, "no_retokenized_ids", engine_len=engine.size)
    if np.array_equal(engine, retok):
        return EngineCheck(turn.index, "same", engine.size, retok.size)
    at = common_prefix_len(engine, retok)
    return EngineCheck(turn.index, "differ", engine.size, retok.size, at,
                       decode(vocab, engine[at: at + WINDOW]), decode(vocab, retok[at: at + WINDOW]))
