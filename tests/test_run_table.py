"""The run index as Arrow columns (rollout_trace/artifact/run_table.py): the same numbers as the row reader,
filters and sorts in Arrow, one state read once, grown tails followed incrementally, truncation and rewrites
read again, and any float survived."""

from __future__ import annotations

import json
import math
import os
import shutil

import pyarrow.compute as pc
import pytest
from test_run_page import add_version

from rollout_trace.artifact import run_table as rt
from rollout_trace.artifact.run import open_run
from rollout_trace.artifact.sources import EXAMPLES_DIR
from viewer.run_page import version_stats


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", r)
    return r


def _index(root):
    return sorted((root / "index").glob("*.jsonl"))[-1]


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


def test_one_read_per_state_and_the_grown_tail_only(root, monkeypatch):
    first = rt.run_table(root)
    assert rt.run_table(root) is first  # a cached reopen is a lookup
    before = first.per_version("reward")
    assert first.per_version("reward") is before  # once per state
    reads = []
    real = rt._read
    monkeypatch.setattr(rt, "_read", lambda p, o, n: (reads.append((p.name, o)), real(p, o, n))[1])
    add_version(root, 5)
    t = rt.run_table(root)
    assert t is first and len(t) == 56
    assert all(o > 0 for name, o in reads if name == _index(root).name)  # from where it stopped, never from 0
    after = t.per_version("reward").to_pylist()
    assert [x["version"] for x in after] == [1, 2, 3, 4, 5] and after[:4] == before.to_pylist()


def test_truncated_and_rewritten_files_are_read_again(root):
    t = rt.run_table(root)
    index = _index(root)
    whole = index.read_bytes()
    lines = whole.splitlines(keepends=True)
    index.write_bytes(b"".join(lines[:-4]))
    assert t.follow() and len(t) == 48
    index.write_bytes(whole)
    assert t.follow() and len(t) == 52
    first = json.loads(lines[0])
    same = whole.replace(f'"reward":{json.dumps(first["reward"])}'.encode(), b'"reward":0.5', 1) \
        if len(json.dumps(first["reward"])) == 3 else None
    if same is None:
        pytest.skip("the first line's reward is not three characters")
    st = index.stat()
    index.write_bytes(same)
    os.utime(index, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert t.follow() and len(t) == 52
    assert t.page(pc.field("rollout_id") == first["rollout_id"], limit=1)[1][0]["reward"] == 0.5


@pytest.mark.parametrize("extreme", [1.7976931348623157e308, math.nan, math.inf])
def test_any_float_survives(root, extreme):
    index = _index(root)
    lines = [json.loads(x) for x in index.read_text().splitlines()]
    with index.open("w") as f:
        for i, x in enumerate(lines):
            x["reward"] = extreme if i % 2 else 1.7976931348623157e308
            f.write(json.dumps(x) + "\n")
    got = rt.run_table(root).per_version("reward").to_pylist()
    for v in got:
        assert v["reward_mean"] is None or math.isfinite(v["reward_mean"])
        assert v["reward_max"] is None or math.isfinite(v["reward_max"])


def test_a_bad_line_costs_only_itself(root):
    index = _index(root)
    with index.open("a") as f:
        f.write('{"segment": 3}\n')
    assert len(rt.run_table(root)) == 52
    with pytest.raises(rt.RunTableError, match="not a recorded run"):
        rt.run_table(root / "index")


def test_per_version_as_plain_rows(root):
    rows = rt.per_version(root, "timed_out", ("sum", "count"))
    run = open_run(str(root))
    assert [r["timed_out_sum"] for r in rows] == [sum(x.timed_out for x in run.rows if x.policy_version == r["version"])
                                                  for r in rows]


def test_lines_naming_folders_outside_the_run_are_left_out_and_named(root):
    """An index line is data: one naming `../../etc`, or a rollout outside its group, is not a row (the reader's
    rule, rollout_trace/artifact/run.py `_inside`), the page says which, and a linked index file is not followed."""
    index = sorted((root / "index").glob("*.jsonl"))[0]
    lines = index.read_text().splitlines()
    for i in range(2):
        x = json.loads(lines[i])
        x["path"] = x["group_path"] = "../../etc"
        lines[i] = json.dumps(x)
    x = json.loads(lines[2])
    x["path"] = x["group_path"] + "/../x"
    lines[2] = json.dumps(x)
    index.write_text("\n".join(lines) + "\n")
    (root / "index" / "evil.jsonl").symlink_to("/etc/passwd")
    t = rt.run_table(root)
    run = open_run(str(root))
    assert len(t) == len(run.rows) == 49 and version_stats(t) == version_stats(run)
    said = [str(p) for p in t.problems()]
    assert sum("lies outside the run's groups" in p for p in said) == 3 and "'../../etc'" in said[0]
    assert "index/evil.jsonl: cannot be read (a symbolic link, not followed)" in said
    assert not any("root:" in p for p in said)


@pytest.mark.parametrize("per_line", [1 / 3, 2.5])
def test_chunks_cut_anywhere_read_the_same_rows(root, monkeypatch, per_line):
    """A chunk ends mid-line (its last line is read again with the next chunk), a line is longer than a chunk
    (read whole), and a half-written last line waits for its newline: the rows are the whole read's."""
    whole = rt._read_table(root)
    lines = max(len(x) for p in (root / "index").glob("*.jsonl") for x in p.read_bytes().splitlines())
    monkeypatch.setattr(rt, "CHUNK_BYTES", int(lines * per_line))
    small = rt._read_table(root)
    assert small.table.num_rows == whole.table.num_rows and small.table.to_pylist() == whole.table.to_pylist()
    assert small.ordinals.to_pylist() == whole.ordinals.to_pylist()
    assert small.consumed.to_pylist() == whole.consumed.to_pylist() and small.consumed.num_rows
    path = _index(root)
    last = path.read_bytes().splitlines(keepends=True)[-1]
    with path.open("ab") as f:
        f.write(last[:50])  # a write cut short: not a row yet
    small.follow()
    assert len(small) == len(whole)
    with path.open("ab") as f:
        f.write(last[50:])
    small.follow()
    assert len(small) == len(whole) + 1
