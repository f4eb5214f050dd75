"""Findings in the collection index (viewer/index/page.py, viewer/index/render.py, viewer/ui/collection_view.py):
a findings column and a `finding=` filter from the search panel's index once it is built, on the bundled group
(cut-at-limit on rollout 2) and the bundled run (drift-fork on its multi-turn rollouts); before that the column
says it is not computed and the filter waits, saying so."""

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
    assert "<td class='ci-findings' data-testid='index-findings'><span class='ci-finding' data-rule='cut-at-limit'>" \
        in page.table_html
    unknown = build_page(c, "smollm2-group", {}, 1)
    assert not unknown.findings_known and "not computed yet" in unknown.table_html


def test_the_filter_keeps_the_rows_with_a_rule_and_lives_in_the_query(group):
    c, found = group
    only = build_page(c, "smollm2-group", {FINDING_KEY: "cut-at-limit"}, 1, findings=found)
    assert only.matched == 2 and "finding=cut-at-limit" in only.query and only.filters[FINDING_KEY] == "cut-at-limit"
    assert "rollout-02" in only.table_html and "rollout-01" not in only.table_html
    none = build_page(c, "smollm2-group", {FINDING_KEY: "none"}, 1, findings=found)
    assert none.matched == 3 and "rollout-02" not in none.table_html  # the three others (the group has one)
    bad = build_page(c, "smollm2-group", {FINDING_KEY: "<b>x"}, 1, findings=found)
    assert bad.matched == 5 and FINDING_KEY not in bad.query and "&lt;b&gt;x" in bad.notes_html
    waiting = build_page(c, "smollm2-group", {FINDING_KEY: "any"}, 1)
    assert waiting.matched == 5 and "waits for this source" in waiting.notes_html
    assert "finding=any" in waiting.query  # kept for when the findings are known
    assert FINDING_KEY in only.query_keys


def test_the_app_shows_them_once_the_search_panel_built_the_index():
    service = Service("trl-run", public=False)
    before = json.loads(service.rows.index_value("trl-run", {FINDING_KEY: "drift-fork"}))
    assert not before["findings_known"]
    assert FindPanel(service).summary({"src": "trl-run"})["rules"]  # what the panel asks when the page opens
    after = json.loads(service.rows.index_value("trl-run", {FINDING_KEY: "drift-fork"}))
    assert after["findings_known"] and "drift-fork" in after["finding_rules"]
    assert after["matched"] > 0 and after["matched"] < after["total"]
    assert after["table_html"].count("data-rule='drift-fork'") == after["shown"]
