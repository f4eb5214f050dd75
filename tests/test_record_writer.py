"""The recorder's writer on groups TRL's own code scored (support/record_groups.py), in-process and fast.

A failed rollout that a user reward function scored keeps TRL's reward and advantage and has no files; a
rollout whose artifact cannot be built is recorded without it, its problem named, and its group written; a
failure of the recorder's own code, a TRL name it calls broken after the worker's pin check included, is
loud at the first group: an ERROR with its traceback, the marker the main process reads, the end file's
`first_error`, and `viewer check` and the run page say so.
"""

from __future__ import annotations

import importlib
import json
import logging
import os

import pytest

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def _write(tmp_path, groups, segment="seg"):
    from rollout_trace.record.manifest import begin_segment
    from rollout_trace.record.writer import GroupWriter

    begin_segment(tmp_path, segment, {"model_name": "tiny-llama", "num_generations": 4}, 0)
    w = GroupWriter(tmp_path, segment)
    for g in groups:
        w.put(g)
    end = w.close(60, rollouts_never_scored=0, handoff_s=0.0, max_queued_samples=0)
    return w, end


def test_a_failed_rollout_keeps_the_reward_and_advantage_trl_computed(tmp_path, capsys):
    from rollout_trace.artifact.run import open_run
    from rollout_trace.artifact.run_schema import ARTIFACT_FILES
    from support.record_groups import scored_group
    from support.trl_replay import brevity_reward
    from viewer.cli import main

    group, samples = scored_group(0, 0, fail=(2,), reward_funcs=(brevity_reward,))
    _, end = _write(tmp_path, [group])
    assert end.write_errors == 0 and end.groups_written == 1 and end.first_error is None
    run = open_run(str(tmp_path))
    rows = {r.rollout: r for r in run.rows}
    failed = rows[2]
    assert failed.status == "failed" and failed.path is None and failed.rows == 0 and failed.problem is None
    # TRL's reward function scored the empty completion: 0.1 - 0 messages, plus the harness's NaN column
    assert failed.reward == brevity_reward([[]])[0] == 0.1
    by_rollout = {s.metrics["reward"]: s.advantage for s in samples}
    for i in (0, 1, 3):  # the rollouts with rows: TRL's values from its samples
        assert rows[i].advantage == by_rollout[rows[i].reward]
    # the failed one's is what TRL's _score_group computed for it: it counts in the baseline, trains nothing
    assert failed.advantage is not None and failed.advantage != 0.0
    g = run.group(failed.group)  # its group keeps it: TRL's reward and advantage, no files
    assert g is not None and g.k == 4 and g.statuses[2] == "failed"
    assert g.rewards[2] == 0.1 and g.advantages[2] == failed.advantage
    at = run.table.column("rollout").to_pylist()
    files = run.table.rollout_files(at.index(2), list(ARTIFACT_FILES))
    assert all(v is None for v in files.values())  # its row holds no artifact file
    assert run.table.rollout_files(at.index(0), ["file_summary"])["file_summary"] is not None
    run.close()
    assert main(["check", str(tmp_path)]) == 0, capsys.readouterr().out


def test_a_rollout_that_does_not_fit_is_named_and_its_group_kept(tmp_path, monkeypatch, caplog):
    from rollout_trace.artifact.run import open_run
    from rollout_trace.record import build
    from rollout_trace.record.writer import error_marker
    from support.record_groups import scored_group

    real = build.derive_turn
    calls = {"n": 0}

    def sometimes(n, call):  # the second rollout's first turn does not fit our model
        calls["n"] += 1
        if calls["n"] == 4:
            raise ValueError("a call the turn model cannot hold")
        return real(n, call)

    monkeypatch.setattr(build, "derive_turn", sometimes)
    group, samples = scored_group(0, 0)
    with caplog.at_level(logging.WARNING, logger="rollout_trace.record"):
        _, end = _write(tmp_path, [group])
    assert end.groups_written == 1 and end.write_errors == 0 and end.rollout_problems == 1
    assert "a call the turn model cannot hold" in end.first_error
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info and "the recorder failed" in errors[0].getMessage()
    assert "cannot hold" in error_marker(tmp_path, "seg").read_text()
    run = open_run(str(tmp_path))
    assert len(run.rows) == 4 and run.problems == []
    bad = [r for r in run.rows if r.problem]
    assert len(bad) == 1 and bad[0].path is None and bad[0].status == "ok" and bad[0].rows > 0
    assert {o for r in run.rows for o in r.ordinals} == set(range(len(samples)))  # every TRL row is indexed
    assert bad[0].advantage == samples[bad[0].ordinals[0]].advantage
    run.close()


PINNED = [  # the TRL names the recorder calls on every rollout (rollout_trace/analysis/training.py, scores.py)
    ("trl.experimental.async_grpo.async_rollout_worker", "_chain_to_sequences"),
    ("trl.experimental.async_grpo.openenv_harness", "_turns_from_training_trace"),
    ("trl.experimental.async_grpo.async_rollout_worker", "TurnRecord"),
    ("trl.experimental.async_grpo.async_rollout_worker", "TrainingSequence"),
]


@pytest.mark.parametrize("module, name", PINNED)
def test_a_broken_pinned_name_is_loud_at_the_first_group(tmp_path, monkeypatch, caplog, capsys, module, name):
    """The worker's pin check names it before training (test_record_pins.py); broken later, the first group
    says so: one ERROR with the traceback, the marker, the end file, the run page and `viewer check`."""
    from rollout_trace.artifact.run import open_run
    from rollout_trace.record import pins
    from rollout_trace.record.writer import error_marker
    from support.record_groups import scored_group
    from support.trl_replay import brevity_reward
    from viewer import run_stats
    from viewer.cli import main

    groups = [scored_group(g, 7 * g, fail=(1,), reward_funcs=(brevity_reward,))[0] for g in range(2)]
    monkeypatch.delattr(importlib.import_module(module), name)
    assert any(name in b for b in pins.check())
    with caplog.at_level(logging.WARNING, logger="rollout_trace.record"):
        _, end = _write(tmp_path, groups)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None  # loud once, at the first group
    assert "group 0" in errors[0].getMessage() or "group 0" in (end.first_error or "")
    assert name in (end.first_error or "") and error_marker(tmp_path, "seg").is_file()
    run = open_run(str(tmp_path))
    assert {r.group_id for r in run.rows} == {0, 1} or end.write_errors == 2  # the rest recorded, or counted
    notes = run_stats.recorder_notes(run)
    assert notes and name in " ".join(notes)
    run.close()
    capsys.readouterr()
    main(["check", str(tmp_path)])
    assert name in capsys.readouterr().out


def test_write_errors_and_lost_trained_rows_are_on_the_page_and_in_check(tmp_path, capsys):
    """The run page's first health note counts the groups the recorder could not write; `viewer check` names
    each trained row with nothing recorded behind it (step, group, version)."""
    import shutil

    import msgspec

    from rollout_trace.artifact.run import open_run
    from rollout_trace.artifact.run_format import SegmentEnd, encode_file
    from rollout_trace.artifact.run_schema import CONSUMED, ConsumedRecord, to_table
    from rollout_trace.artifact.run_shards import ShardWriter
    from viewer import run_stats
    from viewer.cli import main

    run_dir = tmp_path / "trl-run"
    shutil.copytree(os.path.join(os.path.dirname(__file__), "..", "examples", "trl-run"), run_dir)
    seg = sorted(p.name[:-len(".end.json")] for p in (run_dir / "segments").glob("*.end.json"))[0]
    end_file = run_dir / "segments" / f"{seg}.end.json"
    end = msgspec.json.decode(end_file.read_bytes(), type=SegmentEnd)
    end_file.write_bytes(encode_file(msgspec.structs.replace(end, write_errors=2, first_error="boom: KeyError: 'x'")))
    w = ShardWriter(run_dir / "consumed", seg, CONSUMED)  # a further shard of the segment's consumption table
    w.append(to_table([ConsumedRecord(segment=seg, ordinal=99999, fingerprint="0" * 16, fate="trained", step=2,
                                      group_id=41, model_version=3, trainer_version=3,
                                      taken_at="2026-01-01T00:00:00Z")], CONSUMED))
    w.close()
    run = open_run(str(run_dir))
    notes = run_stats.recorder_notes(run)
    assert "could not write 2 scored group(s)" in notes[0] and "boom" in notes[0]
    assert any("1 row(s) the trainer trained have nothing recorded behind them (step(s) 2)" in n for n in notes)
    run.close()
    assert main(["check", str(run_dir)]) == 1
    out = capsys.readouterr().out
    assert "trained at step 2 has nothing recorded behind it" in out and "group 41 at policy version 3" in out
    assert "1 trained row(s) have nothing recorded behind them, at step(s) 2" in out
    assert "2 group(s) could not be written" in out and "boom" in out
    json.dumps(notes)


def test_the_verify_result_is_kept_beside_its_reward_and_shown_where_tests_would_be(tmp_path, capsys):
    """summary.json's run.verify holds what verify() returned beside env_reward: `done` and its metrics,
    scalars as given (numpy's as plain numbers, NaN as null), anything else as bounded text; the verifier
    panel shows them."""
    import numpy as np
    from openenv.core.harness.rollout import VerifyResult

    from rollout_trace.artifact.run import open_run
    from rollout_trace.record.build import MAX_METRIC_TEXT, MAX_METRICS
    from support.record_groups import scored_group
    from viewer.cli import main
    from viewer.render import panels

    group, _ = scored_group(0, 0)
    metrics = {"tests_passed": np.int64(3), "tests_failed": 1, "pass_rate": np.float32(0.75), "flaky": False,
               "nan": float("nan"), "log": "x" * 5000, "obj": object(), "<b>name</b>": "<script>1</script>"}
    metrics |= {f"m{i:03d}": i for i in range(MAX_METRICS)}
    group.rollouts[0].record.verify = VerifyResult(env_reward=1.0, done=True, metrics=metrics)
    group.rollouts[1].record.verify = VerifyResult(env_reward=0.0, done=False)
    _write(tmp_path, [group])
    run = open_run(str(tmp_path))
    rows = {r.rollout: r for r in run.rows}
    a = run.open(rows[0].path)
    v = a.summary.run.verify
    assert v is not None and v.done is True and len(v.metrics) == MAX_METRICS
    assert v.metrics["tests_passed"] == 3 and type(v.metrics["tests_passed"]) is int
    assert v.metrics["pass_rate"] == 0.75 and v.metrics["flaky"] is False and v.metrics["nan"] is None
    assert len(v.metrics["log"]) == MAX_METRIC_TEXT and v.metrics["obj"].startswith("<object object")
    shown = panels.tests(a).verifier
    assert shown is not None and shown.done is True and shown.metric_count == len(v.metrics)
    said = {m.name: m.value for m in shown.metrics}
    assert said["tests_passed"] == "3" and said["pass_rate"] == "0.75" and said["flaky"] == "no"
    assert said["<b>name</b>"] == "<script>1</script>"  # as text: the page draws it with textContent
    b = run.open(rows[1].path)
    assert b.summary.run.verify.done is False and b.summary.run.verify.metrics == {}
    run.close()
    assert main(["check", str(tmp_path)]) == 0, capsys.readouterr().out
