"""The optional rescore parts of an artifact (`rescore/<name>/`): read, validate, write.

A rescore part holds what a training model makes of every output token of the rollout (its
log-probability, entropy, top-1 flag and top-K alternatives), written by `python -m viewer rescore`.
It is validated against the turns it scores like every other part: one value per output token,
finite values, and every token id (the artifact's and the top-K's) inside the scoring model's
vocabulary. Arrays live in safetensors (read with numpy, no torch) because they are numbers, not
text: a 100k-token rollout's scores are 5 MB instead of 20 MB of JSON.

Writing is atomic per part: the new folder is built and validated beside the others, then renamed
into place; no other file of the artifact is touched, and parts with other names are kept.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import msgspec
import numpy as np

from .arrays import safetensors_file
from .model import Rescore, Turn
from .problems import ArtifactError, Findings, from_msgspec
from .schema import RESCORE_DIR, RESCORE_META, RESCORE_SCORES, RESCORE_VERSION, RescoreMeta

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
# key -> (numpy dtype, rank); shapes are checked against the turns below
ARRAYS = {"offsets": (np.int64, 1), "logprobs": (np.float32, 1), "entropy": (np.float32, 1),
          "is_top1": (np.uint8, 1), "topk_ids": (np.int32, 2), "topk_logprobs": (np.float32, 2)}
_decode_meta = msgspec.json.Decoder(RescoreMeta).decode
_encode = msgspec.json.Encoder().encode


def part_names(root: Path) -> list[str]:
    """The rescore parts present (folders with a meta.json), sorted; hidden partial writes are ignored."""
    base = Path(root) / RESCORE_DIR
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and NAME.match(p.name) and (p / RESCORE_META).is_file())


def _turn_of(offsets: np.ndarray, element: int) -> int:
    return int(np.searchsorted(offsets, element, side="right") - 1)


def _check_meta(meta: RescoreMeta, turns: list[Turn], file: str, f: Findings) -> None:
    if meta.format_version != RESCORE_VERSION:
        f.add(file, "written by another version of the viewer", field="format_version",
              expected=str(RESCORE_VERSION), found=str(meta.format_version))
    if len(meta.turns) != len(turns):
        f.add(file, "one entry per agent turn", field="turns", expected=str(len(turns)), found=str(len(meta.turns)))
    for i, (m, t) in enumerate(zip(meta.turns, turns, strict=False)):  # a length mismatch is reported above
        if m.turn != i or m.trained != t.seed_trained:
            f.add(file, "describes another turn than turns.json", turn=i, field="turns",
                  expected=f"turn {i}, trained {str(t.seed_trained).lower()}",
                  found=f"turn {m.turn}, trained {str(m.trained).lower()}")
    if meta.top_k < 0 or meta.vocab_size <= 0 or not np.isfinite(meta.temperature) or meta.temperature <= 0:
        f.add(file, "top_k >= 0, vocab_size > 0 and a positive finite temperature", field="top_k/vocab_size/temperature",
              expected="valid settings", found=f"{meta.top_k}/{meta.vocab_size}/{meta.temperature}")
    highest = max((int(a.max()) for t in turns for a in (t.prompt_ids, t.output_ids) if a.size), default=-1)
    if highest >= meta.vocab_size:
        at = next(t.index for t in turns if any(a.size and int(a.max()) == highest for a in (t.prompt_ids, t.output_ids)))
        f.add(file, "the scoring model's vocabulary cannot hold the artifact's token ids", turn=at, field="vocab_size",
              expected=f"more than {highest}", found=str(meta.vocab_size))


def _load_arrays(path: Path, file: str, f: Findings) -> dict[str, np.ndarray] | None:
    arrays = safetensors_file(path, file, f, "required file of the rescore part is missing")
    if arrays is None:
        return None
    ok = True
    for key, (dtype, rank) in ARRAYS.items():
        a = arrays.get(key)
        if a is None:
            f.add(file, "array is missing", field=key, expected=f"{np.dtype(dtype).name} of rank {rank}", found="nothing")
            ok = False
        elif a.dtype != dtype or a.ndim != rank:
            f.add(file, "wrong array type", field=key, expected=f"{np.dtype(dtype).name} of rank {rank}",
                  found=f"{a.dtype.name} of shape {list(a.shape)}")
            ok = False
    return arrays if ok else None


def _check_shapes(a: dict[str, np.ndarray], meta: RescoreMeta, turns: list[Turn], file: str, f: Findings) -> bool:
    want = np.concatenate([[0], np.cumsum([t.n_output for t in turns], dtype=np.int64)])
    off = a["offsets"]
    if off.shape != want.shape or not np.array_equal(off, want):
        bad = next((i for i in range(min(off.size, want.size) - 1) if off[i + 1] - off[i] != want[i + 1] - want[i]), None)
        f.add(file, "one score per output token of each turn", turn=bad, field="offsets",
              expected=f"{want.tolist()[:12]}", found=f"{off.tolist()[:12]}")
        return False
    n, k = int(want[-1]), meta.top_k
    for key in ARRAYS:
        shape = (n,) if ARRAYS[key][1] == 1 else (n, k)
        if key != "offsets" and a[key].shape != shape:
            f.add(file, "the shape the turns and top_k give", field=key, expected=str(list(shape)),
                  found=str(list(a[key].shape)))
            return False
    return True


def _check_values(a: dict[str, np.ndarray], vocab: int, file: str, f: Findings) -> None:
    off = a["offsets"]
    rules = (("logprobs", lambda x: np.isfinite(x) & (x <= 1e-3), "a finite log-probability <= 0"),
             ("entropy", lambda x: np.isfinite(x) & (x >= -1e-3), "a finite entropy >= 0"),
             ("is_top1", lambda x: x <= 1, "0 or 1"),
             ("topk_logprobs", lambda x: np.isfinite(x) & (x <= 1e-3), "a finite log-probability <= 0"),
             ("topk_ids", lambda x: (x >= 0) & (x < vocab), f"an id in 0..{vocab - 1} (the model's vocabulary)"))
    for key, good, what in rules:
        bad = np.flatnonzero(~good(a[key]).reshape(a[key].shape[0], -1).all(axis=1))
        if bad.size:
            i = int(bad[0])
            f.add(file, f"invalid value at output token {i - int(off[_turn_of(off, i)])} of the turn",
                  turn=_turn_of(off, i), field=key, expected=what, found=str(a[key][i].tolist()))


def meta_cap(n_turns: int) -> int:
    """The most bytes a meta.json may hold: its settings and names, plus one small record per turn."""
    return 64 * 1024 + 256 * n_turns


def read_part(root: Path, name: str, turns: list[Turn]) -> Rescore:
    """One rescore part, validated against `turns`; raises ArtifactError naming every problem."""
    f = Findings()
    base = Path(root) / RESCORE_DIR / name
    meta_file, scores_file = f"{RESCORE_DIR}/{name}/{RESCORE_META}", f"{RESCORE_DIR}/{name}/{RESCORE_SCORES}"
    meta = None
    cap = meta_cap(len(turns))
    try:
        size = (base / RESCORE_META).stat().st_size
        if size > cap:  # refused unread: a 55 MB meta.json once kept 133 MB
            f.add(meta_file, "too large for this file", expected=f"at most {cap:,} bytes for {len(turns)} turns",
                  found=f"{size:,} bytes")
            f.raise_if_any()
        raw = (base / RESCORE_META).read_bytes()
        meta = _decode_meta(raw)
    except OSError as e:
        f.add(meta_file, f"cannot be read: {e.strerror}")
    except (msgspec.ValidationError, msgspec.DecodeError) as e:
        f.problems.append(from_msgspec(meta_file, e, raw))
    if meta is not None:
        _check_meta(meta, turns, meta_file, f)
    f.raise_if_any()
    assert meta is not None  # a meta that could not be read or decoded is a problem raised above
    arrays = _load_arrays(base / RESCORE_SCORES, scores_file, f)
    if arrays is not None and _check_shapes(arrays, meta, turns, scores_file, f):
        _check_values(arrays, meta.vocab_size, scores_file, f)
    f.raise_if_any()
    assert arrays is not None  # None only with a problem recorded
    a = arrays
    return Rescore(name, meta, a["offsets"], a["logprobs"], a["entropy"], a["is_top1"].astype(bool),
                   a["topk_ids"], a["topk_logprobs"])


def read_parts(root: Path, turns: list[Turn], findings: Findings) -> dict[str, Rescore]:
    """Every rescore part of the artifact; problems go to `findings` (a bad part makes the artifact invalid)."""
    parts = {}
    for name in part_names(root):
        try:
            parts[name] = read_part(root, name, turns)
        except ArtifactError as e:
            findings.problems.extend(e.problems)
    return parts


def write_part(root: Path, name: str, meta: RescoreMeta, arrays: dict[str, np.ndarray], turns: list[Turn]) -> Rescore:
    """Write `rescore/<name>/` atomically and return it as read back; replaces only a part of the same name."""
    from safetensors.numpy import save_file

    if not NAME.match(name):
        raise ValueError(f"rescore part name {name!r}: use letters, digits, '.', '_' and '-' only")
    base = Path(root) / RESCORE_DIR
    base.mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=base))
    try:
        (tmp / RESCORE_META).write_bytes(msgspec.json.format(_encode(meta), indent=2))
        save_file({k: np.ascontiguousarray(arrays[k], dtype=ARRAYS[k][0]) for k in ARRAYS}, str(tmp / RESCORE_SCORES),
                  metadata={"format": "rollout-viewer rescore", "format_version": str(RESCORE_VERSION)})
        for p in (tmp, tmp / RESCORE_META, tmp / RESCORE_SCORES):  # mkdtemp makes them private; parts are shared
            p.chmod(0o755 if p.is_dir() else 0o644)
        read_part(Path(root), tmp.name, turns)  # raises before anything replaces the old part
        _swap_into_place(tmp, base / name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return read_part(root, name, turns)


def _swap_into_place(new: Path, dest: Path) -> None:
    """Rename `new` to `dest`; an older `dest` is moved aside first and deleted only after the rename."""
    old = None
    if dest.exists():
        old = dest.with_name(f".{dest.name}.old-{new.name.rsplit('-', 1)[-1]}")
        dest.rename(old)
    try:
        new.rename(dest)
    except BaseException:
        if old is not None:
            old.rename(dest)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
