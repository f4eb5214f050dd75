"""One loaded rollout, ready to view: the artifact, its vocabulary, its analyses, and token chunks on demand.

The page never receives a whole turn's tokens at once. It gets an outline (viewer/render/outline.py)
and asks for 2k-token chunks as they scroll into view; that is what keeps paint time flat from 2k
to 500k tokens (docs/design.md). Positions are absolute within the scope asked
for: a turn's prompt + output ("full"), the part after the prefix shared with the turn before
("new"), or one of TRL's training rows ("row").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from rollout_trace.analysis.alignment import Alignment, align
from rollout_trace.analysis.engine_ids import EngineCheck, engine_check
from rollout_trace.analysis.report import Report, report
from rollout_trace.analysis.spans import ContextDelta, MaskAudit, context_deltas, mask_audit
from rollout_trace.analysis.tokens import Vocab, beyond_vocab, resolve_vocab, token_texts
from rollout_trace.analysis.tools import ToolCall, tool_calls
from rollout_trace.analysis.trainer_view import EPS_CHOICES, hist_edges, stats, stats_dict, token_view
from rollout_trace.analysis.training import Training, training
from rollout_trace.artifact import Artifact

from .contract import SCOPES, Chunk

CHUNK = 2048


@dataclass
class Rollout:
    artifact: Artifact
    vocab: Vocab | None
    vocab_why: list[str] = field(default_factory=list)
    # A watched capture (viewer/ui/live.py) has no tests or reward yet: "running", or how it stopped
    # ("cancelled", "failed"). None for an artifact.
    pending: str | None = None

    @classmethod
    def load(cls, artifact: Artifact, tokenizer_path: str | None = None) -> "Rollout":
        vocab, why = resolve_vocab(artifact.tokenizer_dir, artifact.summary.model, tokenizer_path,
                                   artifact.tokenizer_json)
        notice = beyond_vocab(vocab, artifact.turns)
        if notice:  # a copy: the artifact may be shared, and the notice is about this vocabulary
            artifact = dataclasses.replace(artifact, notices=[*artifact.notices, notice])
        return cls(artifact, vocab, why)

    @cached_property
    def training(self) -> Training:
        """What TRL trains: its turns, completion masks and rows, asked of TRL itself."""
        return training(self.artifact)

    @cached_property
    def report(self) -> Report:
        return report(self.artifact, self.training, self.vocab)

    @cached_property
    def deltas(self) -> list[ContextDelta]:
        return context_deltas(self.artifact.turns)

    @cached_property
    def alignment(self) -> Alignment:
        return align(self.artifact)

    @cached_property
    def tool_calls(self) -> list[ToolCall]:
        calls = [c for c in self.alignment.calls if c is not None]
        return tool_calls(calls, self.artifact.trace) if len(calls) == len(self.artifact.turns) else []

    @cached_property
    def engine_checks(self) -> list[EngineCheck]:
        return [engine_check(t, c, self.vocab) for t, c in zip(self.artifact.turns, self.alignment.calls, strict=False)]

    @cached_property
    def audits(self) -> list[MaskAudit]:
        return [mask_audit(t, self.training.trained_tokens(t.index)) for t in self.artifact.turns]

    # -- what the page asks for ------------------------------------------------------------------

    def story_chunk(self, turn: int, scope: str) -> int:
        """The chunk of `scope` holding turn `turn`'s story (its drift, else its first generated token)."""
        if scope == "row":
            return 0
        t = self.artifact.turns[turn]
        drifts = turn > 0 and not self.report.boundaries[turn - 1].continuous
        at = self.deltas[turn].shared if drifts else t.n_prompt
        start, _ = self.scope_size(turn, scope)
        return max(0, at - start) // CHUNK

    def scope_size(self, turn: int, scope: str, row: int = 0) -> tuple[int, int]:
        """(first position, number of positions) a scope covers."""
        if scope == "row":
            rows = self.training.rows
            if not 0 <= row < len(rows):
                raise ValueError(f"no training row {row}")
            return 0, int(rows[row].input_ids.size)
        t = self.artifact.turns[turn]
        start = self.deltas[turn].shared if scope == "new" else 0
        return start, t.n_prompt + t.n_output - start

    def _slice(self, turn: int, scope: str, row: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """ids, mask and logprobs (nan where none) of absolute positions [lo, hi): work in the chunk's size."""
        if scope == "row":
            rw = self.training.rows[row]
            mask = rw.completion_mask[lo:hi]
            return rw.input_ids[lo:hi], mask, np.where(mask == 1, rw.old_log_probs[lo:hi], np.nan)
        t = self.artifact.turns[turn]
        p = t.n_prompt
        ids = np.concatenate([t.prompt_ids[min(lo, p):min(hi, p)], t.output_ids[max(lo - p, 0):max(hi - p, 0)]])
        lp = np.full(hi - lo, np.nan)
        if t.logprobs.size and hi > p:
            lp[max(p - lo, 0):] = t.logprobs[max(lo - p, 0):hi - p]
        return ids, t.mask[lo:hi], lp

    def chunk(self, turn: int, scope: str, index: int, row: int = 0) -> Chunk:
        """Tokens [index*CHUNK, (index+1)*CHUNK) of the scope, as compact parallel arrays."""
        if scope not in SCOPES or not 0 <= turn < len(self.artifact.turns):
            raise ValueError(f"no turn {turn} / scope {scope!r}")
        start, size = self.scope_size(turn, scope, row)
        lo, hi = start + index * CHUNK, start + min((index + 1) * CHUNK, size)
        if index < 0 or lo > hi:
            raise ValueError(f"no chunk {index} in this scope")
        ids, mask, lps = self._slice(turn, scope, row, lo, hi)
        tt = token_texts(self.vocab, ids)
        return Chunk(start=lo, ids=ids.tolist(), text=tt.text.tolist(), kind="".join(map(str, tt.kind.tolist())),
                     mask="".join(map(str, mask.tolist())),
                     logprob=[None if x != x else round(x, 4) for x in lps.tolist()])

    # -- the trainer's view: rescore parts (python -m viewer rescore) ---------------------------------

    def rescore_parts(self) -> list[dict]:
        """The rescore parts this rollout carries (maybe none), as plain data for a picker."""
        return [{"name": name, "model": p.meta.model, "dtype": p.meta.dtype, "device": p.meta.device,
                 "temperature": p.meta.temperature, "temperature_source": p.meta.temperature_source,
                 "top_k": p.meta.top_k, "vocab_size": p.meta.vocab_size, "created": p.meta.created,
                 "eps_choices": [list(e) for e in EPS_CHOICES]}
                for name, p in self.artifact.rescores.items()]

    def _alt_text(self, ids: np.ndarray) -> list[list[str]]:
        """Each top-K alternative decoded on its own (not merged with its neighbours as a sequence is)."""
        v = self.vocab
        return [[str(v.text[i]) if v is not None and 0 <= i < v.size else f"⟨{i}⟩" for i in row] for row in ids.tolist()]

    def trainer_tokens(self, turn: int, part: str, eps_low: float = 0.2, eps_high: float = 0.2,
                       advantage: float | None = None) -> dict:
        """Per output token of `turn`, the trainer's view as parallel lists (None where undefined).

        `start` is the absolute position of the first output token in the turn's prompt + output (the
        positions `chunk` uses). Ratios are None where the engine recorded no logprob; `loss` and the
        clip flags need an `advantage` (e.g. +1 / -1)."""
        v = token_view(self.artifact.turns[turn], self.artifact.rescores[part], self.training.masks[turn], eps_low,
                       eps_high, advantage)

        def nums(x: np.ndarray, digits: int = 6) -> list[float | None]:
            return [None if not np.isfinite(y) else round(float(y), digits) for y in x.tolist()]

        return {
            "turn": turn, "part": part, "start": self.artifact.turns[turn].n_prompt, "eps": [eps_low, eps_high],
            "advantage": advantage, "trained": v.trained.astype(int).tolist(),
            "trainer_lp": nums(v.trainer_logprob), "engine_lp": nums(v.engine_logprob),
            "log_ratio": nums(v.log_ratio), "ratio": nums(v.ratio), "kl_k3": nums(v.kl_k3, 8),
            "entropy": nums(v.entropy, 4), "top1": v.is_top1.astype(int).tolist(),
            "outside": v.outside.astype(int).tolist(), "loss": nums(v.loss),
            "clipped_low": v.clipped_low.astype(int).tolist(), "clipped_high": v.clipped_high.astype(int).tolist(),
            "topk_ids": v.topk_ids.tolist(), "topk_probs": [[round(p, 4) for p in r] for r in v.topk_probs.tolist()],
            "topk_text": self._alt_text(v.topk_ids),
        }

    def trainer_stats(self, part: str, eps_low: float = 0.2, eps_high: float = 0.2,
                      advantage: float | None = None) -> dict:
        """Per-turn and per-rollout statistics of a part (all output tokens; `trained`: only TRL's loss tokens),
        and the log-ratio histogram: `counts[i]` holds edges[i-1] <= log ratio < edges[i] (open ends); the
        edges include the clip band's, log(1 - eps_low) and log(1 + eps_high)."""
        p = self.artifact.rescores[part]
        views = [token_view(t, p, self.training.masks[t.index], eps_low, eps_high, advantage) for t in self.artifact.turns]
        edges = hist_edges(eps_low, eps_high)
        return {"part": part, "eps": [eps_low, eps_high], "advantage": advantage,
                "rollout": stats_dict(stats(views, edges=edges)),
                "trained": stats_dict(stats(views, trained_only=True, edges=edges)),
                "turns": [{"turn": v.turn, "row": p.meta.turns[v.turn].row, **stats_dict(stats([v], edges=edges))}
                          for v in views],
                "histogram_edges": list(edges)}
