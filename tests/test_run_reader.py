"""Reading a recorded run (rollout_trace/artifact/run.py) and checking it (`viewer check`), on the bundled examples/trl-run
and on runs written from its rows (tests/support/run_tables.py).

Fast: no TRL child, no training (but one recorder child, killed mid-append). The run is read from its shards and
small files, as a folder, a zip and a bundled name, and opens as a collection; damage of every kind is named by
file and field; a run of format 1 is refused naming `viewer convert`, which turns the format-1 fixture into a run
that lists as it did; DuckDB and `datasets` read the rollouts table as one table with the run page's numbers.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import ROOT, requires, zip_folder
from rollout_trace.artifact.run_schema import FILES, ROLLOUTS_TABLE
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support.run_tables import bundled_consumed, bundled_rows, changed, groups, reward_changed, shard_files, write_run

RUN = EXAMPLES_DIR / "trl-run"
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture
def run_copy(tmp_path):
    dest = tmp_path / "trl-run"
    shutil.copytree(RUN, dest)
    return dest


def test_the_example_run_joins_into_typed_rows():
    from rollout_trace.artifact.run import open_run

    run = open_run("trl-run")  # the bundled name
    assert run.problems == [] and not run.live and len(run.segments) == 2
    assert run.manifest.kind == "trl-async-grpo-run" and run.manifest.versions["trl"] == "1.16.0"
    per_version = {v: sum(g.policy_version == v for g in run.groups) for v in run.versions()}
    assert len([v for v, n in per_version.items() if n >= 2]) >= 3
    assert all(g.k == 4 and len(set(g.rewards)) > 1 for g in run.groups)
    for r in run.rows:
        assert (r.trained_step is None) == (r.dropped is not None)
        assert len(r.fates) == r.rows == len(r.ordinals)
    steps = sorted({s for r in run.rows for s in r.trained_steps})
    assert steps == [1, 2, 3, 4, 5]
    assert {r.dropped for r in run.rows} >= {None, "read-ahead", "in-queue", "failed"}
    assert {r.status for r in run.rows} == {"ok", "failed", "unscorable", "timed-out"}
    # recorded with a user reward function: TRL scored the failed sessions' empty completions too
    assert run.manifest.worker["reward_funcs"] == ["brevity_reward"]
    failed = [r for r in run.rows if r.status == "failed"]
    assert failed and all(r.path is None and r.rows == 0 and r.reward == 0.1 and r.advantage for r in failed)
    recorded = {(r.segment, o) for r in run.rows for o in r.ordinals}
    assert run.consumed and all((c.segment, c.ordinal) in recorded for c in run.consumed)  # nothing lost
    assert all(s.end.write_errors == 0 and s.end.first_error is None for s in run.segments)
    a = run.open(next(r.path for r in run.rows if r.path))
    assert a.trl is not None and a.tokenizer_dir == RUN / "tokenizer"
    run.close()


def test_a_run_indexes_as_a_collection_without_listing_its_folders(monkeypatch):
    from rollout_trace.artifact import stores
    from rollout_trace.artifact.collection import open_collection

    def no_walk(self, *a, **k):
        raise AssertionError("a run is indexed from its rollouts table, never by walking its folders")

    monkeypatch.setattr(stores.FolderStore, "list", no_walk)
    c = open_collection(str(RUN))
    assert c.run is not None and c.problems == []
    groups = [r for r in c.records if r.kind == "group"]
    rollouts = [r for r in c.records if r.kind == "artifact"]
    assert len(groups) == len(c.run.groups) and len(rollouts) == sum(r.path is not None for r in c.run.rows)
    assert all(r.policy_version is not None and r.group_id is not None and r.rollout_id for r in rollouts)
    a = c.open(rollouts[0].path)
    assert a.summary.run.rollout_id == rollouts[0].rollout_id and a.tokenizer_dir is not None


def test_a_zipped_run_reads_the_same(tmp_path):
    from rollout_trace.artifact.collection import open_collection
    from rollout_trace.artifact.run import open_run

    z = zip_folder(RUN, tmp_path / "run.zip", prefix="trl-run")
    zipped, folder = open_run(str(z)), open_run(str(RUN))
    assert zipped.kind == "zip" and zipped.rows == folder.rows
    a = zipped.open(zipped.rows[0].path)
    assert len(a.turns) == len(folder.open(folder.rows[0].path).turns)
    zipped.close()
    c = open_collection(str(z))
    assert c.records[0].path.startswith("trl-run/groups/")
    assert c.open(c.records[1].path).summary.run is not None
    c.close()


def test_ls_json_rows_carry_what_a_run_page_needs(capsys):
    from viewer.cli import main

    assert main(["ls", "trl-run", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["trl"] == "1.16.0" and len(doc["run"]["segments"]) == 2
    rollouts = [r for r in doc["records"] if r["kind"] == "artifact"]
    for key in ("policy_version", "group", "group_id", "rollout_id", "advantage", "reward", "trained_step", "dropped",
                "segment", "rollout", "path", "status", "tokens", "trained_tokens", "tools", "drift", "task_id", "title"):
        assert all(key in r for r in rollouts), key
    assert {r["dropped"] for r in rollouts if r["trained_step"] is None} >= {"read-ahead", "in-queue"}
    assert main(["ls", "trl-run"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:4] == ["version", "group", "rollout", "status"]


def test_check_validates_the_example_run(capsys):
    from viewer.cli import main

    assert main(["check", "trl-run"]) == 0
    out = capsys.readouterr().out
    assert "all valid" in out and "INVALID" not in out and "2 segment(s)" in out


def test_a_write_cut_short_is_skipped_and_said(tmp_path):
    """A tail whose last group's batch was cut short (SIGKILL in the middle of an append) reads its whole groups and
    notes the cut one; a shard with a column of a type that does not convert to the run table's is named by file
    and field, and only its rows are left out; one whose values do not convert is named, those values read as
    missing."""
    from rollout_trace.artifact.run import open_run

    rows = bundled_rows()
    root = write_run(tmp_path / "run", rows, tail=True)
    tail = shard_files(root)[-1]
    assert tail.suffix == ".arrows"
    whole = tail.read_bytes()
    tail.write_bytes(whole[: len(whole) - 2000])  # into the last group's batch
    run = open_run(str(root))
    last = groups(rows)[-1]
    assert run.problems == [] and len(run.rows) == rows.num_rows - last.num_rows
    assert [n for n in run.notes if "cut short" in n] == [
        f"rollouts/{tail.name}: the last group's rows were cut short (a write stopped by SIGKILL); left out"]
    assert last["group"][0].as_py() not in {r.group for r in run.rows}

    bad = write_run(tmp_path / "bad", rows)
    shard = shard_files(bad)[0]
    whole = pq.read_table(shard)
    t = whole.set_column(whole.schema.get_field_index("policy_version"), "policy_version",
                         pa.array([[1]] * whole.num_rows, pa.list_(pa.int64())))
    pq.write_table(t, shard)
    hurt = open_run(str(bad))
    [problem] = hurt.problems
    assert problem.file == f"rollouts/{shard.name}" and problem.field == "policy_version"
    assert problem.expected == "int64" and problem.found.startswith("list<")
    assert len(hurt.rows) == rows.num_rows - t.num_rows  # the other shard's rows are read

    t = whole.set_column(whole.schema.get_field_index("reward"), "reward", pa.array(["high"] * t.num_rows))
    pq.write_table(t, shard)
    words = open_run(str(bad))
    assert len(words.rows) == rows.num_rows and {r.reward for r in words.rows[: t.num_rows]} == {None}
    [problem] = words.problems
    assert (problem.file, problem.field, problem.expected, problem.found) == (
        f"rollouts/{shard.name}", "reward", "double", "string")


def test_check_names_rows_that_are_not_what_trl_queued(tmp_path, capsys):
    import numpy as np
    from safetensors.numpy import load, save

    from viewer.cli import main

    rows = bundled_rows()
    files = rows["file_trl_rows"].to_pylist()
    at = next(i for i, x in enumerate(files) if x)
    arrays = load(files[at])
    arrays["completion_mask"] = np.roll(arrays["completion_mask"], 1)
    files[at] = save(arrays)
    root = write_run(tmp_path / "run", changed(rows, file_trl_rows=files))
    assert main(["check", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"INVALID {rows['group'][at]}" in out
    assert "trl/rows.safetensors" in out and "fingerprint" in out


def test_check_names_a_consumption_line_for_another_row(tmp_path, capsys):
    from viewer.cli import main

    consumed = bundled_consumed()
    prints = consumed["fingerprint"].to_pylist()
    prints[0] = "0" * 24
    consumed = consumed.set_column(consumed.schema.get_field_index("fingerprint"), "fingerprint",
                                   pa.array(prints, pa.string()))
    root = write_run(tmp_path / "run", consumed=consumed)
    assert main(["check", str(root)]) == 1
    out = capsys.readouterr().out
    assert "INVALID consumption log" in out and "not the row the worker recorded" in out


def test_a_seal_cut_short_reads_its_rows_once(tmp_path, capsys):
    """What the recorder leaves between writing a sealed shard and removing its tail (killed in between): the
    tail of a number whose shard is sealed is not read, so no rollout is read twice and check finds nothing."""
    from rollout_trace.artifact.run import open_run
    from viewer.cli import main

    rows = bundled_rows()
    open_tail = write_run(tmp_path / "tail", rows, tail=True)
    root = write_run(tmp_path / "run", rows)
    for tail in shard_files(open_tail):
        shutil.copy2(tail, root / "rollouts" / tail.name)  # beside the shard sealed from it
    assert sorted(p.suffix for p in shard_files(root)) == [".arrows", ".arrows", ".parquet", ".parquet"]
    run = open_run(str(root))
    assert len(run.rows) == rows.num_rows and run.problems == [] and not any("rollouts/" in n for n in run.notes)
    assert main(["check", str(root)]) == 0
    assert "all valid" in capsys.readouterr().out


def test_the_rollouts_and_the_consumption_tables_load_with_datasets(tmp_path):
    from datasets import load_dataset

    rollouts = load_dataset("parquet", data_files=str(RUN / "rollouts" / "*.parquet"), split="train",
                            cache_dir=str(tmp_path / "cache"))
    consumed = load_dataset("parquet", data_files=str(RUN / "consumed" / "*.parquet"), split="train",
                            cache_dir=str(tmp_path / "cache"))
    assert len(rollouts) == 52 == bundled_rows().num_rows
    assert {"trained", "read-ahead"} <= set(consumed["fate"])
    assert set(rollouts["status"]) == {"ok", "failed", "unscorable", "timed-out"}
    assert rollouts.column_names == ROLLOUTS_TABLE.names  # every column but the artifact files
    files = load_dataset("parquet", data_files=str(RUN / "files" / "*.parquet"), split="train",
                         cache_dir=str(tmp_path / "cache"))
    # a rollout's files are where its row points; a failed session without an artifact has none
    assert len(files) == sum(p is not None for p in rollouts["files_shard"]) == 50
    assert files.column_names == FILES.names


# What docs/runs.md shows: the pass rate per policy version (rollouts whose verifier score is 1 over those with one)
PASS_RATE_SQL = """
SELECT policy_version,
       count(*) FILTER (WHERE env_reward >= 1) / nullif(count(env_reward), 0) AS pass_rate
FROM read_parquet('{run}/rollouts/*.parquet')
GROUP BY policy_version
ORDER BY policy_version
"""


@requires(importlib.util.find_spec("duckdb") is not None, "duckdb is not installed (requirements-dev.txt)")
def test_duckdb_reads_the_rollouts_table_with_the_run_pages_pass_rates():
    import duckdb

    from rollout_trace.artifact.run import open_run
    from viewer.run_stats import version_stats

    got = duckdb.sql(PASS_RATE_SQL.format(run=RUN.as_posix())).fetchall()
    stats = version_stats(open_run(str(RUN)))
    assert [v for v, _ in got] == [s.version for s in stats] == [1, 2, 3, 4]
    for (_, rate), s in zip(got, stats, strict=True):
        assert rate == pytest.approx(s.pass_rate) if s.pass_rate is not None else rate is None
    assert any(s.pass_rate for s in stats)  # not all zero: the query would not tell a swapped rule


def _encodings(path) -> dict[str, tuple[str, ...]]:
    """Each column path's encodings, booleans left out (Parquet stores them as bits, never in a dictionary)."""
    md = pq.ParquetFile(path).metadata.row_group(0)
    return {c.path_in_schema: c.encodings for c in map(md.column, range(md.num_columns)) if c.physical_type != "BOOLEAN"}


def test_a_sealed_shard_stores_its_ordinals_as_their_differences(tmp_path):
    """The writer stores the columns run_schema.py's ENCODINGS names so: the ordinals as their differences (a
    few bytes where a dictionary of them took most of the shard's ordinals' bytes), the advantages without a
    dictionary; every other column dictionary-encoded. The bundled run is stored as the writer stores it, and
    reads the same rows (the `datasets` and DuckDB tests above read it)."""
    from rollout_trace.artifact.run_schema import ENCODINGS

    root = write_run(tmp_path / "run")
    for run in (root, RUN):
        for folder in ("rollouts", "consumed"):
            for path in sorted((run / folder).glob("*.parquet")):
                got = _encodings(path)
                for column, kind in got.items():
                    if column in ENCODINGS:
                        assert ENCODINGS[column] in kind and "RLE_DICTIONARY" not in kind, (path, column, kind)
                    else:  # a list's values and a struct's fields too (the writer names them by their paths)
                        assert "RLE_DICTIONARY" in kind, (path, column, kind)
                assert {"segment", "ordinal" if folder == "consumed" else "text_offsets.list.element"} <= set(got)
    rows = pq.read_table(sorted((root / "rollouts").glob("*.parquet"))[0], columns=["row_ordinal"])
    ordinals = [o for r in rows["row_ordinal"].to_pylist() for o in r]
    assert ordinals == sorted(ordinals) and len(ordinals) > 20
    written = pa.concat_tables(pq.read_table(p) for p in sorted((root / "consumed").glob("*.parquet")))
    want = bundled_consumed()
    assert sorted(zip(written["segment"].to_pylist(), written["ordinal"].to_pylist(), strict=True)) == \
        sorted(zip(want["segment"].to_pylist(), want["ordinal"].to_pylist(), strict=True))


def test_a_format_1_run_is_refused_naming_the_convert_command(tmp_path):
    from rollout_trace.artifact import ArtifactError
    from rollout_trace.artifact.run import open_run

    with zipfile.ZipFile(FIXTURES / "trl-run-v1.zip") as z:
        z.extractall(tmp_path)
    for source in (str(tmp_path / "trl-run"), str(FIXTURES / "trl-run-v1.zip")):
        with pytest.raises(ArtifactError) as e:
            open_run(source)
        [problem] = e.value.problems
        assert "python -m viewer convert OLD NEW" in problem.message and problem.found == "index/ and groups/"


def test_convert_of_the_format_1_run_lists_what_its_reader_listed(tmp_path, capsys):
    """`viewer convert` of the format-1 fixture (the bundled run before format 2, its tokenizer added back): its
    `viewer ls --json` rows are what the format-1 reader listed, row for row; and check finds nothing."""
    from viewer.cli import main

    with zipfile.ZipFile(FIXTURES / "trl-run-v1.zip") as z:
        z.extractall(tmp_path)
    old = tmp_path / "trl-run"
    shutil.copytree(RUN / "tokenizer", old / "tokenizer")
    new = tmp_path / "converted"
    assert main(["convert", str(old), str(new)]) == 0
    assert "converted 52 rollouts" in capsys.readouterr().out
    assert main(["ls", str(new), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = json.loads((FIXTURES / "trl-run-v1.ls.json").read_text())
    assert len(got["records"]) == len(want["records"]) == 65
    for i, (a, b) in enumerate(zip(got["records"], want["records"], strict=True)):
        assert a == b, (i, {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)})
    assert got["run"] == want["run"]
    assert main(["check", str(new)]) == 0


def test_sigkill_mid_shard_then_a_resume_reads_both_segments(tmp_path, capsys):
    """A recorder SIGKILLed in the middle of appending a group (tests/support/record_cut_child.py: the batch
    written half-way into the segment's tail): the reader reads every whole group before it and notes the cut
    one. A resume is a new segment with a new writer: the run reads both, and `viewer check` names nothing but
    what the kill left (the cut batch, and the killed segment that never said it ended)."""
    from rollout_trace.artifact.run import open_run
    from support import record_cut_child
    from viewer.cli import main

    root = tmp_path / "run"

    def record(segment: str, first_version: int, whole: int, cut: bool) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, record_cut_child.__file__, str(root), segment, str(first_version),
                                 str(whole), "1" if cut else "0"], stdout=subprocess.PIPE, text=True)

    child = record("seg-a", 1, 3, cut=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "cut"
    finally:
        child.kill()
        child.wait(60)
    tail = root / "rollouts" / "seg-a-00000.arrows"
    assert [p.name for p in shard_files(root)] == [tail.name]  # a killed writer's tail stays a tail
    run = open_run(str(root))
    assert run.problems == [] and run.live
    assert [(r.policy_version, r.group_id, r.rollout) for r in run.rows] == [
        (1 + g // 2, g, i) for g in range(3) for i in range(4)]  # the three whole groups, not the cut fourth
    cut_note = f"rollouts/{tail.name}: the last group's rows were cut short (a write stopped by SIGKILL); left out"
    assert cut_note in run.notes

    resumed = record("seg-b", 3, 2, cut=False)
    out, _ = resumed.communicate(timeout=600)
    assert resumed.returncode == 0 and out.strip() == "done"
    both = open_run(str(root))
    assert [s.start.segment for s in both.segments] == ["seg-a", "seg-b"]
    assert both.segments[0].end is None and both.segments[1].end is not None
    assert both.problems == [] and len(both.rows) == 12 + 8 and both.versions() == [1, 2, 3]
    assert {r.segment for r in both.rows if r.policy_version == 3} == {"seg-b"}
    assert [p.name for p in shard_files(root)] == [tail.name, "seg-b-00000.parquet"]  # the resume sealed its own
    capsys.readouterr()
    assert main(["check", str(root)]) == 0
    said = capsys.readouterr().out.splitlines()
    assert not [x for x in said if x.startswith("INVALID")]
    assert [x for x in said if x.startswith("note:")] == [
        "note: a segment has not ended: training is running (or the worker was killed before it could say so)",
        f"note: {cut_note}"]
    assert said[-1].startswith("5 groups, 20 rollouts at policy versions 1..3 in 2 segment(s)")
    assert said[-1].endswith("all valid")


def test_not_a_run_is_said():
    from rollout_trace.artifact import ArtifactError
    from rollout_trace.artifact.run import open_run

    with pytest.raises(ArtifactError, match="not a recorded TRL run"):
        open_run(str(EXAMPLES_DIR / "smollm2-group"))


def test_rollouts_files_read_ahead_are_the_ones_read_one_by_one_and_each_is_taken_once(tmp_path, monkeypatch):
    """`Run.read_ahead` (a group map's rollouts, read at once) gives each rollout the files `files` reads for it
    alone, across shards cut anywhere; each is taken once (a second `files` reads it again), what none took is let
    go of at its end however it ends, and a name of no rollout, or a read that fails, is left for `files`."""
    from rollout_trace.artifact import ArtifactError
    from rollout_trace.artifact.run import MAX_AHEAD, open_run

    root = write_run(tmp_path / "run", bundled_rows(), seal_rows=5)
    ahead, alone = open_run(str(root)), open_run(str(root))
    paths = [p for p in ahead.table.column("path").to_pylist() if p is not None]
    assert len(paths) > 20
    with ahead.read_ahead([*paths[::-1], "groups/nope/rollout-00", paths[0]]):
        assert len(ahead._ahead) == len(paths) <= MAX_AHEAD
        for p in paths:
            assert ahead.files(p) == alone.files(p) and ahead.files(p)
        assert len(ahead._ahead) == 0 and ahead.files(paths[3]) == alone.files(paths[3])
        with pytest.raises(ArtifactError):
            ahead.files("groups/nope/rollout-00")
    with pytest.raises(RuntimeError), ahead.read_ahead(paths[:5]):
        assert len(ahead._ahead) == 5
        raise RuntimeError("the visitor left")
    assert len(ahead._ahead) == 0
    def broken(*a, **k):
        raise OSError("the network went away")
    monkeypatch.setattr(ahead.table, "rows_of", broken)  # the read ahead fails: each rollout is read on its own
    with ahead.read_ahead(paths[:5]):
        assert len(ahead._ahead) == 0
        assert ahead.files(paths[0]) == alone.files(paths[0])


def test_a_rollout_whose_files_give_another_reward_than_its_row_says_so(tmp_path):
    """The recorder writes a row's rewards and its summary.json from TRL's one number: a run changed after it was
    recorded may disagree, and the token view's header (the summary's) then says which numbers the pages count."""
    from rollout_trace.artifact.run import open_run

    rows = bundled_rows()
    first = next(i for i, p in enumerate(rows["path"].to_pylist()) if p)
    kept, path = rows["reward"][first].as_py(), rows["path"][first].as_py()
    run = open_run(reward_changed(tmp_path / "run", path, 1.062))
    told = [n for n in run.open(path).notices if "rewards differ" in n]
    assert told == [f"This rollout's rewards differ between the run and its own files: reward +1.062 in the run's "
                    f"table, {kept:+.3f} in its summary.json (reward_after_penalties). The run page, the index and "
                    "the group map count the table's; this header shows the summary's."]
    others = [p for p in rows["path"].to_pylist() if p and p != path]
    assert all(not any("rewards differ" in n for n in run.open(p).notices) for p in others[:8])
    run.close()


def test_a_synthetic_run_keeps_each_rollouts_own_rewards(tmp_path):
    """bench/make_run.py draws which bundled rollouts a version holds, never their rewards: its group maps and
    token views agree, and the reward still rises and falls over the versions."""
    from bench.make_run import make
    from rollout_trace.artifact.run import open_run

    make(tmp_path / "run", versions=60, groups=2, k=8, rare_every=0)
    run = open_run(tmp_path / "run")
    for r in run.rows[::37]:
        if r.path:
            assert not any("rewards differ" in n for n in run.open(r.path).notices)
    means = {}
    for r in run.rows:
        if r.reward is not None:
            means.setdefault(r.policy_version, []).append(r.reward)
    by_version = [sum(x) / len(x) for _, x in sorted(means.items())]
    assert max(by_version[:15]) - min(by_version[25:40]) > 0.2  # the drawn curve's rise, then its fall
    run.close()
