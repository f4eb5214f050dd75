"""The run page's records and health notes (viewer/run_page.py), and following a growing run
(rollout_trace/artifact/run.py `follow`), on the bundled run examples/trl-run and on copies of it."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
from pathlib import Path

import msgspec
import pytest

from rollout_trace.artifact.run import follow, groups_of, open_run
from rollout_trace.artifact.sources import EXAMPLES_DIR
from viewer import run_page
from viewer.run_page import VersionStats, health_notes, resolve_link, task_track, version_stats

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
            "reward_max": 1.0, "passed": 10, "pass_rate": 10 / 64, "zero_spread": 0, "trained_tokens": 100,
            "trained": 64, "dropped": {}, "timeouts": 0, "unscorable": 0}
    return VersionStats(version=version, **{**base, **kw})


def test_every_reward_at_a_version_is_one_value(run):
    rows = [msgspec.structs.replace(r, policy_version=12, reward=0.0) for r in run.rows[:8]]
    rows += [msgspec.structs.replace(r, policy_version=13) for r in run.rows[:8]]
    one = dataclasses.replace(run, rows=rows, groups=groups_of(rows))
    stats = version_stats(one)  # the least and greatest finite reward of version 12 are one value
    assert health_notes(stats)[0] == "every reward at version 12 is 0: GRPO learns nothing there"
    rows += [msgspec.structs.replace(r, policy_version=14, reward=0.0) for r in run.rows[:8]]
    stats = version_stats(dataclasses.replace(run, rows=rows, groups=groups_of(rows)))
    assert health_notes(stats)[0] == "every reward at versions 12 and 14 is 0: GRPO learns nothing there"
    assert health_notes([_stats(12, scored=1, reward_min=0.0, reward_max=0.0), _stats(13)]) == \
        health_notes([_stats(13)])  # one scored rollout is not "every reward"


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
    assert "64 rollouts recorded and not yet taken by the trainer (training runs)" in notes
    assert not any("never trained" in n for n in notes)  # waiting for the trainer is not dropped while it runs
    assert health_notes([], live=True)[0].startswith("no rollout is recorded yet: the run is being recorded")


def test_task_track_follows_one_task_across_versions(run):
    t = task_track(run, TASK5)
    assert t is not None and [g.version for g in t.groups] == [2, 3] and t.versions == 2
    assert t.first_solved == 2  # rollout 3 at version 2 passed every held-out test
    assert [len(g.rollouts) for g in t.groups] == [4, 4]
    assert t.groups[0].pass_rate == pytest.approx(0.25)
    assert all(x.path and x.path.startswith(g.path + "/") for g in t.groups for x in g.rollouts)
    assert task_track(run, "0" * 40) is None
    choices = run_page.task_choices(run)
    assert {c.task_id for c in choices[:2]} == {TASK5, "35e089d85a94a939cc9c8d72fb6e0385f838feee"}  # followable first
    assert [(p.version, p.pass_rate) for p in t.pass_rates] == [(2, 0.25), (3, 0.25)]  # the task's chart


def test_group_rows(run):
    rows = run_page.group_rows(run, 3)
    assert [g.group_id for g in rows] == [0, 1, 2, 3, 4] and all(g.k == 4 for g in rows)
    # the failed rollout: the user's reward function scored its empty completion, as TRL calls it
    assert rows[3].dropped == 4 and rows[3].rewards[1] == 0.1
    stats = version_stats(run)
    assert stats[0].dropped == {"failed": 1, "read-ahead": 5}  # the cause chart's bars at version 1


@pytest.mark.parametrize("extreme", [1.7976931348623157e308, -1.7976931348623157e308, math.nan, math.inf, -math.inf])
def test_version_stats_survive_any_float(run, extreme):
    """A reward at the float limit (finite) or NaN/inf: every number stays finite or None, and the page's records
    encode; `statistics.fmean` raised OverflowError here."""
    rows = [msgspec.structs.replace(r, reward=extreme if i % 2 else 1.7976931348623157e308)
            for i, r in enumerate(run.rows)]
    big = dataclasses.replace(run, rows=rows, groups=groups_of(rows))
    stats = version_stats(big)
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
    """Write one more group into a copied run the way the recorder does: its folder first, then its index
    lines appended (the last group of the run again, at `version`)."""
    index = sorted((root / "index").glob("*.jsonl"))[-1]
    lines = [json.loads(x) for x in index.read_text().splitlines()]
    last = lines[-1]["group_path"]
    gid = max(x["group_id"] for x in lines) + 1
    new = f"{last.rsplit('-v', 1)[0]}-v{version:06d}-g{gid:06d}"
    shutil.copytree(root / last, root / new)
    with index.open("a") as f:
        for x in (x for x in lines if x["group_path"] == last):
            x.update(policy_version=version, group_id=gid, group_path=new,
                     path=x["path"].replace(last, new) if x["path"] else None, rows=[])
            f.write(json.dumps(x) + "\n")
    return new


def test_follow_reads_only_the_grown_tail(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    run = open_run(str(root))
    assert follow(run) is None  # nothing changed: one listing, no read
    new = add_version(root, 5)
    reads: list[str] = []
    real = type(run.store).read
    run.store.read = lambda paths, max_bytes: (reads.extend(paths), real(run.store, paths, max_bytes))[1]
    grown = follow(run)
    assert grown is not None and grown.versions() == [1, 2, 3, 4, 5]
    assert not any(p.startswith("index/") for p in reads)  # the index's tail was read, not the whole file
    assert [g.path for g in grown.groups if g.policy_version == 5] == [new]
    assert len(grown.rows) == len(run.rows) + 4 and grown.problems == run.problems
    assert {r.rollout_id for r in run.rows} <= {r.rollout_id for r in grown.rows}
    assert follow(grown) is None
    # a half-written line (no newline yet) waits for its newline
    index = sorted((root / "index").glob("*.jsonl"))[-1]
    with index.open("a") as f:
        f.write('{"segment": "x"')
    cut = follow(grown)
    assert cut is not None and len(cut.rows) == len(grown.rows) and any("no newline" in n for n in cut.notes)


def test_follow_after_truncate_and_rewrite(tmp_path):
    """A line file cut short, or rewritten in place (the same size included), is read again whole: no false
    "wrong type" problem from a tail that starts mid-line, no rows lost."""
    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    run = open_run(str(root))
    index = sorted((root / "index").glob("*.jsonl"))[-1]
    whole = index.read_bytes()
    lines = whole.splitlines(keepends=True)
    index.write_bytes(b"".join(lines[:-4]))  # truncated: the last group gone
    cut = follow(run)
    assert cut is not None and len(cut.rows) == len(run.rows) - 4 and cut.problems == run.problems
    index.write_bytes(whole)  # rewritten to its first content: longer again, not an append of what was read
    back = follow(cut)
    assert back is not None and len(back.rows) == len(run.rows) and back.problems == run.problems
    # the same size, other content: one rollout's reward changed in place
    first = json.loads(lines[0])
    old = json.dumps(first["reward"]).encode()
    new = (b"0." + b"5" * (len(old) - 2)) if len(old) > 2 else b"7"
    assert len(new) == len(old)
    same = whole.replace(b'"reward":' + old, b'"reward":' + new, 1) if b'"reward":' + old in whole else \
        whole.replace(b'"reward": ' + old, b'"reward": ' + new, 1)
    assert same != whole and len(same) == len(whole)
    st = index.stat()
    index.write_bytes(same)
    os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a clock coarser than the test: still newer
    again = follow(back)
    assert again is not None and len(again.rows) == len(run.rows) and again.problems == run.problems
    key = (first["segment"], first["group_id"], first["rollout"])
    assert again.entries[key].reward == float(new)
    assert follow(again) is None


def test_a_huge_index_line_is_named_and_skipped(tmp_path):
    """One line of 2 MB (a title an attacker made long) is a problem naming its file and line; the run's other
    rows are read, and nothing of the long line reaches a page."""
    from rollout_trace.artifact.run import MAX_LINE_BYTES

    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    index = sorted((root / "index").glob("*.jsonl"))[-1]
    lines = index.read_text().splitlines()
    big = json.loads(lines[0])
    big["title"] = "x" * (MAX_LINE_BYTES + 10)
    big["group_id"] = 999
    index.write_text("\n".join(lines[:2] + [json.dumps(big)] + lines[2:]) + "\n")
    run = open_run(str(root))
    assert len(run.rows) == 52 and max(len(r.title) for r in run.rows) < 1000
    bad = [p for p in run.problems if p.field == "line 3"]
    assert len(bad) == 1 and bad[0].file.endswith(index.name) and "bytes" in bad[0].found


def test_a_run_request_is_checked_once():
    """Everything the page sends (event data, server requests, link values) goes through one parse."""
    req = run_page.run_request({"action": "open", "src": " trl-run ", "row": "g" * 5000, "task": "t" * 100,
                                "version": "3", "turn": "-1", "a": 7, "b": None})
    assert req.action == "open" and req.src == "trl-run" and len(req.row) == run_page.MAX_TEXT
    assert req.task == "t" * run_page.MAX_TASK and req.version == 3 and req.turn == 0 and req.a == "" == req.b
    for bad in ("1.5", "1e3", "99999999999", True, [3], "٣"):
        assert run_page.run_request({"version": bad}).version is None
    assert run_page.run_request(None) == run_page.run_request([1, 2]) == run_page.RunRequest()
