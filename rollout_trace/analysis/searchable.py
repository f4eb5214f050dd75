"""A rollout's searchable text and findings as the columns of its row (rollout_trace/artifact/run_schema.py).

Computed once, when the rollout is recorded (or a run is converted), from the same functions the text index and
the findings panel use (rollout_trace/analysis/texts.py `rollout_text`, rollout_trace/analysis/findings.py), so a
whole run is searched from its columns without opening a rollout. The vocabulary (the display text of each token)
is built once per run from the run's tokenizer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rollout_trace.analysis.findings import findings
from rollout_trace.analysis.texts import rollout_text
from rollout_trace.analysis.tokens import Vocab, resolve_vocab
from rollout_trace.artifact import Artifact
from rollout_trace.artifact.run_schema import FindingRecord


class RunVocab:
    """The run's vocabulary, built when first needed (seconds, once per writer)."""

    def __init__(self, tokenizer_dir: Path | None, model: str | None):
        self.tokenizer_dir, self.model = tokenizer_dir, model
        self._vocab: Vocab | None = None
        self._tried = False

    def get(self) -> Vocab | None:
        if not self._tried:
            self._tried = True
            tok = self.tokenizer_dir if self.tokenizer_dir is not None and self.tokenizer_dir.is_dir() else None
            self._vocab = resolve_vocab(tok, self.model, None, None)[0]
        return self._vocab


def searchable(a: Artifact, vocab: Vocab | None) -> dict:
    """The `text_*` columns and `findings` of one rollout's row."""
    text = rollout_text(a, vocab)
    pieces = text.pieces()
    return {"text_turn": [p.turn for p in pieces], "text_field": [p.field for p in pieces],
            "text_start": [p.start for p in pieces],
            "text_offsets": [b"" if p.offsets is None else np.asarray(p.offsets, dtype="<i4").tobytes() for p in pieces],
            "text": [p.text for p in pieces],
            "findings": [FindingRecord(f.rule, f.turn, f.start, f.end, f.sentence) for f in findings(text)]}
