"""The trainer's view of each output token: TRL 1.16's async GRPO loss terms, from a rescore part.

Per token (AsyncGRPOTrainer.compute_loss; docs/trainer-view.md has the formulas):
    log_ratio = trainer_logprob - engine_logprob      ratio = exp(log_ratio)
    k3 KL     = (ratio - 1) - log_ratio               (the KL estimate TRL logs)
    loss      = -min(ratio * A, clamp(ratio, 1 - eps_low, 1 + eps_high) * A)
    clipped   low: ratio < 1 - eps_low and A < 0;  high: ratio > 1 + eps_high and A > 0
A token without an engine logprob has no ratio: every ratio-derived value is NaN there and it is
never counted as inside or outside the clip band (a missing logprob is not a ratio of 1).

Statistics are over all scored output tokens of a turn or of the rollout (untrained turns too:
their mismatch is worth seeing); `trained` restricts them to the tokens TRL puts in its loss,
which is what its logged `kl`, `entropy` and `clip_ratio` average over. Pure numpy, no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rollout_trace.artifact import Artifact, Rescore, Turn

from .training import Training

EPS_CHOICES: tuple[tuple[float, float], ...] = ((0.2, 0.2), (0.2, 0.28))  # TRL's default, DAPO's
# Symmetric log-spaced edges for the log-ratio histogram: float32 noise (1e-5), a bf16 mismatch
# (1e-2) and a temperature mismatch (1) each land in bins of their own. The ends are open.
HIST_EDGES: tuple[float, ...] = (-1.0, -0.5, -0.2, -0.1, -0.05, -0.01, -1e-3, -1e-4,
                                 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0)


def hist_edges(eps_low: float, eps_high: float) -> tuple[float, ...]:
    """HIST_EDGES with ±0.2 moved to the clip band in log terms, log(1 - eps_low) and log(1 + eps_high), so the
    bins beyond them hold exactly the tokens counted outside the band (ratio < 1 - eps_low or > 1 + eps_high)."""
    lo, hi = math.log(1 - eps_low), math.log(1 + eps_high)
    return tuple(lo if e == -0.2 else hi if e == 0.2 else e for e in HIST_EDGES)


@dataclass(frozen=True)
class TokenView:
    """One turn's output tokens as the trainer sees them; all arrays have one entry per output token."""

    turn: int
    trained: np.ndarray  # bool: in TRL's loss (its completion mask)
    trainer_logprob: np.ndarray
    engine_logprob: np.ndarray  # NaN where the engine recorded none
    log_ratio: np.ndarray
    ratio: np.ndarray
    kl_k3: np.ndarray
    entropy: np.ndarray
    is_top1: np.ndarray  # bool
    topk_ids: np.ndarray  # int32 [n, K]
    topk_probs: np.ndarray  # [n, K]
    outside: np.ndarray  # bool: ratio outside [1 - eps_low, 1 + eps_high]
    loss: np.ndarray  # per-token loss; NaN without an advantage or an engine logprob
    clipped_low: np.ndarray  # bool, TRL's definition (False without an advantage)
    clipped_high: np.ndarray


@dataclass(frozen=True)
class Stats:
    tokens: int  # output tokens scored
    with_engine: int  # of which have an engine logprob (the ratio is defined)
    mean_abs_log_ratio: float  # NaN when no token has an engine logprob
    max_abs_log_ratio: float
    mean_kl_k3: float
    mean_entropy: float
    top1: int  # tokens that are the trainer's argmax
    outside_clip: int  # ratio outside [1 - eps_low, 1 + eps_high]
    clipped_low: int
    clipped_high: int
    mean_loss: float  # NaN without an advantage
    histogram: tuple[int, ...]  # counts per HIST_EDGES bin (len(HIST_EDGES) + 1)


def ratio_terms(trainer: np.ndarray, engine: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(log_ratio, ratio, k3) as TRL computes them; NaN where the engine logprob is NaN."""
    log_ratio = trainer.astype(np.float64) - engine.astype(np.float64)
    ratio = np.exp(log_ratio)
    return log_ratio, ratio, (ratio - 1) - log_ratio


def loss_terms(ratio: np.ndarray, advantage: float, eps_low: float, eps_high: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(per-token loss, low-clipped, high-clipped) for one advantage, as TRL's compute_loss does."""
    clipped = np.clip(ratio, 1 - eps_low, 1 + eps_high)
    loss = -np.minimum(ratio * advantage, clipped * advantage)
    with np.errstate(invalid="ignore"):
        low = (ratio < 1 - eps_low) & (advantage < 0)
        high = (ratio > 1 + eps_high) & (advantage > 0)
    return loss, low, high


def engine_logprobs(turn: Turn) -> np.ndarray:
    """The engine's logprob of each output token, NaN when it recorded none."""
    return turn.logprobs.astype(np.float64) if turn.logprobs.size == turn.n_output else np.full(turn.n_output, np.nan)


def token_view(turn: Turn, part: Rescore, trained: np.ndarray, eps_low: float = 0.2, eps_high: float = 0.2,
               advantage: float | None = None) -> TokenView:
    """`trained`: TRL's completion mask over the turn's generated tokens (rollout_trace/analysis/training.py)."""
    sl = part.turn_slice(turn.index)
    trainer, engine = part.logprobs[sl].astype(np.float64), engine_logprobs(turn)
    log_ratio, ratio, k3 = ratio_terms(trainer, engine)
    with np.errstate(invalid="ignore"):
        outside = (ratio < 1 - eps_low) | (ratio > 1 + eps_high)
    if advantage is None:
        loss, low, high = np.full(ratio.shape, np.nan), np.zeros(ratio.shape, bool), np.zeros(ratio.shape, bool)
    else:
        loss, low, high = loss_terms(ratio, advantage, eps_low, eps_high)
    return TokenView(turn.index, np.asarray(trained) == 1, trainer, engine, log_ratio, ratio,
                     k3, part.entropy[sl].astype(np.float64), part.is_top1[sl], part.topk_ids[sl],
                     np.exp(part.topk_logprobs[sl].astype(np.float64)), outside, loss, low, high)


def histogram(log_ratio: np.ndarray, edges: tuple[float, ...] = HIST_EDGES) -> tuple[int, ...]:
    """Counts of finite log ratios per bin of `edges` (bin i holds edges[i-1] <= x < edges[i], open ends)."""
    x = log_ratio[np.isfinite(log_ratio)]
    return tuple(np.bincount(np.searchsorted(edges, x, side="right"), minlength=len(edges) + 1).tolist())


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else float("nan")


def stats(views: list[TokenView], trained_only: bool = False, edges: tuple[float, ...] = HIST_EDGES) -> Stats:
    """Statistics over the tokens of `views` (all of them, or only those in TRL's loss); the histogram over `edges`."""
    pick = [v.trained if trained_only else np.ones(v.trained.shape, bool) for v in views]

    def cat(name: str) -> np.ndarray:
        arrays = [getattr(v, name)[p] for v, p in zip(views, pick, strict=True)]
        return np.concatenate(arrays) if arrays else np.zeros(0)

    lr, k3, loss = cat("log_ratio"), cat("kl_k3"), cat("loss")
    has = np.isfinite(lr)
    return Stats(
        tokens=int(lr.size), with_engine=int(has.sum()),
        mean_abs_log_ratio=_mean(np.abs(lr[has])), max_abs_log_ratio=float(np.abs(lr[has]).max()) if has.any() else float("nan"),
        mean_kl_k3=_mean(k3[has]), mean_entropy=_mean(cat("entropy")), top1=int(cat("is_top1").sum()),
        outside_clip=int(cat("outside").sum()), clipped_low=int(cat("clipped_low").sum()),
        clipped_high=int(cat("clipped_high").sum()), mean_loss=_mean(loss[np.isfinite(loss)]),
        histogram=histogram(lr, edges),
    )


def rollout_views(a: Artifact, part: Rescore, training: Training, eps_low: float = 0.2, eps_high: float = 0.2,
                  advantage: float | None = None) -> list[TokenView]:
    return [token_view(t, part, training.masks[t.index], eps_low, eps_high, advantage) for t in a.turns]


def _num(x: float) -> float | None:
    """JSON has no NaN: a missing statistic is null."""
    return None if not np.isfinite(x) else float(x)


def stats_dict(s: Stats) -> dict:
    """A Stats as plain JSON-able data (NaN -> None)."""
    return {k: (_num(v) if isinstance(v, float) else list(v) if isinstance(v, tuple) else v)
            for k, v in s.__dict__.items()}


def summary(a: Artifact, part: Rescore, training: Training, advantage: float | None = None) -> dict:
    """Everything `python -m viewer rescore --json` prints about one part, as plain data.

    `outside_clip` uses TRL's default band [0.8, 1.2]; `outside_clip_dapo` DAPO's [0.8, 1.28].
    """
    views = {eps: rollout_views(a, part, training, *eps, advantage) for eps in EPS_CHOICES}
    edges = hist_edges(*EPS_CHOICES[0])  # the bins beyond TRL's default band hold its outside_clip tokens
    base, dapo = stats(views[EPS_CHOICES[0]], edges=edges), stats(views[EPS_CHOICES[1]])
    m = part.meta
    return {
        "part": part.name, "model": m.model, "model_revision": m.model_revision, "model_sha256": m.model_sha256,
        "dtype": m.dtype, "device": m.device, "temperature": m.temperature, "temperature_source": m.temperature_source,
        "top_k": m.top_k, "duration_s": m.duration_s,
        "tokens": base.tokens, "with_engine_logprob": base.with_engine,
        "trained_tokens": stats(views[EPS_CHOICES[0]], trained_only=True).tokens,
        "mean_abs_log_ratio": _num(base.mean_abs_log_ratio), "max_abs_log_ratio": _num(base.max_abs_log_ratio),
        "mean_kl_k3": _num(base.mean_kl_k3), "mean_entropy": _num(base.mean_entropy), "top1": base.top1,
        "outside_clip": base.outside_clip, "outside_clip_dapo": dapo.outside_clip,
        "histogram": {"edges": list(edges), "counts": list(base.histogram)},
        "turns": [{"turn": v.turn, "trained": training.trained(v.turn), "row": m.turns[v.turn].row,
                   **stats_dict(stats([v]))} for v in views[EPS_CHOICES[0]]],
    }
