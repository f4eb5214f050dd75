"""How TRL 1.16 packs this rollout into training rows, computed by TRL itself.

`trl.experimental.async_grpo.async_rollout_worker._chain_to_sequences` chains a rollout's turns by
common token prefix: a clean continuation appends the new prompt tail as context and the output as
trained tokens; drift forks a new row (loop-owning mode sets `fork_threshold_tokens=0`, so every
drift forks); rows with no trained token are dropped. We call it and describe what it returns. The
turns given to TRL carry the artifact's mask over their output, zeroed on untrained turns (the
policy reinforces only turns that made a tool call).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from artifact import Turn

LOOP_OWNING_FORK_THRESHOLD = 0


@dataclass(frozen=True)
class Row:
    input_ids: np.ndarray
    completion_mask: np.ndarray
    old_log_probs: np.ndarray
    turns: tuple[int, ...]  # turns whose prompt + output this row contains

    @property
    def n_trained(self) -> int:
        return int(self.completion_mask.sum())


@dataclass(frozen=True)
class TrainingView:
    rows: list[Row]
    tally: dict[str, float]  # TRL's: clean, realign, fork, transitions, drift_tokens, drift_max
    error: str | None = None  # TRL refused the turns (its own message)


def _import_trl():
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl.experimental.async_grpo.async_rollout_worker import TurnRecord, _chain_to_sequences

    return TurnRecord, _chain_to_sequences


def _contains(row_ids: np.ndarray, t: Turn) -> bool:
    n = t.n_prompt + t.n_output
    return row_ids.size >= n and np.array_equal(row_ids[:n], t.ids)


def training_rows(turns: list[Turn], fork_threshold: int = LOOP_OWNING_FORK_THRESHOLD,
                  rollout_id: str = "rollout") -> TrainingView:
    TurnRecord, chain = _import_trl()
    records = [
        TurnRecord(
            prompt_ids=t.prompt_ids.tolist(),
            output_ids=t.output_ids.tolist(),
            output_log_probs=t.logprobs.tolist(),
            output_mask=(t.mask[t.n_prompt:] * int(t.trained)).tolist(),
        )
        for t in turns
    ]
    try:
        seqs, tally = chain(records, rollout_id, fork_threshold)
    except (ValueError, AssertionError) as e:
        return TrainingView([], {}, f"TRL rejects these turns: {e}")
    rows = []
    for s in seqs:
        ids = np.asarray(s.input_ids, dtype=np.int32)
        rows.append(Row(ids, np.asarray(s.completion_mask, dtype=np.int8), np.asarray(s.old_log_probs),
                        tuple(t.index for t in turns if _contains(ids, t))))
    return TrainingView(rows, dict(tally))
