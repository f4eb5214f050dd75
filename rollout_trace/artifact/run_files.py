"""A recorded run's small files (rollout_trace/artifact/run_format.py): run.json, each segment's start and end,
the consumption table's ends and the rescore log, decoded with the run format's records. Every problem is named,
never raised: a run whose run.json cannot be read has no manifest, and its reader says why
(rollout_trace/artifact/run_table.py builds the run's snapshot on them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from .problems import Problem, from_msgspec
from .run_format import (
    CONSUMED_DIR,
    MANIFEST,
    RESCORED_DIR,
    RUN_FORMAT_VERSION,
    SEGMENTS_DIR,
    ConsumptionEnd,
    Rescored,
    RunManifest,
    SegmentEnd,
    SegmentStart,
)

MAX_SMALL_BYTES = 16 * 2**20  # run.json, a segment's files, the rescore log


@dataclass(frozen=True)
class RunSegment:
    """One start of TRL's worker child, and how it ended (None: still running, or killed)."""

    start: SegmentStart
    end: SegmentEnd | None
    consumption: ConsumptionEnd | None  # None: training still running, or no consumption log


@dataclass
class RunFiles:
    """A run's small files: run.json, its segments' start and end, the consumption table's ends, the rescore
    log, and what was wrong with any of them."""

    manifest: RunManifest | None = None
    segments: list[RunSegment] = field(default_factory=list)
    ends: dict[str, int] = field(default_factory=dict)  # segment -> rows the trainer took (its consumption end)
    rescored: list[Rescored] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def live(self) -> bool:
        """A segment has not ended (training is running, or was killed before it could say so)."""
        return any(s.end is None for s in self.segments)


_DECODERS: dict[type, Any] = {t: msgspec.json.Decoder(t) for t in (SegmentStart, SegmentEnd, ConsumptionEnd,
                                                                   RunManifest, Rescored)}


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


def _lines(name: str, data: bytes | str, kind: type, problems: list[Problem], notes: list[str]) -> list:
    """The JSON lines of a small line file (the rescore log); a bad line named, a cut last line noted."""
    if isinstance(data, str):
        problems.append(Problem(name, data))
        return []
    whole = data.rfind(b"\n") + 1
    if data[whole:].strip():
        notes.append(f"{name}: the last line has no newline (a write cut short); skipped")
    out = []
    for n, line in enumerate(data[:whole].split(b"\n")[:-1], start=1):
        if line.strip():
            try:
                out.append(_DECODERS[kind].decode(line))
            except (msgspec.ValidationError, msgspec.DecodeError) as e:
                p = from_msgspec(name, e, line)
                problems.append(Problem(name, p.message, field=f"line {n}" + (f": {p.field}" if p.field else ""),
                                        expected=p.expected, found=p.found))
    return out


def read_files(store: Any) -> RunFiles:
    """The run's small files through `store` (a RunStore), decoded with the run format's records; problems
    named, never raised (an unreadable run.json leaves `manifest` None)."""
    problems: list[Problem] = []
    notes: list[str] = []
    # every small file read at once (on the Hub each read is a round trip, or two; they are read side by side)
    folders = ((SEGMENTS_DIR, ".json"), (CONSUMED_DIR, ".end.json"), (RESCORED_DIR, ".jsonl"))
    listed = {folder: [f"{folder}/{n}" for n in sorted(store.list_dir(folder)) if n.endswith(keep) and not n.startswith(".")]
              for folder, keep in folders}
    got = store.read([MANIFEST, *(p for paths in listed.values() for p in paths)], MAX_SMALL_BYTES)
    manifest = _one(MANIFEST, got.get(MANIFEST), RunManifest, problems)
    if manifest is not None and manifest.format_version > RUN_FORMAT_VERSION:
        problems.append(Problem(MANIFEST, "written by a newer version of this tool", field="format_version",
                                expected=f"at most {RUN_FORMAT_VERSION}", found=str(manifest.format_version)))
    starts: dict[str, SegmentStart] = {}
    stops: dict[str, SegmentEnd] = {}
    ends: dict[str, ConsumptionEnd] = {}
    rescored: list[Rescored] = []
    for folder, paths in listed.items():
        for path, data in ((p, got.get(p)) for p in paths):
            if folder == RESCORED_DIR:
                rescored += _lines(path, data, Rescored, problems, notes)
            elif folder == CONSUMED_DIR:
                if (c := _one(path, data, ConsumptionEnd, problems)) is not None:
                    ends[c.segment] = c
            elif path.endswith(".end.json"):
                if (end := _one(path, data, SegmentEnd, problems)) is not None:
                    stops[end.segment] = end
            elif (start := _one(path, data, SegmentStart, problems)) is not None:
                starts[start.segment] = start
    segments = [RunSegment(starts[x], stops.get(x), ends.get(x)) for x in sorted(starts)]
    for part in segments:
        if part.end is not None and (part.end.groups_lost or part.end.write_errors):
            notes.append(f"segment {part.start.segment}: {part.end.groups_lost} scored groups were still waiting to "
                         f"be written when the worker stopped, {part.end.write_errors} could not be written")
    if any(x.end is None for x in segments):
        notes.append("a segment has not ended: training is running (or the worker was killed before it could say so)")
    return RunFiles(manifest=manifest, segments=segments, ends={k: v.taken for k, v in ends.items()},
                    rescored=rescored, problems=problems, notes=notes)
