"""The run's small files the main process writes: run.json, the run's tokenizer, segments/<seg>.json.

Written by the process that starts TRL's worker child (on a multi-GPU launch that is the main process
only: TRL builds the worker there and gives other ranks none). Every write is atomic (a temporary file
renamed over the old one). Nothing here records a secret: no token, no server URL.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec

from rollout_trace.artifact.atomic import publish_folder, staging_folder
from rollout_trace.artifact.run_format import (
    MANIFEST,
    RUN_FORMAT_VERSION,
    RUN_KIND,
    SEGMENTS_DIR,
    RunManifest,
    SegmentStart,
    encode_file,
)
from rollout_trace.artifact.schema import TOKENIZER_DIR

from .build import iso
from .writer import atomic_write

LIBRARIES = ("trl", "openenv", "transformers", "torch", "accelerate", "datasets", "huggingface_hub")
# The worker's arguments that decide what is generated and queued (never a URL or a credential).
WORKER_FIELDS = ("num_generations", "max_inflight_tasks", "queue_maxsize", "score_queue_maxsize", "max_tokens",
                 "temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_tool_calling_iterations",
                 "fork_threshold_tokens", "lossless_capture", "dataset_start_index")
_decode = msgspec.json.Decoder(RunManifest).decode


def versions() -> dict[str, str]:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def new_segment() -> str:
    """A segment id that sorts by start time: one per start of TRL's worker child."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:6]


def _name(obj: Any) -> str | None:
    if obj is None:
        return None
    while hasattr(obj, "func") and hasattr(obj, "args"):  # functools.partial
        obj = obj.func
    return getattr(obj, "__qualname__", None) or type(obj).__name__


def describe_dataset(ds: Any) -> dict:
    info = getattr(ds, "info", None)
    out: dict[str, Any] = {"type": type(ds).__name__}
    for key, value in (("name", getattr(info, "dataset_name", None)), ("config", getattr(info, "config_name", None)),
                       ("split", getattr(ds, "split", None)), ("fingerprint", getattr(ds, "_fingerprint", None))):
        if value is not None:
            out[key] = str(value)
    try:
        out["rows"] = len(ds)
    except TypeError:
        pass
    return out


def worker_facts(loop_kwargs: dict) -> dict:
    facts: dict[str, Any] = {k: loop_kwargs[k] for k in WORKER_FIELDS
                             if isinstance(loop_kwargs.get(k), (int, float, bool, str))}
    facts["harness_session_factory"] = _name(loop_kwargs.get("harness_session_factory"))
    facts["rollout_reward_fn"] = _name(loop_kwargs.get("rollout_reward_fn"))
    facts["reward_funcs"] = [_name(f) for f in loop_kwargs.get("reward_funcs") or []]
    return facts


def read_manifest(root: Path) -> RunManifest | None:
    try:
        return _decode((Path(root) / MANIFEST).read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def update_manifest(root: Path, **fields: Any) -> None:
    """Rewrite run.json with `fields` changed (run.json must exist)."""
    m = read_manifest(root)
    if m is not None:
        atomic_write(Path(root) / MANIFEST, encode_file(msgspec.structs.replace(m, **fields)))


def begin_segment(root: Path, segment: str, loop_kwargs: dict, model_version: int) -> None:
    """run.json (the first time), the tokenizer (once) and segments/<seg>.json, before the child starts."""
    root = Path(root)
    (root / SEGMENTS_DIR).mkdir(parents=True, exist_ok=True)
    now = iso(time.time())
    tokenizer = loop_kwargs.get("processing_class")
    if tokenizer is not None and not (root / TOKENIZER_DIR).is_dir() and hasattr(tokenizer, "save_pretrained"):
        tmp = staging_folder(root / TOKENIZER_DIR, "partial")
        try:
            tokenizer.save_pretrained(str(tmp))
            publish_folder(tmp, root / TOKENIZER_DIR)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    if read_manifest(root) is None:
        model = str(loop_kwargs.get("model_name"))
        manifest = RunManifest(
            format_version=RUN_FORMAT_VERSION, kind=RUN_KIND, started_at=now, model=model, versions=versions(),
            dataset=describe_dataset(loop_kwargs.get("dataset")), worker=worker_facts(loop_kwargs),
            tokenizer=TOKENIZER_DIR if (root / TOKENIZER_DIR).is_dir() else None,
            produced_by=f"Recorded by rollout_trace.record (RecordingHarnessRolloutWorker) while TRL "
                        f"{versions()['trl']}'s async GRPO trained {model}.")
        atomic_write(root / MANIFEST, encode_file(manifest))
    start = SegmentStart(segment=segment, started_at=now,
                         dataset_start_index=int(loop_kwargs.get("dataset_start_index") or 0),
                         model_version=int(model_version), num_generations=int(loop_kwargs.get("num_generations", 8)))
    atomic_write(root / SEGMENTS_DIR / f"{segment}.json", encode_file(start))
