"""Reading a recorded run (rollout_trace/artifact/run.py) and checking it (`viewer check`), on the bundled examples/trl-run.

Fast: no TRL child, no training. The run is read from its index, segment and consumption files only, as a
folder, a zip and a bundled name, and opens as a collection; damage of every kind is named by file and field.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import zip_folder
from rollout_trace.artifact.sources import EXAMPLES_DIR

RUN = EXAMPLES_DIR / "trl-run"


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
    recorded = {(e.segment, x.ordinal) for e in run.entries.values() for x in e.rows}
    assert run.consumed and all((c.segment, c.ordinal) in recorded for c in run.consumed)  # nothing lost
    assert all(s.end.write_errors == 0 and s.end.first_error is None for s in run.segments)
    a = run.open(next(r.path for r in run.rows if r.path))
    assert a.trl is not None and a.tokenizer_dir == RUN / "tokenizer"
    run.close()


def test_a_run_indexes_as_a_collection_without_listing_its_folders(monkeypatch):
    from rollout_trace.artifact import stores
    from rollout_trace.artifact.collection import open_collection

    def no_walk(self, *a, **k):
        raise AssertionError("a run is indexed from its index files, never by listing its folders")

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


def test_a_write_cut_short_is_skipped_and_said(run_copy):
    from rollout_trace.artifact.run import open_run

    index = next((run_copy / "index").glob("*.jsonl"))
    whole = index.read_bytes()
    index.write_bytes(whole + whole.splitlines()[0][:40])  # SIGKILL in the middle of appending a line
    run = open_run(str(run_copy))
    assert run.problems == [] and any("no newline" in n for n in run.notes)
    first, rest = whole.split(b"\n", 1)
    index.write_bytes(first.replace(b'"policy_version":', b'"policy_version":"one","x":', 1) + b"\n" + rest)
    bad = open_run(str(run_copy))
    [problem] = bad.problems
    assert problem.file == f"index/{index.name}" and problem.field.startswith("line 1")
    assert len(bad.rows) == len(run.rows) - 1  # the other lines are read


def test_check_names_rows_that_are_not_what_trl_queued(run_copy, capsys):
    import numpy as np
    from safetensors.numpy import load_file, save_file

    from viewer.cli import main

    rows = next(run_copy.glob("groups/*/rollout-00/trl/rows.safetensors"))
    arrays = load_file(str(rows))
    arrays["completion_mask"] = np.roll(arrays["completion_mask"], 1)
    save_file(arrays, str(rows))
    assert main(["check", str(run_copy)]) == 1
    out = capsys.readouterr().out
    assert "trl/rows.safetensors" in out and "fingerprint" in out


def test_check_names_a_consumption_line_for_another_row(run_copy, capsys):
    from viewer.cli import main

    log = next(p for p in (run_copy / "consumed").glob("*.jsonl"))
    lines = log.read_text().splitlines()
    first = json.loads(lines[0])
    first["fingerprint"] = "0" * 24
    log.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert main(["check", str(run_copy)]) == 1
    out = capsys.readouterr().out
    assert "INVALID consumption log" in out and "not the row the worker recorded" in out


def test_check_notes_a_group_the_index_does_not_name(run_copy, capsys):
    from viewer.cli import main

    group = sorted((run_copy / "groups").iterdir())[-1]
    index = next((run_copy / "index").glob(f"{group.name.split('-v')[0]}.jsonl"))
    index.write_text("".join(line + "\n" for line in index.read_text().splitlines() if group.name not in line))
    assert main(["check", str(run_copy)]) == 0  # what the recorder left between a rename and its index lines
    assert "no index line names" in capsys.readouterr().out


def test_the_index_and_the_consumption_log_load_with_datasets():
    from datasets import load_dataset

    index = load_dataset("json", data_files=str(RUN / "index" / "*.jsonl"), split="train")
    consumed = load_dataset("json", data_files=str(RUN / "consumed" / "*.jsonl"), split="train")
    assert len(index) == sum(len(p.read_text().splitlines()) for p in (RUN / "index").glob("*.jsonl"))
    assert {"trained", "read-ahead"} <= set(consumed["fate"])
    assert set(index["status"]) == {"ok", "failed", "unscorable", "timed-out"}


def test_not_a_run_is_said():
    from rollout_trace.artifact import ArtifactError
    from rollout_trace.artifact.run import open_run

    with pytest.raises(ArtifactError, match="not a recorded TRL run"):
        open_run(str(EXAMPLES_DIR / "smollm2-group"))
