"""Re-score an artifact with a training model and store the result as a rescore part.

`rescore(artifact, config)` checks the model can hold every token id (before any forward), picks
the temperature (the one the rollout was sampled at, when recorded; else 1.0, as TRL's default),
forwards each TRL training row once (rescore/plan.py), and writes `rescore/<name>/` through the
artifact package. The name says what made the scores (model, dtype, device, temperature), so
re-scoring with another model or dtype keeps both.
"""

from __future__ import annotations

import datetime
import re
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Callable, Literal

import numpy as np

from rollout_trace.analysis.training import Row, training
from rollout_trace.artifact import Artifact, Rescore, RescoredTurn, RescoreMeta, Turn, write_rescore
from rollout_trace.artifact.schema import RESCORE_VERSION

from . import forward
from .model import RescoreError, TrainerModel, load
from .plan import plan

DEFAULT_TOP_K = 5
DEFAULT_TEMPERATURE = 1.0  # AsyncGRPOConfig.temperature's default
LIBRARIES = ("torch", "transformers", "trl", "safetensors")


@dataclass
class RescoreConfig:
    model: str
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    device: str = "cpu"
    temperature: float | None = None  # None: what the artifact recorded, else DEFAULT_TEMPERATURE
    top_k: int = DEFAULT_TOP_K
    local_files_only: bool = False
    per_turn: bool = False  # forward each turn on its own instead of each training row once (slower; a check)
    name: str | None = None  # part name; None: derived from model, dtype, device and temperature
    label: str | None = None  # what to record as the model (default `model`), e.g. where a local folder came from
    slug: str | None = None  # the model's part of the part name (default: the last path component of `model`)


def recorded_temperature(a: Artifact) -> tuple[float | None, str]:
    """The sampling temperature the artifact recorded, and where it was found; (None, why) if nowhere."""
    found: dict[float, str] = {}
    for c in a.trace or []:
        for key in ("sampling_params", "requested_sampling_params"):
            t = (c.metadata.get(key) or {}).get("temperature")
            if isinstance(t, (int, float)):
                found.setdefault(float(t), f"trace.json call {c.index} metadata.{key}.temperature")
                break
    cap = (a.summary.capture or {}).get("temperature")
    if isinstance(cap, (int, float)):
        found.setdefault(float(cap), "summary.json capture.temperature")
    if len(found) > 1:
        raise RescoreError(f"the artifact records several temperatures {sorted(found)}: pass --temperature")
    if found:
        (t, where), = found.items()
        return t, where
    return None, "nothing recorded"


def choose_temperature(a: Artifact, given: float | None) -> tuple[float, str]:
    if given is not None:
        return given, "--temperature"
    t, where = recorded_temperature(a)
    return (t, where) if t is not None else (DEFAULT_TEMPERATURE, f"default 1.0 ({where})")


def part_name(model: str, dtype: str, device: str, temperature: float) -> str:
    """e.g. `smollm2-135m-instruct.float32.cpu.t1`: what made the scores, safe as a folder name."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", Path(model.rstrip("/")).name.lower()).strip("-.") or "model"
    return f"{slug[:80]}.{dtype}.{device.replace(':', '')}.t{temperature:g}"


def check_vocab(turns: list[Turn], vocab_size: int) -> None:
    """Refuse, before any forward, a model whose vocabulary cannot hold every token id."""
    for t in turns:
        for field, ids in (("prompt_ids", t.prompt_ids), ("output_ids", t.output_ids)):
            if ids.size and int(ids.max()) >= vocab_size:
                at = int(np.argmax(ids))
                raise RescoreError(f"turn {t.index}, {field}[{at}]: token id {int(ids[at])} is outside the model's "
                                   f"vocabulary of {vocab_size} ids: this artifact was not tokenized for this model")
        if t.n_prompt == 0:
            raise RescoreError(f"turn {t.index} has no prompt tokens: its first output token cannot be scored")


def score_turns(tm: TrainerModel, turns: list[Turn], rows: list[Row], top_k: int, per_turn: bool = False,
                progress: Callable[[str], object] = print) -> tuple[dict[str, np.ndarray], list[RescoredTurn]]:
    """The flat arrays of a rescore part, and per turn which of TRL's training `rows` scored it."""
    seqs = plan(turns, rows, per_turn)
    got: dict[int, forward.Scores] = {}
    row_of: dict[int, int | None] = {}
    for k, seq in enumerate(seqs):
        t0 = time.perf_counter()
        s = forward.score_sequence(tm.model, seq.ids, seq.targets, top_k, tm.temperature)
        what = f"training row {seq.row}" if seq.row is not None else f"turn {seq.spans[0][0]} alone"
        progress(f"  forwarded {what}: {seq.ids.size:,} tokens, {seq.targets.size:,} scored "
                 f"({time.perf_counter() - t0:.1f} s) [{k + 1}/{len(seqs)}]")
        at = 0
        for t, _, n in seq.spans:
            got[t] = forward.Scores(*(x[at:at + n] for x in (s.logprobs, s.entropy, s.is_top1, s.topk_ids,
                                                             s.topk_logprobs)))
            row_of[t] = seq.row
            at += n
    order = [got[t.index] for t in turns]
    arrays = {
        "offsets": np.concatenate([[0], np.cumsum([t.n_output for t in turns])]).astype(np.int64),
        "logprobs": np.concatenate([s.logprobs for s in order] or [np.zeros(0, np.float32)]),
        "entropy": np.concatenate([s.entropy for s in order] or [np.zeros(0, np.float32)]),
        "is_top1": np.concatenate([s.is_top1 for s in order] or [np.zeros(0, bool)]).astype(np.uint8),
        "topk_ids": np.concatenate([s.topk_ids for s in order] or [np.zeros((0, top_k), np.int32)]),
        "topk_logprobs": np.concatenate([s.topk_logprobs for s in order] or [np.zeros((0, top_k), np.float32)]),
    }
    return arrays, [RescoredTurn(t.index, t.seed_trained, row_of[t.index]) for t in turns]


def _versions() -> dict[str, str]:
    out = {}
    for lib in LIBRARIES:
        try:
            out[lib] = version(lib)
        except PackageNotFoundError:
            out[lib] = "not installed"
    return out


def rescore(a: Artifact, cfg: RescoreConfig, root: Path | None = None,
            progress: Callable[[str], object] = print) -> Rescore:
    """Score every output token of `a` with `cfg.model`, write the part under `root` (default a.root), return it."""
    if cfg.top_k < 0:
        raise RescoreError(f"--top-k {cfg.top_k}: give 0 or more")
    temperature, source = choose_temperature(a, cfg.temperature)
    t0 = time.perf_counter()
    progress(f"loading {cfg.model} ({cfg.dtype}, {cfg.device}); temperature {temperature:g} from {source}")
    tm = load(cfg.model, cfg.dtype, cfg.device, temperature, cfg.local_files_only)
    check_vocab(a.turns, tm.vocab_size)
    trl = training(a)
    if trl.error or trl.rows_error:
        progress(f"{trl.error or trl.rows_error}; every turn is forwarded on its own")
    arrays, rows = score_turns(tm, a.turns, trl.rows, cfg.top_k, cfg.per_turn, progress)
    meta = RescoreMeta(
        format_version=RESCORE_VERSION, model=cfg.label or cfg.model, vocab_size=tm.vocab_size, dtype=cfg.dtype, device=cfg.device,
        temperature=temperature, temperature_source=source, top_k=cfg.top_k, turns=rows, libraries=_versions(),
        duration_s=round(time.perf_counter() - t0, 2),
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        model_revision=tm.revision, model_sha256=tm.sha256)
    name = cfg.name or part_name(cfg.slug or cfg.model, cfg.dtype, cfg.device, temperature)
    target = root or a.root
    if target is None:
        raise RescoreError("this artifact was read from an upload: give a folder to write the re-score part into")
    part = write_rescore(target, name, meta, arrays, a.turns)
    a.rescores[name] = part
    return part
