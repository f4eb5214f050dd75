"""The run as Arrow columns (rollout_trace/artifact/run_table.py): the same numbers as the row reader, filters and
sorts in Arrow, one state read once, a held snapshot that stays one state while the recorder appends and seals (the
sealed shards' columns shared with the next snapshot, never read again), an open tail cut back or rewritten read
again, hostile shards named the same in every view, and any float survived."""

from __future__ import annotations

import json
import math
import os
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from test_run_stats import add_version

from conftest import zip_folder
from rollout_trace.artifact import run_table as rt
from rollout_trace.artifact.run import open_run
from rollout_trace.artifact.run_format import FILES_DIR
from rollout_trace.artifact.run_schema import FILE_PLACE, ROLLOUTS, ROLLOUTS_TABLE
from rollout_trace.artifact.run_shards import (
    HOLE_BYTES,
    RolloutWriter,
    Shard,
    ShardWriter,
    chunk_ranges,
    fetched_first,
    read_columns,
    read_rows,
)
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support.run_places import batch_bytes, placed, shard_reads, write_shard
from support.run_tables import append_group, bundled_consumed, bundled_rows, changed, groups, shard_files, write_run
from viewer.run_stats import version_stats


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", r)
    return r



def test_per_version_aggregates_match_the_row_reader(root):
    t = rt.run_table(root)
    run = open_run(str(root))
    stats = version_stats(run)
    assert len(t) == len(run.rows)
    reward = t.per_version("reward").to_pylist()
    assert [x["version"] for x in reward] == [s.version for s in stats]
    for got, s in zip(reward, stats, strict=True):
        assert got["reward_count"] == s.scored and got["reward_min"] == s.reward_min
        assert got["reward_max"] == s.reward_max and got["reward_mean"] == pytest.approx(s.reward_mean)
    trained = t.per_version("trained", ("sum",)).to_pylist()
    assert [x["trained_sum"] for x in trained] == [s.trained for s in stats]
    tokens = t.per_version("trained_tokens", ("sum",)).to_pylist()
    assert [x["trained_tokens_sum"] for x in tokens] == [sum(r.trained_tokens for r in run.rows if r.policy_version == s.version)
                                                         for s in stats]
    with pytest.raises(rt.RunTableError, match="no column 'nope'"):
        t.per_version("nope")
    with pytest.raises(rt.RunTableError, match="no aggregate"):
        t.per_version("reward", ("median",))


def test_a_page_of_filtered_sorted_rows(root):
    t = rt.run_table(root)
    run = open_run(str(root))
    total, rows = t.page(pc.field("reward") > 0.2, sort=[("reward", "descending"), ("group_id", "ascending")],
                         offset=2, limit=5, columns=["policy_version", "group_id", "reward"])
    want = sorted((r for r in run.rows if r.reward is not None and r.reward > 0.2), key=lambda r: (-r.reward, r.group_id))
    assert total == len(want) and [(x["reward"], x["group_id"]) for x in rows] == [(r.reward, r.group_id) for r in want[2:7]]
    assert t.page(limit=3)[0] == len(run.rows) and len(t.page(limit=3)[1]) == 3


def test_one_read_per_state_and_the_sealed_shards_shared(root, monkeypatch):
    first = rt.run_table(root)
    assert rt.run_table(root) is first  # a cached reopen is a lookup
    before = first.per_version("reward")
    assert first.per_version("reward") is before  # once per state
    sealed = {p.name for p in shard_files(root)}
    reads = shard_reads(monkeypatch)
    add_version(root, 5)
    t = rt.run_table(root)
    assert t is not first and len(t) == 56 and len(first) == 52  # a new state, a new snapshot
    after = t.per_version("reward").to_pylist()
    assert [x["version"] for x in after] == [1, 2, 3, 4, 5] and after[:4] == before.to_pylist()
    assert reads and not sealed & set(reads)  # the new tail read, the sealed shards' columns shared
    assert rt.run_table(root) is t


def test_a_held_snapshot_stays_while_the_recorder_appends_and_seals(tmp_path, monkeypatch):
    """A followed run growing while it is read: the snapshot a reader holds gives the same rows, numbers and
    problems after the recorder appended a group and sealed the tail it read (gone by then); `run_table(folder)`
    gives a new snapshot with the new rows, and the sealed shards' columns are read once and shared by every
    snapshot of the run (its ShardCache), never read again."""
    rows = bundled_rows()
    *earlier, fifth, sixth = groups(rows)
    segment = sixth["segment"][0].as_py()
    root = write_run(tmp_path / "run", pa.concat_tables(earlier), seal_rows=8)
    sealed = {p.name for p in shard_files(root)}
    recorder = RolloutWriter(root, segment, seal_rows=8, files_seal_rows=8)
    recorder.append(fifth)  # the segment's writer goes on: into its open tail
    tail = recorder.rollouts.tail
    assert tail.exists() and tail.name not in sealed

    held = rt.run_table(root)
    columns = ["segment", "group_id", "rollout", "reward", "trainer_tokens", "dropped"]
    n = len(held)
    seen = held.take(np.arange(n), columns).to_pylist()
    stats, problems = version_stats(held), held.problems()
    assert n == rows.num_rows - 4 and problems == []
    assert held.follow() is None and rt.run_table(root) is held

    reads = shard_reads(monkeypatch)
    recorder.append(sixth)  # 8 rows in the tail: sealed into the shard of its number, the tail removed
    shard = root / "rollouts" / tail.name.replace(".arrows", ".parquet")
    assert not tail.exists() and shard.exists()
    later = rt.run_table(root)
    assert later is not held and len(later) == rows.num_rows and later.problems() == []
    assert later._cache is held._cache  # one cache of sealed shards' columns for every snapshot of the run
    assert later.take(np.arange(rows.num_rows), ["group_id"])["group_id"].to_pylist() == rows["group_id"].to_pylist()
    recorder.append(placed(sixth, group_id=99))  # the next tail
    latest = rt.run_table(root)
    assert len(latest) == rows.num_rows + 4 and latest.take(np.array([len(latest) - 1]), ["group_id"])[
        "group_id"].to_pylist() == [99]
    later.take(np.arange(len(later)), columns), latest.take(np.arange(len(latest)), columns)
    assert reads and not sealed & set(reads), reads  # only what the recorder wrote since is read

    # the held snapshot: the same rows, numbers and problems; a column it reads now, and a rollout's files, come
    # from the shard the recorder sealed its tail into
    assert len(held) == n and held.take(np.arange(n), columns).to_pylist() == seen
    assert held.take(np.arange(n), ["recorded_at"])["recorded_at"].to_pylist() == \
        rows["recorded_at"].to_pylist()[:n]
    assert version_stats(held) == stats and held.problems() == problems
    assert held.rollout_files(n - 1, ["file_summary"])["file_summary"] == rows["file_summary"][n - 1].as_py()
    assert held.rows_of(np.arange(n - 4, n), ["text"])["text"].to_pylist() == rows["text"].to_pylist()[n - 4:n]
    mark = len(reads)
    later.column("recorded_at")  # the held snapshot read it from the sealed shards: shared, not read again
    assert not sealed & set(reads[mark:]), reads[mark:]


def test_a_cut_back_or_rewritten_tail_is_read_again(tmp_path):
    """An open tail cut back (a group gone), written again whole, or rewritten in place at the same size with
    other content is read again whole: the rows and values of what is there now, no false problem."""
    rows = bundled_rows()
    root = write_run(tmp_path / "run", rows, tail=True)
    t = rt.run_table(root)
    tail = shard_files(root)[-1]
    whole = tail.read_bytes()
    fewer = write_run(tmp_path / "fewer", pa.concat_tables(groups(rows)[:-1]), tail=True, small_files=False)
    tail.write_bytes(shard_files(fewer)[-1].read_bytes())
    cut = t.follow()
    assert cut is not None and len(cut) == 48 and len(t) == 52 and cut.problems() == []
    tail.write_bytes(whole)
    back = cut.follow()
    assert back is not None and len(back) == 52
    at = rows.num_rows - 1
    rewards = rows["reward"].to_pylist()
    rewards[at] = 0.5 if rewards[at] != 0.5 else 0.25
    same = shard_files(write_run(tmp_path / "other", changed(rows, reward=rewards), tail=True,
                                 small_files=False))[-1].read_bytes()
    assert len(same) == len(whole) and same != whole
    st = tail.stat()
    tail.write_bytes(same)
    os.utime(tail, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = back.follow()
    assert again is not None and len(again) == 52 and again.problems() == []
    rid = rows["rollout_id"][at].as_py()
    assert again.page(pc.field("rollout_id") == rid, limit=1)[1][0]["reward"] == rewards[at]


@pytest.mark.parametrize("extreme", [1.7976931348623157e308, math.nan, math.inf])
def test_any_float_survives(tmp_path, extreme):
    rows = bundled_rows()
    root = write_run(tmp_path / "run", changed(rows, reward=[extreme if i % 2 else 1.7976931348623157e308
                                                             for i in range(rows.num_rows)]))
    got = rt.run_table(root).per_version("reward").to_pylist()
    assert len(got) == 4
    for v in got:
        assert v["reward_mean"] is None or math.isfinite(v["reward_mean"])
        assert v["reward_max"] is None or math.isfinite(v["reward_max"])


def test_a_file_that_is_not_a_shard_costs_only_itself(root):
    seg = bundled_rows()["segment"][0].as_py()
    (root / "rollouts" / f"{seg}-00007.parquet").write_bytes(b'{"segment": 3}\n')
    (root / "rollouts" / "notes.txt").write_text("not a shard")
    t = rt.run_table(root)
    assert len(t) == 52
    [problem] = t.problems()
    assert problem.file == f"rollouts/{seg}-00007.parquet" and "cannot be read as a Parquet file" in problem.message
    assert "rollouts/ holds 1 file(s) that are not shards of the run; left out (notes.txt)" in t.notes
    with pytest.raises(rt.RunTableError, match="not a recorded run"):
        rt.run_table(root / "rollouts")


def test_per_version_as_plain_rows(root):
    rows = rt.per_version(root, "timed_out", ("sum", "count"))
    run = open_run(str(root))
    assert [r["timed_out_sum"] for r in rows] == [sum(x.timed_out for x in run.rows if x.policy_version == r["version"])
                                                  for r in rows]


def test_names_in_a_shard_are_never_used_and_places_outside_the_run_are_left_out(tmp_path):
    """A row is data: its `group` and `path` naming `../../etc` are never used (a rollout's names are made from
    its place: run_table.py `_names`), a row whose place is not one the recorder writes (a segment `../../etc`, a
    group id below 0, a version, group id or index past its bound) is left out and named, and a shard that is a symbolic link is not followed."""
    rows = bundled_rows()
    paths, names = rows["path"].to_pylist(), rows["group"].to_pylist()
    for i in range(2):
        paths[i] = names[i] = "../../etc"
    root = write_run(tmp_path / "run", changed(rows, path=paths, group=names))
    seg = rows["segment"][0].as_py()
    outside = pa.concat_tables([changed(rows.slice(4, 1), segment=["../../etc"]),
                                changed(rows.slice(5, 1), group_id=[-1]),
                                changed(rows.slice(6, 1), policy_version=[2**53 + 1]),  # each first past its bound
                                changed(rows.slice(7, 1), group_id=[2**34]),
                                changed(rows.slice(8, 1), rollout=[2**16])])
    write_shard(root, f"{seg}-00001.parquet", outside)
    (root / "rollouts" / f"{seg}-00009.parquet").symlink_to("/etc/passwd")
    t = rt.run_table(root)
    run = open_run(str(root))
    assert len(t) == len(run.rows) == 52 and version_stats(t) == version_stats(run)
    shown = {r.path for r in run.rows} | {r.group for r in run.rows}
    assert not any(".." in (x or "") for x in shown)
    assert {run.rows[0].group, run.rows[0].path} == {rows["group"][0].as_py(), rows["path"][0].as_py()}
    said = [str(p) for p in t.problems()]
    left = [p for p in said if "a rollout's place in the run is not one the recorder writes; left out" in p]
    assert len(left) == 5 and all(p.startswith(f"rollouts/{seg}-00001.parquet") for p in left)
    assert "'../../etc'" in left[0] and "group -1" in left[1]
    assert f"version {2**53 + 1}" in left[2] and f"group {2**34}" in left[3] and f"rollout {2**16}" in left[4]
    assert any(p.startswith(f"rollouts/{seg}-00009.parquet: cannot be read") and "symbolic link" in p for p in said)
    assert not any("root:" in p for p in said)


@pytest.mark.parametrize("seal_rows", [1, 5])
def test_shards_and_row_groups_cut_anywhere_read_the_same_rows(tmp_path, seal_rows):
    """A run sealed into many small shards (a group, or two, each), their Parquet row groups of 3 rows cutting
    groups anywhere: every column, every rollout's files, the fates and the consumption table are the bundled
    run's."""
    whole = rt.run_table(EXAMPLES_DIR / "trl-run")
    root = write_run(tmp_path / "run", bundled_rows(), seal_rows=seal_rows)
    for part in shard_files(root) + shard_files(root, FILES_DIR):  # both tables' sealed shards
        pq.write_table(pq.read_table(part), part, row_group_size=3)
    assert len(shard_files(root)) > 2
    small = rt.run_table(root)
    every = np.arange(len(whole))
    assert len(small) == len(whole) == 52
    assert small.take(every).to_pylist() == whole.take(every).to_pylist()  # index and fate columns
    assert small.queued(every) == whole.queued(every) and small.fates().equals(whole.fates())  # TRL rows, fates
    outcomes = {r: [(q.fate, q.step) for q in qs] for r, qs in whole.queued(every).items()}
    assert {r: [(o.fate, o.step) for o in os] for r, os in small.outcomes(every).items()} == outcomes  # a group cell's
    assert len({f for rows in outcomes.values() for f, _ in rows}) >= 3
    assert small.consumed.to_pylist() == whole.consumed.to_pylist() and small.consumed.num_rows
    columns = [c for c in ROLLOUTS.names if c not in FILE_PLACE]  # where the files sit differs, not what they are
    assert small.rows_of(every[::-1], columns).to_pylist() == whole.rows_of(every[::-1], columns).to_pylist()
    assert small.rollout_files(37, ["file_trace"]) == whole.rollout_files(37, ["file_trace"])


def test_what_a_page_reduces_shard_by_shard_is_the_whole_runs(tmp_path):
    """The reductions a page makes of the whole run one shard at a time (each group's numbers and first
    rollout, the per-version numbers, the tasks to follow, the findings' rules, the tools, the rollouts recorded
    without files) are the
    same when the shards cut groups anywhere (three rows a shard: a group's partial numbers add up), and keep no
    column of every rollout in the snapshot."""
    from viewer.find.columns import RunFind
    from viewer.index.run_index import run_index
    from viewer.run_stats import recorder_notes, task_choices, version_stats

    rows = bundled_rows()
    root = write_run(tmp_path / "run", rows.slice(0, 0), small_files=True)
    seg_of = rows["segment"].to_pylist()
    at, number = 0, {}
    while at < rows.num_rows:  # three rows a shard, cut within a segment wherever that falls
        seg = seg_of[at]
        end = at
        while end < rows.num_rows and end - at < 3 and seg_of[end] == seg:
            end += 1
        number[seg] = number.get(seg, -1) + 1
        write_shard(root, f"{seg}-{number[seg]:05d}.parquet", rows.slice(at, end - at))
        at = end
    whole, cut = rt.run_table(EXAMPLES_DIR / "trl-run"), rt.run_table(root)
    assert len(shard_files(root)) > 10 and len(cut) == len(whole) == 52
    assert run_index(cut).groups.to_pylist() == run_index(whole).groups.to_pylist()
    for t in (cut, whole):  # each group's numbers held once: one row a group, its index row made of its columns
        kept, shown = t.reduced("index_groups"), run_index(t).groups
        assert kept.num_rows == shown.num_rows == 13
        assert kept["title"].chunk(0).buffers()[-1].address == shown["title"].chunk(0).buffers()[-1].address
    assert task_choices(cut) == task_choices(whole) and task_choices(whole)
    assert list(RunFind(cut).row_bits()) == list(RunFind(whole).row_bits())
    assert recorder_notes(cut) == recorder_notes(whole)
    assert version_stats(cut) == version_stats(whole) and len(version_stats(whole)) == 4  # versions and groups cut
    parts = list(cut.shard_tables(["title", "reward"]))
    assert [start for start, _ in parts] == list(np.cumsum([0] + [p.num_rows for _, p in parts[:-1]]))
    assert pa.concat_tables([p for _, p in parts])["title"].to_pylist() == whole.column("title").to_pylist()
    assert not [k for k in cut._memo if k in ("col:title", "col:task_id", "col:findings", "col:tools",
                                              "col:env_reward", "col:advantage", "col:status")]
    assert cut.column("reward").equals(whole.column("reward"))  # kept by the per-version pass: the groups read it
    with pytest.raises(rt.RunTableError, match="no column 'path' to read shard by shard"):
        next(cut.shard_tables(["path"]))
    # a zip never grows: what was reduced is not kept for a next snapshot either
    zipped = open_run(str(zip_folder(root, tmp_path / "run.zip", prefix="run"))).table
    assert task_choices(zipped) == task_choices(whole) and run_index(zipped).groups.num_rows
    kept = {k[-1] for k in zipped._cache._got}
    assert not kept & {"title", "task_id", "findings", "tools", "recorded_at"}, kept
    # nor an ended local run (at a million rollouts ~235 MB held for no next snapshot); a local run still being
    # recorded keeps them, so its next snapshot reads only what the recorder wrote since
    kept = {k[-1] for k in cut._cache._got}
    assert not cut.run_files.live and not kept & {"title", "task_id", "findings", "tools", "recorded_at"}, kept
    shutil.copytree(root, tmp_path / "live")
    for end in (tmp_path / "live" / "segments").glob("*.end.json"):
        end.unlink()
    live = rt.run_table(tmp_path / "live")
    assert live.run_files.live and task_choices(live) == task_choices(whole)
    assert run_index(live).groups.to_pylist() == run_index(whole).groups.to_pylist()
    assert {"title", "task_id", "tools"} <= {k[-1] for k in live._cache._got}
    # every reduction in one pass, the rollouts' fates made in it: each shard read once for all of them (on the Hub
    # a read is a request), and no TRL rows held
    fresh = open_run(str(zip_folder(root, tmp_path / "again.zip", prefix="run"))).table
    fresh.group_keys(), fresh.column("policy_version")  # what the reductions begin from
    before = fresh._cache.reads
    assert run_index(fresh).groups.to_pylist() == run_index(whole).groups.to_pylist()
    assert fresh._cache.reads - before == len(fresh.shards)
    assert fresh.fates().equals(whole.fates()) and fresh.unrecorded_trained().equals(whole.unrecorded_trained())
    assert not [k for k in fresh._memo if k in ("col:row_ordinal", "col:row_trained_tokens")]
    assert task_choices(fresh) == task_choices(whole) and recorder_notes(fresh) == recorder_notes(whole)
    assert list(RunFind(fresh).row_bits()) == list(RunFind(whole).row_bits())
    assert fresh._cache.reads - before == len(fresh.shards)
    with pytest.raises(rt.RunTableError, match="no reduction 'nothing'"):
        fresh.reduced("nothing")
    with pytest.raises(rt.RunTableError, match="keeps 'advantage'"):  # a kept column is one its pass reads
        rt.register("nothing", rt.Reduction(("reward",), lambda t: (lambda s, p: None, lambda: None),
                                            keep=("advantage",)))


# -- hostile shards -------------------------------------------------------------------------------------


def _invalid_utf8(strings: list[str], at: int, raw: bytes) -> pa.Array:
    """A string column whose value `at` is the bytes `raw` (not UTF-8): built from buffers, as a writer that does
    not check would leave it (Arrow's own cast refuses such bytes)."""
    values = [s.encode() for s in strings]
    values[at] = raw
    offsets = np.cumsum([0] + [len(v) for v in values]).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets.tobytes()),
                                                            pa.py_buffer(b"".join(values))])


def test_hostile_shards_are_named_the_same_in_every_view(tmp_path, capsys):
    """A run with (a) a rollout recorded twice, (b) a shard whose column holds another type, (c) a title that is
    not UTF-8 and (d) a tail whose last group's batch was cut short: the run page's per-version counts, the run's
    index table, `viewer ls --json` and `open_run(...).rows` count the same rows, and `problems()` names each
    problem once, by file, field, expected and found (the cut batch is a note, named once)."""
    from viewer.cli import main
    from viewer.index.run_index import build_run_page

    rows = bundled_rows()
    gs = groups(rows)
    seg_a, seg_b = gs[0]["segment"][0].as_py(), gs[-1]["segment"][0].as_py()
    root = write_run(tmp_path / "run", rows)
    shards = root / "rollouts"
    # (a) rollout 1 of group 0 again, in a shard of its own (its reward other: the first one stands)
    twice = changed(gs[0].slice(1, 1), reward=[-5.0])
    write_shard(root, f"{seg_a}-00001.parquet", twice)
    # (b) a group whose agent_turns are lists (a type that does not convert to the table's)
    typed = placed(gs[1], group_id=900)
    typed = typed.set_column(typed.schema.get_field_index("agent_turns"), "agent_turns",
                             pa.array([[3]] * typed.num_rows, pa.list_(pa.int64())))
    write_shard(root, f"{seg_a}-00002.parquet", typed)
    # (c) a group one of whose titles is not UTF-8
    text = placed(gs[2], group_id=901)
    titles = text["title"].to_pylist()
    text = text.set_column(text.schema.get_field_index("title"), ROLLOUTS.field("title"),
                           _invalid_utf8(titles, 2, b"caf\xe9 \xff"))
    write_shard(root, f"{seg_a}-00003.parquet", text)
    # (d) segment b's tail: one whole group, and the next one's batch cut short
    tail = shards / f"{seg_b}-00001.arrows"
    writer = ShardWriter(shards, seg_b, ROLLOUTS_TABLE)
    assert writer.tail == tail
    writer.append(placed(gs[-1], group_id=902).select(ROLLOUTS_TABLE.names))
    writer._file.close()  # type: ignore[union-attr]  # killed: no end of stream
    batch = batch_bytes(placed(gs[-1], group_id=903))
    with tail.open("ab") as f:
        f.write(batch[: len(batch) // 2])

    stand = rows.num_rows + text.num_rows + 4  # (a) kept once, (b) left out, (c) replaced, (d) its whole group
    groups_standing = len(gs) + 2
    with_path = stand - sum(p is None for p in rows["path"].to_pylist() + text["path"].to_pylist()) - \
        sum(p is None for p in gs[-1]["path"].to_pylist())

    t = rt.run_table(root)
    run = open_run(str(root))
    stats = version_stats(t)
    assert len(t) == len(run.rows) == sum(s.rollouts for s in stats) == stand
    assert sum(s.groups for s in stats) == groups_standing == len(run.groups)
    assert version_stats(run) == stats
    assert next(r.reward for r in run.rows if (r.segment, r.group_id, r.rollout) == (seg_a, 0, 1)) == \
        gs[0]["reward"][1].as_py()  # the first one stands
    assert not any(r.group_id == 900 for r in run.rows)
    assert sorted(r.title for r in run.rows if r.group_id == 901)[0] == sorted(
        [*titles[:2], "caf\ufffd \ufffd", *titles[3:]])[0]
    page = build_run_page(t, str(root), {}, 1)
    assert page.total == groups_standing + with_path
    assert page.unlisted == stand - with_path > 0  # the head's rollouts the index has no row for, counted for it
    assert build_run_page(t, str(root), {"kind": "group"}, 1).matched == groups_standing
    assert build_run_page(t, str(root), {"kind": "artifact"}, 1).matched == with_path
    capsys.readouterr()
    assert main(["ls", str(root), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["total"] == len(listed["records"]) == groups_standing + stand
    assert sum(r["kind"] == "artifact" for r in listed["records"]) == stand

    cut = f"rollouts/{tail.name}: the last group's rows were cut short (a write stopped by SIGKILL); left out"
    for view in (t, run.table):
        found = {(p.file, p.field, p.expected, p.found) for p in view.problems()}
        assert len(view.problems()) == len(found) == 3, view.problems()
        assert found == {
            (f"rollouts/{seg_a}-00001.parquet", f"segment {seg_a} group 0 rollout 1", "once", "2 times"),
            (f"rollouts/{seg_a}-00002.parquet", "agent_turns", "int64", "list<element: int64>"),
            (f"rollouts/{seg_a}-00003.parquet", "title", "UTF-8", "1 invalid value(s)"),
        }
        assert view.notes.count(cut) == 1
    said = "\n".join(listed["problems"] + listed["notes"])
    for p in t.problems():
        assert said.count(str(p)) == 1, (str(p), said)
    assert said.count(cut) == 1
    # the recorder appends a group: the next snapshot shares the sealed shards' columns, and names the same
    append_group(root, placed(gs[3], group_id=904), tail=True)
    later = rt.run_table(root)
    assert later is not t and len(later) == stand + 4
    later.columns(["title", "reward", "agent_turns"])
    assert sorted(map(str, later.problems())) == sorted(map(str, t.problems())) and later.notes.count(cut) == 1


def test_a_rollout_written_twice_in_a_row_stands_once(tmp_path):
    """A run whose rows are in key order reads which stand without a sort (run_table.py `_stand`); a rollout written
    again right after itself (equal keys side by side) is still found and named, and its first copy stands."""
    rows = bundled_rows()
    again = rows.slice(0, 1)
    again = again.set_column(again.schema.get_field_index("reward"), "reward", pa.array([-123.0]))
    root = write_run(tmp_path / "run", pa.concat_tables([rows.slice(0, 1), again, rows.slice(1)]))
    t = rt.run_table(root)
    assert len(t) == rows.num_rows
    assert t.column("reward").to_pylist() == rows["reward"].to_pylist()
    x = rows.slice(0, 1).to_pylist()[0]
    assert [(p.field, p.expected, p.found) for p in t.problems()] == [
        (f"segment {x['segment']} group {x['group_id']} rollout {x['rollout']}", "once", "2 times")]


def test_the_shared_snapshots_keep_their_bound_and_forget_evicted_runs_locks(tmp_path):
    """rollout_trace/artifact/run_table.py `run_table` keeps MAX_TABLES runs (the bounded map's), and an evicted run's
    open lock goes with it."""
    import shutil

    from rollout_trace.artifact.sources import EXAMPLES_DIR

    folders = []
    for k in range(rt.MAX_TABLES + 2):
        folders.append(tmp_path / f"run{k}")
        shutil.copytree(EXAMPLES_DIR / "trl-run", folders[-1])
        rt.run_table(folders[-1])
    kept = [f.resolve() for f in folders if rt._cache.peek(f.resolve()) is not None]
    assert kept == [f.resolve() for f in folders[-rt.MAX_TABLES:]]
    assert not {f.resolve() for f in folders[:2]} & set(rt._open_locks)


class _Asked:
    """A file over the network as a Parquet reader sees it: each read is a request, recorded as (offset, size)."""

    def __init__(self, data: bytes):
        self.f = pa.BufferReader(data)
        self.asked: list[tuple[int, int]] = []

    def read(self, n: int = -1) -> bytes:
        at = self.f.tell()
        got = self.f.read(n)
        self.asked.append((at, len(got)))
        return got

    def seek(self, pos: int, whence: int = 0) -> int:
        return self.f.seek(pos, whence)

    def tell(self) -> int:
        return self.f.tell()

    def size(self) -> int:
        return self.f.size()

    closed = False

    def close(self) -> None:
        self.closed = True


def test_a_read_over_the_network_asks_for_its_column_chunks_in_one_range(tmp_path):
    """A Parquet reader asks for each column chunk (joined across gaps of 8 KiB): over the network a shard's
    columns are fetched first as one range where the gaps between them are small (`fetched_first`), the footer
    given is not read again, the rows are the same, and no range reaches past the file's size (a footer may
    claim any offset)."""
    rng = np.random.default_rng(0)
    n = 20_000  # the advantages between the two columns read: ~160 kB that do not compress
    local = pa.table({"reward": pa.array(np.arange(n) % 7 / 7), "advantage": pa.array(rng.standard_normal(n)),
                      "title": pa.array([f"task {i % 13}" for i in range(n)])})
    path = tmp_path / "s-00000.parquet"
    pq.write_table(local, path, compression="zstd")
    data = path.read_bytes()
    shard = Shard(path.name, "s", 0, True, len(data))
    columns = ("reward", "title")
    opened: list[_Asked] = []

    def open_file(_: str) -> pa.PythonFile:
        opened.append(_Asked(data))
        return pa.PythonFile(opened[-1], mode="r")

    first = read_columns(open_file, path.name, shard, ROLLOUTS, columns)
    assert not first.problems
    again = read_columns(open_file, path.name, shard, ROLLOUTS, columns, metadata=first.metadata)
    assert len(opened[-1].asked) == 1  # both chunks in one request, the footer not read again
    for c in columns:
        assert again.table[c].to_pylist() == first.table[c].to_pylist() == local[c].to_pylist()
    rows = read_rows(open_file, path.name, shard, [0, 3, n - 1], ["reward", "title"], metadata=first.metadata)
    assert len(opened[-1].asked) == 1 and rows.to_pylist() == local.take([0, 3, n - 1]).select(columns).to_pylist()

    every = range(first.metadata.num_row_groups)
    apart = chunk_ranges(first.metadata, columns, every, len(data), hole=0)
    assert len(apart) == 2 and apart[1][0] - apart[0][1] > 100_000  # what a reader would ask for in two
    assert chunk_ranges(first.metadata, columns, every, len(data)) == [(apart[0][0], apart[1][1])]
    assert HOLE_BYTES > apart[1][0] - apart[0][1]
    cut = apart[0][0] + 10
    assert chunk_ranges(first.metadata, columns, every, cut) == [(apart[0][0], cut)]
    # a read the ranges do not hold goes to the file itself
    source = fetched_first(asked := _Asked(data), [(4, 20)])
    source.seek(10)
    assert source.read(5) == data[10:15] and asked.asked == [(4, 16)]
    source.seek(len(data) - 8)
    assert source.read(8) == data[-8:] and asked.asked[-1] == (len(data) - 8, 8)
    assert fetched_first(buffer := pa.BufferReader(data), [(4, 20)]) is buffer  # in memory: read as it is


def test_shards_read_several_at_once_come_in_order_within_the_request_s_budget():
    """A Hub run's shards are read FETCHES at once (`in_order`): each read in the request's context (its budget
    counts what they read), the results in the shards' order, an error raised in its turn; a local run's one after
    another on the caller's thread."""
    import threading

    from rollout_trace.artifact.budget import Budget, bounded, current

    together = threading.Barrier(3, timeout=120)

    def read(i: int) -> tuple[int, object]:
        if i in (1, 2, 3):
            together.wait()  # three reads at once, or this one waits out the timeout and breaks the barrier
        return i, current()

    with bounded(Budget(max_bytes=1, max_files=1, max_rows=1, seconds=60.0)) as mine:
        got = list(rt.in_order(read, range(7), 4))
    assert [i for i, _ in got] == list(range(7)) and all(b is mine for _, b in got)

    def failing(i: int) -> int:
        if i == 3:
            raise ValueError("shard 3")
        return i

    results = rt.in_order(failing, range(7), 4)
    assert [next(results) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="shard 3"):
        next(results)
    threads: set[int] = set()
    assert list(rt.in_order(lambda i: threads.add(threading.get_ident()) or i, range(4), 1)) == [0, 1, 2, 3]
    assert threads == {threading.get_ident()}
    assert rt.FETCHES > 1


def test_training_row_lists_of_another_length_are_named_not_raised(root):
    """A rollout's training rows are parallel lists (`row_ordinal`, `row_trained_tokens`, `row_tokens`,
    `row_turns`); a hostile shard's of different lengths raised (ArrowInvalid, IndexError) in every page. Now a
    rollout whose trained-token list does not match its ordinals has no rows in any view, one whose token or turn
    list is short has its rows with that value missing, and each is named with its file, row and field."""
    path = sorted((root / "rollouts").glob("*.parquet"))[0]
    t = pq.read_table(path)
    ordinals = t["row_ordinal"].to_pylist()
    with_rows = [i for i, o in enumerate(ordinals) if o]
    a, b = with_rows[0], with_rows[1]
    ordinals[a] = [*ordinals[a], 10**6]
    tokens = t["row_tokens"].to_pylist()
    tokens[b] = tokens[b][:-1]
    t = t.set_column(t.schema.get_field_index("row_ordinal"), "row_ordinal", pa.array(ordinals, t["row_ordinal"].type))
    t = t.set_column(t.schema.get_field_index("row_tokens"), "row_tokens", pa.array(tokens, t["row_tokens"].type))
    pq.write_table(t, path)

    table = rt.run_table(str(root))
    assert sum(s.rollouts for s in version_stats(table)) == len(table)
    ra, rb = (int(np.flatnonzero(table.positions(0) == i)[0]) for i in (a, b))
    assert table.fates()["dropped"][ra].as_py() == "no rows"
    got = table.queued([ra, rb])
    assert ra not in got and len(got[rb]) == len(ordinals[b]) and got[rb][-1].tokens == 0
    said = {p.field: p for p in table.problems() if "differ in length" in p.message}
    # the rollout with one more ordinal than its other lists: each of them named
    assert set(said) == {f"row {a} row_trained_tokens", f"row {a} row_tokens", f"row {a} row_turns",
                         f"row {b} row_tokens"}
    p = said[f"row {a} row_trained_tokens"]
    assert p.file == f"rollouts/{path.name}" and "left out" in p.message
    assert (p.expected, p.found) == (f"{len(ordinals[a])} values (one per row_ordinal)", f"{len(ordinals[a]) - 1}")


def test_text_codes_are_the_same_through_one_dictionary_or_one_per_chunk():
    """`codes_in` of a run's column: chunks of one dictionary each (a shard's row groups) are looked up through one
    dictionary made of them all; nulls, empty chunks, values not asked for and plain chunks give what a lookup of
    each value gives."""
    from rollout_trace.artifact.run_columns import codes_in

    values = [["x", None, "y"], [], ["z", "y", None, "q"], ["x"] * 3]
    names = ["y", "z", "x"]
    plain = [names.index(v) if v in names else -1 for chunk in values for v in chunk]
    encoded = pa.chunked_array([pa.array(v, pa.string()).dictionary_encode() for v in values])
    assert codes_in(encoded, names).tolist() == plain
    assert codes_in(pa.chunked_array([pa.array(v, pa.string()) for v in values]), names).tolist() == plain
    mixed = pa.chunked_array([pa.array(v, pa.string()).dictionary_encode() for v in values[:2]])
    assert codes_in(mixed, names).tolist() == plain[:3] and codes_in(encoded, []).tolist() == [-1] * len(plain)
    assert codes_in(encoded.chunk(0), names).tolist() == plain[:3]


@pytest.mark.parametrize("far", [False, True])
def test_trained_rows_no_rollout_holds_are_found_by_segment_and_ordinal(far):
    """`unrecorded` (what `unrecorded_trained` reads): a row asked for is unrecorded unless a held row has its
    segment and ordinal; one of a segment the rollouts do not name (-1) or without an ordinal (-1) is held by
    none. The same by array index and, with an ordinal far past the rows (a hostile table's), by a sorted
    search; with one segment and with three."""
    from rollout_trace.artifact.run_fates import unrecorded

    rng = np.random.default_rng(7)
    for segments in (1, 3):
        held_seg = rng.integers(0, segments, 400)
        held = rng.integers(-1, 300, 400)
        asked_seg = np.r_[rng.integers(0 if segments == 1 else -1, segments, 500), [0, 0]]  # one: every row of one
        asked = np.r_[rng.integers(-1, 320, 500), [-1, 2**40 if far else 5]]
        pairs = {(s, o) for s, o in zip(held_seg.tolist(), held.tolist(), strict=True) if o >= 0}
        plain = [s < 0 or o < 0 or (s, o) not in pairs for s, o in zip(asked_seg.tolist(), asked.tolist(), strict=True)]
        got = unrecorded(held_seg, held, asked_seg, asked)
        assert got.tolist() == plain and 0 < got.sum() < len(asked)
    assert unrecorded(np.zeros(0, np.int64), np.zeros(0, np.int64), np.array([0]), np.array([3])).tolist() == [True]
    assert unrecorded(np.zeros(2, np.int64), np.array([1, 2]), np.zeros(0, np.int64), np.zeros(0, np.int64)).size == 0


def _plain_fate(last: dict, names: list[str], ends: dict[str, int], logged: set[str], seg: int,
                ordinal: int) -> tuple[str, int | None]:
    """A TRL row's fate and step read plainly: its segment's last consumption row of its ordinal (past 32 bits read
    as the largest), else in the queue past what the trainer took, or while its segment's log is open."""
    hit = last.get((seg, min(ordinal, 2**31 - 1))) if seg >= 0 and ordinal >= 0 else None
    if hit is not None:
        return hit[0], hit[1] if hit[0] == "trained" else None
    if seg < 0:
        return "unknown", None
    name = names[seg]
    if name in ends:
        return ("in-queue" if ordinal >= ends[name] else "unknown"), None
    return ("in-queue" if name in logged else "unknown"), None


@pytest.mark.parametrize("far", [False, True])
def test_a_training_rows_fate_is_its_segments_last_consumption_row_of_its_ordinal(far):
    """`FateLookup` (what every rollout's fate and a page's few rows' fates are looked up in): a TRL row's fate and
    step are those of the last consumption row of its segment and ordinal; a row with none is "in-queue" past what
    the trainer took and "unknown" before it, or "in-queue" in a segment whose log is open and "unknown" in one
    without a log; a row of no segment (-1) or without an ordinal is unknown. The same by array index and, with an
    ordinal far past the rows (a hostile table's), by a sorted search; with one segment and with three; asked for
    all at once or a few rows at a time."""
    from rollout_trace.artifact.run_fates import FATES, FateLookup
    from rollout_trace.artifact.run_files import RunFiles

    rng = np.random.default_rng(11)
    fates = ["trained", "stale", "oversize", "read-ahead"]
    for segments in (1, 3):
        names = [f"s{k}" for k in range(segments)]
        n = 600
        c_seg = rng.integers(0, segments, n)
        c_ord = np.r_[rng.integers(0, 300, n - 1), [2**40 if far else 7]]
        c_fate = rng.integers(0, len(fates), n)
        c_step = rng.integers(0, 50, n)
        consumed = pa.table({"segment": pa.array([names[k] for k in c_seg]), "ordinal": c_ord,
                             "fate": pa.array([fates[k] for k in c_fate]), "step": c_step})
        last = {}
        for s_, o, f, st in zip(c_seg.tolist(), c_ord.tolist(), c_fate.tolist(), c_step.tolist(), strict=True):
            last[(s_, min(o, 2**31 - 1))] = (fates[f], st)  # later rows win; past 32 bits read as the largest
        files = RunFiles(ends={"s0": 250})  # s0's trainer took 250 rows; s1's log is open; s2 has none
        logged = {"s0", "s1"}
        seg = np.r_[rng.integers(-1 if segments > 1 else 0, segments, 800), [0, 0]].astype(np.int32)
        ordinal = np.r_[rng.integers(-1, 320, 800), [2**40 if far else 7, 299]]

        lookup = FateLookup(consumed, names)
        expected = [_plain_fate(last, names, files.ends, logged, s_, o)
                    for s_, o in zip(seg.tolist(), ordinal.tolist(), strict=True)]
        whole = lookup.rows(pa.table({"segment": seg, "ordinal": ordinal}), logged, files)
        assert list(zip(whole["fate"].to_pylist(), whole["step"].to_pylist(), strict=True)) == expected
        for a in range(0, len(seg), 97):  # a few rows at a time (a page's), the same answers
            few = lookup.rows(pa.table({"segment": seg[a:a + 97], "ordinal": ordinal[a:a + 97]}), logged, files)
            assert list(zip(few["fate"].to_pylist(), few["step"].to_pylist(), strict=True)) == expected[a:a + 97]
        assert {f for f, _ in expected} >= {"trained", "unknown", "in-queue"} and set(FATES) >= {f for f, _ in expected}


def test_the_index_rows_order_is_the_same_from_rows_in_order_or_not(tmp_path, monkeypatch):
    """The run's index rows (each group, then its rollouts; by segment, version, group id, index) are in the same
    order whether the rows lie in it as recorded (placed without a sort) or not: written in reverse, and with one
    group's version set below its predecessor's (the groups' number order then is not their version order)."""
    from viewer.index import run_index as module

    placed: list[bool] = []
    in_order = module._in_order
    monkeypatch.setattr(module, "_in_order", lambda *a: placed.append((got := in_order(*a)) is not None) or got)

    def paths(t: rt.RunTable) -> list[str]:
        return module._values(t, module.run_index(t), "path").to_pylist()

    rows = bundled_rows()
    ordered = rt.run_table(write_run(tmp_path / "ordered", rows))
    expected = paths(ordered)
    assert len(expected) > len(ordered) and expected == sorted(expected)  # names sort as the numbers do here
    backwards = rt.run_table(write_run(tmp_path / "backwards", rows.take(pa.array(np.arange(rows.num_rows)[::-1])),
                                       seal_rows=3))
    assert paths(backwards) == expected
    version = rows["policy_version"].to_pylist()
    last = [i for i, g in enumerate(rows["group_id"].to_pylist()) if g == rows["group_id"][-1].as_py()
            and rows["segment"][i] == rows["segment"][-1]]
    for i in last:
        version[i] = 0  # the last group scored at version 0: its row comes first in its segment
    early = rt.run_table(write_run(tmp_path / "early", changed(rows, policy_version=version)))
    got = paths(early)
    assert got == sorted(got) and got != expected and len(got) == len(expected)  # in the names' order
    assert placed == [True, False, False]  # placed, then sorted


def test_a_local_shard_of_narrower_types_reads_as_the_run_tables(tmp_path):
    """A local shard whose numbers are of types that convert safely (a version in 32 bits, a reward in 32-bit
    floats), among shards of the table's own types, is read at once with them and cast: the same rows and numbers
    as the table's types give, nothing named."""
    rows = bundled_rows()
    root = write_run(tmp_path / "run", rows.slice(0, 0))
    versions, rewards = [], []
    for k, g in enumerate(groups(rows)[:6]):
        if k == 2:
            g = g.set_column(g.schema.get_field_index("policy_version"), "policy_version",
                             pc.cast(g["policy_version"], pa.int32()))
            g = g.set_column(g.schema.get_field_index("reward"), "reward", pc.cast(g["reward"], pa.float32()))
        write_shard(root, f"{g['segment'][0].as_py()}-{k:05d}.parquet", g)
        versions += g["policy_version"].to_pylist()
        rewards += pc.cast(g["reward"], pa.float64()).to_pylist()
    t = rt.run_table(root)
    assert len(t) == len(versions) and not t.problems()
    assert t.column("policy_version").type == pa.int64() and t.column("reward").type == pa.float64()
    assert t.column("policy_version").to_pylist() == versions and t.column("reward").to_pylist() == rewards


def test_each_rollout_s_fate_is_what_its_rows_say():
    """`rollout_fates` (a run's rollouts from its TRL rows' fates, each rollout's rows added up side by side) against
    a plain reading of every row: rollouts whose rows met different fates, several trained at different steps,
    trained without a step, none trained, no rows (failed or not)."""
    from rollout_trace.artifact.run_fates import DROPPED, FATES, rollout_fates

    rng = np.random.default_rng(3)
    n = 400
    per = rng.integers(0, 5, size=n)  # rows per rollout, 0 for some
    entry = np.repeat(np.arange(n, dtype=np.int32), per)
    codes = rng.choice([0, 0, 1, 3, 4, 6], size=len(entry)).astype(np.int8)
    steps = np.where(codes == 0, rng.integers(1, 50, size=len(entry)), -1)
    steps[(codes == 0) & (rng.random(len(entry)) < 0.1)] = -1  # trained, its step not known
    tokens = rng.integers(0, 900, size=len(entry))
    status = pa.chunked_array([pa.array(rng.choice(["ok", "failed", "timed-out"], size=n)).dictionary_encode()])
    o = pa.table({"entry": entry, "trained_tokens": tokens})  # as RunTable.ordinals() gives them
    rf = pa.table({"fate": pa.DictionaryArray.from_arrays(pa.array(codes, pa.int8()), pa.array(FATES)),
                   "step": pa.array(steps, mask=steps < 0)})
    got = rollout_fates(n, o, rf, status).to_pylist()
    statuses = status.to_pylist()
    for r in range(n):
        mine = np.flatnonzero(entry == r)  # in ordinals() order: the first is the rollout's first row
        took = [i for i in mine if codes[i] == 0]
        stepped = [int(steps[i]) for i in took if steps[i] >= 0]
        want_why = None if took else (FATES[codes[mine[0]]] if len(mine) else
                                      "failed" if statuses[r] == "failed" else "no rows")
        assert got[r] == {"trained_step": min(stepped) if stepped else None,
                          "trainer_tokens": int(sum(tokens[i] for i in took)), "dropped": want_why}, r
        assert want_why is None or want_why in DROPPED
    assert {g["dropped"] for g in got} >= {None, "failed", "no rows", "stale"}


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("large", [False, True])
def test_a_group_and_a_rollout_are_found_by_their_names_without_naming_every_rollout(tmp_path, monkeypatch,
                                                                                      backwards, large):
    """A group's rows (viewer/run_part.py `group_rows`: opening a group's map) and a rollout's row (`Run.row_at`:
    opening it, and each rollout of a group's map) are the rows whose name is the one asked for, as a search of
    every row's name finds them, without making a name for each rollout of the run (~1 s and ~100 MB at a
    million); a name of no rollout is refused. The group is found by a binary search of the group keys when they
    are in order, as recorded, and the same rows by a scan when they are not (rows written in reverse). A group's
    names are made once and kept for its next lookups, a bounded few groups' (`NAMED_GROUPS`); a group larger
    than `MAX_GROUP_NAMES` (`large`) keeps none, and a path is looked for among its rollouts of the path's index."""
    from rollout_trace.artifact import ArtifactError
    from viewer.run_part import group_rows

    if large:
        monkeypatch.setattr(rt, "MAX_GROUP_NAMES", 0)

    root = EXAMPLES_DIR / "trl-run"
    if backwards:
        rows = bundled_rows()
        root = write_run(tmp_path / "backwards", rows.take(pa.array(np.arange(rows.num_rows)[::-1])), seal_rows=5)
    run = open_run(str(root))
    t = run.table
    named = t.take(np.arange(len(t)), ["group", "path"])
    found = {p: run.row_at(p) for p in named["path"].to_pylist() if p is not None}
    groups = {g: group_rows(t, g).tolist() for g in named["group"].to_pylist()}
    assert "__names" not in t._memo
    paths, names = t.column("path").to_pylist(), t.column("group").to_pylist()  # every name, made here to compare
    assert len(found) == sum(p is not None for p in paths) >= 40 and len(groups) >= 12
    assert all(paths[row] == p and paths.index(p) == row for p, row in found.items())
    assert all(rows == [i for i, x in enumerate(names) if x == g] for g, rows in groups.items())
    assert group_rows(t, "groups/x-v000001-g000001").tolist() == [] == group_rows(t, next(iter(groups)) + "0").tolist()
    some = next(iter(found))
    for wrong in ("", "groups/x", some + "0", some.replace("/rollout-0", "/rollout-"), some.replace("-g0", "-g9"),
                  "groups/" + some.split("/")[1] + "/rollout-99", "groups/a-v1-g" + "9" * 5000 + "/rollout-01"):
        with pytest.raises(ArtifactError):
            run.row_at(wrong)
    assert t._memo["__group_keys_sorted"] is not backwards
    from viewer.run_part import part_run  # a group's part finds its rollouts as the run does, the same rows
    for rows in groups.values():
        part = part_run(t, np.array(rows))
        assert all(part.row_at(p) == row for p, row in found.items() if row in rows)
        assert part.row_at(next(iter(found))) == found[next(iter(found))]  # a rollout of another group: the run's
    assert len(t._group_names) == (0 if large else rt.NAMED_GROUPS)  # the groups looked up last, each column's
    if not large:  # a group looked up again makes no name
        taken = []
        monkeypatch.setattr(t, "take", lambda *a, **kw: taken.append(a) or rt.RunTable.take(t, *a, **kw))
        last = list(found)[-3:]
        assert [run.row_at(p) for p in last] == [found[p] for p in last] and not taken


@pytest.mark.parametrize("zipped", [False, True])
def test_the_consumption_table_is_held_narrow_with_the_values_it_has(tmp_path, zipped):
    """The consumption table's columns are held as narrow as their values let them be (`narrowed`: ordinals and
    steps in 32 bits, its texts' dictionary indices in 8; 14 MB instead of 33 at a million rollouts), whether
    scanned (a local run) or read a file at a time (a zip, the Hub); a segment whose ordinal needs 64 bits keeps
    them, and every view reads the values the files hold: the table, `viewer check`'s every column, the fates."""
    consumed = bundled_consumed()
    segments = consumed["segment"].to_pylist()
    ordinal = consumed["ordinal"].to_pylist()
    last = max(i for i, s in enumerate(segments) if s == segments[-1])
    ordinal[last] = 2**40  # a hostile row of the last segment: its shard's ordinals stay 64-bit
    for wide, name in ((False, "plain"), (True, "wide")):
        c = consumed.set_column(consumed.schema.get_field_index("ordinal"), "ordinal",
                                pa.array(ordinal, pa.int64())) if wide else consumed
        root = write_run(tmp_path / name, consumed=c)
        if zipped:
            root = zip_folder(root, tmp_path / f"{name}.zip", prefix="run")
        t = open_run(str(root)).table
        assert t.consumed.to_pylist() == c.select(list(rt.FATE_KEYS)).to_pylist()
        assert t.consumed_all().to_pylist() == c.to_pylist()
        assert t.consumed["segment"].type.index_type == pa.int8() and t.consumed["step"].type == pa.int32()
        assert t.consumed["ordinal"].type == (pa.int64() if wide else pa.int32())
        assert t.consumed.nbytes < c.select(list(rt.FATE_KEYS)).nbytes / 2
        whole = rt.run_table(EXAMPLES_DIR / "trl-run")
        if not wide:
            assert t.fates().equals(whole.fates()) and t.unrecorded_trained().equals(whole.unrecorded_trained())
