"""The run's small files the main process writes: run.json, the run's tokenizer, segments/<seg>.json.

Written by the process that starts TRL's worker child (on a multi-GPU launch that is the main process
only: TRL builds the worker there and gives other ranks none). Every write is atomic (a temporary file
renamed over the old one). Nothing here records a secret: no token, no server URL.

Also what keeps one folder one run: `RunLock` (an flock on the hidden `.lock`, held from the worker's
start to its stop, released by the kernel if the process dies) and `check_same_run` (a folder that holds a
run takes only a resume of that run: the same model, dataset and config, at a policy version or dataset
position past the start).
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec

from rollout_trace.artifact.atomic import publish_folder, staging_folder
from rollout_trace.artifact.errors import RolloutTraceError
from rollout_trace.artifact.run_format import (
    CONSUMED_DIR,
    MANIFEST,
    ROLLOUTS_DIR,
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
# What may change when a run is resumed: where the dataset resumes, and how long training goes on.
RESUMABLE = {"dataset_start_index", "max_steps", "num_train_epochs"}
LOCK_FILE = ".lock"
_decode = msgspec.json.Decoder(RunManifest).decode


class RunFolderError(RolloutTraceError, RuntimeError):
    """The run folder cannot take this recording; the message names the folder and why."""


class RunLock:
    """The run folder's lock against a second trainer recording into it at the same time."""

    def __init__(self, root: Path):
        self.path = Path(root) / LOCK_FILE
        self._fd: int | None = None
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; the identity check still holds
            return
        try:
            Path(root).mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise RunFolderError(f"the run folder {root} cannot be used: {e.strerror or e} ({e.filename})") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise RunFolderError(f"the run folder {root} is being recorded into by another trainer ({holder}); "
                                 "two trainers cannot record into one folder: give this one its own record_dir") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {iso(time.time())}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # no holder named once released; the file stays (unlinking it would race)
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def prepare_folder(root: Path) -> None:
    """The run's folders, made before TRL's child spawns, so a folder that cannot hold a run says why here."""
    if (Path(root) / "index").is_dir():
        raise RunFolderError(f"the run folder {root} holds a run recorded in the folder format (format 1): record into "
                             "a new folder, or convert it first (`python -m viewer convert OLD NEW`) and resume that")
    for d in ("", SEGMENTS_DIR, ROLLOUTS_DIR, CONSUMED_DIR):
        path = Path(root) / d
        try:
            path.mkdir(parents=True, exist_ok=True)
            if not path.is_dir():
                raise NotADirectoryError(20, "not a folder", str(path))
        except OSError as e:
            raise RunFolderError(f"the run folder {root} cannot be recorded into: {path} {e.strerror or e}") from e


def _differences(what: str, there: dict, here: dict) -> list[str]:
    return [f"{what} {k}: {there.get(k)!r} in the folder, {here.get(k)!r} here"
            for k in sorted(set(there) | set(here)) if k not in RESUMABLE and there.get(k) != here.get(k)]


def check_same_run(root: Path, loop_kwargs: dict, model_version: int, trainer_config: dict | None) -> None:
    """Refuse a folder that holds another run, or this run started again from its beginning."""
    root = Path(root)
    manifest = read_manifest(root)
    segments = [p for p in (root / SEGMENTS_DIR).glob("*.json") if not p.name.endswith(".end.json")] \
        if (root / SEGMENTS_DIR).is_dir() else []
    if manifest is None:
        if (root / MANIFEST).exists():
            raise RunFolderError(f"the run folder {root} has a run.json this recorder cannot read: record into a new "
                                 "folder")
        if segments or any((root / ROLLOUTS_DIR).glob("*.*")):
            raise RunFolderError(f"the run folder {root} holds recorded segments but no run.json: record into a new "
                                 "folder")
        return
    differ = []
    model = str(loop_kwargs.get("model_name"))
    if manifest.model != model:
        differ.append(f"model: {manifest.model!r} in the folder, {model!r} here")
    dataset = {k: v for k, v in describe_dataset(loop_kwargs.get("dataset")).items() if k != "fingerprint"}
    differ += _differences("dataset", {k: v for k, v in manifest.dataset.items() if k != "fingerprint"}, dataset)
    differ += _differences("worker argument", manifest.worker, worker_facts(loop_kwargs))
    if manifest.config is not None and trainer_config is not None:
        differ += _differences("trainer argument", manifest.config, trainer_config)
    if differ:
        raise RunFolderError(f"the run folder {root} holds another run: " + "; ".join(differ)
                             + ". Record this run into a new folder (a folder holds one run, and its resumes).")
    start = int(loop_kwargs.get("dataset_start_index") or 0)
    if segments and model_version == 0 and start == 0:
        raise RunFolderError(
            f"the run folder {root} holds a run already ({len(segments)} segment(s), started {manifest.started_at}) "
            "and this start is not a resume of it (policy version 0, dataset position 0): resume it from a checkpoint "
            "(trainer.train(resume_from_checkpoint=...)), or record into a new folder.")


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


def begin_segment(root: Path, segment: str, loop_kwargs: dict, model_version: int,
                  trainer_config: dict | None = None) -> None:
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
            dataset=describe_dataset(loop_kwargs.get("dataset")), worker=worker_facts(loop_kwargs), config=trainer_config,
            tokenizer=TOKENIZER_DIR if (root / TOKENIZER_DIR).is_dir() else None,
            produced_by=f"Recorded by rollout_trace.record (RecordingHarnessRolloutWorker) while TRL "
                        f"{versions()['trl']}'s async GRPO trained {model}.")
        atomic_write(root / MANIFEST, encode_file(manifest))
    start = SegmentStart(segment=segment, started_at=now,
                         dataset_start_index=int(loop_kwargs.get("dataset_start_index") or 0),
                         model_version=int(model_version), num_generations=int(loop_kwargs.get("num_generations", 8)))
    atomic_write(root / SEGMENTS_DIR / f"{segment}.json", encode_file(start))
