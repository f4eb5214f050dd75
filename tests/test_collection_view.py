"""The collection index's server side, without a browser: the collection-or-artifact decision, index pages
(filters, sort, paging, untrusted text as data, notes), opening rows and groups, the index's events, the server
function's handling of junk, the collection cache's bounds, zip clean-up, public Space rules, and the
owner's configured source."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.collection import Collection, open_collection
from support.collection_data import build
from viewer.contract import Initial
from viewer.index.cache import CollectionCache, collection_identity
from viewer.index.page import build_page
from viewer.index.render import HEADINGS, index_row, table
from viewer.ui.collection_view import CollectionView
from viewer.ui.parts import ViewParts
from viewer.ui.rows import CLEARED
from viewer.ui.service import Service


@pytest.fixture(scope="module")
def coll(tmp_path_factory) -> Path:
    root = build(tmp_path_factory.mktemp("cv") / "runs")
    task = root / "broken" / "d" / "task.json"
    data = json.loads(task.read_text())
    data["instruction"] = "<script>alert('t')</script> Count & compare"
    task.write_text(json.dumps(data))
    odd = root / "odd'<b>name"  # a folder name with markup characters
    shutil.copytree(root / "a", odd)
    return root


def tab(public: bool = False, default: str = "scripted-smollm2") -> Service:
    return Service(default, public)


def index_view() -> CollectionView:
    """The index's handlers, answering for stand-ins of the View tab's components (named by their role)."""
    cv = CollectionView(tab())
    cv.parts = ViewParts(view="view", loaded="loaded", index="index", src="src", load=None, upload=None)  # type: ignore[arg-type]
    return cv


def page_of(value: str) -> dict:
    return json.loads(value)


class Evt:  # what Gradio passes for trigger("click", {...})
    def __init__(self, data):
        self._data = data


def test_one_place_decides_collection_or_artifact(coll, tmp_path):
    cv = tab().rows
    assert cv.service.is_collection(str(coll)) and cv.service.is_collection(str(coll / "grp"))  # many artifacts; a group
    assert not cv.service.is_collection("scripted-smollm2") and not cv.service.is_collection(str(coll / "a"))
    assert not cv.service.is_collection("") and not cv.service.is_collection("x" * 2000) and not cv.service.is_collection("no such thing")
    z = tmp_path / "c.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in coll.rglob("*"):
            if f.is_file():
                zf.write(f, f.relative_to(coll.parent).as_posix())
    assert cv.service.is_collection(str(z))
    # the Load button: a collection clears the token view and shows the index; an artifact opens as before
    view, loaded, index = cv.open_source(str(coll))
    assert view == CLEARED and loaded == "" and page_of(index)["mode"] == "index"
    view, loaded, index = cv.open_source("scripted-smollm2")
    assert '"key"' in view and loaded == "scripted-smollm2" and page_of(index)["mode"] == "none"


def test_index_page_filters_sorts_pages_and_counts(coll):
    c = open_collection(str(coll))
    p = build_page(c, str(coll), {"sort": "-reward", "tool": "bash", "src": "ignored"}, serial=1)
    assert (p.total, p.invalid, p.kind) == (10, 1, "folder")
    assert p.matched == 9 and p.query == "tool=bash&sort=-reward" and p.filters == {"tool": "bash", "sort": "-reward"}
    assert p.models == ["HuggingFaceTB/SmolLM2-135M-Instruct", "org/Other-7B"] and p.tools == ["bash", "write"]
    paths = [r.path for r in p.table.rows]
    assert p.sort == "-reward" and paths.index("deep/nested/b") < paths.index("a")
    small = build_page(c, str(coll), {"page": "2"}, serial=2, page_size=4)
    assert (small.page, small.pages, small.first, small.shown, small.matched) == (1, 3, 5, 4, 10)
    last = build_page(c, str(coll), {"page": "99"}, serial=3, page_size=4)
    assert (last.page, last.shown) == (2, 2)  # past the end: the last page
    bad = build_page(c, str(coll), {"reward_min": "lots", "page": "x"}, serial=4)
    assert bad.page == 0 and bad.matched == 10 and any("ignored reward_min" in n for n in bad.notes)
    none = build_page(c, str(coll), {"model": "nobody"}, serial=5)
    assert none.matched == 0 and none.table.rows == [] and none.first == 0


def test_every_collection_string_crosses_as_data(coll):
    """Markup in a collection's text arrives as the text it is, in the row's fields (the page writes them as
    textContent and attribute values: tests/test_collection_view_browser.py)."""
    c = open_collection(str(coll))
    t = table([index_row(r) for r in c.records])
    rows = {r.path: r for r in t.rows}
    assert rows["broken/d"].title.startswith("<script>alert('t')</script> Count & compare")
    assert "odd'<b>name" in rows
    assert not t.run and [(x.sort, x.label) for x in t.columns] == [(h[0], h[1]) for h in HEADINGS]
    assert "agent_turns" in [x.sort for x in t.columns]
    bad = rows["broken/c"]
    assert not bad.valid and bad.problem


def test_open_row_group_and_unknown_rows_keep_the_filter(coll):
    cv = tab().rows
    src = str(coll)
    view, loaded, index = cv.open_row(src, "deep/nested/b", {"model": "Other", "sort": "-reward"}, Initial(turn=1))
    opened, pg = page_of(view), page_of(index)
    assert opened["src"] == src and opened["initial"]["turn"] == 1  # the URL keeps naming the collection
    assert loaded == str(coll / "deep/nested/b")
    assert (pg["mode"], pg["row"], pg["query"], pg["matched"]) == ("row", "deep/nested/b", "model=Other&sort=-reward", 1)
    assert pg["back"]["kind"] == "row" and pg["back"]["path"] == "deep/nested/b"
    assert pg["back"]["filters"] == [["model", "Other"], ["sort", "-reward"]] and pg["back"]["matched"] == 1
    # the same artifact opened directly shares the loaded rollout (same identity in the store)
    again, _ = cv.service.values.source_value(str(coll / "deep/nested/b"))
    assert page_of(again)["key"] == opened["key"]
    # a group opens its map (the token view is cleared); ?rollout= opens that rollout from it
    view, loaded, index = cv.open_row(src, "grp", {}, Initial())
    assert view == CLEARED and page_of(index)["mode"] == "group" and page_of(index)["group"]["path"] == "grp"
    view, loaded, index = cv.open_row(src, "grp", {}, Initial(), rollout=0)
    assert page_of(view)["key"] and loaded.endswith("grp/rollout-00") and page_of(index)["rollout"] == 0
    # a row that is not in the collection, or an invalid one: messages, never a traceback
    view, loaded, index = cv.open_row(src, "../../etc", {}, Initial())
    assert view == CLEARED and "no such row" in " ".join(page_of(index)["problems"]["items"])
    view, _, index = cv.open_row(src, "broken/d", {}, Initial())  # small files fine, turns.json truncated
    assert page_of(view)["problems"]["items"] and page_of(index)["mode"] == "row"


def test_events_open_and_back(coll):
    cv = index_view()
    src = str(coll)
    got = cv.on_action(Evt({"action": "open", "src": src, "row": "a", "query": "drift=unknown"}))
    assert set(got) == {"view", "loaded", "index"}  # by component: what the event was wired to
    assert page_of(got["view"])["key"] and page_of(got["index"])["query"] == "drift=unknown"
    got = cv.on_action(Evt({"action": "back", "src": src, "query": "drift=unknown&page=1"}))
    pg = page_of(got["index"])
    assert got["view"] == CLEARED and pg["mode"] == "index" and pg["filters"] == {"drift": "unknown"}
    assert "deep/nested/b" not in [r["path"] for r in pg["table"]["rows"]] and pg["table"]["rows"]
    got = cv.on_action(Evt(None))  # junk: an error in the index, nothing raised
    assert page_of(got["index"])["problems"]["items"]
    a, b = page_of(cv.rows.index_value(src, {})), page_of(cv.rows.index_value(src, {}))
    assert b["serial"] > a["serial"]  # the same rows sent twice still re-render


def test_server_function_index(coll):
    cv = index_view()
    got = cv.index({"src": str(coll), "query": "kind=group"})
    assert got["matched"] == 1 and [r["path"] for r in got["table"]["rows"]] == ["grp"] and got["mode"] == "index"
    assert cv.index("nonsense")["problems"]["items"]
    assert "cannot find this collection" in " ".join(cv.index({"src": "/no/such/place", "query": ""})["problems"]["items"])
    assert cv.index({"src": str(coll), "query": "x" * 100_000})["matched"] == 10  # long queries are cut, not fatal


def test_page_load_routes_by_source_and_row(coll):
    cv = index_view()

    def load(**q):
        got = cv.on_page_load(q)
        return tuple(got.get(c) for c in ("view", "src", "loaded", "index"))  # a part left out keeps its value

    view, src, loaded, index = load(src=str(coll), timed_out="yes")
    assert view == CLEARED and src == str(coll) and page_of(index)["matched"] == 2
    view, src, loaded, index = load(src=str(coll), row="a", turn="2", mode="logprob")
    assert page_of(view)["initial"] == {"turn": 2, "mode": "logprob", "scope": "new", "found": None} and page_of(index)["row"] == "a"
    view, src, loaded, index = load()  # the default: the page was built with the bundled example, no index
    assert view is None and src is None and loaded == "scripted-smollm2" and page_of(index)["mode"] == "none"


def test_public_space_opens_hub_only_but_the_owners_source(coll):
    visitor = tab(public=True).rows
    assert not visitor.service.is_collection(str(coll))
    assert "Hub dataset id" in " ".join(page_of(visitor.index_value(str(coll), {}))["problems"]["items"])
    owner = tab(public=True, default=str(coll)).rows
    assert owner.service.is_collection(str(coll)) and page_of(owner.index_value(str(coll), {}))["total"] == 10
    assert not owner.service.is_collection(str(coll / "grp"))  # only exactly what the owner configured


def test_cache_shares_bounds_by_count_and_age_and_closes(coll):
    closed: list[str] = []
    now = [0.0]

    def opener(source, allow_local=True):
        c = Collection(source=source, kind="folder", records=[])
        c.close = lambda: closed.append(source)  # type: ignore[method-assign]
        return c

    cache = CollectionCache(max_entries=2, max_age_s=10, opener=opener, clock=lambda: now[0])
    first = cache.get(str(coll), True)
    assert cache.get(str(coll), True) is first and cache.opens == 1
    cache.get(str(coll / "a"), True)
    cache.get(str(coll / "grp"), True)  # a third: the least recently used is dropped and closed
    assert closed == [str(coll)] and len(cache) == 2
    now[0] = 11.0
    assert cache.get(str(coll / "grp"), True) is not None and cache.opens == 4  # too old: reopened
    assert closed[-1] == str(coll / "grp")
    assert collection_identity("org/name", True) == "hub|org/name"
    assert collection_identity(str(coll), False) == f"hub|{coll}"  # never a path when paths are not allowed
    cache.close()
    assert len(cache) == 0


def test_zip_rows_clean_up_what_they_unpacked(coll, tmp_path):
    z = tmp_path / "runs.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in coll.rglob("*"):
            if f.is_file():
                zf.write(f, f.relative_to(coll).as_posix())
    cv = tab().rows
    view, loaded, index = cv.open_row(str(z), "grp/rollout-01", {}, Initial())
    assert page_of(view)["key"]
    c = cv.service.collections.get(str(z), True)
    assert c.kind == "zip" and c.store._tmp == []  # the rollout is in memory; its unpacked folder is gone
    with pytest.raises(ArtifactError):
        c.open("nowhere")
    cv.service.collections.close()


def test_owner_source_from_env_and_command_line(monkeypatch):
    from viewer.settings import SOURCE_ENV
    from viewer.ui.app import DEFAULT_EXAMPLE, configured_source

    monkeypatch.delenv(SOURCE_ENV, raising=False)
    assert configured_source(None) == DEFAULT_EXAMPLE
    monkeypatch.setenv(SOURCE_ENV, "org/rollouts")
    assert configured_source(None) == "org/rollouts" and configured_source("  ") == "org/rollouts"
    assert configured_source("other/set") == "other/set"  # the command line wins


def test_tokens_and_drift_are_counted_once_per_row_when_summary_json_lacks_them(tmp_path):
    """The bundled examples record no n_tokens or drift; the index counts them from turns.json, once
    per row identity (another page, another sort, a reopened collection read nothing again)."""
    from conftest import ROOT
    from viewer.index.page import model_choices

    col = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", col, ignore=shutil.ignore_patterns("*.py", "*.jinja", "README.md", "trl-run"))
    cv = tab().rows
    page = cv.index_page(str(col), {})
    assert cv.service.facts.reads == 6  # scripted-smollm2, smollm2-offline and the group's four rollouts
    row = next(r for r in page.table.rows if r.path == "scripted-smollm2")
    assert row.tokens == "1,915" and row.drift == "drift"  # scripted-smollm2 drifts
    cv.index_page(str(col), {"sort": "-tokens"})
    cv.service.collections = CollectionCache()  # the collection reopened: its rows are the same identities
    cv.index_page(str(col), {"drift": "drift"})
    assert cv.service.facts.reads == 6
    only = cv.index_page(str(col), {"drift": "drift"})
    assert only.matched == 1 and [r.path for r in only.table.rows] == ["scripted-smollm2"]
    assert page.models == ["SmolLM2-135M-Instruct"]
    # a row opened from that filtered index counts the rows as the index did (its facts, not summary.json's)
    _, _, index = cv.open_row(str(col), "smollm2-offline", {"drift": "drift"}, Initial())
    back = page_of(index)["back"]
    assert page_of(index)["matched"] == only.matched and (back["matched"], back["filters"]) == (1, [["drift", "drift"]])
    assert model_choices(["A/x", "x", "B/y", "C/y", "y", "D/z"]) == ["B/y", "C/y", "D/z", "x", "y"]


def test_trained_turns_are_trls_for_rows_whose_summary_predates_it(tmp_path):
    """The smollm2-offline example and the group's rollouts have no summary.json `trl_training`; the index asks TRL
    (rollout_trace/analysis/training.py) when it shows them, and a trained filter sees them too."""
    from conftest import ROOT
    from rollout_trace.analysis.training import TRL, training
    from rollout_trace.artifact import load_artifact

    col = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", col, ignore=shutil.ignore_patterns("*.py", "*.jinja", "README.md", "trl-run"))
    cv = tab().rows
    cv.index_page(str(col), {})
    rows = {r.path: r for r in cv.service.facts.fill(cv.service.collections.get(str(col), True), cv.service.collections.get(str(col), True).records,
                                             lambda p: cv.service.identity(cv.service.collections.get(str(col), True), str(col), p))}
    for path in ("smollm2-offline", "smollm2-group/rollout-00", "smollm2-group/rollout-03"):
        expected = training(load_artifact(col / path)).trained_turns
        assert (rows[path].trained_turns, rows[path].trained_by) == (expected, TRL), path
    assert rows["smollm2-group"].trained_turns == 1  # the most any sibling trains, as for a captured group
    only = cv.index_page(str(col), {"trained_min": "1", "kind": "artifact"})
    assert only.matched == 6  # every rollout, none left out for an unknown count


def test_kinds_are_remembered_safely_by_concurrent_handlers(monkeypatch):
    """Gradio runs handlers on several threads: many visitors classifying new sources at once while the
    remembered kinds are at their bound must neither raise nor grow past it."""
    import sys
    import threading

    import viewer.ui.service as service

    monkeypatch.setattr(service, "MAX_KINDS", 2)
    monkeypatch.setattr(service, "classify", lambda text, allow_local: "rollout")
    view = tab()
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def visitor(n: int) -> None:
        start.wait()
        try:
            for i in range(400):
                view.kind(f"user/dataset-{n}-{i}")
        except BaseException as e:  # noqa: BLE001 - the test reports any
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can, so a race shows
    try:
        threads = [threading.Thread(target=visitor, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == [] and len(view._kinds) <= 2
