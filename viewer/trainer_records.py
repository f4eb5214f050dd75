"""The trainer's view as page records (viewer/contract.py): a rollout's rescore parts for the outline,
and per turn / per rollout numbers for the server function the page calls (`server.trainer`).

The numbers are rollout_trace/analysis/trainer_view.py's (TRL 1.16's formulas, via `Rollout.trainer_tokens`
and `Rollout.trainer_stats`); this module only checks what a page asked for and packs the answer into
typed records. A request is untrusted: the part must be one the rollout carries, the band one of
EPS_CHOICES and the advantage a finite number of sensible size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rollout_trace.analysis.trainer_view import EPS_CHOICES, hist_edges
from rollout_trace.artifact.errors import RolloutTraceError

from .contract import TrainerOutline, TrainerPart, TrainerStats, TrainerSummary, TrainerTurn
from .rollout import Rollout
from .server_api import TrainerRequest

MAX_ADVANTAGE = 1e3  # a group advantage is a z-score; anything far beyond is a malformed request


class BadRequest(RolloutTraceError, ValueError):
    """A trainer request the page should not have sent; the message is shown to the reader."""


def _label(dtype: str, device: str, temperature: float) -> str:
    return f"{dtype} · {device} · t{temperature:g}"


def trainer_outline(r: Rollout) -> TrainerOutline | None:
    """The parts a picker offers (float32 before bfloat16: the near-perfect match first), or None."""
    parts = sorted(r.artifact.rescores.items(), key=lambda kv: (kv[1].meta.dtype != "float32", kv[0]))
    if not parts:
        return None
    return TrainerOutline(
        parts=[TrainerPart(name, _label(p.meta.dtype, p.meta.device, p.meta.temperature), str(p.meta.model),
                           p.meta.dtype, p.meta.device, float(p.meta.temperature), int(p.meta.top_k))
               for name, p in parts],
        eps_choices=[(lo, hi) for lo, hi in EPS_CHOICES], histogram_edges=list(hist_edges(*EPS_CHOICES[0])))


def parse_request(r: Rollout, req: TrainerRequest, unread: Sequence[str] = ()) -> tuple[str, float, float, float]:
    """(part, eps_low, eps_high, advantage) from a page's request, or BadRequest saying what is wrong (`unread`:
    the fields it sent that could not be read, viewer/requests.py)."""
    if req.part not in r.artifact.rescores:
        raise BadRequest("this rollout has no such rescore part")
    if {"eps", "advantage"} & set(unread):
        raise BadRequest("eps is a pair of numbers and advantage a number")
    eps = req.eps or EPS_CHOICES[0]
    advantage = 1.0 if req.advantage is None else req.advantage
    if not any(all(abs(a - b) < 1e-9 for a, b in zip(eps, c, strict=True)) for c in EPS_CHOICES):
        raise BadRequest(f"eps must be one of {[list(c) for c in EPS_CHOICES]}")
    if not math.isfinite(advantage) or abs(advantage) > MAX_ADVANTAGE:
        raise BadRequest(f"advantage must be a finite number within ±{MAX_ADVANTAGE:g}")
    return req.part, eps[0], eps[1], advantage


def trainer_turn(r: Rollout, turn: int, part: str, eps_low: float, eps_high: float, advantage: float) -> TrainerTurn:
    if not 0 <= turn < len(r.artifact.turns):
        raise BadRequest(f"no turn {turn}")
    d = r.trainer_tokens(turn, part, eps_low, eps_high, advantage)
    digits = lambda xs: "".join(str(int(x)) for x in xs)  # noqa: E731
    clipped = "".join("l" if lo else "h" if hi else "0" for lo, hi in zip(d["clipped_low"], d["clipped_high"], strict=False))
    return TrainerTurn(
        turn=turn, part=part, start=d["start"], eps=(eps_low, eps_high), advantage=advantage,
        trained=digits(d["trained"]), top1=digits(d["top1"]), outside=digits(d["outside"]), clipped=clipped,
        trainer_lp=d["trainer_lp"], engine_lp=d["engine_lp"], log_ratio=d["log_ratio"], kl_k3=d["kl_k3"],
        entropy=d["entropy"], loss=d["loss"], topk_text=d["topk_text"], topk_probs=d["topk_probs"])


def _stats(s: dict) -> TrainerStats:
    return TrainerStats(**{k: s[k] for k in TrainerStats.__struct_fields__})


def trainer_summary(r: Rollout, part: str, eps_low: float, eps_high: float, advantage: float) -> TrainerSummary:
    d = r.trainer_stats(part, eps_low, eps_high, advantage)
    return TrainerSummary(part=part, eps=(eps_low, eps_high), advantage=advantage, rollout=_stats(d["rollout"]),
                          turns=[_stats(t) for t in d["turns"]], histogram_edges=d["histogram_edges"],
                          band=(math.log(1 - eps_low), math.log(1 + eps_high)))
