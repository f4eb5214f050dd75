"""What one public visitor's request may cost while it opens a source: files, bytes, rows, time, and leaving.

The bounds are rollout_trace/artifact/budget.py's, set where the viewer opens a source (viewer/ui/visitor.py).
Hub sources go through the real huggingface_hub client against the loopback stand-in
(tests/support/hub_standin.py), so a refused file is shown never to have been downloaded. Leaving is
Gradio's own report: a real server, a client that joins the queue and hangs up its event stream.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from bench.make_run import make as make_run
from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.budget import Abandoned, Budget, Refused, bounded
from rollout_trace.artifact.collection import open_collection
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support.hub_standin import HubStandIn
from viewer.run_stats import table_of
from viewer.ui import visitor

BIG = 10**9


def _budget(**kw) -> Budget:
    return Budget(**{"max_bytes": BIG, "max_files": BIG, "max_rows": BIG, "seconds": 600.0, "where": visitor.WHERE, **kw})


@pytest.fixture
def hub_run(tmp_path, monkeypatch):
    """A synthetic ended run (20 versions x 2 groups x 4 rollouts, its rollouts table in 4 shards of 40 rows)
    served as the Hub dataset org/run."""
    repo = tmp_path / "repo"
    make_run(repo, versions=20, groups=2, k=4, rare_every=0, seal_rows=40)
    with HubStandIn({"org/run": repo}) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        yield hub, repo


def _one(e: ArtifactError):
    assert len(e.problems) == 1, e.problems
    return e.problems[0]


def test_a_run_too_large_to_read_is_refused_while_its_shards_are_read(hub_run):
    """A run's shards are read in place with range reads, every byte counted: past the bound the read stops,
    naming the shard; the rollouts' artifact files (files/) are never fetched to open the run."""
    hub, repo = hub_run
    shards = sorted((repo / "rollouts").iterdir())
    size = shards[0].stat().st_size
    with bounded(_budget(max_bytes=size // 2)), pytest.raises(Refused) as got:
        open_collection("org/run")
    p = _one(got.value)
    assert p.file in {f"rollouts/{x.name}" for x in shards} and "too much to read" in p.message
    assert p.expected == f"at most {size // 2:,} bytes read per request" and p.found.endswith(" bytes")
    assert int(p.found.removesuffix(" bytes").replace(",", "")) > size // 2
    assert not [x for x in hub.paths("GET") if "/files/" in x]  # never fetched
    assert open_collection("org/run").run is not None  # unbounded (a local server): the same run opens


def test_a_run_with_too_many_files_or_rows_is_refused_naming_them(hub_run):
    hub, repo = hub_run
    with bounded(_budget(max_rows=100)), pytest.raises(Refused) as got:
        open_collection("org/run")
    p = _one(got.value)
    assert p.file == "rollouts/" and (p.expected, p.found) == ("at most 100 rows", "160 rows")
    hub.requests.clear()
    with bounded(_budget(max_files=4)), pytest.raises(Refused) as got:  # 4 shards of rollouts, 1 of consumption
        open_collection("org/run")
    p = _one(got.value)
    assert "rollouts/ and consumed/" in p.file and (p.expected, p.found) == ("at most 4 files", "5 files")
    assert not [x for x in hub.paths("GET") if "/rollouts/" in x]  # refused from the listing, nothing read


def test_a_collection_listing_and_its_small_files_are_bounded(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES_DIR / "smollm2-group", repo / "g")
    with HubStandIn({"org/col": repo}) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        with bounded(_budget(max_files=3)), pytest.raises(Refused) as got:
            open_collection("org/col")
        p = _one(got.value)
        assert (p.file, p.expected, p.found) == ("org/col", "at most 3 files", "more than 3 files")
        # the small files are downloaded on the store's own threads: their bytes count in this request's budget
        with bounded(_budget(max_bytes=2000)), pytest.raises(Refused) as got:
            open_collection("org/col")
        assert "too much to read" in _one(got.value).message
        assert open_collection("org/col").records


def test_a_visitor_who_left_or_ran_out_of_time_stops_the_work(hub_run):
    hub, _ = hub_run
    asked = []
    with bounded(_budget(abandoned=lambda: asked.append(1) or True)), pytest.raises(Abandoned) as got:
        open_collection("org/run")
    assert "the visitor left" in _one(got.value).message and asked
    with bounded(_budget(seconds=0.0)), pytest.raises(Abandoned) as got:
        open_collection("org/run")
    p = _one(got.value)
    assert p.expected == "at most 0 s" and "longer than a public Space allows" in p.message


def test_a_public_visitor_sees_the_bound_in_the_index_and_nothing_is_kept(hub_run, monkeypatch):
    from viewer.ui.service import Service

    hub, repo = hub_run
    monkeypatch.setattr(visitor, "MAX_ROWS", 100)
    service = Service("", public=True)
    page = service.rows.index_page("org/run", {})
    said = " ".join(page.problems.items) if page.problems else ""
    assert "at most 100 rows" in said and "160 rows" in said
    assert service.run("org/run") is None  # the run page is not shown either
    service.public = False  # the owner's own server: no bound, and the refusal was not cached
    assert not service.rows.index_page("org/run", {}).problems and service.run("org/run") is not None


def test_comparing_with_a_hub_run_over_the_bound_names_the_bound(hub_run, monkeypatch):
    from viewer.ui.run_view import RunView
    from viewer.ui.service import Service

    monkeypatch.setattr(visitor, "MAX_ROWS", 100)
    got = RunView(Service("", public=True)).versus({"src": "trl-run", "vs": "org/run"})
    assert "cannot be compared" in got["error"] and "at most 100 rows" in got["error"], got


def test_a_followed_run_read_again_at_a_new_commit_is_bounded_too(hub_run, monkeypatch):
    """The follower reads a Hub run again whole at a new commit: through the cache's opener, the visitor's budget."""
    from viewer.ui.service import Service

    hub, repo = hub_run
    service = Service("", public=True)
    assert service.run("org/run") is not None
    monkeypatch.setattr(visitor, "MAX_ROWS", 100)
    with pytest.raises(Refused):
        service.collections.open("org/run", False)


def test_the_app_runs_visitors_events_at_once(monkeypatch):
    """Gradio runs one event of a kind at a time unless told: one visitor's opening held every other's."""
    from viewer.ui import app
    from viewer.ui.app import VISITORS_AT_ONCE, build_app

    monkeypatch.setattr(app, "import_trl", lambda: None)  # seconds, and beside the point here
    demo = build_app(default_source="scripted-smollm2", public=True)
    assert VISITORS_AT_ONCE > 1 and demo._queue.default_concurrency_limit == VISITORS_AT_ONCE


def test_gradio_reports_a_visitor_who_hung_up(monkeypatch):
    """A real Gradio server: a handler opening under a visitor's budget stops when its client closes the queue's
    event stream (Gradio's queue marks the session's running events not alive)."""
    import gradio as gr

    started, stopped = threading.Event(), threading.Event()
    seen: list[str] = []

    def slow(x: str) -> str:
        b = visitor.public_budget()
        started.set()
        try:
            for _ in range(600):  # what a long opening does between files: ask the budget
                b.check("org/huge-run")
                time.sleep(0.05)
        except Abandoned as e:
            seen.append(e.problems[0].message)
        stopped.set()
        return x

    with gr.Blocks() as demo:
        box = gr.Textbox()
        box.submit(slow, box, box, api_name="slow")
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True)
    try:
        fn = next(i for i, d in demo.fns.items() if d.api_name == "slow")
        with httpx.Client(base_url=url, timeout=30) as client:
            r = client.post("/gradio_api/queue/join", json={"data": ["x"], "fn_index": fn, "session_hash": "s1",
                                                            "event_data": None, "trigger_id": None})
            assert r.status_code == 200, r.text
            with client.stream("GET", "/gradio_api/queue/data", params={"session_hash": "s1"}) as stream:
                lines = stream.iter_lines()
                while "process_starts" not in next(lines):
                    pass
                assert started.wait(20)
            # the stream is closed here: the visitor left
        assert stopped.wait(20), "the handler did not notice"
        assert seen == ["the visitor left: opening it stopped"]
    finally:
        demo.close()


def test_outside_an_event_the_visitor_is_there():
    assert visitor.abandoned_check()() is False  # a test or the command line calling a handler


def test_a_hub_runs_page_asks_for_each_shard_a_few_times(tmp_path, monkeypatch):
    """Over the network each read is a request (tens of milliseconds on the Hub): a public visitor's page load
    (the run page, then its index) reads a rollouts shard's footer once, each set of its columns in one request,
    several shards at once, and the rows a page names from the columns read already (their keys, read when the
    run is opened)."""
    from collections import Counter

    import gradio as gr

    from rollout_trace.artifact import run_table
    from viewer.ui.run_view import RunView
    from viewer.ui.service import Service

    readers: list[str] = []
    real = run_table.read_columns

    def read_columns(*args, **kw):
        readers.append(threading.current_thread().name)
        return real(*args, **kw)

    monkeypatch.setattr(run_table, "read_columns", read_columns)

    repo = tmp_path / "repo"
    # groups of 64: the index names few of the run's rows (each group's first), read row by row, not whole
    make_run(repo, versions=32, groups=4, k=64, rare_every=0, seal_rows=4096)  # shards of ~150 kB
    with HubStandIn({"org/run": repo}) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        service = Service("", public=True)
        rv = RunView(service)
        with gr.Blocks():
            rv.render()
        hub.requests.clear()
        shown = rv.on_page_load({"src": "org/run"})
        linked = service.rows.page_link({"src": "org/run"})
        assert shown[rv.column]["visible"] and "org/run" in str(linked.page)
        asked = Counter(p.rsplit("/", 1)[-1] for p in hub.paths("GET") if "/rollouts/" in p)
        assert set(asked) == {x.name for x in (repo / "rollouts").iterdir()}
        # its footer, its keys (the open), then every column the page reads (a run this small is read whole) in
        # one request, not one per stretch of column chunks
        assert max(asked.values()) <= 3, asked
        assert any(name.startswith("shard-read") for name in readers)  # the shards after the first, at once
        collection, _ = service.run_or_why("org/run")
        t = table_of(collection.run)
        hub.requests.clear()
        names = ["rollout", "policy_version", "reward"]
        got = t.rows_of(np.array([5000, 0, 70]), names)
        assert not hub.paths("GET")  # read when the run was opened and its numbers made: no request
        assert got.to_pylist() == [{c: t.column(c)[i].as_py() for c in names} for i in (5000, 0, 70)]
        assert got["rollout"].to_pylist() == [5000 % 64, 0, 70 % 64]
        assert t.rows_of(np.array([5000]), ["text"])["text"][0].as_py() and hub.paths("GET")
        # a rollout's files: its files shard's footer (the file's end, then the footer), then its row's range; a
        # next rollout of that shard (a visitor clicking through a group) asks for its row only
        files = lambda: [p for p in hub.paths("GET") if "/files/" in p]  # noqa: E731
        hub.requests.clear()
        first = t.rollout_files(5000, ["file_turns"])["file_turns"]
        one = len(files())
        hub.requests.clear()
        second = t.rollout_files(5001, ["file_turns"])["file_turns"]
        assert first and second and len(files()) == 1 < one, (one, files())


def test_what_a_public_page_computes_of_a_hub_run_is_bounded_as_its_opening_is(hub_run, monkeypatch):
    """After a visitor opened a Hub run, what its pages compute of the whole run (the per-version numbers, the
    index, the findings, a task followed, a version's groups) runs under a budget of its own: past it, or when its
    visitor left, the work stops, nothing is kept, and each page says why (the run page hides; the index, the
    search panel and the server functions name the bound), never raising. The next visitor within the bounds is
    answered in full; the owner's own server bounds nothing."""
    import gradio as gr

    from rollout_trace.artifact import collection
    from viewer.ui.find_panel import FindPanel
    from viewer.ui.mcp_tools import McpTools
    from viewer.ui.run_view import RunView
    from viewer.ui.service import Service

    monkeypatch.setattr(collection, "MAX_RECORDS", 10)  # a run too large for a row per rollout: opened lazily
    service = Service("", public=True)
    rv = RunView(service)
    with gr.Blocks():
        rv.render()
    c = service.run("org/run")
    assert c is not None and c.run.table.bounds is visitor.public_budget  # set by the opening
    t = service.run_table("org/run")
    made: list[Budget] = []

    def tiny() -> Budget:  # what the run's columns decompress to is far more
        made.append(_budget(max_decoded=1000))
        return made[-1]

    t.bounds = tiny
    shown = rv.on_page_load({"src": "org/run"})
    assert shown[rv.column]["visible"] is False and made
    assert not {"__reduced:version_stats", "__trainer", "__reduced"} & set(t._memo)  # nothing it computed was kept
    page = service.rows.index_page("org/run", {})
    said = " ".join(page.problems.items) if page.problems else ""
    assert "decompresses to more than a public Space reads per request" in said and "at most 1,000 bytes" in said
    assert "decompresses to more than" in rv.version({"src": "org/run", "version": 3})["error"]
    assert rv.on_task(gr.EventData(None, {"action": "task", "src": "org/run", "task": "x"})) == gr.skip()
    assert "decompresses to more than" in FindPanel(service).summary({"src": "org/run"})["error"]
    assert "decompresses to more than" in json.loads(McpTools(service).run_summary("org/run"))["error"]
    t.bounds = lambda: _budget(abandoned=lambda: True)  # the visitor left
    assert rv.on_page_load({"src": "org/run"})[rv.column]["visible"] is False
    t.bounds = visitor.public_budget  # the next visitor, within the bounds
    assert rv.on_page_load({"src": "org/run"})[rv.column]["visible"] is True
    assert not service.rows.index_page("org/run", {}).problems
    assert Service("", public=False).run("org/run").run.table.bounds is None


def test_each_computation_of_a_public_run_page_is_bounded_alone_whichever_request_comes_first(hub_run, monkeypatch):
    """A browser sends the run page's request and its search panel's side by side, so on a fresh snapshot either
    may come first. Each whole-run computation is read under a budget of its own in both orders: the panel's
    chart counts come from the index's reduction, whose pass needs the fates; those are made in the per-version
    numbers' pass (their columns lie side by side), each under its own budget, never charged to the computation
    that asked. So the most one budget reads, and with it the largest run a visitor can open, is the same in either
    order, and with both at once."""
    import gradio as gr

    from rollout_trace.artifact import collection
    from viewer.ui.find_panel import FindPanel
    from viewer.ui.run_view import RunView
    from viewer.ui.service import Service

    monkeypatch.setattr(collection, "MAX_RECORDS", 10)  # a run too large for a row per rollout: opened lazily
    budgets: list[Budget] = []
    real = visitor.public_budget

    def recorded() -> Budget:
        budgets.append(real())
        return budgets[-1]

    monkeypatch.setattr(visitor, "public_budget", recorded)
    used: dict[str, list[int]] = {}
    for first in ("page", "panel", "both at once"):
        budgets.clear()
        service = Service("", public=True)
        rv = RunView(service)
        with gr.Blocks():
            rv.render()
        panel = FindPanel(service)
        src = {"src": "org/run"}
        got: dict[str, dict] = {}
        if first == "both at once":  # each on its own thread, as Gradio runs two requests
            with ThreadPoolExecutor(2) as pool:
                asked = pool.submit(panel.summary, src), pool.submit(rv.on_page_load, src)
                got.update(found=asked[0].result(), shown=asked[1].result())
        if first == "panel":
            got["found"] = panel.summary(src)
        if first != "both at once":
            got["shown"] = rv.on_page_load(src)
        assert not service.rows.index_page("org/run", {}).problems
        found = got.get("found") or panel.summary(src)
        assert got["shown"][rv.column]["visible"] is True and not found.get("error"), found
        used[first] = sorted(b.used for b in budgets if b.used)
    assert used["panel"] == used["page"] == used["both at once"], used
