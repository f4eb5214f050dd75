"""The recorder's writer: a thread in TRL's worker child that writes each scored group, one at a time.

A thread, not a process: TRL's child is a daemon process, which may not have children, and a thread reads
TRL's objects where they are, with nothing pickled. Each group is built in a hidden sibling folder and
renamed into place (artifact.write.GroupBuild), and only then are its rollouts' lines appended to the
segment's index, whole and flushed: a crash, TRL's SIGTERM or a SIGKILL loses the groups still queued or
half built, never a written one, and a group folder without index lines is one the writer was renaming
when it stopped (the reader names it). `close` gives the writer until a deadline, inside the child's
`run()`, because TRL's `stop()` terminates the child 15 s after it asks it to stop.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from pathlib import Path

from rollout_trace.artifact.atomic import write_bytes as atomic_write
from rollout_trace.artifact.group import rollout_folder
from rollout_trace.artifact.run_format import GROUPS_DIR, INDEX_DIR, SEGMENTS_DIR, SegmentEnd, encode_file, encode_line
from rollout_trace.artifact.write import GroupBuild, write_artifact

from .build import ScoredGroup, build_rollout, group_file, index_entry, iso

log = logging.getLogger("rollout_trace.record")
WARN_PENDING_GROUPS = 64  # groups waiting for the writer: it is falling behind TRL's scoring


class GroupWriter:
    def __init__(self, root: Path, segment: str):
        self.root, self.segment = Path(root), segment
        for d in (GROUPS_DIR, INDEX_DIR, SEGMENTS_DIR):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        self._q: queue.Queue[ScoredGroup | None] = queue.Queue()
        self.written = self.errors = 0
        self.busy_s = 0.0
        self._warned = False
        self._thread = threading.Thread(target=self._loop, name="rollout-trace-writer", daemon=True)
        self._thread.start()

    def put(self, group: ScoredGroup) -> None:
        self._q.put(group)
        if not self._warned and self._q.qsize() > WARN_PENDING_GROUPS:
            self._warned = True
            log.warning("rollout_trace: %d scored groups are waiting to be written; the recorder's writer is "
                        "falling behind TRL's scoring (memory grows until it catches up)", self._q.qsize())

    def close(self, timeout_s: float, **end: int | float) -> SegmentEnd:
        """Let the writer finish what is queued until `timeout_s`, then write segments/<seg>.end.json."""
        self._q.put(None)
        self._thread.join(timeout_s)
        # still writing: the group in hand and those queued (the queue also holds the stop marker) are lost
        lost = self._q.qsize() if self._thread.is_alive() else 0
        done = SegmentEnd(segment=self.segment, ended_at=iso(time.time()), groups_written=self.written,
                          groups_lost=lost,
                          write_errors=self.errors, writer_busy_s=round(self.busy_s, 3), **end)  # type: ignore[arg-type]
        atomic_write(self.root / SEGMENTS_DIR / f"{self.segment}.end.json", encode_file(done))
        return done

    def _loop(self) -> None:
        with open(self.root / INDEX_DIR / f"{self.segment}.jsonl", "ab") as index:
            while (group := self._q.get()) is not None:
                t0 = time.perf_counter()
                try:
                    index.write(self.write_group(group))
                    index.flush()
                    self.written += 1
                except Exception:  # one group's problem must not stop the recording, nor TRL
                    self.errors += 1
                    log.exception("rollout_trace: could not write group %s of segment %s", group.group_id, self.segment)
                self.busy_s += time.perf_counter() - t0

    def write_group(self, g: ScoredGroup) -> bytes:
        """Write the group's folder atomically; return its index lines (appended only after the rename)."""
        built = [build_rollout(g, r) for r in g.rollouts]
        folders = [rollout_folder(b.index) if b.summary is not None else None for b in built]
        group_path = f"{GROUPS_DIR}/{g.name}"
        with GroupBuild(self.root / group_path) as out:
            for b in built:
                if b.summary is not None:
                    write_artifact(out.rollout_dir(b.index), summary=b.summary, turns=b.turns, task=b.task,
                                   visible_tests=None, held_out_tests=None, trace_entries=b.entries, trl=b.trl,
                                   validate=False)  # TRL's child has no CPU to spare: `viewer check` reads it all
            out.commit(group_file(g, built, folders), built[0].task, validate=False)
        return b"".join(encode_line(index_entry(g, b, group_path, f)) for b, f in zip(built, folders, strict=True))
