"""The run page and the run's collection index read through the Arrow engine (rollout_trace/artifact/run_table.py):
the real handlers (viewer/ui/run_view.py, viewer/ui/collection_view.py) driven without a browser on a synthetic
run of 2,000 versions and 16,000 rollouts, and the index pages from columns equal to the collection index's on
the bundled run."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import msgspec
import pytest

from rollout_trace.artifact.run import open_run
from rollout_trace.artifact.run_table import run_table
from rollout_trace.artifact.sources import EXAMPLES_DIR
from viewer.index import open_index
from viewer.index.contract import IndexPage
from viewer.index.page import build_page
from viewer.index.run_index import build_run_page
from viewer.run_page import RunBody, RunHead, version_stats
from viewer.ui.collection_view import CollectionView
from viewer.ui.run_view import RunView
from viewer.ui.service import Service

VERSIONS, GROUPS, K = 2000, 2, 4  # 16,000 rollouts + 4,000 groups: the collection index's 20,000 rows, uncut


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    from bench.bench_run_page import make_run

    root = tmp_path_factory.mktemp("scale") / "run"
    make_run(root, versions=VERSIONS, groups=GROUPS, k=K)
    return root


@pytest.fixture
def page(big):
    service = Service(str(big), public=False)
    rv = RunView(service)
    with gr.Blocks():
        rv.render()
    return SimpleNamespace(rv=rv, cv=CollectionView(service), service=service, src=str(big))


def test_the_run_page_handlers_read_the_run_as_columns(page):
    rv, cv = page.rv, page.cv
    got = rv.show(page.src, {"version": "1234", "task": f"{5:040x}"})
    head = msgspec.json.decode(got[rv.head_html], type=RunHead)
    body = msgspec.json.decode(got[rv.body_html], type=RunBody)
    assert head.versions == VERSIONS == len(body.versions) and head.rollouts == VERSIONS * GROUPS * K
    assert head.groups == VERSIONS * GROUPS and "every reward at versions 50, 100, 150" in head.notes[0]
    assert body.open_version == 1234 and [g.group_id for g in body.groups] == [2466, 2467]
    assert all(g.k == K and len(g.rewards) == K for g in body.groups)
    assert body.task is not None and {g.version for g in body.task.groups} and body.task.versions > 1
    assert rv.version({"src": page.src, "version": 7})["groups"][0]["group_id"] == 12
    index = IndexPage(**cv.index({"src": page.src, "query": "kind=group&sort=-policy_version&page=2"}))
    assert index.total == VERSIONS * GROUPS * (K + 1) and index.matched == VERSIONS * GROUPS
    assert index.first == 201 and "v001899" in index.table_html  # page 2 of the groups, latest version first
    seen = got[rv.src_state]
    assert set(rv.poll(seen)) == {rv.timer}  # a quiet poll: a lookup
    assert page.service.collections.opens == 0  # nothing above read the run into Python rows (open_run)


def test_columns_give_the_row_reader_numbers_at_scale(big):
    run = open_run(str(big))
    assert version_stats(run_table(big)) == version_stats(run)


QUERIES = [{}, {"sort": "-reward"}, {"sort": "reward"}, {"kind": "group"}, {"task": "74d8"}, {"q": "sum"},
           {"reward_min": "0.5"}, {"timed_out": "yes"}, {"tool": "bash"}, {"no_tool": "bash"}, {"drift": "none"},
           {"sort": "-trained_step"}, {"sort": "tokens"}, {"sort": "-trained_turns", "kind": "group"},
           {"sort": "dropped"}, {"sort": "captured"}, {"page": "2"}, {"sort": "advantage"}, {"sort": "-k"},
           {"trained_min": "2"}, {"sort": "status"}, {"model": "nope"}, {"valid": "no"}]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "&".join(f"{k}={v}" for k, v in q.items()) or "all")
def test_a_runs_index_from_columns_is_the_collection_index(query):
    c = open_index("trl-run")
    want = msgspec.to_builtins(build_page(c, "trl-run", query, 1, page_size=20))
    got = msgspec.to_builtins(build_run_page(run_table(EXAMPLES_DIR / "trl-run"), "trl-run", query, 1, page_size=20))
    assert got == want
