"""Recorded runs (format 2: rollout_trace/artifact/run_format.py) made for a test: the bundled run's rows, changed as
the test needs, written through the recorder's own shard writer.

    rows = bundled_rows()                                    # every rollout of examples/trl-run, every column
    write_run(tmp / "run", rows)                             # a run with those rows (sealed shards) and the bundled
                                                             # run's consumption table, segments and tokenizer
    write_run(tmp / "run", changed(rows, reward=[...]))      # a column replaced
    append_group(tmp / "run", rows.slice(0, 4), tail=True)   # a group appended to the open tail, as while recording

Every helper writes what the recorder writes; a test that wants a hostile shard writes it with pyarrow itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rollout_trace.artifact.run_format import (
    CONSUMED_DIR,
    FILES_DIR,
    MANIFEST,
    ROLLOUTS_DIR,
    SEGMENTS_DIR,
    SHARD_NAME,
)
from rollout_trace.artifact.run_schema import ARTIFACT_FILES, CONSUMED, FILES, ROLLOUTS, ROLLOUTS_TABLE
from rollout_trace.artifact.run_shards import RolloutWriter, ShardWriter, shards
from rollout_trace.artifact.sources import EXAMPLES_DIR

BUNDLED = EXAMPLES_DIR / "trl-run"


def _table(folder: Path, sub: str) -> dict[tuple[str, int], pa.Table]:
    """Each shard of one table folder (sealed, or an open tail's whole batches) by (segment, number)."""
    import pyarrow.parquet as pq

    from rollout_trace.artifact.run_shards import read_tail_file

    if not (folder / sub).is_dir():
        return {}
    return {(s.segment, s.number): pq.read_table(folder / sub / s.name) if s.sealed else
            read_tail_file(folder / sub / s.name)[0]
            for s in shards({p.name: p.stat().st_size for p in (folder / sub).iterdir()})[0]}


def _read(folder: Path, sub: str, schema: pa.Schema) -> pa.Table:
    parts = list(_table(folder, sub).values())
    if sub == ROLLOUTS_DIR and parts:  # each row's artifact files from where its files_shard and files_row point
        files = _table(folder, FILES_DIR)
        got = pa.concat_tables(parts)
        seg, k, at = (got[c].to_pylist() for c in ("segment", "files_shard", "files_row"))
        for name in ARTIFACT_FILES:
            values = [None if k[i] is None else files[(seg[i], k[i])][name][at[i]].as_py() for i in range(len(seg))]
            got = got.append_column(name, pa.array(values, pa.large_binary()))
        parts = [got.select(schema.names)]
    return pa.concat_tables([p.cast(schema) for p in parts]) if parts else schema.empty_table()


def bundled_rows() -> pa.Table:
    """Every rollout row of examples/trl-run (the failed ones without an artifact too), every column, in order."""
    return _read(BUNDLED, ROLLOUTS_DIR, ROLLOUTS)


def bundled_consumed() -> pa.Table:
    return _read(BUNDLED, CONSUMED_DIR, CONSUMED)


def changed(rows: pa.Table, **columns: Any) -> pa.Table:
    """`rows` with the named columns replaced (a list of values, or a function of the column's values)."""
    for name, values in columns.items():
        if callable(values):
            values = values(rows[name].to_pylist())
        rows = rows.set_column(rows.schema.get_field_index(name), ROLLOUTS.field(name),
                               pa.array(values, ROLLOUTS.field(name).type))
    return rows


def reward_changed(out: Path, path: str, reward: float) -> Path:
    """The bundled run written at `out` with the rollout at `path` given `reward` in the run's table (its own files
    keep the one recorded): a run changed after it was recorded."""
    rows = bundled_rows()
    at = rows["path"].to_pylist().index(path)
    return write_run(out, changed(rows, reward=lambda rewards: [reward if i == at else r for i, r in enumerate(rewards)]))


def groups(rows: pa.Table) -> list[pa.Table]:
    """`rows` cut into its groups, in order (a group's rows are contiguous, as the recorder writes them)."""
    names = rows["group"].to_pylist()
    cuts = [0] + [i for i in range(1, len(names)) if names[i] != names[i - 1]] + [len(names)]
    return [rows.slice(a, b - a) for a, b in zip(cuts, cuts[1:], strict=False)]


def write_run(out: Path, rows: pa.Table | None = None, consumed: pa.Table | None = None, *, tail: bool = False,
              seal_rows: int | None = None, small_files: bool = True) -> Path:
    """A run at `out`: the bundled run's small files and tokenizer (when `small_files`), then `rows` (default: the
    bundled rows) appended a group at a time to each segment's table, sealed unless `tail`, and `consumed`
    (default: the bundled consumption table)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if small_files:
        for name in (MANIFEST, SEGMENTS_DIR, "tokenizer"):
            src = BUNDLED / name
            if src.is_dir():
                shutil.copytree(src, out / name, dirs_exist_ok=True)
            else:
                shutil.copy2(src, out / name)
        (out / CONSUMED_DIR).mkdir(exist_ok=True)
        for end in (BUNDLED / CONSUMED_DIR).glob("*.end.json"):
            shutil.copy2(end, out / CONSUMED_DIR / end.name)
    rows = bundled_rows() if rows is None else rows
    consumed = bundled_consumed() if consumed is None else consumed
    for segment in dict.fromkeys(rows["segment"].to_pylist()):
        mine = rows.filter(pc.equal(rows["segment"], segment))
        w = RolloutWriter(out, segment, **({"seal_rows": seal_rows, "files_seal_rows": seal_rows} if seal_rows else {}))
        for g in groups(mine):
            w.append(g)
        if not tail:
            w.close()
        else:
            _leave_open(w.files)
            _leave_open(w.rollouts)
    for segment in dict.fromkeys(consumed["segment"].to_pylist()):
        w = ShardWriter(out / CONSUMED_DIR, segment, CONSUMED, seal_rows=2**31)
        w.append(consumed.filter(pc.equal(consumed["segment"], segment)))
        if not tail:
            w.close()
        else:
            _leave_open(w)
    (out / ROLLOUTS_DIR).mkdir(exist_ok=True)
    return out


def _leave_open(w: ShardWriter) -> None:
    """Close the tail's file without sealing it: what a killed recorder leaves."""
    if w._stream is not None:
        w._stream.close()
        w._file.close()  # type: ignore[union-attr]
        w._stream = w._file = None


def append_group(run: Path, group: pa.Table, tail: bool = True) -> None:
    """One more group appended to its segment's open tails (new tails after the last shards), as the recorder
    appends while training; sealed when not `tail`."""
    from rollout_trace.artifact.run_shards import read_tail_file

    segment = group["segment"][0].as_py()
    w = RolloutWriter(Path(run), segment)
    for inner, schema in ((w.files, FILES), (w.rollouts, ROLLOUTS_TABLE)):
        tail_path = next((p for p in sorted(inner.folder.glob(f"{segment}-*.arrows"))), None)
        if tail_path is not None:  # go on writing the open tail: read it back and write it again, as it was
            old, _ = read_tail_file(tail_path)
            m = SHARD_NAME.match(tail_path.name)
            assert m is not None
            tail_path.unlink()
            inner.number = int(m["number"])
            if old.num_rows:
                inner.append(old.cast(schema))
    w.append(group)
    if tail:
        _leave_open(w.files)
        _leave_open(w.rollouts)
    else:
        w.close()


def shard_files(run: Path, sub: str = ROLLOUTS_DIR) -> list[Path]:
    return sorted(p for p in (Path(run) / sub).iterdir() if SHARD_NAME.match(p.name))


def manifest(run: Path) -> dict:
    return json.loads((Path(run) / MANIFEST).read_text())
