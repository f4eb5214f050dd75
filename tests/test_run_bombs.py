"""A shard whose values decompress far beyond their bytes (a title of one letter repeated 64 MB is a few KB of zstd)
costs a reader only the footer that says so: the column is named and read as missing, never decompressed
(rollout_trace/artifact/run_shards.py `read_columns`), and a public request's budget bounds what the data it reads
decompresses to (rollout_trace/artifact/budget.py `max_decoded`), however small it is on disk."""

from __future__ import annotations

import shutil
import zipfile

import pyarrow as pa
import pytest

from rollout_trace.artifact.budget import Budget, Refused, bounded
from rollout_trace.artifact.run import open_run
from support.run_places import placed, write_shard
from support.run_tables import bundled_rows, groups, write_run
from viewer.run_stats import version_stats

HUGE = 64 * 2**20


def _zipped(root, dest):
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_STORED) as z:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(root.parent).as_posix())
    return dest


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """The bundled run zipped (read shard by shard, as a Hub run is) with one more shard: a group whose first
    rollout's title is one letter repeated 64 MB."""
    tmp = tmp_path_factory.mktemp("bomb")
    root = write_run(tmp / "run")
    g = placed(groups(bundled_rows())[0], group_id=900)
    titles = g["title"].to_pylist()
    titles[0] = "a" * HUGE
    g = g.set_column(g.schema.get_field_index("title"), "title", pa.array(titles, pa.string()))
    seg = g["segment"][0].as_py()
    write_shard(root, f"{seg}-00099.parquet", g)
    assert (root / "rollouts" / f"{seg}-00099.parquet").stat().st_size < 2**20  # small on disk
    path = _zipped(root, tmp / "run.zip")
    shutil.rmtree(root)
    return path


def test_the_column_is_named_and_read_as_missing(bomb):
    run = open_run(str(bomb))
    titles = run.table.column("title").to_pylist()
    said = [p for p in run.problems if p.field == "title"]
    assert len(said) == 1 and "-00099.parquet" in said[0].file and "read as missing" in said[0].message
    assert f"{HUGE:,}" in said[0].found or "bytes" in said[0].found
    assert len(titles) == bundled_rows().num_rows + 4 and max(len(t or "") for t in titles) < 1000
    assert sum(s.rollouts for s in version_stats(run)) == len(titles)  # its rows still count


def test_a_public_request_is_bounded_by_what_its_data_decompresses_to(bomb):
    """A request that may decompress only 1 KiB is refused at the first shard whose columns would pass it, before
    they are decompressed, naming the file and the bound."""
    with pytest.raises(Refused) as e, bounded(Budget(max_bytes=2**30, max_files=10**6, max_rows=10**9, seconds=600,
                                                  max_decoded=1024)):
        version_stats(open_run(str(bomb)))
    [p] = e.value.problems
    assert "decompresses to more than" in p.message and p.file.startswith("rollouts/") and p.expected == \
        "at most 1,024 bytes decompressed per request"


def test_an_ordinal_far_past_the_run_s_rows_sizes_no_array(tmp_path):
    """The fates look a row up by its ordinal in an array as long as the segment's queue; one consumption row of
    ordinal 2,000,000,000 made that array 2**31 long (13 s and 9.7 GB for the bundled run). Such a table is
    looked up by a sorted search instead, and a row no rollout holds changes no number."""
    import glob
    import tracemalloc

    import pyarrow.parquet as pq

    from rollout_trace.artifact.run_table import run_table
    from rollout_trace.artifact.sources import EXAMPLES_DIR

    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    before = version_stats(run_table(str(root)))
    path = sorted(glob.glob(str(root / "consumed" / "*.parquet")))[0]
    t = pq.read_table(path)
    far = t.slice(t.num_rows - 1).to_pylist()[0] | {"ordinal": 2_000_000_000, "fate": "stale", "step": None}
    pq.write_table(pa.concat_tables([t, pa.Table.from_pylist([far], t.schema)]), path)
    tracemalloc.start()
    try:
        after = version_stats(run_table(str(root)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak:,} bytes"
    assert after == before


def test_a_list_of_one_value_repeated_is_sized_by_its_values_not_its_bytes(tmp_path):
    """A rollout whose training rows' ordinals are one value repeated five million times is a few KB on disk, and
    its pages decompress to a few KB too (a run of one value): the footer's count of values says what it decodes
    to (40 MB), so the column is named and read as missing, never decoded (the run zipped: read shard by shard,
    as a Hub run is)."""
    import numpy as np

    root = write_run(tmp_path / "run")
    g = placed(groups(bundled_rows())[0], group_id=900)
    many = 5_000_000
    lengths = [many] + [len(x) for x in g["row_ordinal"].to_pylist()[1:]]
    values = np.concatenate([np.zeros(many, np.int64), *[np.asarray(x, np.int64) for x in
                                                        g["row_ordinal"].to_pylist()[1:]]])
    ordinals = pa.ListArray.from_arrays(pa.array(np.r_[0, np.cumsum(lengths)], pa.int32()), pa.array(values))
    g = g.set_column(g.schema.get_field_index("row_ordinal"), "row_ordinal", ordinals)
    seg = g["segment"][0].as_py()
    write_shard(root, f"{seg}-00099.parquet", g)
    assert (root / "rollouts" / f"{seg}-00099.parquet").stat().st_size < 2**20  # small on disk
    t = open_run(str(_zipped(root, tmp_path / "run.zip"))).table  # read shard by shard, as a Hub run is
    assert sum(s.rollouts for s in version_stats(t)) == bundled_rows().num_rows + 4  # its rows still count
    assert max(len(x) for x in t.column("row_ordinal").to_pylist() if x is not None) < 1000
    said = [p for p in t.problems() if p.field == "row_ordinal"]
    assert len(said) == 1 and "-00099.parquet" in said[0].file and "read as missing" in said[0].message
    assert said[0].found.startswith(f"{many * 8:,}"[:7])  # its values at 8 bytes each
