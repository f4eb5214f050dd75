"""A process that does nothing but record groups, for the SIGKILL test: `python record_writer_child.py RUN SEG N
[SEAL_ROWS]` (SEAL_ROWS: seal the segment's tail into a Parquet shard every that many rows).

It drives the recorder's real writer (rollout_trace/record/writer.py) with groups built by TRL's own
code (support/record_groups.py: OpenEnv's TrainingTrace of the repo's scripted trace, TRL's rows, TRL's
`_score_group`). It prints "ready" once a group is on disk and then writes
groups as fast as the writer goes, so a SIGKILL lands in the middle of some write.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main(run_dir: str, segment: str, n: int, seal_rows: int | None = None) -> None:
    from rollout_trace.record.manifest import begin_segment
    from rollout_trace.record.writer import GroupWriter
    from support.record_groups import scored_group

    begin_segment(Path(run_dir), segment, {"model_name": "tiny-llama", "num_generations": 4}, 0)
    writer = GroupWriter(Path(run_dir), segment, seal_rows=seal_rows)
    ordinal = 0
    for g in range(n):
        group, samples = scored_group(g, ordinal, segment=segment, version=g // 2)
        ordinal += len(samples)
        writer.put(group)
        while writer._q.qsize() > 1:  # at the writer's pace: a kill finds it in the middle of a write
            time.sleep(0.001)
        if g == 0:
            while writer.written == 0:
                time.sleep(0.001)
            print("ready", flush=True)  # one group is on disk
    writer.close(600, rollouts_never_scored=0, handoff_s=0.0, max_queued_samples=0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else None)
