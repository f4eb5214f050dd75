"""`python -m viewer convert OLD NEW`: a run recorded in the folder format (format 1) as a run of format 2.

Format 1 kept a folder of six files per rollout under one groups/ folder, an index of JSON lines beside it and
the consumption log as JSON lines (a million rollouts: six million files, which the Hub cannot hold). Format 2
(rollout_trace/artifact/run_format.py) keeps one row per rollout in Parquet shards. This reads format 1 with the
small decoders below (this is the one reader of it left) and writes format 2 through the recorder's own writers
(rollout_trace/artifact/run_shards.py): each group's rollouts as one batch, in the index's order, each row holding
its folder's files as they were written, the turns each training row trains (from the rows' arrays when the index
did not name them), and its searchable text and findings (rollout_trace/analysis/searchable.py). The small files are
copied (run.json with format_version 2); a rollout's rescore parts go to rescored/<group>/rollout-NN/<part>/.

The new run is built in a hidden folder beside NEW and renamed into place: a conversion cut short leaves nothing
that looks like a run. OLD is only read (a folder or a .zip of one).
"""

from __future__ import annotations

import shutil
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal, TextIO

import msgspec

from rollout_trace.analysis.searchable import RunVocab, searchable
from rollout_trace.analysis.training import queued_rows_train
from rollout_trace.artifact import ArtifactError, load_artifact
from rollout_trace.artifact.atomic import publish_folder, staging_folder
from rollout_trace.artifact.errors import RolloutTraceError
from rollout_trace.artifact.problems import Problem
from rollout_trace.artifact.run import find_run, rescore_folder
from rollout_trace.artifact.run_format import (
    CONSUMED_DIR,
    MANIFEST,
    RESCORED_DIR,
    RUN_FORMAT_VERSION,
    SEGMENTS_DIR,
    RunManifest,
    encode_file,
    group_path,
)
from rollout_trace.artifact.run_schema import (
    ARTIFACT_FILES,
    CONSUMED,
    ROLLOUTS,
    ConsumedRecord,
    RolloutRecord,
    RowRef,
    row_columns,
    to_table,
)
from rollout_trace.artifact.run_shards import RolloutWriter, ShardWriter
from rollout_trace.artifact.schema import TOKENIZER_DIR
from rollout_trace.artifact.stores import MAX_SMALL_BYTES, store_for

V1_INDEX = "index"
MAX_V1_FILE = 2**31


class V1Row(msgspec.Struct):
    """A training row as format 1's index named it."""

    ordinal: int
    fingerprint: str
    tokens: int
    trained_tokens: int
    turns: list[int] | None = None


class V1Entry(msgspec.Struct):
    """One line of format 1's index/<seg>.jsonl."""

    segment: str
    policy_version: int
    group_id: int
    rollout: int
    rollout_id: str | None
    group_path: str
    path: str | None
    status: Literal["ok", "timed-out", "unscorable", "failed"]
    cause: str | None
    reward: float | None
    env_reward: float | None
    advantage: float | None
    rows: list[V1Row]
    trained_tokens: int
    task_id: str | None
    title: str
    dataset_index: int | None
    turns: int | None
    trained_turns: int | None
    seed_trained_turns: int | None
    tokens: int | None
    drift: Literal["none", "drift", "unknown"]
    drifting_boundaries: int | None
    timed_out: bool
    tools: list[str]
    tool_calls: int
    recorded_at: str
    problem: str | None = None


class ConvertError(RolloutTraceError, ValueError):
    """What stops a conversion, with the file and what was wrong."""


def _lines(name: str, data: bytes | str, kind: type) -> list:
    if isinstance(data, str):
        raise ConvertError(f"{name}: {data}")
    out: list = []
    decoder: msgspec.json.Decoder = msgspec.json.Decoder(kind)
    for n, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            out.append(decoder.decode(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as e:
            if n == data.count(b"\n") + 1:  # a last line without its newline: a write cut short, as format 1 read it
                continue
            raise ConvertError(f"{name} line {n}: {e}") from None
    return out


def _v1_consumed(segment: str, data: bytes | str, name: str) -> list[ConsumedRecord]:
    lines = _lines(name, data, dict)
    return [msgspec.convert({**x, "segment": x.get("segment", segment)}, ConsumedRecord) for x in lines]


def _files(folder: Path) -> dict[str, Any]:
    """A format-1 rollout folder's files as a row's `file_*` columns."""
    return {col: (folder / name).read_bytes() if (folder / name).is_file() else None
            for col, name in ARTIFACT_FILES.items()}


def _record(e: V1Entry, folder: Path | None, vocab: RunVocab, notes: list[str]) -> tuple[RolloutRecord, Path | None]:
    group = group_path(e.segment, e.policy_version, e.group_id)
    refs = [RowRef(r.ordinal, r.fingerprint, r.tokens, r.trained_tokens, r.turns) for r in e.rows]
    files: dict[str, Any] = {}
    searched: dict[str, Any] = {}
    if folder is not None:
        files = _files(folder)
        try:
            a = load_artifact(folder)
        except ArtifactError as err:
            notes.append(f"{e.path}: kept as it is, without its text: {err.problems[0] if err.problems else err}")
            a = None
        if a is not None:
            if any(r.turns is None for r in refs):
                trains = queued_rows_train(a) or []
                refs = [RowRef(r.ordinal, r.fingerprint, r.tokens, r.trained_tokens,
                               list(trains[i]) if i < len(trains) else None) for i, r in enumerate(refs)]
            searched = searchable(a, vocab.get())
    record = RolloutRecord(
        segment=e.segment, policy_version=e.policy_version, group_id=e.group_id, rollout=e.rollout,
        rollout_id=e.rollout_id, group=group, path=f"{group}/rollout-{e.rollout:02d}" if e.path else None,
        status=e.status, cause=e.cause, reward=e.reward, env_reward=e.env_reward, advantage=e.advantage,
        **row_columns(refs), trained_tokens=e.trained_tokens, task_id=e.task_id, title=e.title,
        dataset_index=e.dataset_index, agent_turns=e.turns, trained_turns=e.trained_turns,
        seed_trained_turns=e.seed_trained_turns, tokens=e.tokens, drift=e.drift,
        drifting_boundaries=e.drifting_boundaries, timed_out=e.timed_out, tools=e.tools, tool_calls=e.tool_calls,
        recorded_at=e.recorded_at, problem=e.problem, **searched, **files)
    return record, folder


def convert(old: str, new: Path, out: TextIO | None = None) -> int:
    """Convert the format-1 run at `old` (a folder or a .zip of one) into a format-2 run at `new`; returns the
    number of rollouts written. Raises ConvertError (or ArtifactError) naming what stops it."""
    out = out or sys.stdout
    new = Path(new)
    if new.exists() and (not new.is_dir() or any(new.iterdir())):
        raise ConvertError(f"{new} exists and is not an empty folder: name a new folder")
    store = store_for(old)
    try:
        prefix = find_run(store)
        if prefix is None:
            raise ConvertError(f"{old}: not a recorded run (no run.json)")
        full = lambda p: "/".join(x for x in (prefix, p) if x)  # noqa: E731
        if not store.list_dir(full(V1_INDEX)):
            raise ConvertError(f"{old}: not a run of format 1 (no {V1_INDEX}/*.jsonl): it needs no conversion")
        manifest = msgspec.json.decode(store.read([full(MANIFEST)], MAX_SMALL_BYTES)[full(MANIFEST)], type=RunManifest)
        tmp = staging_folder(new, "convert")
        try:
            count = _write(store, full, manifest, tmp, out)
            publish_folder(tmp, new)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    finally:
        if hasattr(store, "close"):
            store.close()
    return count


def _write(store, full, manifest: RunManifest, tmp: Path, out: TextIO) -> int:
    notes: list[str] = []
    for folder in (SEGMENTS_DIR, RESCORED_DIR):
        names = [n for n in store.list_dir(full(folder)) if not n.startswith(".")]
        for name, data in store.read([full(f"{folder}/{n}") for n in names], MAX_V1_FILE).items():
            if isinstance(data, bytes):
                (tmp / folder).mkdir(exist_ok=True)
                (tmp / folder / name.rsplit("/", 1)[-1]).write_bytes(data)
    if store.list_dir(full(TOKENIZER_DIR)):
        shutil.copytree(store.folder(full(TOKENIZER_DIR)), tmp / TOKENIZER_DIR)
    (tmp / MANIFEST).write_bytes(encode_file(msgspec.structs.replace(manifest, format_version=RUN_FORMAT_VERSION)))
    vocab = RunVocab(tmp / TOKENIZER_DIR, manifest.model)
    count = 0
    index = sorted(n for n in store.list_dir(full(V1_INDEX)) if n.endswith(".jsonl") and not n.startswith("."))
    for name in index:
        path = full(f"{V1_INDEX}/{name}")
        entries: list[V1Entry] = _lines(path, store.read([path], MAX_V1_FILE)[path], V1Entry)
        by_group: dict[str, list[V1Entry]] = defaultdict(list)
        for e in entries:
            by_group[e.group_path].append(e)
        segment = name[: -len(".jsonl")]
        shards = RolloutWriter(tmp, segment)
        for gpath, members in by_group.items():
            folder = store.folder(full(gpath))
            rows = []
            for e in sorted(members, key=lambda x: x.rollout):
                where = folder / e.path.rsplit("/", 1)[-1] if e.path else None
                record, _ = _record(e, where, vocab, notes)
                rows.append(record)
                _rescore_parts(where, record, tmp)
            shards.append(to_table(rows, ROLLOUTS))
            count += len(rows)
            if hasattr(store, "release"):
                store.release(folder)
        shards.close()
        print(f"{segment}: {sum(len(m) for m in by_group.values())} rollouts in {len(by_group)} groups", file=out)
    for name in sorted(store.list_dir(full(CONSUMED_DIR))):
        path = full(f"{CONSUMED_DIR}/{name}")
        data = store.read([path], MAX_V1_FILE)[path]
        if name.endswith(".end.json") and isinstance(data, bytes):
            (tmp / CONSUMED_DIR).mkdir(exist_ok=True)
            (tmp / CONSUMED_DIR / name).write_bytes(data)
        elif name.endswith(".jsonl"):
            segment = name[: -len(".jsonl")]
            writer = ShardWriter(tmp / CONSUMED_DIR, segment, CONSUMED, seal_rows=2**31)
            writer.append(to_table(_v1_consumed(segment, data, path), CONSUMED))
            writer.close()
    for n in notes:
        print(f"note: {n}", file=out)
    return count


def _rescore_parts(folder: Path | None, record: RolloutRecord, tmp: Path) -> None:
    """A format-1 rollout's rescore parts (its rescore/<part>/ folders) where format 2 keeps them."""
    if folder is None or record.path is None or not (folder / "rescore").is_dir():
        return
    for part in sorted(p for p in (folder / "rescore").iterdir() if p.is_dir()):
        shutil.copytree(part, tmp / rescore_folder(record.path, part.name))


def main(old: str, new: str, out: TextIO | None = None) -> int:
    """The command: 0 when converted, 1 naming what stopped it."""
    out = out or sys.stdout
    try:
        n = convert(old, Path(new), out)
    except (ConvertError, ArtifactError, OSError, msgspec.ValidationError, msgspec.DecodeError) as e:
        problems = e.problems if isinstance(e, ArtifactError) else [Problem(old, str(e))]
        print(f"ERROR {old}: cannot convert this run", file=out)
        for p in problems:
            print(f"  - {p}", file=out)
        return 1
    print(f"converted {n} rollouts into {new} (format {RUN_FORMAT_VERSION}); `python -m viewer check {new}` checks it",
          file=out)
    return 0
