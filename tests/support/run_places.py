"""Rollout rows moved to another place of a run, and a group's batch as bytes, for tests that build runs of format 2
(with tests/support/run_tables.py) and grow or cut a segment's open tail by hand.

    placed(group, version=5, group_id=9)     # a group's rows at version 5 as group 9, its names made to fit
    batch_bytes(group)                       # the Arrow IPC message the shard writer appends for the group
    without_end(tail)                        # a tail as a killed writer leaves it: no end-of-stream marker
    write_shard(run, name, rows)             # a sealed shard's two files written by hand (types as `rows` has them)
    reads = shard_reads(monkeypatch)         # the shards a run table reads from here on, one entry per read

A row's `group` and `path` are names its place gives (rollout_trace/artifact/run_format.py `group_path`): a row moved
without them renamed is left out by the reader, so every move here renames them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from rollout_trace.artifact.run_format import FILES_DIR, ROLLOUTS_DIR, SHARD_NAME, group_path
from rollout_trace.artifact.run_schema import FILES, ROLLOUTS, ROLLOUTS_TABLE

EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"  # Arrow IPC's end of stream, written when a stream writer closes


def placed(group: pa.Table, *, version: int | None = None, group_id: int | None = None,
           segment: str | None = None) -> pa.Table:
    """One group's rows at another version, group id or segment, their `group` and `path` renamed to fit."""
    seg = segment if segment is not None else group["segment"][0].as_py()
    v = version if version is not None else group["policy_version"][0].as_py()
    gid = group_id if group_id is not None else group["group_id"][0].as_py()
    name = group_path(seg, v, gid)
    n = group.num_rows
    values = {"segment": [seg] * n, "policy_version": [v] * n, "group_id": [gid] * n, "group": [name] * n,
              "path": [None if p is None else f"{name}/rollout-{r:02d}"
                       for p, r in zip(group["path"].to_pylist(), group["rollout"].to_pylist(), strict=True)]}
    for col, vals in values.items():
        group = group.set_column(group.schema.get_field_index(col), ROLLOUTS.field(col),
                                 pa.array(vals, ROLLOUTS.field(col).type))
    return group


def batch_bytes(group: pa.Table) -> bytes:
    """The bytes the shard writer appends to a tail for `group` (one record batch message, after the schema)."""
    empty, sink = io.BytesIO(), io.BytesIO()
    with ipc.new_stream(empty, ROLLOUTS):  # the schema (written with the first batch, or at the end) and EOS
        pass
    with ipc.new_stream(sink, ROLLOUTS) as w:
        w.write_table(group.cast(ROLLOUTS).combine_chunks(), max_chunksize=group.num_rows)
    return sink.getvalue()[len(empty.getvalue()) - len(EOS): -len(EOS)]


def without_end(tail: Path) -> None:
    """Drop the end-of-stream marker a closed writer left: the tail as a writer still appending (or killed) has it."""
    data = tail.read_bytes()
    if data.endswith(EOS):
        tail.write_bytes(data[: -len(EOS)])


def shard_reads(monkeypatch) -> list[str]:
    """The shard files the run table reads from here on, one name per read (rollout_trace/artifact/run_shards.py
    `read_columns`, as rollout_trace/artifact/run_table.py calls it)."""
    from rollout_trace.artifact import run_table

    seen: list[str] = []
    real = run_table.read_columns
    monkeypatch.setattr(run_table, "read_columns", lambda open_file, path, shard, *args, **kw: (
        seen.append(shard.name), real(open_file, path, shard, *args, **kw))[1])
    return seen


def write_shard(run: Path, name: str, rows: pa.Table) -> None:
    """A sealed shard `name` of the run's rollouts table written with pyarrow directly, as a writer that checks
    nothing would, of the types `rows` has: its artifact files into the files shard of the same name, every row's
    `files_shard` and `files_row` pointing there (what the recorder's RolloutWriter writes)."""
    m = SHARD_NAME.match(name)
    assert m is not None
    n = rows.num_rows
    for c, values in (("files_shard", [int(m["number"])] * n), ("files_row", list(range(n)))):
        if c in rows.column_names:
            rows = rows.set_column(rows.schema.get_field_index(c), c, pa.array(values, pa.int64()))
    for folder, schema in ((FILES_DIR, FILES), (ROLLOUTS_DIR, ROLLOUTS_TABLE)):
        (Path(run) / folder).mkdir(parents=True, exist_ok=True)
        pq.write_table(rows.select([c for c in schema.names if c in rows.column_names]), Path(run) / folder / name,
                       compression="zstd")

