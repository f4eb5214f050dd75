"""The run page's records and health notes (viewer/run_stats.py), and following a growing run
(rollout_trace/artifact/run.py `follow`), on the bundled run examples/trl-run, on copies of it, and on runs written
from its rows (tests/support/run_tables.py)."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from rollout_trace.artifact.run import follow, open_run
from rollout_trace.artifact.run_schema import ROLLOUTS
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support.run_places import batch_bytes, placed, shard_reads, without_end
from support.run_tables import append_group, bundled_rows, changed, groups, shard_files, write_run
from viewer import run_stats
from viewer.page_link import MAX_SRC_CHARS
from viewer.run_stats import VersionStats, health_notes, resolve_link, task_track, version_stats

TASK5 = "74d89d7f7e5acc942702473f02fc90c09392e730"  # scored at versions 2 and 3 of the bundled run


@pytest.fixture(scope="module")
def run():
    r = open_run("trl-run")
    yield r
    r.close()


def test_version_stats_count_the_index_rows(run):
    stats = version_stats(run)
    assert [s.version for s in stats] == [1, 2, 3, 4]
    for s in stats:
        rows = [r for r in run.rows if r.policy_version == s.version]
        assert s.rollouts == len(rows) and s.groups == len({r.group for r in rows})
        scored = [r.reward for r in rows if r.reward is not None]
        assert s.scored == len(scored) and s.reward_min == min(scored) and s.reward_max == max(scored)
        assert s.reward_mean == pytest.approx(sum(scored) / len(scored))
        assert s.passed == sum(r.env_reward == 1.0 for r in rows)
        assert s.verified == sum(r.env_reward is not None for r in rows)  # a failed session is never verified
        assert s.pass_rate == (s.passed / s.verified if s.verified else None)
        assert s.timeouts == sum(r.timed_out for r in rows)
        assert sum(s.dropped.values()) == sum(r.dropped is not None for r in rows)
        # the rows the trainer trained: a rollout trained in part counts only its trained rows
        assert s.trained_tokens == sum(r.trainer_tokens for r in rows) <= sum(
            r.trained_tokens for r in rows if r.trained_step is not None)
    assert stats[0].dropped == {"failed": 1, "read-ahead": 5}  # TRL's read-ahead micro-batch at the stop
    assert stats[1].trained_tokens == 0 and stats[1].dropped == {"in-queue": 8}


def test_bundled_run_notes_say_what_was_never_trained(run):
    notes = health_notes(version_stats(run), run.live)
    assert notes == ["28 of 52 rollouts were never trained (in-queue 17, read-ahead 9, failed 2)"]


def _stats(version: int, **kw) -> VersionStats:
    base = {"groups": 8, "rollouts": 64, "scored": 64, "reward_mean": 0.5, "reward_sd": 0.2, "reward_min": 0.0,
            "reward_max": 1.0, "passed": 10, "verified": 64, "pass_rate": 10 / 64, "zero_spread": 0, "trained_tokens": 100,
            "trained": 64, "dropped": {}, "timeouts": 0, "unscorable": 0}
    return VersionStats(version=version, **{**base, **kw})


def _at_versions(tmp: Path, *versions: tuple[int, float | None]) -> Path:
    """A run of the bundled run's first two groups at each (version, reward) given, the reward None for the
    rewards they had; group ids renumbered (a rollout is its segment, group id and index)."""
    first = groups(bundled_rows())[:2]
    rows = []
    for v, reward in versions:
        for g in first:
            moved = placed(g, version=v, group_id=len(rows))
            rows.append(moved if reward is None else changed(moved, reward=[reward] * moved.num_rows))
    return write_run(tmp, pa.concat_tables(rows))


def test_every_reward_at_a_version_is_one_value(tmp_path):
    one = open_run(str(_at_versions(tmp_path / "one", (12, 0.0), (13, None))))
    stats = version_stats(one)  # the least and greatest finite reward of version 12 are one value
    assert [s.version for s in stats] == [12, 13] and stats[0].scored == 8
    assert health_notes(stats)[0] == "every reward at version 12 is 0: GRPO learns nothing there"
    stats = version_stats(open_run(str(_at_versions(tmp_path / "two", (12, 0.0), (13, None), (14, 0.0)))))
    assert health_notes(stats)[0] == "every reward at versions 12 and 14 is 0: GRPO learns nothing there"
    assert health_notes([_stats(12, scored=1, reward_min=0.0, reward_max=0.0), _stats(13)]) == \
        health_notes([_stats(13)])  # one scored rollout is not "every reward"


def test_a_long_run_s_note_names_a_few_versions_and_counts_them():
    """At 2,000 versions, one value at every 50th is a note of a line, not of 40 numbers; eight runs still read
    in full."""
    flat = [_stats(v, scored=4, reward_min=0.0, reward_max=0.0) if v % 50 == 0 else _stats(v)
            for v in range(1, 2001)]
    assert health_notes(flat)[0] == ("every reward at versions 50, 100, 150, 200, 250, 300, 350, … 2000 "
                                     "(40 versions) is 0: GRPO learns nothing there")
    eight = [_stats(v, scored=4, reward_min=0.0, reward_max=0.0) if v in (1, 2, 4, 6, 8, 10, 12, 14, 16) else
             _stats(v) for v in range(1, 20)]
    assert health_notes(eight)[0] == ("every reward at versions 1–2, 4, 6, 8, 10, 12, 14 and 16 is 0: GRPO learns "
                                      "nothing there")


def test_unscorable_since_a_version():
    stats = [_stats(v, unscorable=2) for v in range(1, 30)] + [_stats(v, unscorable=22) for v in range(30, 41)]
    notes = health_notes(stats)
    assert "34% of rollouts unscorable (no reward) since version 30" in notes
    every = health_notes([_stats(v, unscorable=32) for v in range(1, 4)])
    assert "50% of rollouts unscorable (no reward) at every version" in every
    # a single timed-out rollout at the last version is not a trend
    assert not any("timed out" in n for n in health_notes([_stats(1), _stats(2, timeouts=1, rollouts=4)]))


def test_zero_spread_and_live_notes():
    stats = [_stats(1), _stats(2, zero_spread=6), _stats(3, zero_spread=8, dropped={"in-queue": 64})]
    notes = health_notes(stats, live=True)
    assert "88% of groups with zero reward spread (GRPO learns nothing from them) since version 2" in notes
    assert "64 rollouts recorded and not yet taken by the trainer (it was still training)" in notes
    assert not any("never trained" in n for n in notes)  # waiting for the trainer is not dropped while it runs
    assert health_notes([], live=True)[0].startswith("no rollout is recorded yet: the run is being recorded")


def test_a_large_runs_counts_are_written_with_separators():
    """A note's counts are written as the head writes them (1,024,000), not as digits to count on a projector."""
    stats = [_stats(v, rollouts=512_000, dropped={"in-queue": 101_888, "read-ahead": 512}) for v in (1, 2)]
    notes = health_notes(stats)
    assert "204,800 of 1,024,000 rollouts were never trained (in-queue 203,776, read-ahead 1,024)" in notes, notes
    assert "203,776 rollouts recorded and not yet taken by the trainer (it was still training)" in health_notes(
        stats, live=True)


def test_task_track_follows_one_task_across_versions(run):
    t = task_track(run, TASK5)
    assert t is not None and [g.version for g in t.groups] == [2, 3] and t.versions == 2
    assert t.first_solved == 2  # rollout 3 at version 2 passed every held-out test
    assert [len(g.rollouts) for g in t.groups] == [4, 4]
    assert t.groups[0].pass_rate == pytest.approx(0.25)
    assert all(x.path and x.path.startswith(g.path + "/") for g in t.groups for x in g.rollouts)
    assert task_track(run, "0" * 40) is None
    choices = run_stats.task_choices(run)
    assert {c.task_id for c in choices[:2]} == {TASK5, "35e089d85a94a939cc9c8d72fb6e0385f838feee"}  # followable first
    assert [(p.version, p.pass_rate) for p in t.pass_rates] == [(2, 0.25), (3, 0.25)]  # the task's chart


def test_group_rows(run):
    rows = run_stats.group_rows(run, 3)
    assert [g.group_id for g in rows] == [0, 1, 2, 3, 4] and all(g.k == 4 for g in rows)
    # the failed rollout: the user's reward function scored its empty completion, as TRL calls it
    assert rows[3].dropped == 4 and rows[3].rewards[1] == 0.1
    stats = version_stats(run)
    assert stats[0].dropped == {"failed": 1, "read-ahead": 5}  # the cause chart's bars at version 1
    # a group's passed count is out of its rollouts with a verifier score, as its version's pass rate: the groups'
    # numbers add up to the version's (18 verified of version 3's 20 rollouts, where K would say 20)
    v3 = next(s for s in stats if s.version == 3)
    assert (sum(g.passed for g in rows), sum(g.verified for g in rows)) == (v3.passed, v3.verified) == (4, 18)
    assert sum(g.k for g in rows) == v3.rollouts == 20


@pytest.mark.parametrize("extreme", [1.7976931348623157e308, -1.7976931348623157e308, math.nan, math.inf, -math.inf])
def test_version_stats_survive_any_float(tmp_path, extreme):
    """A reward at the float limit (finite) or NaN/inf: every number stays finite or None, and the page's records
    encode; `statistics.fmean` raised OverflowError here."""
    rows = bundled_rows()
    root = write_run(tmp_path / "run", changed(rows, reward=[extreme if i % 2 else 1.7976931348623157e308
                                                             for i in range(rows.num_rows)]))
    big = open_run(str(root))
    stats = version_stats(big)
    assert sum(s.rollouts for s in stats) == rows.num_rows
    for s in stats:
        for v in (s.reward_mean, s.reward_sd, s.reward_min, s.reward_max):
            assert v is None or math.isfinite(v)
    assert health_notes(stats)
    msgspec.json.encode(stats)
    for g in big.groups:
        assert g.reward_mean is None or math.isfinite(g.reward_mean)


def test_deep_link_names_a_group(run):
    first, last = (s.start.segment for s in run.segments)  # group ids restart in every segment
    path, problem = resolve_link(run, {"version": "3", "group": "2"})
    assert problem is None and path == f"groups/{last}-v000003-g000002"  # the latest segment's group
    assert resolve_link(run, {"group": "0", "segment": first})[0].endswith(f"{first}-v000001-g000000")
    assert resolve_link(run, {"version": "9", "group": "2"}) == (None, "this run has no group 2 at version 9")
    assert resolve_link(run, {"group": "../x"})[1] == "the link's group is not a group id (a whole number)"
    assert resolve_link(run, {"version": "3"}) == (None, None)


# -- following a run that grows ----------------------------------------------------------------------


def add_version(root: Path, version: int) -> str:
    """Append one more group to a run the way the recorder does (a batch appended to its segment's open tail):
    the run's last group again, at `version` under the next group id, without training rows. Returns its name."""
    t = open_run(str(root)).table
    rows = t.rows_of(np.arange(len(t)), ROLLOUTS.names)
    last = groups(rows)[-1]  # the last segment's latest group
    seg = last["segment"][0].as_py()
    gid = pc.max(rows.filter(pc.equal(rows["segment"], seg))["group_id"]).as_py() + 1
    n = last.num_rows
    group = changed(placed(last, version=version, group_id=gid), row_ordinal=[[]] * n, row_fingerprint=[[]] * n,
                    row_tokens=[[]] * n, row_trained_tokens=[[]] * n, row_turns=[[]] * n)
    append_group(root, group, tail=True)
    return group["group"][0].as_py()



def test_follow_reads_the_sealed_shards_once(tmp_path, monkeypatch):
    """A grown run is a new snapshot: the recorder's new batch is read, the sealed shards' columns are the ones the
    last snapshot read (shared, never read again); a batch half-written waits for its other half."""
    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    run = open_run(str(root))
    assert follow(run) is None  # nothing changed: one listing, no read
    sealed = {p.name for p in shard_files(root)}
    len(run.rows)  # every index column read once
    new = add_version(root, 5)
    reads = shard_reads(monkeypatch)
    grown = follow(run)
    assert grown is not None and grown.versions() == [1, 2, 3, 4, 5]
    assert [g.path for g in grown.groups if g.policy_version == 5] == [new]
    assert len(grown.rows) == len(run.rows) + 4 and grown.problems == run.problems
    assert reads and not sealed & set(reads)  # only the new tail was read
    assert {r.rollout_id for r in run.rows} <= {r.rollout_id for r in grown.rows}
    assert len(run.rows) == 52 and run.versions() == [1, 2, 3, 4]  # the snapshot it followed stays as it was
    assert follow(grown) is None
    # a batch written half-way (the recorder is appending, or was killed) waits for its other half
    tail = next(p for p in shard_files(root) if p.suffix == ".arrows")
    without_end(tail)
    more = batch_bytes(placed(groups(bundled_rows())[0], version=6, group_id=99))
    with tail.open("ab") as f:
        f.write(more[: len(more) // 2])
    cut = follow(grown)
    assert cut is not None and len(cut.rows) == len(grown.rows) and any("cut short" in n for n in cut.notes)
    assert cut.problems == run.problems
    with tail.open("ab") as f:
        f.write(more[len(more) // 2:])
    whole = follow(cut)
    assert whole is not None and len(whole.rows) == len(grown.rows) + 4 and whole.versions()[-1] == 6
    assert not any("cut short" in n for n in whole.notes)


def test_a_large_live_runs_snapshot_stands_a_while_before_the_run_is_read_again(tmp_path, monkeypatch):
    """The pages watching a live run compute each new snapshot again in full (~1 s of CPU at a million rollouts,
    against a poll every 2 s), so a snapshot stands at least its rollouts / FOLLOW_ROWS_S seconds before the run
    is read again, for the run page's shared snapshot (`run_table`) and a run's own (`follow`) alike: a large live
    run is read again every ~10 s at a million, a small one at every poll. What was written meanwhile is read once
    that time has passed: nothing is lost."""
    from rollout_trace.artifact import run_table as rt

    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    now = [1000.0]
    monkeypatch.setattr(rt, "clock", lambda: now[0])
    monkeypatch.setattr(rt, "FOLLOW_ROWS_S", 10)  # the bundled run's 52 rollouts stand 5.2 s
    run, shared = open_run(str(root)), rt.run_table(root)
    new = add_version(root, 5)
    now[0] += 5.1
    assert follow(run) is None and rt.run_table(root) is shared  # written, not read yet
    assert version_stats(shared)[-1].version == 4
    now[0] += 0.2
    grown, later = follow(run), rt.run_table(root)
    assert grown is not None and grown.versions() == [1, 2, 3, 4, 5] and new in {g.path for g in grown.groups}
    assert later is not shared and [s.version for s in version_stats(later)] == [1, 2, 3, 4, 5]
    assert rt.run_table(root) is later  # a new snapshot stands its time again


def test_the_run_page_says_how_often_a_large_live_run_is_read_again(tmp_path, monkeypatch):
    """A visitor watching a live run is told when the page reads it less often than it asks: the head's `every_s`
    is the snapshot's standing time for a large local run, 0 (at every poll) for a small one or an ended run."""
    import gradio as gr

    from rollout_trace.artifact import run_table as rt
    from viewer.ui import follower, run_view
    from viewer.ui.service import Service

    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    ended = tmp_path / "ended"
    shutil.copytree(EXAMPLES_DIR / "trl-run", ended)
    (root / "segments" / next(p.name for p in (root / "segments").glob("*.end.json"))).unlink()  # not ended
    rv = run_view.RunView(Service("trl-run", public=False))
    with gr.Blocks():
        rv.render()

    def every(src: Path) -> float:
        head = msgspec.json.decode(rv.show(str(src), {})[rv.head_html])
        assert head["live"] == (src == root)
        return head["every_s"]

    assert every(root) == 0.0  # 52 rollouts: read at every poll
    monkeypatch.setattr(rt, "FOLLOW_ROWS_S", 10)  # 52 rollouts now stand 5.2 s, more than the page's poll
    assert every(root) == pytest.approx(5.2) and run_view.POLL_S < 5.2
    assert every(ended) == 0.0  # an ended run is not followed at all
    hub = type("HubTable", (), {"kind": "hub", "stands_s": lambda self: 0.5})()  # asked for its commit every 10 s
    assert rv.service.follower.every_s(hub) == follower.HUB_CHECK_S > run_view.POLL_S


def test_follow_after_truncate_and_rewrite(tmp_path):
    """An open tail cut back (a group gone), written again whole, or rewritten in place with the same size and
    other content is read again whole: no false problem, no rows lost, the new value seen."""
    rows = bundled_rows()
    root = write_run(tmp_path / "run", rows, tail=True)
    run = open_run(str(root))
    tail = shard_files(root)[-1]
    whole = tail.read_bytes()
    fewer = write_run(tmp_path / "fewer", pa.concat_tables(groups(rows)[:-1]), tail=True, small_files=False)
    tail.write_bytes(shard_files(fewer)[-1].read_bytes())  # truncated: the last group gone
    cut = follow(run)
    assert cut is not None and len(cut.rows) == len(run.rows) - 4 and cut.problems == run.problems == []
    tail.write_bytes(whole)  # rewritten to its first content: longer again
    back = follow(cut)
    assert back is not None and len(back.rows) == len(run.rows) and back.problems == []
    # the same size, other content: one rollout's reward changed in place
    at = len(rows) - 1
    rewards = rows["reward"].to_pylist()
    rewards[at] = 0.5 if rewards[at] != 0.5 else 0.25
    other = write_run(tmp_path / "other", changed(rows, reward=rewards), tail=True, small_files=False)
    same = shard_files(other)[-1].read_bytes()
    assert same != whole and len(same) == len(whole)
    st = tail.stat()
    tail.write_bytes(same)
    os.utime(tail, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a clock coarser than the test: still newer
    again = follow(back)
    assert again is not None and len(again.rows) == len(run.rows) and again.problems == []
    key = (rows["segment"][at].as_py(), rows["group_id"][at].as_py(), rows["rollout"][at].as_py())
    assert next(r.reward for r in again.rows if (r.segment, r.group_id, r.rollout) == key) == rewards[at]
    assert follow(again) is None


def test_a_second_copy_with_a_huge_title_is_named_and_left_out(tmp_path):
    """A rollout recorded again in another shard, its copy carrying a 2 MB title (an attacker's): the copy is named
    by shard and rollout and left out (the first one stands); the run's other rows are read, and nothing of the
    long title reaches a page."""
    rows = bundled_rows()
    root = write_run(tmp_path / "run", rows)
    copy = changed(rows.slice(2, 1), title=["x" * (2 * 2**20)])
    seg = copy["segment"][0].as_py()
    pq.write_table(copy, root / "rollouts" / f"{seg}-00001.parquet")
    run = open_run(str(root))
    assert len(run.rows) == 52 and max(len(r.title) for r in run.rows) < 1000
    [problem] = run.problems
    assert problem.file == f"rollouts/{seg}-00001.parquet" and problem.found == "2 times"
    assert problem.field == f"segment {seg} group {copy['group_id'][0].as_py()} rollout {copy['rollout'][0].as_py()}"
    body = msgspec.json.encode(run_stats.group_rows(run, copy["policy_version"][0].as_py()))
    assert b"x" * 1000 not in body
    assert len(run.table.column("title")) == 52


def test_a_run_request_is_checked_once():
    """Everything the page sends (event data, server requests, link values) goes through one parse."""
    req = run_stats.run_request({"action": "open", "src": " trl-run ", "row": "g" * 5000, "task": "t" * 100,
                                "version": "3", "turn": "-1", "a": 7, "b": None})
    assert req.action == "open" and req.src == "trl-run" and len(req.row) == MAX_SRC_CHARS
    assert req.task == "t" * run_stats.MAX_TASK and req.version == 3 and req.turn == 0 and req.a == "" == req.b
    for bad in ("1.5", "1e3", "99999999999", True, [3], "٣"):
        assert run_stats.run_request({"version": bad}).version is None
    assert run_stats.run_request(None) == run_stats.run_request([1, 2]) == run_stats.RunRequest()


def test_a_links_sort_and_smoothing_are_checked_and_named_when_wrong():
    """vsort= is a column of the versions table (-KEY reversed) and smooth= an EMA weight in [0, 0.99]; anything
    else is run order and the raw curves, and the run page's first note says which value of the link was wrong."""
    from viewer.router import run_link_problem

    req = run_stats.run_request({"vsort": "-reward_mean", "smooth": "0.9"})
    assert req.sort == "-reward_mean" and req.smooth == 0.9
    for bad in ("reward", "--version", "version;drop", 5, ["version"]):
        assert run_stats.run_request({"vsort": bad}).sort == ""
    for bad in ("1", "-0.1", "nan", "inf", "0.9x", True):
        assert run_stats.run_request({"smooth": bad}).smooth == 0.0
    # a link naming none leaves it to the page (a long run smoothed: run_page.js); an explicit 0 stays raw
    assert run_stats.run_request({}).smooth is None and run_stats.run_request({"smooth": ""}).smooth is None
    assert run_stats.run_request({"smooth": "0"}).smooth == 0.0
    run = open_run("trl-run")
    assert run_link_problem(run, {"vsort": "pass_rate", "smooth": "0.5"}) is None
    assert "vsort is not a column" in (run_link_problem(run, {"vsort": "nope"}) or "")
    assert "smooth is not a smoothing weight" in (run_link_problem(run, {"smooth": "2"}) or "")


def _plain_task_choices(t) -> list[tuple[str, str, int]]:
    """The task choices as a plain reading of every standing row gives them: each task's first rollout in the run's
    order (segment, version, group, row), those scored at more than one version first."""
    rows = t.table.select(["task_id", "title", "segment", "policy_version", "group_id"]).to_pylist()
    segments = t.segment_names()
    first: dict[str, tuple] = {}
    versions: dict[str, set] = {}
    for i, r in enumerate(rows):
        if r["task_id"] is None:
            continue
        place = (segments.index(r["segment"]), -1 if r["policy_version"] is None else r["policy_version"],
                 r["group_id"], i)
        if r["task_id"] not in first or place < first[r["task_id"]][0]:
            first[r["task_id"]] = (place, r["title"] or "")
        versions.setdefault(r["task_id"], set()).add(place[1])
    order = sorted(first, key=lambda k: (len(versions[k]) <= 1, first[k][0]))
    return [(k, first[k][1], len(versions[k])) for k in order]


def test_task_choices_are_what_every_row_says(tmp_path):
    """The tasks to follow, reduced shard by shard in numbers (task ids through their distinct values), are each
    task's first rollout and its count of versions as a plain reading of every row gives them: on the bundled run,
    and on one written in reverse (versions descending across shards of three rows, a task's rows in several
    shards and both segments) with a rollout without a task id and two tasks' titles changed in later rows."""
    bundled = open_run("trl-run")
    assert [(c.task_id, c.title, c.versions) for c in run_stats.task_choices(bundled)] == \
        _plain_task_choices(bundled.table) != []
    rows = bundled_rows()
    rows = rows.take(pa.array(np.arange(rows.num_rows)[::-1]))
    tasks = rows["task_id"].to_pylist()
    tasks[5] = None
    titles = rows["title"].to_pylist()
    titles[0], titles[-1] = "a later title", "the first title"
    t = open_run(str(write_run(tmp_path / "run", changed(rows, task_id=tasks, title=titles), seal_rows=3))).table
    assert len(shard_files(tmp_path / "run")) > 10
    got = [(c.task_id, c.title, c.versions) for c in run_stats.task_choices(t)]
    assert got == _plain_task_choices(t) and len(got) == len({x for x in tasks if x})
    assert any(v > 1 for _, _, v in got) and any(v == 1 for _, _, v in got)


def test_version_stats_do_not_depend_on_the_rows_order(tmp_path):
    """The per-version numbers of a run whose rows are in group order (as recorded: each group's rows added up side
    by side) and of the same rows written in reverse (added up by a hash table) are equal, zero-spread groups
    included, and so is a group TRL gave no advantages (its spread by the formula)."""
    rows = bundled_rows()
    adv = rows["advantage"].to_pylist()
    place = list(zip(rows["segment"].to_pylist(), rows["group_id"].to_pylist(), strict=True))
    for i, p in enumerate(place):
        if p == place[0]:
            adv[i] = None  # the first group's: zero spread or not by GRPO's formula
        elif p == place[-1]:
            adv[i] = 0.0  # the last group's: zero spread
    rows = changed(rows, advantage=adv)
    ordered = open_run(str(write_run(tmp_path / "ordered", rows))).table
    backwards = open_run(str(write_run(tmp_path / "backwards", rows.take(pa.array(np.arange(rows.num_rows)[::-1])),
                                       seal_rows=3))).table
    keys = backwards.group_keys()
    assert not np.all(keys[1:] >= keys[:-1]) and np.all(ordered.group_keys()[1:] >= ordered.group_keys()[:-1])
    got = version_stats(ordered)
    assert got == version_stats(backwards) and sum(s.zero_spread for s in got) > 0
