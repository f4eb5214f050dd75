"""Findings in the collection index (viewer/index/page.py, viewer/index/render.py, viewer/ui/collection_view.py):
a findings column and a `finding=` filter. On the bundled group (cut-at-limit on rollout 2) they come from the
search panel's index once it is built, and before that the column says it is not computed and the filter waits,
saying so; on the bundled run (drift-fork on its multi-turn rollouts) from the run's findings column, recorded
with each rollout, at once."""

from __future__ import annotations

import json

import pytest

from rollout_trace.artifact.collection import open_collection
from viewer.find.build import index_collection
from viewer.index.contract import FINDING_KEY
from viewer.index.page import build_page, row_findings
from viewer.ui.find_panel import FindPanel
from viewer.ui.service import Service


@pytest.fixture(scope="module")
def group():
    c = open_collection("smollm2-group")
    index = index_collection(c)
    yield c, index.rules_by_path()
    index.close()


def test_the_column_names_each_rows_rules(group):
    c, found = group
    assert found == {"rollout-00": (), "rollout-01": (), "rollout-02": ("cut-at-limit",), "rollout-03": ()}
    rows = row_findings(c, found)
    assert rows[""] == ["cut-at-limit"]  # the group itself: any of its rollouts
    page = build_page(c, "smollm2-group", {}, 1, findings=found)
    assert page.findings_known and page.finding_rules == ["cut-at-limit"]
    assert {r.path: r.findings for r in page.table.rows} == {"": ["cut-at-limit"], "rollout-00": [], "rollout-01": [],
                                                             "rollout-02": ["cut-at-limit"], "rollout-03": []}
    unknown = build_page(c, "smollm2-group", {}, 1)
    assert not unknown.findings_known and all(r.findings is None for r in unknown.table.rows)  # not computed yet


def test_the_filter_keeps_the_rows_with_a_rule_and_lives_in_the_query(group):
    c, found = group
    only = build_page(c, "smollm2-group", {FINDING_KEY: "cut-at-limit"}, 1, findings=found)
    assert only.matched == 2 and "finding=cut-at-limit" in only.query and only.filters[FINDING_KEY] == "cut-at-limit"
    assert [r.path for r in only.table.rows] == ["", "rollout-02"]
    none = build_page(c, "smollm2-group", {FINDING_KEY: "none"}, 1, findings=found)
    assert none.matched == 3 and "rollout-02" not in [r.path for r in none.table.rows]  # the three others (the group has one)
    bad = build_page(c, "smollm2-group", {FINDING_KEY: "<b>x"}, 1, findings=found)
    assert bad.matched == 5 and FINDING_KEY not in bad.query and any("<b>x" in n for n in bad.notes)
    waiting = build_page(c, "smollm2-group", {FINDING_KEY: "any"}, 1)
    assert waiting.matched == 5 and any("waits for this source" in n for n in waiting.notes)
    assert "finding=any" in waiting.query  # kept for when the findings are known
    assert FINDING_KEY in only.query_keys


def test_a_runs_findings_are_known_from_its_findings_column_at_once():
    """A recorded run's findings were computed when each rollout was recorded (its findings column): the index
    filters by rule from the first page, before any search panel ran, and agrees with the panel's summary."""
    from rollout_trace.artifact.run import open_run

    run = open_run("trl-run")
    try:
        forked = {p for p, f in zip(run.table.column("path").to_pylist(), run.table.column("findings").to_pylist(),
                                    strict=True) if p and any(x["rule"] == "drift-fork" for x in f or ())}
    finally:
        run.close()
    assert forked  # the bundled run's multi-turn rollouts fork
    service = Service("trl-run", public=False)
    first = json.loads(service.rows.index_value("trl-run", {FINDING_KEY: "drift-fork"}))
    assert first["findings_known"] and "drift-fork" in first["finding_rules"]
    assert 0 < first["matched"] < first["total"]
    rows = first["table"]["rows"]
    assert sum("drift-fork" in r["findings"] for r in rows) == first["shown"] == len(rows)
    shown = {r["path"] for r in rows if r["kind"] == "rollout"}
    assert shown and shown <= forked  # the rollouts listed are the ones whose column names the rule
    said = {r["rule"]: r["total"] for r in FindPanel(service).summary({"src": "trl-run"})["rules"]}
    assert said["drift-fork"] == len(forked)  # the panel counts the same rollouts
    again = json.loads(service.rows.index_value("trl-run", {FINDING_KEY: "drift-fork"}))
    assert (again["matched"], again["finding_rules"]) == (first["matched"], first["finding_rules"])


def test_a_group_map_names_each_rollouts_rules_as_the_index_does():
    """The group map's findings column: a run's from its findings column at once, each rollout's rules the same as
    its index row's; a collection's once the search panel built its index, "not known" (None) before."""
    service = Service("trl-run", public=False)
    c = service.collection("trl-run")
    index = json.loads(service.rows.index_value("trl-run", {}))
    by_path = {r["path"]: r["findings"] for r in index["table"]["rows"] if r["kind"] == "rollout"}
    groups = [r for r in c.records if r.kind == "group"]
    assert len(groups) > 1
    seen = set()
    for group in groups:
        m = service.rows.group_page(c, "trl-run", group, {}).group
        assert m is not None and m.findings_known
        for row in m.rows:
            if row.path is None:  # failed before an artifact: nothing recorded to find in
                assert row.findings is None
                continue
            assert row.findings == by_path[row.path], row.path
            seen.update(row.findings)
    assert seen == {"drift-fork"}  # the bundled run's multi-turn rollouts fork, the others have none

    service = Service("smollm2-group", public=False)
    c = service.collection("smollm2-group")
    group = c.record("")
    before = service.rows.group_page(c, "smollm2-group", group, {}).group
    assert before is not None and not before.findings_known and all(r.findings is None for r in before.rows)
    FindPanel(service).summary({"src": "smollm2-group"})  # the panel builds the group's index
    after = service.rows.group_page(c, "smollm2-group", group, {}).group
    assert after is not None and after.findings_known
    assert {r.rollout: r.findings for r in after.rows} == {0: [], 1: [], 2: ["cut-at-limit"], 3: []}


def test_a_group_map_whose_findings_cannot_be_read_is_drawn_without_them(monkeypatch):
    """A public visitor's bound that stops the run's findings pass leaves the map drawn, its findings not known."""
    from rollout_trace.artifact import ArtifactError, Problem
    from viewer.find.columns import RunFind

    def stopped(self, paths):
        raise ArtifactError([Problem("rollouts/", "the visitor's budget of bytes read ran out")])

    monkeypatch.setattr(RunFind, "rules_of", stopped)
    service = Service("trl-run", public=False)
    c = service.collection("trl-run")
    group = next(r for r in c.records if r.kind == "group")
    m = service.rows.group_page(c, "trl-run", group, {}).group
    assert m is not None and m.rows and not m.findings_known and all(r.findings is None for r in m.rows)
