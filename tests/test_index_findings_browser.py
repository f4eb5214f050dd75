"""Findings in the collection index, in a real browser (viewer/assets/src/collection_index.js): on the bundled run the
findings column fills in once the search panel has computed them (its fp-indexed signal), the finding filter keeps
the rollouts with a rule and lives in the URL, so a reload shows the same rows. Screenshots light and dark at
1440x900 and 1024x768."""

from __future__ import annotations

import pytest

from support import pages
from support.pages import query, url_of

pytestmark = pytest.mark.browser
TIMEOUT = 120_000
ROWS = "[data-testid=index-row]"
FILLED = "() => document.querySelector('#collection-index [data-testid=index-findings] .ci-finding') !== null"


def _paths(page) -> list[str]:
    return page.locator(ROWS).evaluate_all("rs => rs.map(r => r.dataset.path)")


def test_the_findings_column_and_filter(page, app_url):
    page.goto(url_of(app_url, "trl-run"))
    page.wait_for_selector(ROWS, timeout=TIMEOUT)
    page.wait_for_function(FILLED, timeout=TIMEOUT)  # the search panel built the index: the column filled in
    total = page.locator(ROWS).count()
    flagged = page.locator(f"{ROWS}:has([data-rule=drift-fork])").count()
    assert 0 < flagged < total
    assert page.locator("[data-testid=filter-finding]").is_visible()
    options = page.eval_on_selector("[data-testid=filter-finding]", "s => Array.from(s.options).map((o) => o.value)")
    assert options == ["", "any", "none", "drift-fork"]
    page.select_option("[data-testid=filter-finding]", "drift-fork")
    page.wait_for_function(f"n => document.querySelectorAll('{ROWS}').length === n", arg=flagged, timeout=TIMEOUT)
    assert query(page)["finding"] == "drift-fork"
    kept = _paths(page)
    assert all("drift-fork" in page.locator(f"{ROWS}[data-path='{p}'] [data-testid=index-findings]").inner_text()
               for p in kept[:5])
    page.locator("#collection-index").scroll_into_view_if_needed()
    pages.shots(page, "index-findings", settle_ms=250)

    page.reload()  # the filter lives in the URL: the same rows come back, once the findings are known again
    page.wait_for_function(FILLED, timeout=TIMEOUT)
    page.wait_for_function(f"n => document.querySelectorAll('{ROWS}').length === n", arg=flagged, timeout=TIMEOUT)
    assert _paths(page) == kept and page.locator("[data-testid=filter-finding]").input_value() == "drift-fork"
    page.select_option("[data-testid=filter-finding]", "none")
    page.wait_for_function(f"n => document.querySelectorAll('{ROWS}').length === n", arg=total - flagged, timeout=TIMEOUT)
    assert not page.errors and not page.outside_requests
