"""The run page and the run's collection index read through the Arrow engine (rollout_trace/artifact/run_table.py):
the real handlers (viewer/ui/run_view.py, viewer/ui/collection_view.py) driven without a browser on a synthetic
run of 2,000 versions and 16,000 rollouts (tests/support/scale_run.py, Parquet shards written by the recorder's
shard writer), and the index pages from columns equal to the collection index's on the bundled run."""

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
from viewer.run_stats import RunBody, RunHead, version_stats
from viewer.ui.collection_view import CollectionView
from viewer.ui.run_view import RunView
from viewer.ui.service import Service

VERSIONS, GROUPS, K = 2000, 2, 4  # 16,000 rollouts + 4,000 groups: the collection index's 20,000 rows, uncut


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    from support.scale_run import make_run

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
    index = msgspec.convert(cv.index({"src": page.src, "query": "kind=group&sort=-policy_version&page=2"}), IndexPage)
    assert index.total == VERSIONS * GROUPS * (K + 1) and index.matched == VERSIONS * GROUPS
    assert index.table is not None and index.first == 201  # page 2 of the groups, latest version first
    versions = [r.version or 0 for r in index.table.rows]
    assert 1899 in versions and versions == sorted(versions, reverse=True)
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
           {"trained_min": "2"}, {"sort": "status"}, {"model": "nope"}, {"valid": "no"},
           # a word in a rollout's path: in its group's name, in its ending, across the two, in any case
           {"q": "G000002/ROLLOUT-0"}, {"q": "0/rollout-01"}, {"q": "lout-03"}, {"q": "z-506fa9-v"}, {"q": "/r"}]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "&".join(f"{k}={v}" for k, v in q.items()) or "all")
def test_a_runs_index_from_columns_is_the_collection_index(query):
    c = open_index("trl-run")
    want = msgspec.to_builtins(build_page(c, "trl-run", query, 1, page_size=20))
    got = msgspec.to_builtins(build_run_page(run_table(EXAMPLES_DIR / "trl-run"), "trl-run", query, 1, page_size=20))
    assert got == want


def _no_whole_run(monkeypatch) -> None:
    """Reading the whole run into Python rows (`Run.rows` of open_run, or of the run's collection: both go through
    run.py's `rows_of` for every row) fails; a part's rows (run_part.py) are read."""
    import rollout_trace.artifact.run as run_module

    real = run_module.rows_of

    def whole_refused(t, at=None):
        if at is None or len(at) == len(t):
            raise AssertionError("the whole run was read into Python rows (Run.rows)")
        return real(t, at)
    monkeypatch.setattr(run_module, "rows_of", whole_refused)


def test_a_groups_and_a_rollouts_drill_down_read_only_that_group(page, monkeypatch):
    from viewer.contract import Initial

    _no_whole_run(monkeypatch)
    rows, src = page.service.rows, page.src
    group = "groups/20270101T000000Z-bench0-v001234-g002467"
    shown = rows.open_row(src, group, {}, Initial())  # the run page's "open" of a group
    got = msgspec.json.decode(shown.page, type=IndexPage)
    assert got.mode == "group" and got.row == group and got.total == VERSIONS * GROUPS * (K + 1)
    assert got.group is not None and got.group.place is not None and got.group.k == K
    assert (got.group.place.version, got.group.place.group_id) == (1234, 2467)
    one = msgspec.json.decode(rows.open_row(src, group, {}, Initial(turn=1), rollout=3).page, type=IndexPage)
    assert one.mode == "row" and one.rollout == 3 and one.total == got.total  # its files are not in the synthetic run
    again = msgspec.json.decode(rows.open_row(src, f"{group}/rollout-03", {}, Initial()).page, type=IndexPage)
    assert again.mode == "row" and again.matched == got.total  # a rollout by its own path (a search hit)
    link = rows.page_link({"src": src, "version": "1234", "group": "2467", "rollout": "2"})  # a deep link
    assert msgspec.json.decode(link.page, type=IndexPage).rollout == 2
    back = IndexPage(**page.cv.index({"src": src, "query": "kind=group"}))  # Back: the run's index again
    assert back.matched == VERSIONS * GROUPS
    bad = msgspec.json.decode(rows.open_row(src, "groups/nope", {}, Initial()).page, type=IndexPage)
    assert bad.problems is not None and "no such row" in " ".join(bad.problems.items)
    assert page.service.collections.opens == 0


def test_a_group_map_opens_its_rollouts_from_the_groups_part_not_the_run_again(page, monkeypatch):
    """A group's map opens each of its rollouts from the group's part of the run it was made of: the run's folder
    is not listed again for each rollout (to follow the run), the group is found by a binary search of the run's
    group keys and each rollout among the group's own names (made once), not by a comparison of every key for each (at a
    million rollouts and k=64 those were 0.5 s of a 1.4 s open), and their files are read at once, not a row group
    again for each (0.3 s of a 1 s open)."""
    import rollout_trace.artifact.run_table as rt
    from viewer.contract import Initial

    calls: dict[str, int] = {"follow": 0, "named": 0, "rollout_files": 0, "rows_of": 0, "take": 0}
    searched: list[rt.RunTable] = []
    for name in calls:
        real = getattr(rt.RunTable, name)

        def counted(self, *a, _real=real, _name=name, **k):
            if _name == "take":  # names made: a group's or its rollouts'
                calls[_name] += list(a[1] if len(a) > 1 else k.get("columns") or ()) in (["group"], ["path"])
            elif _name != "rows_of" or "file_trace" in a[1]:  # a read of rollouts' files
                calls[_name] += 1
            if _name == "named":
                searched.append(self)
            return _real(self, *a, **k)
        monkeypatch.setattr(rt.RunTable, name, counted)
    group = "groups/20270101T000000Z-bench0-v001234-g002467"
    got = msgspec.json.decode(page.service.rows.open_row(page.src, group, {}, Initial()).page, type=IndexPage)
    assert got.mode == "group" and got.group is not None and got.group.k == K
    assert calls["follow"] <= 2, calls  # once for the group, never once a rollout
    assert calls["rows_of"] == 1 and calls["rollout_files"] == 0, calls  # every rollout's files read at once
    # the group found by a binary search of the group keys, its rollouts among the group's own names, made once
    assert calls["take"] <= 2 and all(t._memo["__group_keys_sorted"] is True for t in searched), calls


def test_the_search_and_the_run_summary_over_a_large_run_read_its_columns(page, monkeypatch):
    """The agent tools' run summary and search over the 16,000 rollouts read the run's columns (never the whole run
    as Python rows): the summary has every version, the search counts every rollout (no first-rows cut), and
    comparing it with another run reads both runs' columns."""
    import json

    from viewer.ui.mcp_tools import McpTools

    _no_whole_run(monkeypatch)
    assert page.service.find_source(page.src) is None  # a run is searched from its columns, not as a collection
    tools = McpTools(page.service)
    summary = json.loads(tools.run_summary(page.src))
    listed, pages = [v["version"] for v in summary["versions"]], 1
    while summary.get("next_versions"):  # an answer is at most 100 KB: the rest is asked for, a range at a time
        summary = json.loads(tools.run_summary(page.src, summary["next_versions"]))
        listed += [v["version"] for v in summary["versions"]]
        pages += 1
    assert listed == list(range(1, VERSIONS + 1)) and pages > 1 and summary["live"] is False
    assert not any("first" in n for n in summary["notes"])  # the findings cover every rollout
    found = json.loads(tools.find_rollouts(page.src, "print(len(set(values)))"))  # what the template's model wrote
    assert found["rollouts"] == VERSIONS * GROUPS * K and len(found["per_version"]) == VERSIONS
    assert found["partial"] is False and len(found["hits"]) < found["rollouts"]  # counted whole, hits listed bounded
    both = json.loads(tools.compare_runs(page.src, "trl-run"))  # from both runs' columns, whatever their size
    assert "error" not in both and both["a"]["rollouts"] == VERSIONS * GROUPS * K
    versus = page.rv.versus({"src": page.src, "vs": "trl-run"})
    assert "error" not in versus and versus["compare"]["a"]["groups"] == VERSIONS * GROUPS
    assert page.service.collections.opens == 0


def test_a_group_read_from_columns_is_the_run_readers(tmp_path):
    """Every group of the bundled run (consumption log, fates, failed rollouts), read from its columns, has the
    collection rows and run rows the whole-run reader makes."""
    import shutil

    from rollout_trace.artifact.collection import open_collection
    from viewer.run_part import group_part

    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    full = open_collection(str(root))
    t = run_table(root)
    groups = [r for r in full.records if r.kind == "group"]
    assert groups and any(r.dropped for r in full.records) and any(r.trained_step is not None for r in full.records)
    for g in groups:
        part = group_part(t, f"{g.path}/rollout-00")
        assert part.records == [r for r in full.records if g.path in (r.path, r.group)]
        assert part.run.rows == [r for r in full.run.rows if r.group == g.path]
        assert part.run.groups == [x for x in full.run.groups if x.path == g.path]


@pytest.mark.parametrize("near", [None, 1234, 1, 2000])
def test_a_task_of_a_long_run_is_followed_by_its_numbers_and_lists_the_groups_near_a_version(big, page, near):
    """A task sampled throughout a long run (tests/support/scale_run.py: task 5 is every 97th group, 42 groups) is
    followed by its pass rate at every version it was scored at, from every rollout of it (as a plain reading of its
    rows says), and lists MAX_TASK_GROUPS of its groups: those nearest the open version, else the latest (a task
    of a million-rollout run has thousands of groups, which no page lists)."""
    from viewer.run_stats import MAX_TASK_GROUPS, passed, task_track

    task = f"{5:040x}"
    t = run_table(big)
    _, rows = t.page(None, limit=len(t), columns=["policy_version", "group_id", "env_reward", "task_id"])
    mine = [r for r in rows if r["task_id"] == task]
    plain: dict[int, list] = {}
    for r in mine:
        plain.setdefault(r["policy_version"], []).append(r)
    gids = sorted({r["group_id"] for r in mine})
    track = task_track(t, task, near=near)
    assert track is not None and track.group_count == len(gids) > MAX_TASK_GROUPS == len(track.groups)
    assert track.versions == len(plain) and track.title == "[task 5] synthetic"
    assert [(p.version, p.pass_rate, p.passed, p.verified, p.groups) for p in track.pass_rates] == [
        (v, sum(map(passed, rs)) / len(rs), sum(map(passed, rs)), len(rs), len({r["group_id"] for r in rs}))
        for v, rs in sorted(plain.items())]
    solved = [v for v, rs in sorted(plain.items()) if any(map(passed, rs))]
    assert track.first_solved == solved[0]
    listed = [g.group_id for g in track.groups]
    at = len(gids) - MAX_TASK_GROUPS if near is None else \
        max(0, min(len(gids) - MAX_TASK_GROUPS, sum(g < (near - 1) * GROUPS for g in gids) - MAX_TASK_GROUPS // 2))
    assert listed == gids[at:at + MAX_TASK_GROUPS]
    if near is not None and 1 < near < 2000:
        assert track.groups[0].version <= near <= track.groups[-1].version
    assert all(len(g.rollouts) == K and g.path.endswith(f"-g{g.group_id:06d}") for g in track.groups)
    got = page.rv.show(page.src, {"task": task, **({"version": str(near)} if near is not None else {})})
    body = msgspec.json.decode(got[page.rv.body_html], type=RunBody)
    assert body.task == track


def test_compare_runs_says_it_lists_a_long_tasks_latest_groups(big, capsys):
    from viewer.cli import main
    from viewer.run_stats import MAX_TASK_GROUPS

    assert main(["compare-runs", str(big), str(big), "--task", f"{5:040x}"]) == 0
    out = capsys.readouterr().out
    assert out.count(f"(its latest {MAX_TASK_GROUPS} of 42 groups)") == 2, out[-2000:]
    assert out.count("\n  v") == 2 * MAX_TASK_GROUPS


def test_a_word_is_found_in_rollouts_paths_without_a_path_made_for_each(tmp_path):
    """The index's word filter (`q`) finds a rollout by its path as a search of every path would, in its group's
    name, its ending ("/rollout-NN") or across them, in any case, with rows in order or not and a group whose
    rollouts were scored at two versions (their names differ), and makes no path for each rollout of the run."""
    import numpy as np
    import pyarrow as pa

    from support.run_tables import bundled_rows, changed, write_run
    from viewer.index.run_index import _contains, _paths_containing

    rows = bundled_rows()
    version = rows["policy_version"].to_pylist()
    version[1] += 7  # one rollout of the first group scored at another version: its own group name
    runs = [EXAMPLES_DIR / "trl-run",
            write_run(tmp_path / "backwards", rows.take(pa.array(np.arange(rows.num_rows)[::-1])), seal_rows=5),
            write_run(tmp_path / "versions", changed(rows, policy_version=version))]
    for root in runs:
        t = run_table(root)
        some = next(p for p in t.take(np.arange(len(t)), ["path"])["path"].to_pylist() if p)
        words = (some, some[-12:].upper(), some[7:30], "/rollout-0", "-v0", "9/rollout-", "rollout-1", "nope",
                 "g000003/ROLLOUT-02", "v000008-g", "/", "ſ", "groups/x", "0" * 7)
        got = {w: _paths_containing(t, w).tolist() for w in words}
        assert "__names" not in t._memo  # no path made for each rollout
        for w in words:
            assert got[w] == _contains(t.view()["path"], w).tolist(), (root, w)
        assert any(any(x) for x in got.values()) and not any(got["nope"])
