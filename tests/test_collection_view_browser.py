"""The collection index in a real browser: open a collection, sort, filter, open a row, come back with the
filter kept (the back control and the browser's Back), deep links to a filtered index and to a row, a
group row, a Hub collection through the loopback stand-in, and screenshots in light and dark."""

from __future__ import annotations

import json

import pytest

from conftest import SHOTS
from support.collection_data import build
from support.hub_standin import HubStandIn
from support.pages import query, url_of

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
ALL_ROWS = ["a", "broken/c", "broken/d", "deep/nested/b", "grp", "grp/rollout-00", "grp/rollout-01",
            "grp/rollout-02", "grp/rollout-03"]


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    root = build(tmp_path_factory.mktemp("coll") / "runs")
    # a hostile title: must show as text, never as markup
    task = root / "broken" / "d" / "task.json"
    data = json.loads(task.read_text())
    data["instruction"] = "<img src=x onerror=alert(1)> Count the <b>distinct</b> values"
    task.write_text(json.dumps(data))
    return root




def rows(page) -> list[str]:
    return page.locator("[data-testid=index-row]").evaluate_all("rs => rs.map(r => r.dataset.path)")


def open_index(page, url: str, n: int | None = None):
    page.goto(url)
    page.wait_for_selector("[data-testid=index-row]", timeout=TIMEOUT)
    if n is not None:
        page.wait_for_function(f"document.querySelectorAll('[data-testid=index-row]').length === {n}", timeout=TIMEOUT)
    return page


def wait_index(page):
    """The index is showing (not the back bar) and the token view has been cleared."""
    page.wait_for_selector("[data-testid=collection-index][data-mode=index]", timeout=TIMEOUT)
    page.wait_for_function("!document.querySelector('.tv-tokens')", timeout=TIMEOUT)


def wait_rows(page, expected: list[str]):
    wait_index(page)
    page.wait_for_function("want => JSON.stringify(Array.from(document.querySelectorAll('[data-testid=index-row]'))"
                           ".map(r => r.dataset.path)) === JSON.stringify(want)", arg=expected, timeout=TIMEOUT)


def test_open_sort_filter_open_row_and_back(page, app_url, coll):
    open_index(page, url_of(app_url, str(coll)), len(ALL_ROWS))
    assert rows(page) == ALL_ROWS
    assert "9 matching rows (1 group, 8 rollouts) · 9 in the collection · 1 invalid" in page.locator(
        "[data-testid=index-counts]").inner_text()
    bad = page.locator("tr.ci-row[data-path='broken/c']")
    assert "invalid" in bad.get_attribute("class") and bad.locator(".ci-bad").inner_text() == "invalid"
    assert "agent_turns" in page.locator("tr.ci-problem-row[data-path='broken/c']").inner_text()
    group = page.locator("tr.ci-row[data-path='grp']")
    assert "group · K=4" in group.inner_text() and "-0.100..+0.800" in group.inner_text()
    assert "rollout 3" in page.locator("tr.ci-row[data-path='grp/rollout-03']").inner_text()
    # hostile task text is text
    assert "<img src=x" in page.locator("tr.ci-row[data-path='broken/d'] .ci-title").inner_text()
    assert page.locator(".ci-table img").count() == 0
    assert page.locator(".tv-tokens").count() == 0  # the token view is empty while the index shows

    # sort: click a heading, again to reverse; the URL follows
    page.locator("button.ci-sort[data-sort=reward]").click()
    page.wait_for_function("location.search.includes('sort=reward')")
    assert rows(page)[0] == "grp/rollout-02"  # -0.1
    page.locator("button.ci-sort[data-sort=reward]").click()
    page.wait_for_function("location.search.includes('sort=-reward')")
    assert rows(page)[0] == "deep/nested/b"  # 1.0
    assert page.locator("th[aria-sort=descending]").inner_text().startswith("reward")

    # filter: timed out, then a tool and a model; each lands in the URL
    page.select_option("[data-testid=filter-timed_out]", "yes")
    wait_rows(page, ["grp", "grp/rollout-03"])  # rollout-03 is unscorable (no reward): last either way
    assert query(page)["timed_out"] == "yes"
    page.select_option("[data-testid=filter-timed_out]", "")
    page.select_option("[data-testid=filter-model]", "org/Other-7B")
    wait_rows(page, ["deep/nested/b"])
    assert query(page)["model"] == "org/Other-7B" and query(page)["sort"] == "-reward"
    assert "timed_out" not in query(page)

    # open the row: the token view shows it, the URL names it, the back bar says where we are
    page.locator("tr.ci-row[data-path='deep/nested/b'] .ci-open").click()
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    page.wait_for_function("new URLSearchParams(location.search).get('row') === 'deep/nested/b'")
    assert page.locator("[data-testid=back-to-index]").is_visible()
    assert not page.locator(".ci-main").is_visible()
    assert "Other-7B" in page.locator(".tv-model").inner_text()
    assert query(page)["model"] == "org/Other-7B"

    # back with the control: the filtered index again
    page.locator("[data-testid=back-to-index]").click()
    wait_rows(page, ["deep/nested/b"])
    assert page.locator("[data-testid=filter-model]").input_value() == "org/Other-7B"
    assert "row" not in query(page) and query(page)["model"] == "org/Other-7B"
    assert page.locator(".tv-tokens").count() == 0

    # ... and with the browser's Back
    page.locator("tr.ci-row[data-path='deep/nested/b']").click()
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    page.go_back()
    wait_rows(page, ["deep/nested/b"])
    assert "row" not in query(page) and query(page)["sort"] == "-reward"
    assert page.locator(".tv-tokens").count() == 0
    # text search over titles
    page.select_option("[data-testid=filter-model]", "")
    page.fill("[data-testid=filter-q]", "count the")
    wait_rows(page, ["broken/d"])
    assert query(page)["q"] == "count the"
    assert page.outside_requests == [] and page.errors == []


def test_deep_link_to_a_filtered_index_and_to_a_row(page, app_url, coll):
    open_index(page, url_of(app_url, str(coll), timed_out="yes", sort="-reward"))
    wait_rows(page, ["grp", "grp/rollout-03"])
    assert page.locator("[data-testid=filter-timed_out]").input_value() == "yes"
    assert "2 matching rows" in page.locator("[data-testid=index-counts]").inner_text()

    # a bad value in the URL is dropped with a note, never an error
    open_index(page, url_of(app_url, str(coll), reward_min="lots", trained_min=2))
    assert "ignored reward_min" in page.locator("[data-testid=index-notes]").inner_text()
    assert set(rows(page)) == set(ALL_ROWS) - {"broken/c"}

    # a deep link to a row, with a filter: the row opens; back gives the filtered index
    page.goto(url_of(app_url, str(coll), row="a", drift="drift", turn=1))
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    assert page.locator(".tv-navitem.active .tv-nav-h").inner_text().startswith("turn 1")
    page.locator("[data-testid=back-to-index]").click()
    wait_index(page)
    # b records its drift in summary.json; a's is counted from its turns.json: both drift
    assert "deep/nested/b" in rows(page) and "a" in rows(page)
    assert query(page)["drift"] == "drift" and "turn" not in query(page)
    assert page.errors == []


def test_group_row_opens_its_map_and_a_single_artifact_no_index(page, app_url, coll):
    open_index(page, url_of(app_url, str(coll), kind="group"))
    wait_rows(page, ["grp"])
    page.locator("tr.ci-row[data-path='grp'] .ci-open").click()
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    assert page.locator("[data-testid=group-row]").count() == 4
    assert query(page)["row"] == "grp"

    # one artifact of the collection named directly opens as before: no index
    page.goto(url_of(app_url, str(coll / "a")))
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    assert page.locator("[data-testid=collection-index]").is_hidden()
    # the source box opens a collection too
    page.locator("#source input").fill(str(coll))
    page.locator("#load").click()
    page.wait_for_selector("[data-testid=index-row]", timeout=TIMEOUT)
    assert page.locator(".tv-tokens").count() == 0
    assert page.errors == []


def test_hub_collection_through_the_stand_in(page, app_url, tmp_path, monkeypatch):
    repo = build(tmp_path / "repo" / "runs")
    with HubStandIn({"org/ui-rollouts": repo.parent}, page_size=25) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        open_index(page, url_of(app_url, "org/ui-rollouts", tool="bash", sort="path"), len(ALL_ROWS) - 1)
        assert rows(page) == ["runs/" + p for p in ALL_ROWS if p != "broken/c"]
        assert "Hub dataset org/ui-rollouts" in page.locator("[data-testid=index-counts]").inner_text()
        assert not [p for p in hub.paths() if p.endswith("turns.json")]  # the index read small files only
        page.locator("tr.ci-row[data-path='runs/grp/rollout-01']").click()
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        turns = [p for p in hub.paths("GET") if p.endswith("turns.json")]
        assert len(turns) == 1 and turns[0].endswith("runs/grp/rollout-01/turns.json")
        page.go_back()
        wait_index(page)
        assert query(page)["tool"] == "bash"
    assert page.outside_requests == [] and page.errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
def test_screenshots(browser, app_url, coll, scheme, size):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme)
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        SHOTS.mkdir(parents=True, exist_ok=True)
        name = f"collection-{scheme}-{size[0]}x{size[1]}"
        open_index(pg, url_of(app_url, str(coll), sort="-reward"), len(ALL_ROWS))
        pg.screenshot(path=str(SHOTS / f"{name}-index.png"), full_page=True)
        assert pg.evaluate("document.body.classList.contains('dark')") == (scheme == "dark")
        pg.select_option("[data-testid=filter-tool]", "bash")
        pg.wait_for_function("location.search.includes('tool=bash')")
        pg.locator("tr.ci-row[data-path='grp/rollout-01']").click()
        pg.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        pg.screenshot(path=str(SHOTS / f"{name}-row.png"))
        assert errors == []
    finally:
        ctx.close()


@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
@pytest.mark.parametrize("src", ["trl-run", "examples", "coll"])
def test_the_index_table_fits_its_captured_column_too(page, app_url, src, size, request):
    """At 1440x900 and on a 1024x768 projector the whole table is inside its box, no sideways scroll: the last
    column (captured) is whole, for the bundled run's long group paths, for the examples folder and for a
    collection of nested folders, a group's rollouts (each with its advantage) and an invalid row; the run
    page's versions table above the run's index fits too (its last column, trainer mismatch, whole)."""
    from conftest import ROOT
    from support import pages

    page.set_viewport_size({"width": size[0], "height": size[1]})
    where = {"trl-run": "trl-run", "examples": str(ROOT / "examples"), "coll": str(request.getfixturevalue("coll"))}
    page.goto(url_of(app_url, where[src]))
    page.wait_for_selector(".ci[data-mode=index] .ci-table td", timeout=TIMEOUT)
    # measured in its last layout: after the findings column filled in (the search panel's index, built after the page)
    page.wait_for_function("() => document.querySelector('#collection-index [data-testid=index-findings] .ci-finding')"
                           " !== null", timeout=2 * TIMEOUT)
    box = page.locator(".ci-tablebox").first
    assert box.evaluate("b => b.scrollWidth <= b.clientWidth"), box.evaluate("b => [b.scrollWidth, b.clientWidth, [...b.querySelectorAll('th')].map(h => h.innerText.trim().slice(0,10) + '=' + Math.round(h.getBoundingClientRect().width)).join(' ')]")
    right = box.evaluate("b => b.getBoundingClientRect().right")
    captured = page.locator(".ci-table th").last
    assert captured.inner_text().strip().startswith("recorded" if src == "trl-run" else "captured")
    assert captured.evaluate("h => h.getBoundingClientRect().right") <= right
    dates = page.locator(".ci-date").evaluate_all("ds => ds.map(d => d.scrollWidth <= d.clientWidth + 1)")
    assert dates and all(dates)
    if src == "trl-run":
        versions = page.locator(".rp-vbox")
        assert versions.evaluate("b => b.scrollWidth <= b.clientWidth"), versions.evaluate("b => [b.scrollWidth, b.clientWidth]")
        assert page.locator(".rp-versions th").last.inner_text().strip() == "trainer mismatch"
        if size == (1440, 900):  # (the pictures are taken at both sizes, light and dark)
            page.locator(".ci-tablebox").first.scroll_into_view_if_needed()
            pages.shots(page, "index-table-fits")
    assert page.errors == []
