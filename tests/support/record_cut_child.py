"""A recorder killed in the middle of a shard, for the SIGKILL-and-resume test:
`python record_cut_child.py RUN SEG FIRST_VERSION WHOLE CUT`.

It starts segment SEG of run RUN (rollout_trace/record/manifest.py `begin_segment`) and appends WHOLE groups
through the recorder's real writer (rollout_trace/record/writer.py GroupWriter, groups built by TRL's own code:
support/record_groups.py), each on disk before the next. With CUT=1 the next group's batch is written half-way
into the segment's open tail (the shard writer's file stops after half of a body buffer), the child prints "cut"
and waits to be SIGKILLed: the state a SIGKILL in the middle of an append leaves, reached without guessing a
moment. With CUT=0 it closes the writer as a segment that ends does (the tail sealed, its end file written) and
prints "done".
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

BODY = 1024  # a write at least this long is a batch's body buffer (its header's writes are shorter)


class HalfWrite:
    """The tail file as the shard writer holds it; once `armed`, the first body buffer written is written half-way
    and the writing thread stops there."""

    def __init__(self, f):
        self.f, self.armed = f, False

    def write(self, data) -> int:
        data = bytes(data)
        if self.armed and len(data) >= BODY:
            self.f.write(data[: len(data) // 2])
            self.f.flush()
            print("cut", flush=True)
            threading.Event().wait()  # until the parent's SIGKILL
        return self.f.write(data)

    def __getattr__(self, name):
        return getattr(self.f, name)


def main(run_dir: str, segment: str, first_version: int, whole: int, cut: bool) -> None:
    from rollout_trace.artifact import run_shards
    from rollout_trace.record.manifest import begin_segment
    from rollout_trace.record.writer import GroupWriter
    from support.record_groups import scored_group

    opened: list[HalfWrite] = []

    def open_tail(path, mode):
        opened.append(HalfWrite(open(path, mode)))  # noqa: SIM115 - the shard writer closes it
        return opened[-1]

    run_shards.open = open_tail  # type: ignore[attr-defined]  # the writer's module opens its tail through this
    begin_segment(Path(run_dir), segment, {"model_name": "tiny-llama", "num_generations": 4}, first_version)
    writer = GroupWriter(Path(run_dir), segment)
    appended = threading.Semaphore(0)
    append = writer._shards.append

    def signal(table) -> None:
        try:
            append(table)
        finally:
            appended.release()

    writer._shards.append = signal  # type: ignore[method-assign]  # says when a group's batch is on disk
    ordinal = 0
    for g in range(whole + cut):
        if g == whole:  # the next batch is cut short
            opened[-1].armed = True
        group, samples = scored_group(g, ordinal, segment=segment, version=first_version + g // 2)
        ordinal += len(samples)
        writer.put(group)
        # each group on disk before the next, so the cut one is the only one in flight (a bound for a stuck writer)
        if g < whole and not appended.acquire(timeout=600):
            sys.exit(f"group {g} was not written: {writer.first_error}")
    if cut:
        threading.Event().wait()  # the writer thread prints "cut" and stops; the parent kills this process
    writer.close(600, rollouts_never_scored=0, handoff_s=0.0, max_queued_samples=0)
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1")
