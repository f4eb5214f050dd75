"""The recorder's writer: a thread in TRL's worker child that writes each scored group, one at a time.

A thread, not a process: TRL's child is a daemon process, which may not have children, and a thread reads
TRL's objects where they are, with nothing pickled. Each group becomes rows of the run's rollouts table
(build.py), appended to the segment's open tail as one batch, whole and flushed, and sealed into a Parquet shard
when the tail is large enough or the segment ends (rollout_trace/artifact/run_shards.py): a crash, TRL's SIGTERM or
a SIGKILL loses the groups still queued or half built, never a written one. `close` gives the writer until a
deadline, inside the child's `run()`, because TRL's `stop()` terminates the child 15 s after it asks it to stop.

A rollout whose artifact cannot be built does not cost its group: the others are written, and it gets its
row with TRL's rows, reward and advantage and a `problem` naming what failed. Any failure of the
recorder's own code is loud at the first one: an ERROR with its traceback in the training log (the child
shares the trainer's stderr), the cause in `segments/.<seg>.error` (the main process's worker reads it and
logs it there too, worker.py) and `first_error` in the segment's end file; later ones are counted.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from pathlib import Path

from rollout_trace.analysis.searchable import RunVocab, searchable
from rollout_trace.artifact.atomic import write_bytes as atomic_write
from rollout_trace.artifact.run_format import SEGMENTS_DIR, SegmentEnd, encode_file
from rollout_trace.artifact.run_schema import ROLLOUTS, RolloutRecord, to_table
from rollout_trace.artifact.run_shards import RolloutWriter
from rollout_trace.artifact.schema import TOKENIZER_DIR

from .build import BuiltRollout, ScoredGroup, build_rollout, iso, misfit, rollout_record
from .scores import SCORING_LOGGER, quiet_scoring_log
from .sessions import describe

log = logging.getLogger("rollout_trace.record")
WARN_PENDING_GROUPS = 64  # groups waiting for the writer: it is falling behind TRL's scoring


def error_marker(root: Path, segment: str) -> Path:
    """The hidden file holding the first recorder failure of a segment (hidden: no reader lists it, no push sends it)."""
    return Path(root) / SEGMENTS_DIR / f".{segment}.error"


def end_path(root: Path, segment: str) -> Path:
    return Path(root) / SEGMENTS_DIR / f"{segment}.end.json"


def end_with_start_error(root: Path, segment: str, cause: str) -> None:
    """End a segment whose recorder never started (nothing recorded), saying why; best effort."""
    try:
        if not end_path(root, segment).exists():
            atomic_write(end_path(root, segment), encode_file(SegmentEnd(
                segment=segment, ended_at=iso(time.time()), groups_written=0, groups_lost=0, write_errors=0,
                rollouts_never_scored=0, writer_busy_s=0.0, handoff_s=0.0, max_queued_samples=0, start_error=cause)))
    except OSError as e:
        log.error("rollout_trace: could not end segment %s in %s (%s): %s", segment, root, describe(e), cause)


class GroupWriter:
    def __init__(self, root: Path, segment: str, model: str | None = None, seal_rows: int | None = None):
        self.root, self.segment = Path(root), segment
        (self.root / SEGMENTS_DIR).mkdir(parents=True, exist_ok=True)
        # here, so a folder that cannot hold the table stops the start
        self._shards = RolloutWriter(self.root, segment, **({"seal_rows": seal_rows, "files_seal_rows": seal_rows}
                                                            if seal_rows else {}))
        self._vocab = RunVocab(self.root / TOKENIZER_DIR, model)
        self._q: queue.Queue[ScoredGroup | None] = queue.Queue()
        self.written = self.errors = self.problems = 0
        self.first_error: str | None = None
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
        if not self._thread.is_alive():
            try:
                self._shards.close()  # the tail sealed: a finished segment is Parquet only
            except Exception as e:  # the tail stays readable as it is; the reader reads it
                self.fault(f"segment {self.segment}'s last shard could not be sealed", e)
        done = SegmentEnd(segment=self.segment, ended_at=iso(time.time()), groups_written=self.written,
                          groups_lost=lost, write_errors=self.errors, writer_busy_s=round(self.busy_s, 3),
                          first_error=self.first_error, rollout_problems=self.problems, **end)  # type: ignore[arg-type]
        atomic_write(end_path(self.root, self.segment), encode_file(done))
        return done

    def fault(self, what: str, exc: BaseException) -> str:
        """A failure of the recorder's own code: loud the first time, counted after. Returns its one line."""
        line = f"{what}: {describe(exc)}"
        if self.first_error is None:
            self.first_error = line
            log.error("rollout_trace: the recorder failed (%s). Training goes on unchanged, but segment %s's record "
                      "is incomplete from here: segments/%s.end.json will count what was not recorded, and "
                      "`python -m viewer check %s` names the trained rows with nothing recorded behind them.",
                      line, self.segment, self.segment, self.root, exc_info=exc)
            try:
                atomic_write(error_marker(self.root, self.segment), line.encode())
            except OSError:
                log.exception("rollout_trace: could not note the failure in %s", error_marker(self.root, self.segment))
        else:
            log.warning("rollout_trace: the recorder failed again (%s)", line)
        return line

    def _loop(self) -> None:
        quiet = quiet_scoring_log(threading.current_thread())
        try:
            while (group := self._q.get()) is not None:
                t0 = time.perf_counter()
                try:
                    self._shards.append(to_table(self.records(group), ROLLOUTS))
                    self.written += 1
                except Exception as e:  # one group's problem must not stop the recording, nor TRL
                    self.errors += 1
                    self.fault(f"group {group.group_id} of segment {self.segment} could not be written", e)
                self.busy_s += time.perf_counter() - t0
        finally:
            logging.getLogger(SCORING_LOGGER).removeFilter(quiet)

    def build(self, g: ScoredGroup) -> list[BuiltRollout]:
        """Each rollout built on its own: one that does not fit is named, never its group lost."""
        scores = None
        if g.scores is not None and any(not r.samples for r in g.rollouts):
            try:
                scores = g.scores()
            except Exception as e:
                self.fault(f"TRL's reward and advantage of group {g.group_id}'s rollouts without rows could not be "
                           "recovered", e)
        built = []
        for r in g.rollouts:
            scored = scores[r.index] if scores is not None else None
            try:
                b = build_rollout(g, r, scored)
            except Exception as e:
                b = misfit(g, r, scored, self.fault(f"rollout {r.index} of group {g.group_id}: its artifact could "
                                                    "not be built", e))
            if not r.samples and scored is None and b.problem is None:
                b.problem = "TRL's reward and advantage for this rollout without rows could not be recovered"
            self.problems += b.problem is not None
            built.append(b)
        return built

    def records(self, g: ScoredGroup) -> list[RolloutRecord]:
        """The group's rows: each rollout's files, text and findings; one whose text cannot be read is recorded
        without it (its findings None), never left out."""
        out = []
        for b in self.build(g):
            searched = None
            if b.artifact is not None:
                try:
                    searched = searchable(b.artifact, self._vocab.get())
                except Exception as e:
                    self.fault(f"rollout {b.index} of group {g.group_id}: its text could not be read for search", e)
            try:
                out.append(rollout_record(g, b, searched))
            except Exception as e:
                b.problem = self.fault(f"rollout {b.index} of group {g.group_id}: its artifact could not be written", e)
                self.problems += 1
                b.summary = None
                out.append(rollout_record(g, b, None))
        return out
