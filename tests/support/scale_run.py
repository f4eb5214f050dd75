"""A synthetic recorded run of any size whose numbers a test can name, written through the recorder's shard writer.

    make_run(root, versions=2000, groups=2, k=4)     # 16,000 rollouts in one segment, SEGMENT

Every rollout is one rollout of the bundled examples/trl-run (its index columns, text pieces and findings) placed at
version v (1..versions), group id (v - 1) * groups + g and index r: its reward is REWARDS[(r + v + g) % 8] (every
50th version's all 0, so the run page says "every reward at versions 50, 100, ..."), its verifier score the same,
its advantage 0, its task `f"{gid % 97:040x}"` titled "[task N] synthetic"; it has no training rows and none of its
artifact's files (a page of the run reads its columns, never a rollout's files). bench/make_run.py makes runs of
real rollouts for timing; this one's numbers are fixed, for assertions.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rollout_trace.artifact.run_format import (
    MANIFEST,
    SEGMENTS_DIR,
    SegmentEnd,
    SegmentStart,
    encode_file,
    group_path,
)
from rollout_trace.artifact.run_schema import ARTIFACT_FILES, ROLLOUTS
from rollout_trace.artifact.run_shards import RolloutWriter
from support.run_tables import BUNDLED, bundled_rows

SEGMENT = "20270101T000000Z-bench0"
REWARDS = (1.0, 0.0, 0.5, -0.1, 0.0, 1.0, 0.5, 0.0)


def make_run(root: Path, versions: int = 200, groups: int = 8, k: int = 8, zero_spread: bool = False) -> int:
    """Write the synthetic run at `root`; returns how many rollouts it holds. `zero_spread`: every rollout of a
    group has the group's reward REWARDS[(v + g) % 8] (every group has zero spread, a version with one group
    has min = mean = max), still changing from version to version."""
    rows = bundled_rows()
    template = rows.filter(pc.greater(pc.list_value_length(rows["row_ordinal"]), 0)).slice(0, 1)
    (root / SEGMENTS_DIR).mkdir(parents=True)
    manifest = json.loads((BUNDLED / MANIFEST).read_text())
    manifest.pop("tokenizer", None)
    (root / MANIFEST).write_text(json.dumps(manifest))
    (root / SEGMENTS_DIR / f"{SEGMENT}.json").write_bytes(encode_file(SegmentStart(
        segment=SEGMENT, started_at="2027-01-01T00:00:00.000Z", dataset_start_index=0, model_version=1,
        num_generations=k)))
    (root / SEGMENTS_DIR / f"{SEGMENT}.end.json").write_bytes(encode_file(SegmentEnd(
        segment=SEGMENT, ended_at="2027-01-01T09:00:00.000Z", groups_written=versions * groups, groups_lost=0,
        write_errors=0, rollouts_never_scored=0, writer_busy_s=0.0, handoff_s=0.0, max_queued_samples=0)))
    v = np.repeat(np.arange(1, versions + 1), groups * k)
    g = np.tile(np.repeat(np.arange(groups), k), versions)
    r = np.tile(np.arange(k), versions * groups)
    gid = (v - 1) * groups + g
    reward = np.where(v % 50 == 0, 0.0, np.array(REWARDS)[((0 if zero_spread else r) + v + g) % len(REWARDS)])
    names = [group_path(SEGMENT, int(a), int(b)) for a, b in zip(v, gid, strict=True)]
    n = len(v)
    empty = pa.array([[]] * n, pa.list_(pa.int64()))
    values = {
        "segment": pa.array([SEGMENT] * n), "policy_version": pa.array(v), "group_id": pa.array(gid),
        "rollout": pa.array(r), "rollout_id": pa.array([f"{a:08x}{b:04x}" for a, b in zip(gid, r, strict=True)]),
        "group": pa.array(names), "path": pa.array([f"{x}/rollout-{b:02d}" for x, b in zip(names, r, strict=True)]),
        "reward": pa.array(reward), "env_reward": pa.array(reward), "advantage": pa.array(np.zeros(n)),
        "row_ordinal": empty, "row_tokens": empty, "row_trained_tokens": empty,
        "row_fingerprint": pa.array([[]] * n, pa.list_(pa.string())),
        "row_turns": pa.array([[]] * n, ROLLOUTS.field("row_turns").type),
        "task_id": pa.array([f"{x % 97:040x}" for x in gid]),
        "title": pa.array([f"[task {x % 97}] synthetic" for x in gid]),
        **{name: pa.nulls(n, pa.large_binary()) for name in ARTIFACT_FILES},
    }
    table = template.take(pa.array(np.zeros(n, dtype=np.int64)))
    for name, col in values.items():
        table = table.set_column(table.schema.get_field_index(name), ROLLOUTS.field(name), col.cast(ROLLOUTS.field(name).type))
    writer = RolloutWriter(root, SEGMENT)
    for start in range(0, n, k):  # a group at a time, as the recorder appends
        writer.append(table.slice(start, k))
    writer.close()
    return n
