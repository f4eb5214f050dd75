"""The context delta: what each turn's prompt adds to what the model already had.

Turn k+1's prompt normally starts with turn k's prompt + output; what follows that shared prefix is
the tool observations and chat-template glue the environment contributed this turn. Comparisons
run on numpy arrays, so a 500k-token prefix check is one vectorised pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rollout_trace.artifact import Turn


def common_prefix_len(a: np.ndarray, b: np.ndarray) -> int:
    """Number of leading positions where `a` and `b` hold the same id."""
    n = min(a.size, b.size)
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if diff.size else n


@dataclass(frozen=True, slots=True)
class ContextDelta:
    shared: int  # prompt tokens identical to the previous turn's prompt + output; the first new position
    added: int  # prompt tokens this turn adds


def context_delta(prev: Turn | None, turn: Turn) -> ContextDelta:
    held = prev.ids if prev is not None else np.empty(0, dtype=np.int32)
    shared = common_prefix_len(held, turn.prompt_ids)
    return ContextDelta(shared, turn.n_prompt - shared)


def context_deltas(turns: list[Turn]) -> list[ContextDelta]:
    return [context_delta(turns[i - 1] if i else None, t) for i, t in enumerate(turns)]


@dataclass(frozen=True, slots=True)
class MaskAudit:
    """Mask positions that contradict what the tokens are."""

    ones_in_prompt: int  # context marked trainable
    zeros_in_output: int  # generated tokens kept as context (e.g. rejected logprobs)
    trained_without_logprobs: bool  # a trained turn with mask 1s but no logprobs to train against


def mask_audit(turn: Turn, trained_tokens: int) -> MaskAudit:
    """`trained_tokens`: how many of the turn's generated tokens TRL trains (rollout_trace/analysis/training.py)."""
    return MaskAudit(
        ones_in_prompt=int(turn.mask[: turn.n_prompt].sum()),
        zeros_in_output=int(turn.n_output - turn.mask[turn.n_prompt:].sum()),
        trained_without_logprobs=bool(trained_tokens and turn.logprobs.size == 0),
    )
