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


def test_the_column_fills_in_when_the_index_page_comes_after_the_panels_findings(page, app_url, tmp_path, monkeypatch):
    """A page load asks for the index page and the search panel's findings at once. When the index page was made
    before the findings were known but arrives after the panel said they are (its fp-indexed signal came when there
    was no index page to fill in), the index asks once more and the column fills in. Here the panel's findings are
    computed only once the index page is made, and the index page is held back until they are, and a moment more,
    so it comes second."""
    import shutil
    import threading
    import time

    from rollout_trace.artifact.sources import EXAMPLES_DIR
    from viewer.ui.find_panel import FindPanel
    from viewer.ui.rows import Rows

    folder = tmp_path / "late"
    for name in ("scripted-smollm2", "smollm2-group"):
        shutil.copytree(EXAMPLES_DIR / name, folder / name)
    real_link, real_summary = Rows.page_link, FindPanel.summary
    made = threading.Event()
    held: list[bool] = []

    def late(self, params):
        got = real_link(self, params)
        if params.get("src") == str(folder) and not held:
            held.append(self.service.findings_ready(str(folder)) is None)  # made before the findings were known
            made.set()
            deadline = time.monotonic() + 60
            while self.service.findings_ready(str(folder)) is None and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.5)  # the panel's answer reaches the page first
        return got

    def after_the_page(self, data):
        if isinstance(data, dict) and data.get("src") == str(folder):
            made.wait(60)
        return real_summary(self, data)

    monkeypatch.setattr(Rows, "page_link", late)
    monkeypatch.setattr(FindPanel, "summary", after_the_page)
    page.goto(url_of(app_url, str(folder)))
    page.wait_for_selector(ROWS, timeout=TIMEOUT)
    page.wait_for_function(FILLED, timeout=TIMEOUT)
    assert held == [True]
    assert not page.errors
