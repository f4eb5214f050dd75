"""A number no page holds exactly (a policy version of 2**60 in a hostile shard, 10**30 in a segment's JSON file)
is a named problem where it is read (rollout_trace/artifact/run_format.py's `Whole`, run_table.py's `_fits`), never
an OverflowError or a rounded number in a column, a tool or the server's log: the run still opens without that
row, and every reader says which file, row and field."""

from __future__ import annotations

import json

import pytest

from rollout_trace.artifact.run import open_run
from support.hostile_rollouts import huge_number_run
from viewer.run_stats import version_stats
from viewer.ui.mcp_tools import McpTools
from viewer.ui.service import Service


@pytest.fixture(scope="module")
def huge(tmp_path_factory):
    return huge_number_run(tmp_path_factory.mktemp("huge") / "run")


def test_the_row_is_named_and_left_out(huge):
    run = open_run(str(huge))
    said = [p for p in run.problems if str(2**60) in str(p)]
    assert len(said) == 1 and "rollouts/" in said[0].file and said[0].field == "row 0"
    assert "2**53" in str(said[0])
    assert max(s.version for s in version_stats(run)) == 4  # the rest of the run, as recorded
    assert len(run.table) == len(open_run("trl-run").table) - 1


def test_the_tools_and_the_command_line_answer(huge, capsys):
    from viewer.cli import main

    tools = McpTools(Service("trl-run", public=False))
    summary = json.loads(tools.run_summary(str(huge)))
    assert "error" not in summary and [v["version"] for v in summary["versions"]] == [1, 2, 3, 4]
    both = json.loads(tools.compare_runs(str(huge), "trl-run"))
    assert "error" not in both and both["by_version"]
    assert main(["compare-runs", str(huge), "trl-run"]) == 0
    assert "internal error" not in capsys.readouterr().err


@pytest.mark.parametrize("folder, field", [("segments", "groups_written"), ("consumed", "global_step")])
def test_a_whole_number_of_a_json_file_is_bounded(tmp_path, folder, field):
    root = huge_number_run(tmp_path / "run", 1, "policy_version")  # the bundled run, as it is
    end = sorted((root / folder).glob("*.end.json"))[0]
    doc = json.loads(end.read_text())
    doc[field] = 10**30
    end.write_text(json.dumps(doc))
    run = open_run(str(root))
    said = [p for p in run.problems if end.name in p.file]
    assert said and field in str(said[0]) and str(10**30) in str(said[0]), [str(p) for p in run.problems]
    assert len(run.table) == len(open_run("trl-run").table)
