"""Read a recorded TRL training run (rollout_trace/artifact/run_format.py) into typed rows: one per rollout, one per group.

    run = open_run("runs/my-run")          # a folder, a .zip of one, a Hub dataset id, a bundled example
    run.rows        # list[RunRow], one per recorded rollout, in (segment, policy_version, group_id, rollout) order
    run.groups      # list[RunGroup], one per scored group, same order
    run.versions()  # the policy versions that have groups
    run.open(row.path)   # the rollout's Artifact, fully read, with the run's tokenizer
    run.close()

It reads run.json, the segment files, every index/<seg>.jsonl and consumed/<seg>.jsonl once, and joins
them on (segment, ordinal): a rollout's `trained_step` is the first global step any of its rows was trained
at (None when none was), and `dropped` is None when one was, else why not (the Fate of its rows, or
"failed" / "no rows" when TRL built none). It never lists the group folders, so a run of 100k rollouts
opens in the time its index files take to read; `viewer check` (viewer/run_check.py) reads everything.
A run is also a collection (rollout_trace/artifact/collection.py `open_collection` indexes it from these rows).

Problems are collected, never raised one by one: an undecodable line is named by file and line, a
last line without its newline is skipped with a note (a write cut short by SIGKILL), and only a source
that is not a run, or whose run.json is unreadable, raises ArtifactError.
"""

from __future__ import annotations

import os
import posixpath
from collections import defaultdict
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec
import numpy as np

from . import budget
from .group import grpo_advantages, reward_spread
from .model import Artifact
from .problems import ArtifactError, Problem, from_msgspec
from .read import load_artifact
from .run_format import (
    CONSUMED_DIR,
    GROUPS_DIR,
    INDEX_DIR,
    MANIFEST,
    RESCORED_DIR,
    RUN_FORMAT_VERSION,
    SEGMENTS_DIR,
    Consumed,
    ConsumptionEnd,
    Drift,
    IndexEntry,
    Rescored,
    RunManifest,
    SegmentEnd,
    SegmentStart,
)
from .schema import TOKENIZER_DIR, RunStatus
from .sources import subfolder_ok
from .stores import store_for

MARK_BYTES = 64  # the last bytes of a line file kept to tell an append from a rewrite
MAX_LINE_BYTES = 2**20  # one index or consumption line (the recorder writes a few kB)
MAX_LINE_FILE_BYTES = 2**30  # one index or consumption file; 100k rollouts are about 80 MB
# What became of a row, as the reader reports it: the trainer's Fate, or "in-queue" (recorded, not taken
# when training stopped, or not yet while it runs), or "unknown" (no consumption log for its segment).
RowFate = Literal["trained", "stale", "oversize", "resume-skip", "read-ahead", "in-batcher", "in-queue", "unknown"]
_DECODERS: dict[type, Any] = {t: msgspec.json.Decoder(t) for t in (IndexEntry, Consumed, SegmentStart, SegmentEnd,
                                                                   ConsumptionEnd, RunManifest, Rescored)}


class QueuedRow(msgspec.Struct, frozen=True, kw_only=True):
    """One training row TRL queued for a rollout, joined with what the trainer did with it. A fate belongs to a
    row, and a turn to the row that trains it (`turns`): viewer/fate.py reads a turn's fate from these."""

    ordinal: int  # its position in the queue within the segment (the consumption log's key)
    turns: tuple[int, ...] | None  # the agent turns whose generated tokens it trains; None: not recorded
    tokens: int
    trained_tokens: int  # in TRL's mask
    fate: RowFate
    step: int | None  # the global step it was trained at ("trained" only)


class RunRow(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded rollout, joined with what the trainer did with its rows."""

    segment: str
    policy_version: int
    group_id: int
    group: str  # the group's folder, relative to the run ("groups/<seg>-v..-g..")
    rollout: int  # its index in the group
    rollout_id: str | None  # TRL's uuid4 (OpenEnv's episode_id)
    path: str | None  # its artifact folder; None when the session failed before producing one
    status: RunStatus
    cause: str | None
    reward: float | None  # TRL's summed reward; None = unscorable
    env_reward: float | None
    advantage: float | None  # TRL's; None when TRL built no row
    rows: int  # TRL training rows
    tokens: int | None
    trained_tokens: int  # in TRL's mask, over every row it queued (what WOULD be trained)
    turns: int | None
    trained_turns: int | None
    seed_trained_turns: int | None
    tools: tuple[str, ...]
    tool_calls: int
    drift: Drift
    drifting_boundaries: int | None
    timed_out: bool
    task_id: str | None
    title: str
    dataset_index: int | None
    recorded_at: str
    ordinals: tuple[int, ...]  # its TRL rows' positions in the queue within the segment (the join key)
    fates: tuple[RowFate, ...]  # one per TRL row, in queue order
    trained_steps: tuple[int, ...]  # the global steps its rows were trained at, sorted, each once
    trained_step: int | None  # the first of them; None when no row was trained
    dropped: str | None  # None when trained; else "failed", "no rows", or its rows' fate
    trainer_tokens: int = 0  # in TRL's mask over the rows the trainer DID train at a step
    problem: str | None = None  # what the recorder could not record of it, and why (its index line's)
    queued: tuple[QueuedRow, ...] = ()  # its TRL rows with their fates, in queue order


class RunGroup(msgspec.Struct, frozen=True, kw_only=True):
    """One scored group: TRL's K rollouts of a prompt at one policy version."""

    segment: str
    policy_version: int
    group_id: int
    path: str
    task_id: str | None
    title: str
    dataset_index: int | None
    k: int
    rewards: tuple[float | None, ...]
    advantages: tuple[float, ...]  # TRL's, and the same formula for rollouts without rows
    statuses: tuple[RunStatus, ...]
    reward_mean: float | None
    reward_min: float | None
    reward_max: float | None
    trained_steps: tuple[int, ...]
    dropped: tuple[str | None, ...]  # per rollout


@dataclass(frozen=True)
class RunSegment:
    """One start of TRL's worker child, and how it ended (None: still running, or killed)."""

    start: SegmentStart
    end: SegmentEnd | None
    consumption: ConsumptionEnd | None  # None: training still running, or no consumption log


class RunStore:
    """A run inside a store (rollout_trace/artifact/stores.py), at `prefix` (a zip of a run folder holds it in one folder)."""

    def __init__(self, store: Any, prefix: str = ""):
        self.store, self.prefix = store, prefix.strip("/")

    def full(self, path: str) -> str:
        return "/".join(p for p in (self.prefix, path) if p)

    def list_dir(self, path: str) -> dict[str, int]:
        return self.store.list_dir(self.full(path))

    def read(self, paths: list[str], max_bytes: int) -> dict[str, bytes | str]:
        got = self.store.read([self.full(p) for p in paths], max_bytes)
        return {p: got[self.full(p)] for p in paths}

    def folder(self, path: str) -> Path:
        return self.store.folder(self.full(path))

    def source_of(self, path: str) -> str | None:
        return self.store.source_of(self.full(path))

    def stamp(self, path: str, size: int) -> tuple:
        """What says a file changed: in a local folder its size, modification time and inode (a rewrite of
        the same size is seen), elsewhere its size (a zip is reopened when it changes; a Hub store is pinned)."""
        root = getattr(self.store, "root", None)
        if self.store.kind == "folder" and root is not None:
            try:
                st = os.stat(Path(root) / self.full(path))
            except OSError:
                return (size,)
            return (st.st_size, st.st_mtime_ns, st.st_ino)
        return (size,)

    def read_tail(self, path: str, offset: int, max_bytes: int) -> bytes | str:
        """The bytes of `path` from `offset` on (a growing line file): a local folder seeks, other stores slice."""
        root = getattr(self.store, "root", None)
        if self.store.kind == "folder" and root is not None:
            try:
                fd = os.open(Path(root) / self.full(path), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))  # as FolderStore
                with os.fdopen(fd, "rb") as f:
                    f.seek(offset)
                    return f.read(max_bytes)
            except OSError as e:
                return f"cannot be read ({e.strerror or type(e).__name__})"
        got = self.read([path], offset + max_bytes)[path]
        return got[offset:] if isinstance(got, bytes) else got


def find_run(store: Any) -> str | None:
    """Where the run is in `store`: "" at its root, a folder name when a zip holds one run folder, else None."""
    top = store.list_dir("")
    if MANIFEST in top:
        return ""
    for name in store.top_folders() if hasattr(store, "top_folders") else []:
        if MANIFEST in store.list_dir(name):
            return name
    return None


@dataclass
class Run:
    source: str
    kind: str  # folder | zip | hub
    manifest: RunManifest
    segments: list[RunSegment]
    rows: list[RunRow]
    groups: list[RunGroup]
    consumed: list[Consumed]
    rescored: list[Rescored] = field(default_factory=list)  # rescore parts written into its rollouts
    entries: dict[tuple[str, int, int], IndexEntry] = field(default_factory=dict)  # (segment, group_id, rollout)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    store: RunStore | None = field(default=None, repr=False)
    # What was read: each line file's bytes up to its last newline, and every listed file's size, so `follow`
    # reads only what the recorder appended since.
    read_to: dict[str, int] = field(default_factory=dict, repr=False)
    sizes: dict[str, int] = field(default_factory=dict, repr=False)
    # each listed file's stamp (RunStore.stamp), and each line file's last bytes up to read_to: a file that
    # was truncated or rewritten, not appended to, is read again from its start
    stamps: dict[str, tuple] = field(default_factory=dict, repr=False)
    marks: dict[str, bytes] = field(default_factory=dict, repr=False)
    _tokenizer: Path | None = field(default=None, repr=False)

    @property
    def live(self) -> bool:
        """A segment has not ended (training is running, or was killed before it could say so)."""
        return any(s.end is None for s in self.segments)

    def versions(self) -> list[int]:
        return sorted({g.policy_version for g in self.groups})

    def group(self, path: str) -> RunGroup | None:
        return next((g for g in self.groups if g.path == path), None)

    def _store(self) -> RunStore:
        if self.store is None:
            raise ValueError("this run has no store: open it with open_run")
        return self.store

    def folder(self, path: str) -> Path:
        """A local folder holding every file of `path` (a group or a rollout; downloads or unpacks only that)."""
        return self._store().folder(path)

    def tokenizer_dir(self) -> Path | None:
        """The run's tokenizer folder (fetched once), or None when the run holds none."""
        if self.manifest.tokenizer is None:
            return None
        if self._tokenizer is None:
            self._tokenizer = self._store().folder(TOKENIZER_DIR)
        return self._tokenizer

    def open(self, path: str) -> Artifact:
        """One rollout's artifact, read and validated fully, rendering with the run's tokenizer."""
        if not any(r.path == path for r in self.rows):
            raise ArtifactError([Problem(path or "(root)", "no recorded rollout at this path in the run")])
        store = self._store()
        a = load_artifact(store.folder(path), source=store.source_of(path) or f"{self.source}:{path}")
        tok = self.tokenizer_dir() if a.tokenizer_dir is None else a.tokenizer_dir
        if tok is not None and a.tokenizer_dir is None and (tok / "tokenizer.json").is_file():
            a.tokenizer_dir = tok
        return a

    def close(self) -> None:
        if self.store is not None and hasattr(self.store.store, "close"):
            self.store.store.close()


def _lines(name: str, data: bytes | str, kind: type, problems: list[Problem], notes: list[str]) -> list:
    if isinstance(data, str):
        problems.append(Problem(name, data))
        return []
    decoder = _DECODERS[kind]
    whole = data.rfind(b"\n") + 1  # a last line without its newline is a write cut short
    if data[whole:].strip():
        notes.append(f"{name}: the last line has no newline (a write cut short when the recorder stopped); skipped")
    data = _without_long_lines(name, data[:whole], problems)
    whole = len(data)
    try:
        return decoder.decode_lines(data[:whole])  # every line good: one call
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass  # find and name the bad lines, keep the good ones
    out = []
    for n, line in enumerate(data[:whole].split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        try:
            out.append(decoder.decode(line))
        except (msgspec.ValidationError, msgspec.DecodeError) as e:
            p = from_msgspec(name, e, line)
            problems.append(Problem(name, p.message, field=f"line {n}" + (f": {p.field}" if p.field else ""),
                                    expected=p.expected, found=p.found))
    return out


def _without_long_lines(name: str, data: bytes, problems: list[Problem]) -> bytes:
    """`data` with every line longer than MAX_LINE_BYTES blanked (and named): a recorder's line is a few kB,
    and one huge line would otherwise reach every page that shows the run."""
    if len(data) <= MAX_LINE_BYTES:
        return data
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)  # every newline, in C
    if not len(ends) or int(np.diff(ends, prepend=-1).max()) <= MAX_LINE_BYTES:
        return data
    start, cut, out = 0, False, []
    n = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        n += 1
        if end - start > MAX_LINE_BYTES:
            problems.append(Problem(name, "a line this long is not one the recorder writes; skipped",
                                    field=f"line {n}", expected=f"at most {MAX_LINE_BYTES} bytes",
                                    found=f"{end - start} bytes"))
            out.append(b"\n")  # the line numbers after it stay true
            cut = True
        else:
            out.append(data[start:end])
        start = end
    return b"".join(out) if cut else data


def _one(name: str, data: bytes | str | None, kind: type, problems: list[Problem]) -> Any:
    if data is None:
        return None
    if isinstance(data, str):
        problems.append(Problem(name, data))
        return None
    try:
        return _DECODERS[kind].decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as e:
        problems.append(from_msgspec(name, e, data))
        return None


def _row_fate(seg: str, ordinal: int, consumed: Mapping[tuple[str, int], tuple[RowFate, int | None]],
              taken: Mapping[str, int], logged: AbstractSet[str]) -> tuple[RowFate, int | None]:
    c = consumed.get((seg, ordinal))
    if c is not None:
        return c
    end = taken.get(seg)
    if end is not None:
        return ("in-queue" if ordinal >= end else "unknown"), None
    return ("in-queue" if seg in logged else "unknown"), None


def _dropped(e: IndexEntry, fates: tuple[RowFate, ...]) -> str | None:
    if "trained" in fates:
        return None
    if not fates:
        return "failed" if e.status == "failed" else "no rows"
    return next(f for f in fates if f != "trained")


def _inside(path: str, group_path: str) -> bool:
    """`groups/<name>` or, for a rollout, `<its group>/<name>`: plain names, nothing a path join could follow."""
    parts = path.split("/")
    if not subfolder_ok(path) or parts[0] != GROUPS_DIR:
        return False
    return len(parts) == 2 if path == group_path else len(parts) == 3 and path.startswith(group_path + "/")


def join(entries: list[IndexEntry], consumed: list[Consumed], ends: dict[str, ConsumptionEnd],
         logged: set[str]) -> list[RunRow]:
    """One RunRow per index entry, its rows' fates from the consumption lines (keyed by segment and ordinal)."""
    return join_fates(entries, {(c.segment, c.ordinal): (c.fate, c.step) for c in consumed},
                      {name: end.taken for name, end in ends.items()}, logged)


def join_fates(entries: list[IndexEntry], by_key: Mapping[tuple[str, int], tuple[RowFate, int | None]],
               taken: Mapping[str, int], logged: AbstractSet[str]) -> list[RunRow]:
    """`join` with the consumption lines already keyed: (segment, ordinal) -> (fate, step) (the later line when
    the log has two), and each segment's consumption end as the rows the trainer took."""
    rows = []
    for n, e in enumerate(entries):
        if not n % 4096:
            budget.check(e.segment)  # the visitor left, or the request ran out of time: stop here
        got = [_row_fate(e.segment, r.ordinal, by_key, taken, logged) for r in e.rows]
        fates = tuple(f for f, _ in got)
        steps = tuple(sorted({s for f, s in got if f == "trained" and s is not None}))
        rows.append(RunRow(
            segment=e.segment, policy_version=e.policy_version, group_id=e.group_id, group=e.group_path,
            rollout=e.rollout, rollout_id=e.rollout_id, path=e.path, status=e.status, cause=e.cause, reward=e.reward,
            env_reward=e.env_reward, advantage=e.advantage, rows=len(e.rows), tokens=e.tokens,
            trained_tokens=e.trained_tokens, turns=e.turns, trained_turns=e.trained_turns,
            seed_trained_turns=e.seed_trained_turns, tools=tuple(e.tools), tool_calls=e.tool_calls, drift=e.drift,
            drifting_boundaries=e.drifting_boundaries, timed_out=e.timed_out, task_id=e.task_id, title=e.title,
            dataset_index=e.dataset_index, recorded_at=e.recorded_at, ordinals=tuple(r.ordinal for r in e.rows),
            fates=fates, trained_steps=steps,
            trained_step=steps[0] if steps else None, dropped=_dropped(e, fates), problem=e.problem,
            trainer_tokens=sum(r.trained_tokens for r, (f, _) in zip(e.rows, got, strict=True) if f == "trained"),
            queued=tuple(QueuedRow(ordinal=r.ordinal, turns=None if r.turns is None else tuple(r.turns), tokens=r.tokens,
                                   trained_tokens=r.trained_tokens, fate=f, step=s if f == "trained" else None)
                         for r, (f, s) in zip(e.rows, got, strict=True))))
    rows.sort(key=lambda r: (r.segment, r.policy_version, r.group_id, r.rollout))
    return rows


def groups_of(rows: list[RunRow]) -> list[RunGroup]:
    by: dict[str, list[RunRow]] = defaultdict(list)
    for r in rows:
        by[r.group].append(r)
    out = []
    for path, members in by.items():
        members.sort(key=lambda r: r.rollout)
        rewards = tuple(r.reward for r in members)
        # TRL's advantage where it queued a row; the same formula only for a rollout without rows
        formula = grpo_advantages(list(rewards)) if any(r.advantage is None for r in members) else [0.0] * len(members)
        lo, hi, mean = reward_spread(rewards)
        first = members[0]
        out.append(RunGroup(
            segment=first.segment, policy_version=first.policy_version, group_id=first.group_id, path=path,
            task_id=first.task_id, title=first.title, dataset_index=first.dataset_index, k=len(members),
            rewards=rewards, advantages=tuple(r.advantage if r.advantage is not None else a
                                              for r, a in zip(members, formula, strict=True)),
            statuses=tuple(r.status for r in members), reward_mean=mean, reward_min=lo, reward_max=hi,
            trained_steps=tuple(sorted({s for r in members for s in r.trained_steps})),
            dropped=tuple(r.dropped for r in members)))
    out.sort(key=lambda g: (g.segment, g.policy_version, g.group_id))
    return out


def _listing(store: RunStore) -> dict[str, int]:
    """The run's small files and line files (path -> size), hidden (half-written) ones left out."""
    out = {}
    for folder in (SEGMENTS_DIR, INDEX_DIR, CONSUMED_DIR, RESCORED_DIR):
        out.update({f"{folder}/{n}": size for n, size in store.list_dir(folder).items() if not n.startswith(".")})
    return out


def read_run(store: RunStore, label: str, kind: str, prior: Run | None = None) -> Run:
    """Read a run's small files and join them; raises ArtifactError when run.json is unusable.

    With `prior` (the same run read before) the line files are read only past what `prior` read, and its
    entries and consumption lines are kept, with the problems of the lines it left out (they are not read again):
    how a page follows a run that is still being recorded."""
    problems: list[Problem] = [p for p in prior.problems if (p.field or "").startswith("line ")] if prior else []
    notes: list[str] = []
    if prior is None:
        got = store.read([MANIFEST], 16 * 2**20)[MANIFEST]
        manifest = _one(MANIFEST, got, RunManifest, problems)
        if manifest is None:
            raise ArtifactError(problems or [Problem(label, "run.json cannot be read")])
    else:
        manifest = prior.manifest
    if manifest.format_version > RUN_FORMAT_VERSION:
        problems.append(Problem(MANIFEST, "written by a newer version of this tool", field="format_version",
                                expected=f"at most {RUN_FORMAT_VERSION}", found=str(manifest.format_version)))
    sizes = _listing(store)
    # A public request's bounds (budget.py), from the listing alone: refused before a byte of a huge line file
    budget.files(f"{label}: {SEGMENTS_DIR}/, {INDEX_DIR}/, {CONSUMED_DIR}/ and {RESCORED_DIR}/", len(sizes))
    new = {p: max(0, n - (prior.read_to.get(p, 0) if prior is not None else 0)) for p, n in sizes.items()}
    if new:
        biggest = max(new, key=lambda p: new[p])
        budget.expect(f"{biggest} (the largest of the run's {len(new)} files)" if len(new) > 1 else biggest,
                      sum(new.values()))
    small = sorted(p for p in sizes if p.endswith(".json"))
    small_data = store.read(small, MAX_LINE_FILE_BYTES) if small else {}
    starts: dict[str, SegmentStart] = {}
    stops: dict[str, SegmentEnd] = {}
    ends: dict[str, ConsumptionEnd] = {}
    for path, data in small_data.items():
        if path.startswith(CONSUMED_DIR + "/"):
            if path.endswith(".end.json") and (cend := _one(path, data, ConsumptionEnd, problems)) is not None:
                ends[cend.segment] = cend
        elif path.endswith(".end.json"):
            if (end := _one(path, data, SegmentEnd, problems)) is not None:
                stops[end.segment] = end
        elif (start := _one(path, data, SegmentStart, problems)) is not None:
            starts[start.segment] = start
    read_to = dict(prior.read_to) if prior is not None else {}
    marks = dict(prior.marks) if prior is not None else {}
    entries: list[IndexEntry] = list(prior.entries.values()) if prior is not None else []
    consumed: list[Consumed] = list(prior.consumed) if prior is not None else []
    rescored: list[Rescored] = list(prior.rescored) if prior is not None else []
    logged: set[str] = set()
    lines = len(entries)
    for path in sorted(p for p in sizes if p.endswith(".jsonl")):
        at = read_to.get(path, 0)
        if prior is None:
            data = store.read([path], MAX_LINE_FILE_BYTES)[path]
        elif sizes[path] > at:
            data = store.read_tail(path, at, MAX_LINE_FILE_BYTES)
        else:
            data = b""
        if isinstance(data, bytes):
            whole = data.rfind(b"\n") + 1
            if path.startswith(INDEX_DIR + "/"):
                lines += data.count(b"\n")  # in C; a page's cost grows with the rows, bounded in public
                budget.rows(path, lines)
            read_to[path] = at + whole
            marks[path] = (marks.get(path, b"") + data[:whole])[-MARK_BYTES:]
        if path.startswith(CONSUMED_DIR + "/"):
            logged.add(posixpath.basename(path).split(".", 1)[0])
            consumed += _lines(path, data, Consumed, problems, notes)
        elif path.startswith(INDEX_DIR + "/"):
            entries += _lines(path, data, IndexEntry, problems, notes)
        elif path.startswith(RESCORED_DIR + "/"):
            rescored += _lines(path, data, Rescored, problems, notes)
    keyed: dict[tuple[str, int, int], IndexEntry] = {}
    for e in entries:
        key = (e.segment, e.group_id, e.rollout)
        bad = next((p for p in (e.group_path, e.path) if p is not None and not _inside(p, e.group_path)), None)
        if bad is not None:  # an index line is data: it may name only a folder of this run's groups/
            problems.append(Problem(f"{INDEX_DIR}/{e.segment}.jsonl", "a rollout's folder lies outside the run's groups",
                                    field=f"group {e.group_id} rollout {e.rollout}",
                                    expected=f"{GROUPS_DIR}/<group>[/<rollout>]", found=repr(bad[:80])))
            continue
        if key in keyed:
            problems.append(Problem(f"{INDEX_DIR}/{e.segment}.jsonl", "a rollout is indexed once",
                                    field=f"group {e.group_id} rollout {e.rollout}", found="twice"))
            continue
        keyed[key] = e
    entries = list(keyed.values())
    rows = join(entries, consumed, ends, logged)
    segments = [RunSegment(starts[s], stops.get(s), ends.get(s)) for s in sorted(starts)]
    for name in sorted({e.segment for e in entries} - set(starts)):
        problems.append(Problem(f"{INDEX_DIR}/{name}.jsonl", "a segment without its start file",
                                expected=f"{SEGMENTS_DIR}/{name}.json", found="none"))
    for part in segments:
        if part.end is not None and (part.end.groups_lost or part.end.write_errors):
            notes.append(f"segment {part.start.segment}: {part.end.groups_lost} scored groups were still waiting to "
                         f"be written when the worker stopped, {part.end.write_errors} could not be written")
    if any(s.end is None for s in segments):
        notes.append("a segment has not ended: training is running (or the worker was killed before it could say so)")
    return Run(source=label, kind=kind, manifest=manifest, segments=segments, rows=rows, groups=groups_of(rows),
               consumed=consumed, rescored=rescored, entries=keyed, problems=problems, notes=notes, store=store, read_to=read_to,
               sizes=sizes, stamps={p: store.stamp(p, n) for p, n in sizes.items()}, marks=marks, _tokenizer=prior._tokenizer if prior is not None else None)


def _rewritten(run: Run, store: RunStore, sizes: dict[str, int], stamps: dict[str, tuple]) -> bool:
    """A line file read before that was not only appended to: gone, shorter than what was read, changed at
    the same size, or no longer ending in the bytes read last."""
    for path, at in run.read_to.items():
        if path not in sizes or sizes[path] < at:
            return True
        old = run.stamps.get(path)
        if old is not None and old != stamps[path] and old[0] == sizes[path]:
            return True  # same size, newer file: a rewrite (an append always grows it)
        mark = run.marks.get(path, b"")
        if mark and old != stamps[path] and store.read_tail(path, at - len(mark), len(mark)) != mark:
            return True
    return False


def follow(run: Run) -> Run | None:
    """`run` with what its recorder wrote since it was read (new index and consumption lines, segment files),
    reading only the grown tails of the line files; None when no file of it changed (one listing of four
    folders). The first read is not repeated while the files are only appended to, as the recorder does; a
    line file truncated or rewritten (same size included, in a local folder) is read again whole."""
    if run.store is None:
        return None
    sizes = _listing(run.store)
    stamps = {p: run.store.stamp(p, n) for p, n in sizes.items()}
    if sizes == run.sizes and stamps == run.stamps:
        return None
    if _rewritten(run, run.store, sizes, stamps):
        fresh = read_run(run.store, run.source, run.kind)
        fresh.notes.append("a line file was rewritten, not appended to: the run was read again")
        return fresh
    return read_run(run.store, run.source, run.kind, prior=run)


def open_run(source: str, token: str | None = None, allow_local: bool = True) -> Run:
    """Open a recorded run (folder, .zip, Hub dataset id, bundled example); raises ArtifactError when it is not one."""
    store = store_for(source, token=token, allow_local=allow_local)
    prefix = find_run(store)
    if prefix is None:
        if hasattr(store, "close"):
            store.close()
        raise ArtifactError([Problem(source, "not a recorded TRL run: no run.json here",
                                     expected="a run folder written by rollout_trace.record", found="no run.json")])
    return read_run(RunStore(store, prefix), store.label, store.kind)
