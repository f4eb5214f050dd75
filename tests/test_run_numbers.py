"""A number no column holds (a policy version of 10**30 in a hostile run) is a named problem where the line is
read (rollout_trace/artifact/run_format.py's `Whole`), never an OverflowError in a column, a tool or the server's
log: the run still opens, without that line, and every reader says which file, line and field."""

from __future__ import annotations

import json

import pytest

from rollout_trace.artifact.run import open_run
from support.hostile_rollouts import huge_number_run
from viewer.run_page import version_stats
from viewer.ui.mcp_tools import McpTools
from viewer.ui.service import Service


@pytest.fixture(scope="module")
def huge(tmp_path_factory):
    return huge_number_run(tmp_path_factory.mktemp("huge") / "run")


def test_the_line_is_named_and_left_out(huge):
    run = open_run(str(huge))
    said = [p for p in run.problems if "policy_version" in str(p)]
    assert said and "line 1" in str(said[0]) and "9007199254740992" in str(said[0])
    assert max(s.version for s in version_stats(run)) == 4  # the rest of the run, as recorded


def test_the_tools_and_the_command_line_answer(huge, capsys):
    from viewer.cli import main

    tools = McpTools(Service("trl-run", public=False))
    summary = json.loads(tools.run_summary(str(huge)))
    assert "error" not in summary and [v["version"] for v in summary["versions"]] == [1, 2, 3, 4]
    both = json.loads(tools.compare_runs(str(huge), "trl-run"))
    assert "error" not in both and both["by_version"]
    assert main(["compare-runs", str(huge), "trl-run"]) == 0
    assert "internal error" not in capsys.readouterr().err


def test_every_whole_number_of_an_index_line_is_bounded(tmp_path):
    for field in ("group_id", "rollout", "trained_tokens", "tokens", "tool_calls"):
        run = open_run(str(huge_number_run(tmp_path / field, -(10**20), field)))
        assert any(field in str(p) and "line 1" in str(p) for p in run.problems), field
