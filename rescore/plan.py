"""Which sequences to forward so that every output token of every turn is scored exactly once.

The trainer forwards TRL's training rows (`_chain_to_sequences`, rollout_trace/analysis/training.py),
one pass per row: a clean continuation shares the row of the turn before it. We forward each row
once and read off every turn the row contains (its prompt and output are a prefix of the row),
trained or not; a causal model gives a token the same numbers whatever follows it. Turns no row
contains (a turn TRL trains no token of, after a fork; a rollout TRL drops) are forwarded on
their own, so a single-turn rollout is scored too. `per_turn=True` forwards every turn on its own:
the slow reference the row-once plan is tested against.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rollout_trace.analysis.training import Row
from rollout_trace.artifact import Turn


@dataclass
class Sequence:
    ids: np.ndarray
    row: int | None  # TRL training row index, or None for a turn forwarded on its own
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (turn, first output position, outputs)

    @property
    def targets(self) -> np.ndarray:
        """Positions of every output token to score, span after span."""
        return np.concatenate([np.arange(s, s + n, dtype=np.int64) for _, s, n in self.spans] or [np.zeros(0, np.int64)])


def plan(turns: list[Turn], rows: list[Row], per_turn: bool = False) -> list[Sequence]:
    """The sequences to forward: TRL's training `rows` once each, then every turn no row holds."""
    seqs: list[Sequence] = []
    covered: set[int] = set()
    if not per_turn:
        for r, row in enumerate(rows):
            spans = [(t, turns[t].n_prompt, turns[t].n_output) for t in row.turns if t not in covered]
            covered.update(t for t, _, _ in spans)
            seqs.append(Sequence(row.input_ids, r, spans))
    for t in turns:
        if t.index not in covered:
            seqs.append(Sequence(t.ids, None, [(t.index, t.n_prompt, t.n_output)]))
    return seqs
