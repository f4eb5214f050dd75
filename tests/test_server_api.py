"""The pages' server functions as declared in viewer/server_api.py: every request is read field by field (a
stranger's JSON never raises, a bad field takes its default), and the functions each page's component offers are
exactly the ones declared (the page's TypeScript is generated from the declarations)."""

from __future__ import annotations

import msgspec
import pytest

from viewer import server_api as api
from viewer.contract import Fate, RunContext
from viewer.find.answers import FindRequest
from viewer.requests import read

REQUESTS = sorted({req for fns in api.SERVERS.values() for req, _ in fns.values()}, key=lambda t: t.__name__)


@pytest.mark.parametrize("kind", REQUESTS, ids=lambda t: t.__name__)
def test_every_request_reads_its_own_defaults_and_junk(kind):
    assert read(msgspec.to_builtins(kind()), kind) == kind()
    assert read({}, kind) == kind()
    assert read(None, kind) is None and read([1, 2], kind) is None and read("text", kind) is None
    junk = {f: [{"x": 1}] * 3 for f in kind.__struct_fields__}  # a list of objects where nothing wants one
    assert isinstance(read(junk, kind), kind)


def test_fields_are_read_by_the_link_rule():
    got = read({"key": "k" * 500, "turn": "3", "scope": 7, "index": -1, "row": True}, api.ChunkRequest)
    assert got == api.ChunkRequest(key="k" * 64, turn=3, scope="", index=0, row=0)
    assert read({"turn": 2.0, "index": 1e30}, api.ChunkRequest) == api.ChunkRequest(turn=2, index=0)
    t = read({"eps": [0.2, "0.28"], "advantage": "nan", "summary": 1, "turn": None}, api.TrainerRequest)
    assert t == api.TrainerRequest(eps=(0.2, 0.28), advantage=None, summary=False, turn=None)
    assert read({"eps": [0.2]}, api.TrainerRequest).eps is None
    f = read({"fields": ["output", 3, "tool-output", "x", "y"], "statuses": ["ok" * 20], "limit": -5}, FindRequest)
    assert f.fields == ["output", "tool-output", "x"] and f.statuses == [("ok" * 20)[:20]] and f.limit == -5


def test_a_part_of_a_request_is_read_leniently_and_a_record_sent_back_whole_or_not_at_all():
    e = read({"trainer": {"part": "p", "eps": "x", "adv": "group"}, "what": "everything"}, api.ExportRequest)
    assert e.trainer == api.ExportTrainer(part="p", eps=0, adv="group") and e.what == "rollout"
    run = RunContext(run="r", segment="s", version=1, group_id=2, rollout=0, k=4, status="ok", reward=1.0,
                     advantage=0.5, fate=Fate(trained=True, steps=[3], cause=None, label="trained at step 3", why="."),
                     crumbs=["run"])
    sent = msgspec.to_builtins(run)
    assert read({"run": sent}, api.TrainingRequest).run == run
    assert read({"run": {**sent, "version": "one"}}, api.TrainingRequest).run is None
    assert read({"run": {**sent, "crumbs": ["x" * 100] * 100}}, api.TrainingRequest).run is None  # too large


def test_each_page_offers_exactly_the_server_functions_declared():
    import ast
    from pathlib import Path

    offered: dict[str, set[str]] = {}
    for f in sorted((Path(api.__file__).parent / "ui").glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "server_functions" and isinstance(node.value, ast.List):
                offered[f.name] = {n.id for n in node.value.elts if isinstance(n, ast.Name)}
    declared = {page: set(fns) for page, fns in api.SERVERS.items()}
    pages = {"view_tab.py": "ViewServer", "collection_view.py": "IndexServer", "find_panel.py": "FindServer",
             "run_view.py": "RunServer"}
    assert set(offered) == set(pages)
    for file, page in pages.items():
        assert declared[page] == offered[file], file
