"""The optional trl part of an artifact (`trl/`): what TRL's async GRPO queued for a recorded rollout.

A rollout recorded from a TRL training run (rollout_trace/record) carries, beside our own files, the
training rows TRL built and put on its rollout queue, exactly: `sample.json` (a TrlSample: keys,
advantage, reward, metrics, and one TrlRowRef per row) and `rows.safetensors` (the rows' input ids,
completion masks and old log-probabilities, flat, in TRL's own dtypes). It is validated against itself
like the rescore parts are against the turns: one reference per row, counts and fingerprints that are
those of the arrays, masks of 0/1, finite log-probabilities. Whether the rows are what TRL's own
functions build from trace.json is a question for TRL, asked by `viewer check` (viewer/cli/run_check.py).

`fingerprint` names a row by its three arrays and its advantage: the worker's child writes it beside the
row, the trainer's consumption log writes it beside what it took from the queue, and the reader joins
the two by (segment, ordinal) and checks the fingerprints agree.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from .arrays import safetensors_file
from .model import TrlPart
from .problems import Findings, from_msgspec
from .schema import TRL_DIR, TRL_PART_VERSION, TRL_ROWS, TRL_SAMPLE, TrlSample

# TRL's RolloutSample dtypes (async_rollout_worker.py, _score_group), and the narrower ones rows.safetensors
# stores the same values in (token ids fit int32, a 0/1 mask uint8): 9 bytes a token instead of 20
DTYPES = {"input_ids": np.int64, "completion_mask": np.int64, "old_log_probs": np.float32}
STORED: dict[str, Any] = {"input_ids": np.int32, "completion_mask": np.uint8, "old_log_probs": np.float32}
_decode_sample = msgspec.json.Decoder(TrlSample).decode
_encode = msgspec.json.Encoder().encode


def fingerprint(input_ids: np.ndarray, completion_mask: np.ndarray, old_log_probs: np.ndarray,
                advantage: float) -> str:
    """A short hash of one training row: its arrays (as TRL's dtypes lay them out) and its advantage."""
    h = hashlib.blake2b(digest_size=12)
    for a, dtype in zip((input_ids, completion_mask, old_log_probs), DTYPES.values(), strict=True):
        h.update(np.ascontiguousarray(a, dtype=dtype).tobytes())
    h.update(np.float64(advantage).tobytes())
    return h.hexdigest()


def encode_rows(rows: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """The flat arrays rows.safetensors holds for `rows` of (input_ids, completion_mask, old_log_probs)."""
    offsets = np.zeros(len(rows) + 1, np.int64)
    offsets[1:] = np.cumsum([len(r[0]) for r in rows])
    flat = {}
    for k, (name, dtype) in enumerate(STORED.items()):
        values = np.concatenate([np.asarray(r[k]) for r in rows]) if rows else np.zeros(0, dtype)
        if values.size and name != "old_log_probs" and (values.min() < np.iinfo(dtype).min or values.max() > np.iinfo(dtype).max):
            raise ValueError(f"{name} holds values outside {np.dtype(dtype).name}")
        flat[name] = values.astype(dtype)
    return {"offsets": offsets, **flat}


def files(sample: TrlSample, arrays: dict[str, np.ndarray] | None) -> dict[str, bytes]:
    """The trl part's files (trl/sample.json, and trl/rows.safetensors when there are rows) as bytes, by their
    path in an artifact folder; validation is the reader's."""
    from safetensors.numpy import save

    out = {f"{TRL_DIR}/{TRL_SAMPLE}": msgspec.json.format(_encode(sample), indent=2)}
    if sample.rows:
        assert arrays is not None, "rows need their arrays"
        out[f"{TRL_DIR}/{TRL_ROWS}"] = save({k: np.ascontiguousarray(v) for k, v in arrays.items()},
                                            metadata={"format": "rollout-trace trl rows",
                                                      "format_version": str(TRL_PART_VERSION)})
    return out


def _load_arrays(path: Path, file: str, f: Findings) -> dict[str, np.ndarray] | None:
    arrays = safetensors_file(path, file, f, "required file of the trl part is missing (the sample lists rows)")
    if arrays is None:
        return None
    want = {"offsets": np.int64, **STORED}
    ok = True
    for key, dtype in want.items():
        a = arrays.get(key)
        if a is None or a.dtype != dtype or a.ndim != 1:
            f.add(file, "wrong or missing array", field=key, expected=f"{np.dtype(dtype).name} of rank 1",
                  found="nothing" if a is None else f"{a.dtype.name} of shape {list(a.shape)}")
            ok = False
    return arrays if ok else None


def _check_rows(s: TrlSample, a: dict[str, np.ndarray], file: str, f: Findings) -> None:
    off, n = a["offsets"], a["input_ids"].size
    if off.size != len(s.rows) + 1 or off[0] != 0 or off[-1] != n or np.any(np.diff(off) < 0):
        f.add(file, "one slice per row of sample.json, covering the arrays", field="offsets",
              expected=f"{len(s.rows) + 1} increasing offsets from 0 to {n}", found=str(off.tolist()[:12]))
        return
    if a["completion_mask"].size != n or a["old_log_probs"].size != n:
        f.add(file, "the three arrays have one value per token", field="completion_mask/old_log_probs",
              expected=f"{n} values each", found=f"{a['completion_mask'].size} and {a['old_log_probs'].size}")
        return
    if np.any((a["completion_mask"] != 0) & (a["completion_mask"] != 1)):
        f.add(file, "the completion mask holds 0 or 1", field="completion_mask", expected="0/1", found="other values")
    if not np.all(np.isfinite(a["old_log_probs"])):
        f.add(file, "old log-probabilities are finite", field="old_log_probs", expected="finite numbers",
              found="NaN or infinity")
    for i, ref in enumerate(s.rows):
        lo, hi = int(off[i]), int(off[i + 1])
        mask = a["completion_mask"][lo:hi]
        got = (hi - lo, int(mask.sum()))
        if got != (ref.tokens, ref.trained_tokens):
            f.add(file, "the row's token counts are those of its arrays", field=f"rows[{i}]",
                  expected=f"{got[0]} tokens, {got[1]} trained", found=f"{ref.tokens} tokens, {ref.trained_tokens} trained")
        elif s.advantage is not None and fingerprint(a["input_ids"][lo:hi], mask, a["old_log_probs"][lo:hi],
                                                     s.advantage) != ref.fingerprint:
            f.add(file, "the row's fingerprint is not that of its arrays and the advantage", field=f"rows[{i}].fingerprint",
                  expected="the hash of the stored row", found=ref.fingerprint)


def _check_sample(s: TrlSample, file: str, f: Findings) -> None:
    if s.format_version > TRL_PART_VERSION:
        f.add(file, "written by a newer version of this tool", field="format_version",
              expected=f"at most {TRL_PART_VERSION}", found=str(s.format_version))
    if s.rows and s.advantage is None:
        f.add(file, "rows carry TRL's advantage", field="advantage", expected="a number", found="null")
    if s.advantage is not None and not math.isfinite(s.advantage):
        f.add(file, "TRL's advantage is finite (0 for an unscorable rollout)", field="advantage",
              expected="a finite number", found=str(s.advantage))
    ordinals = [r.ordinal for r in s.rows]
    if ordinals != sorted(set(ordinals)) or any(o < 0 for o in ordinals):
        f.add(file, "rows are queued in order, each once", field="rows", expected="increasing ordinals",
              found=str(ordinals[:12]))


def read_part(root: Path, findings: Findings) -> TrlPart | None:
    """The trl part of the artifact at `root`, validated; None when absent or invalid (problems in `findings`)."""
    base = Path(root) / TRL_DIR
    if not base.is_dir():
        return None
    file, rows_file = f"{TRL_DIR}/{TRL_SAMPLE}", f"{TRL_DIR}/{TRL_ROWS}"
    f = Findings()
    try:
        raw = (base / TRL_SAMPLE).read_bytes()
    except OSError as e:
        findings.add(file, f"cannot be read: {e.strerror or type(e).__name__}")
        return None
    try:
        sample = _decode_sample(raw)
    except (msgspec.ValidationError, msgspec.DecodeError) as e:
        findings.problems.append(from_msgspec(file, e, raw))
        return None
    _check_sample(sample, file, f)
    if sample.rows:
        arrays = _load_arrays(base / TRL_ROWS, rows_file, f)
        if arrays is not None:
            _check_rows(sample, arrays, rows_file, f)
    else:
        arrays = {"offsets": np.zeros(1, np.int64), **{k: np.zeros(0, d) for k, d in STORED.items()}}
    findings.problems.extend(f.problems)
    if f.problems or arrays is None:
        return None
    return TrlPart(sample, arrays["offsets"], arrays["input_ids"], arrays["completion_mask"], arrays["old_log_probs"])
