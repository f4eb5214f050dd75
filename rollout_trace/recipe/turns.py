"""Captured calls to training turns, derived the way training derives them.

When the proxy recorded the engine's `prompt_token_ids` (openenv 0.10), those ids and the proxy's
`loss_mask` are the turn: that is what the model saw and what TRL trains on. The chat-template
re-rendering the seed used is kept beside them (`retokenized_prompt_ids`) when a tokenizer is at
hand, so the viewer can show where the two differ. Older captures without engine ids fall back to
the re-rendering, as the seed did, and say so through `prompt_source`.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from rollout_trace.artifact import TraceCall, Turn
from rollout_trace.artifact.errors import RolloutTraceError
from rollout_trace.recipe.agent_turns import has_tool_call


class TurnError(RolloutTraceError, ValueError):
    pass


def retokenize(tokenizer, call: TraceCall) -> np.ndarray:
    ids = tokenizer.apply_chat_template(call.messages, tools=call.tools, add_generation_prompt=True, tokenize=True,
                                        return_dict=False)
    return np.asarray(ids, dtype=np.int32)


def derive_turn(n: int, call: TraceCall, tokenizer=None) -> Turn:
    """Agent call `call` as turn `n`: engine ids and mask when the proxy recorded them, else re-rendered."""
    if call.completion_ids is None:
        raise TurnError(f"captured call {call.index} has no completion token ids: the endpoint did not return "
                        "them (vLLM needs --return-tokens-as-token-ids)")
    output = call.completion_ids
    retok = retokenize(tokenizer, call) if tokenizer is not None else None
    source: Literal["engine", "retokenized"]
    if call.engine_prompt_ids is not None:
        prompt, source = call.engine_prompt_ids, "engine"
    elif retok is not None:
        prompt, source, retok = retok, "retokenized", None
    else:
        raise TurnError(f"captured call {call.index} has no engine prompt ids and no tokenizer is available "
                        "to re-tokenize its request")
    if call.loss_mask is not None and call.loss_mask.size == prompt.size + output.size:
        mask = call.loss_mask
    else:
        mask = np.concatenate([np.zeros(prompt.size, np.int8), np.ones(output.size, np.int8)])
    logprobs = call.logprobs if call.logprobs is not None and call.logprobs.size == output.size else np.empty(0)
    names = tuple((tc.get("function") or tc).get("name") for tc in call.reply.get("tool_calls") or [])
    return Turn(n, has_tool_call(call), names, prompt, output, logprobs, mask, source, retok)
