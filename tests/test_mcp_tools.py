"""The agent tools through Gradio's MCP server, driven by the MCP Python client against the running app
(viewer/ui/mcp_tools.py): only the read-only tools are listed, each answers on the bundled run, and a public app
refuses a server path like the web page does."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import ROOT


def _launch(public: bool):
    from viewer.ui.app import build_app, launch_options

    demo = build_app(default_source="trl-run", public=public, mcp=True)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True,
                            mcp_server=True, **launch_options(public, demo))
    return demo, url.rstrip("/")


@pytest.fixture(scope="module")
def mcp_url():
    demo, url = _launch(public=True)
    yield f"{url}/gradio_api/mcp/"
    demo.close()


def _session(url: str, calls):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def go():
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await calls(s)

    return asyncio.run(go())


def _text(result) -> dict:
    return json.loads(result.content[0].text)


def test_only_the_read_only_tools_are_listed(mcp_url):
    tools = _session(mcp_url, lambda s: s.list_tools())
    names = {t.name for t in tools.tools}
    assert names == {"list_open", "run_summary", "find_rollouts", "rollout_turn", "compare_rollouts", "compare_runs"}
    find = next(t for t in tools.tools if t.name == "find_rollouts")
    assert "regex" in find.description and "pattern" in find.inputSchema["properties"]


def test_the_tools_answer_on_the_bundled_run(mcp_url):
    async def calls(s):
        listed = _text(await s.call_tool("list_open", {}))
        summary = _text(await s.call_tool("run_summary", {"source": "trl-run"}))
        found = _text(await s.call_tool("find_rollouts", {"source": "trl-run", "pattern": "Wrote file",
                                                         "where": "tool-output", "versions": "2:3"}))
        flagged = _text(await s.call_tool("find_rollouts", {"source": "trl-run", "rule": "drift-fork"}))
        hit = found["hits"][0]
        turn = _text(await s.call_tool("rollout_turn", {"source": "trl-run", "path": hit["path"], "turn": hit["turn"],
                                                       "start": hit["token"], "count": 5}))
        a, b = flagged["hits"][0]["path"], flagged["hits"][1]["path"]
        compared = _text(await s.call_tool("compare_rollouts", {"source": "trl-run", "a": a, "b": b, "turn": 1}))
        bad = _text(await s.call_tool("find_rollouts", {"source": "trl-run", "pattern": "/(/"}))
        runs = _text(await s.call_tool("compare_runs", {"a": "trl-run", "b": "trl-run"}))
        task = _text(await s.call_tool("compare_runs", {"a": "trl-run", "b": "trl-run", "task": runs["tasks"][0]["task_id"]}))
        return listed, summary, found, flagged, turn, compared, bad, runs, task

    listed, summary, found, flagged, turn, compared, bad, runs, task = _session(mcp_url, calls)
    assert {"source": "trl-run", "kind": "run"} in listed["sources"]
    assert [v["version"] for v in summary["versions"]] == [1, 2, 3, 4] and summary["notes"]
    assert any(r["rule"] == "drift-fork" and r["total"] > 0 for r in summary["findings"])
    assert found["rollouts"] > 0 and set(found["per_version"]) <= {"2", "3"}
    assert flagged["hits"][0]["field"] == "finding: drift-fork"
    assert turn["start"] == hit_start(found) and "".join(t[0] for t in turn["tokens"]).startswith("Wrote")
    assert all(t[1] in (0, 1) for t in turn["tokens"]) and "status" in turn["fate"]
    assert compared["a"]["path"] != compared["b"]["path"] and "generated" in compared["a"]
    assert "not a valid regular expression" in bad["error"]
    assert [p["version"] for p in runs["by_version"]] == [1, 2, 3, 4]  # the run beside itself: equal sides
    assert all(p["a"] == p["b"] and p["a"]["rollouts"] > 0 for p in runs["by_version"])
    assert runs["a"]["rollouts"] == 52 and len(runs["tasks"]) == 11 and runs["task"] is None
    assert task["task"]["task_id"] == runs["tasks"][0]["task_id"] and task["a_task"] == task["b_task"]
    assert [g["version"] for g in task["a_task"]["groups"]] == [2, 3]


def test_an_agents_four_questions_each_answer_in_one_call(mcp_url):
    """What did rollout v3 g2 r1 generate at turn 1 (by the name the pages show), how much of the run did a search
    read, a range of versions' numbers, and two rollouts compared by their short names: each answer whole, small."""
    async def calls(s):
        turn = await s.call_tool("rollout_turn", {"source": "trl-run", "path": "v3 g2 r1", "turn": 1})
        found = await s.call_tool("find_rollouts", {"source": "trl-run", "pattern": "solution.py"})
        summary = await s.call_tool("run_summary", {"source": "trl-run", "versions": "2:3"})
        compared = await s.call_tool("compare_rollouts", {"source": "trl-run", "a": "v3 › group 2 › rollout 1",
                                                         "b": "v3 g2 r0", "turn": 1})
        ambiguous = await s.call_tool("rollout_turn", {"source": "trl-run", "path": "v7 g0 r0"})
        return [r.content[0].text for r in (turn, found, summary, compared, ambiguous)]

    texts = _session(mcp_url, calls)
    assert all(len(t.encode()) <= 100_000 for t in texts)
    turn, found, summary, compared, missing = (json.loads(t) for t in texts)
    assert turn["path"] == "groups/20261203T090916Z-f44f09-v000003-g000002/rollout-01"
    # the tokens start at the first generated one, and the generated text is theirs, whole
    assert turn["start"] == turn["prompt_tokens"] and {t[1] for t in turn["tokens"]} == {1}
    assert turn["generated"].startswith("".join(t[0] for t in turn["tokens"][:20]))
    assert turn["generated"].startswith("<tool_call>") and "solution.py" in turn["generated"]
    assert [c["name"] for c in turn["tool_calls"]] == ["bash"] and turn["tool_calls"][0]["result"] == "3\n"
    assert turn["fate"]["version"] == 3 and turn["fate"]["group"] == 2 and turn["fate"]["rollout_index"] == 1
    # coverage in the answer's fields: every rollout of the run was read
    assert found["searched"] == found["of"] == 52 and found["partial"] is False and found["rollouts"] > 0
    assert [v["version"] for v in summary["versions"]] == [2, 3]
    assert compared["a"]["path"] == turn["path"] and compared["b"]["path"].endswith("g000002/rollout-00")
    assert missing == {"error": "no rollout v7 g0 r0 in this run"}


def hit_start(found: dict) -> int:
    return found["hits"][0]["token"]


def test_a_public_app_opens_no_server_path(mcp_url):
    run = str(ROOT / "examples" / "trl-run")  # a run on the server's disk: only its bundled name opens it
    async def calls(s):
        return [_text(await s.call_tool(name, args)) for name, args in (
            ("run_summary", {"source": run}), ("find_rollouts", {"source": run, "pattern": "Wrote"}),
            ("rollout_turn", {"source": run, "path": "groups"}), ("compare_rollouts", {"source": "/", "a": "x", "b": "y"}),
            ("compare_runs", {"a": "trl-run", "b": run}))]

    for answer in _session(mcp_url, calls):
        assert set(answer) == {"error"} and run not in answer["error"]


def test_the_page_endpoints_stay_callable_but_unlisted():
    """With the tools on, the page's own events are undocumented: not tools, not in the API docs, still callable."""
    from viewer.ui.app import build_app
    from viewer.ui.mcp_tools import TOOLS

    demo = build_app(default_source="trl-run", mcp=True)
    assert set(demo.get_api_info()["named_endpoints"]) == {f"/{t}" for t in TOOLS}
    assert {fn.api_visibility for fn in demo.fns.values() if fn.api_name == "on_open"} == {"undocumented"}
