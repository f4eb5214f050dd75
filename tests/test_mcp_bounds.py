"""Every MCP answer is at most 100 KB (viewer/ui/mcp_tools.py), a long one cut where it fits and saying how to ask
for the rest; `list_open` names what this client opened, never another client's sources."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from bench.bench_run_page import make_run
from viewer.ui.mcp_tools import MAX_ANSWER_BYTES, McpTools
from viewer.ui.service import Service

VERSIONS = 2_000  # one group of one rollout each: the run_summary that was 714 KB


@pytest.fixture(scope="module")
def long_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("long")
    make_run(root / "a", versions=VERSIONS, groups=1, k=1)
    make_run(root / "b", versions=VERSIONS, groups=1, k=1)
    return str(root / "a"), str(root / "b")


def _pages(ask) -> list[dict]:
    """Every answer of a paged tool: asked again with `next_versions` until none is said."""
    answers, versions = [], ""
    while True:
        text = ask(versions)
        assert len(text.encode()) <= MAX_ANSWER_BYTES
        answers.append(json.loads(text))
        versions = answers[-1].get("next_versions")
        if not versions:
            return answers
        assert len(answers) < 50


def test_run_summary_of_a_long_run_pages_by_version(long_runs):
    tools = McpTools(Service("trl-run", public=False))
    pages = _pages(lambda v: tools.run_summary(long_runs[0], v))
    shown = [s["version"] for p in pages for s in p["versions"]]
    assert len(pages) > 1 and shown == list(range(1, VERSIONS + 1))  # every version once, in order
    assert "ask again with versions=" in pages[0]["cut"]
    one = json.loads(tools.run_summary(long_runs[0], "7:9"))
    assert [s["version"] for s in one["versions"]] == [7, 8, 9] and "next_versions" not in one
    assert "error" in json.loads(tools.run_summary(long_runs[0], "9:7"))


def test_compare_runs_of_two_long_runs_pages_by_version(long_runs):
    tools = McpTools(Service("trl-run", public=False))
    pages = _pages(lambda v: tools.compare_runs(*long_runs, versions=v))
    shown = [p["version"] for page in pages for p in page["by_version"]]
    assert len(pages) > 1 and shown == list(range(1, VERSIONS + 1))


def test_find_rollouts_of_a_long_run_fits(long_runs):
    tools = McpTools(Service("trl-run", public=False))
    text = tools.find_rollouts(long_runs[0], pattern="", rule="tool-error")
    assert len(text.encode()) <= MAX_ANSWER_BYTES and json.loads(text)["error"] is None


def test_list_open_shows_a_client_only_what_it_opened(monkeypatch):
    from gradio.context import LocalContext

    tools = McpTools(Service("trl-run", public=False))
    bundled = {s["source"] for s in json.loads(tools.list_open())["sources"]}

    def as_client(host: str):
        LocalContext.request.set(SimpleNamespace(headers={}, client=SimpleNamespace(host=host)))

    try:
        as_client("203.0.113.7")
        assert "error" not in json.loads(tools.run_summary("examples/trl-run"))  # a local folder, opened by this one
        mine = {s["source"] for s in json.loads(tools.list_open())["sources"]}
        as_client("198.51.100.9")
        theirs = {s["source"] for s in json.loads(tools.list_open())["sources"]}
    finally:
        LocalContext.request.set(None)
    assert mine - bundled == {"examples/trl-run"} and theirs == bundled


def test_a_turn_of_long_tokens_and_two_long_answers_are_cut_to_fit():
    from viewer.ui.mcp_tools import bounded_compare, bounded_turn

    turn = json.dumps({"path": "r", "turn": 0, "start": 100, "tokens": [["x" * 200, 1, -0.5]] * 2000, "fate": {}})
    got = json.loads(bounded_turn(turn))
    assert len(bounded_turn(turn).encode()) <= MAX_ANSWER_BYTES and 0 < len(got["tokens"]) < 2000
    assert got["next_start"] == 100 + len(got["tokens"])  # where to ask next
    small = json.dumps({"tokens": [["a", 1, 0.0]], "start": 0})
    assert bounded_turn(small) == small
    both = json.dumps({"a": {"generated": "é" * 90_000}, "b": {"generated": "y" * 90_000}, "prompt_differs_at": 3})
    cut = bounded_compare(both)
    doc = json.loads(cut)
    assert len(cut.encode()) <= MAX_ANSWER_BYTES and "generated_cut" in doc["a"] and doc["prompt_differs_at"] == 3


def test_run_summary_says_whether_asking_again_can_show_more(tmp_path):
    """A run being recorded is live; its folder is followed (asked again, it shows what was recorded since), a zip
    of it is not (a copy never changes)."""
    import shutil

    from rollout_trace.artifact.sources import EXAMPLES_DIR

    run = tmp_path / "live-run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", run)
    next((run / "segments").glob("*.end.json")).unlink()
    zipped = shutil.make_archive(str(tmp_path / "copy"), "zip", run)
    tools = McpTools(Service("trl-run", public=False))
    said = {src: json.loads(tools.run_summary(src)) for src in (str(run), zipped, "trl-run")}
    assert [(d["live"], d["followed"]) for d in said.values()] == [(True, True), (True, False), (False, False)]
