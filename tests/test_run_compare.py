"""Two runs compared (viewer/run_compare.py, viewer/ui/run_view.py `versus`): the bundled run beside a copy whose
rewards and tasks were changed (tests/support/second_run.py): each side's numbers per version, the tasks matched by
id and by title, one task across both with each side's rollouts, and the page's server function keeping a
public app's bounds."""

from __future__ import annotations

import msgspec
import pytest

from rollout_trace.artifact.run import open_run
from support.second_run import NEW_ID, second_run
from viewer import run_compare
from viewer.run_stats import version_stats


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    other = second_run(tmp_path_factory.mktemp("runs") / "other-run")
    a, b = open_run("trl-run"), open_run(str(other))
    return a, b, str(other)


def test_each_side_has_its_own_numbers_per_version(pair):
    a, b, other = pair
    c = run_compare.compare("trl-run", a, version_stats(a), other, b, version_stats(b))
    assert c.a.src == "trl-run" and c.b.src == other
    assert [s.version for s in c.a.versions] == [s.version for s in c.b.versions] == [1, 2, 3, 4]
    for sa, sb in zip(c.a.versions, c.b.versions, strict=True):
        assert sa.scored == sb.scored
        if sa.reward_mean is not None:
            assert sb.reward_mean == pytest.approx(1 - sa.reward_mean, abs=1e-3)  # every reward r became 1 - r
    assert c.a.pass_rate is not None and c.b.pass_rate == pytest.approx(1 - c.a.pass_rate)
    assert c.notes == ["1 of the 10 shared tasks were matched by title (their task ids differ)"]
    assert c.task is None and c.a_task is None and c.b_task is None


def test_tasks_match_by_id_then_by_title(pair):
    a, b, _ = pair
    tasks = {t.title.split("]")[0] + "]": t for t in run_compare.shared_tasks(a, b)}
    assert len(tasks) == 10 and "[task 6]" not in tasks  # renamed in the other run: matched by nothing
    assert tasks["[task 5]"].by == "title" and tasks["[task 5]"].b_task_id == NEW_ID
    assert tasks["[task 0]"].by == "id" and tasks["[task 0]"].b_task_id == tasks["[task 0]"].task_id
    first = run_compare.shared_tasks(a, b)[0]
    assert first.a_versions + first.b_versions == 4  # followed at two versions on each side: listed first


def test_one_task_across_both_runs(pair):
    a, b, other = pair
    t5 = next(t for t in run_compare.shared_tasks(a, b) if t.title.startswith("[task 5]"))
    c = run_compare.compare("trl-run", a, version_stats(a), other, b, version_stats(b), task=t5.task_id)
    assert c.task == t5 and c.a_task is not None and c.b_task is not None
    assert c.a_task.task_id == t5.task_id and c.b_task.task_id == NEW_ID
    assert [g.version for g in c.a_task.groups] == [g.version for g in c.b_task.groups] == [2, 3]
    for ga, gb in zip(c.a_task.groups, c.b_task.groups, strict=True):
        for ra, rb in zip(ga.rollouts, gb.rollouts, strict=True):
            assert ra.path == rb.path and ra.status == rb.status  # the same rollouts, other rewards
            if ra.reward is not None:
                assert rb.reward == pytest.approx(1 - ra.reward) and ra.passed != rb.passed
    missing = run_compare.compare("trl-run", a, version_stats(a), other, b, version_stats(b), task="0" * 40)
    assert missing.task is None and "no task matching" in missing.notes[-1]
    doc = msgspec.json.decode(msgspec.json.encode(c))  # what the page receives: every field there
    assert set(doc) == set(run_compare.RunCompare.__struct_fields__)


def _run_view(public: bool):
    from viewer.ui.run_view import RunView
    from viewer.ui.service import Service

    return RunView(Service("trl-run", public=public))


def test_the_server_function_opens_the_other_run_as_the_page_does(pair):
    _, _, other = pair
    private = _run_view(public=False)
    got = private.versus({"src": "trl-run", "vs": other, "task": ""})
    assert got["compare"]["b"]["src"] == other and len(got["compare"]["tasks"]) == 10
    public = _run_view(public=True)
    refused = public.versus({"src": "trl-run", "vs": other})
    assert refused == {"error": "the other run cannot be compared: it is not a recorded run (a public app opens "
                                "bundled runs and Hub dataset ids)"}
    assert other not in str(refused)
    same = public.versus({"src": "trl-run", "vs": "trl-run"})  # a bundled run is open to anyone
    assert same["compare"]["a"]["versions"] == same["compare"]["b"]["versions"]
    assert "both sides are the same run: each line lies on the other" in same["compare"]["notes"]
    # a Hub id that cannot be had says why (here: offline), not that it is no run
    for view in (public, private):
        missing = view.versus({"src": "trl-run", "vs": "nobody/no-such-run"})
        assert missing["error"].startswith("the other run cannot be compared: nobody/no-such-run: not found"), missing
    assert public.versus("nonsense") == {"error": "a request is {src, vs, task}"}
    assert public.versus({"src": "/etc", "vs": "trl-run"}) == {"error": "no such run"}


def test_the_agent_tool_aligns_the_runs_by_version(pair):
    import json

    from viewer.ui.mcp_tools import McpTools
    from viewer.ui.service import Service

    _, _, other = pair
    tools = McpTools(Service("trl-run", public=False))
    got = json.loads(tools.compare_runs("trl-run", other))
    assert [p["version"] for p in got["by_version"]] == [1, 2, 3, 4] and "versions" not in got["a"]
    for p in got["by_version"]:
        assert p["a"]["rollouts"] == p["b"]["rollouts"] and p["a"]["pass_rate"] + p["b"]["pass_rate"] == pytest.approx(1)
    assert len(got["tasks"]) == 10 and got["notes"]
    assert json.loads(tools.compare_runs("trl-run", "smollm2-group")) == {"error": "run b is a collection, not a recorded run"}


def test_the_command_line_prints_both_runs(pair, capsys):
    import json

    from viewer.cli import main

    _, _, other = pair
    assert main(["compare-runs", "trl-run", other]) == 0
    out = capsys.readouterr().out
    assert "A: trl-run" in out and f"B: {other}" in out and "10 task(s) in both runs" in out and "matched by title" in out
    assert main(["compare-runs", "trl-run", other, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["by_version"]) == 4 and doc["b"]["src"] == other
    assert main(["compare-runs", "trl-run", other + "-missing"]) == 1
    assert "not a recorded run" in capsys.readouterr().err
