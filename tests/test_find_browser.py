"""The search panel in a real browser (viewer/ui/find_panel.py, viewer/assets/src/find_panel.js): on the bundled run,
the findings chart draws, a search lists hits, a hit opens the token view on its turn with the matched tokens
marked and on screen, and a finding from the legend lists its rollouts; on a collection the panel is there too
and it is absent on a single rollout. Screenshots in both schemes at 1440x900 and 1024x768."""

from __future__ import annotations

import msgspec
import pytest
from test_view_browser import CONTRAST

from support.pages import query, shots, url_of

pytestmark = pytest.mark.browser

PANEL = "[data-testid=find-panel]"
# the first marked token inside the token pane and inside the window
IN_VIEW = """() => { const t = document.querySelector('.tv-tokens .t.tv-found'), b = document.querySelector('.tv-tokens');
    if (!t || !b) return false; const r = t.getBoundingClientRect(), p = b.getBoundingClientRect();
    return r.top >= p.top && r.bottom <= p.bottom && r.top >= 0 && r.bottom <= window.innerHeight; }"""


def _ready(page) -> None:
    page.wait_for_selector(f".fp-mount[data-ready='1'] {PANEL}", timeout=120_000)


def _search(page, text: str) -> None:
    before = page.eval_on_selector(".fp-mount", "b => b.dataset.answered || ''")
    page.fill("[data-testid=find-input]", text)
    page.press("[data-testid=find-input]", "Enter")
    page.wait_for_function("b => { const x = document.querySelector('.fp-mount'); return x && x.dataset.answered && "
                           "x.dataset.answered !== b; }", arg=before, timeout=60_000)


def test_search_on_the_run_page_opens_the_hit_at_its_tokens(app_url, page):
    page.goto(url_of(app_url, "trl-run"))
    _ready(page)
    drawn = page.eval_on_selector("[data-testid=find-chart]", """c => { const g = c.getContext('2d');
        const d = g.getImageData(0, 0, c.width, c.height).data; let n = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }""")
    assert drawn > 100  # the bars of drift-fork per version are painted
    assert page.eval_on_selector("[data-testid=find-chart]", "c => c.clientHeight") == 150  # four versions' bars
    assert "drift-fork" in page.inner_text("[data-testid=find-legend]")
    # a run's every rollout is searched from its columns; one rule is one rule
    assert page.inner_text("[data-testid=find-status]").startswith(
        "50 rollouts with recorded text searchable (2 failed before any text was recorded); findings of 1 rule (")
    _search(page, "Wrote file")
    assert "per version" in page.inner_text("[data-testid=find-status]")
    hits = page.locator("[data-testid=find-hit]")
    assert hits.count() > 0 and "Wrote file" in hits.first.locator("mark").inner_text()
    page.locator(PANEL).scroll_into_view_if_needed()
    shots(page, "find-run-hits")
    where = hits.first.locator(".fp-where").inner_text()  # "v1 · rollout 0 · turn 1 · tool-output · token 582"
    turn = int(where.split("turn ")[1].split(" ")[0])
    token = int(where.split("token ")[1])
    hits.first.click()
    found = page.locator(".tv-tokens .t.tv-found")
    found.first.wait_for(timeout=60_000)
    assert int(found.first.get_attribute("data-i")) == token
    assert "".join(found.all_inner_texts()).replace("·", " ").strip().startswith("Wrote")
    page.wait_for_function("""() => { const t = document.querySelector('.tv-tokens .t.tv-found'), b = document.querySelector('.tv-tokens');
        if (!t || !b) return false; const r = t.getBoundingClientRect(), p = b.getBoundingClientRect();
        return r.top >= p.top && r.bottom <= p.bottom; }""", timeout=30_000)  # scrolled into the pane
    assert f"turn {turn}" in page.inner_text(".tv-turn-title")
    shots(page, "find-hit-opened")
    link = query(page)  # the marks are in the URL: a reload (or the link shared) opens them again
    assert link["row"] and link["turn"] == str(turn) and link["scope"] == "full"
    a, b = (int(x) for x in link["found"].split("-"))
    assert a == token and b > a
    page.reload()
    found.first.wait_for(timeout=60_000)
    assert int(found.first.get_attribute("data-i")) == token and query(page)["found"] == link["found"]
    page.set_viewport_size({"width": 1024, "height": 768})  # the lines re-wrap: the marks stay on screen
    page.wait_for_function(IN_VIEW, timeout=30_000)
    page.go_back()  # the hit was a history entry: Back is the run page again
    page.wait_for_function("() => !new URL(location.href).searchParams.has('found')", timeout=30_000)
    assert not page.errors and not page.outside_requests


def test_a_runs_first_hits_are_listed_and_then_every_rollout_is_counted(app_url, page, monkeypatch):
    """The panel lists a run's first hits from the shards read so far, then counts the rest: the status it ends
    with is the whole search's (each hit naming its version, group and rollout)."""
    from rollout_trace.artifact.collection import open_collection
    from viewer.find import answers, columns
    from viewer.find.build import index_collection

    monkeypatch.setattr(columns, "FIRST_S", 0.0)  # the first answer returns after the first shard with a hit
    asked: list[dict] = []
    search = answers.search
    def spy(index, req, *args, **kw):
        asked.append(msgspec.to_builtins(req) if isinstance(req, answers.FindRequest) else dict(req))
        return search(index, req, *args, **kw)
    monkeypatch.setattr(answers, "search", spy)
    page.goto(url_of(app_url, "trl-run"))
    _ready(page)
    _search(page, "Wrote file")
    c = open_collection("trl-run")
    whole = search(index_collection(c), {"pattern": "Wrote file"}, public=False)
    status = page.inner_text("[data-testid=find-status]")
    assert status.startswith(f"{whole.rollouts:,} rollouts match"), (status, whole.rollouts)
    assert "counting" not in status and [r["first"] for r in asked] == [True, False] and asked[1]["after"] > 0
    hits = page.locator("[data-testid=find-hit] .fp-where").all_inner_texts()
    assert len(hits) == len(whole.hits[:100]) and all(" · group " in w and " · rollout " in w for w in hits), hits
    assert not page.errors


def test_a_bar_of_the_findings_chart_lists_its_rollouts(app_url, page):
    """A click on a version's bar, on its bottom part: the rollouts of that version with that part's finding."""
    page.goto(url_of(app_url, "trl-run"))
    _ready(page)
    # the run page's charts lie above the panel: drawn, they no longer move it
    page.wait_for_function("() => !!document.querySelector('[data-testid=run-charts]')?.dataset.drawn", timeout=60_000)
    before = page.eval_on_selector(".fp-mount", "b => b.dataset.answered || ''")
    chart = page.locator("[data-testid=find-chart]")
    chart.scroll_into_view_if_needed()
    # the plot ends 22 px above the canvas's bottom (find_panel.js place): the first painted pixel there is a bar's foot
    y = chart.bounding_box()["height"] - 22 - 3
    x = page.eval_on_selector("[data-testid=find-chart]", """(c, y) => { const k = c.width / c.clientWidth;
        const row = c.getContext('2d').getImageData(0, Math.round(y * k), c.width, 1).data;
        for (let i = Math.round(37 * k); i < c.width; i++) if (row[4 * i + 3] > 0) return i / k + 2; return null; }""", y)
    assert x is not None, "a bar is drawn"
    chart.click(position={"x": x, "y": y})  # where the canvas is when clicked (Playwright waits until it stands still)
    page.wait_for_function("b => document.querySelector('.fp-mount').dataset.answered !== b", arg=before, timeout=60_000)
    version = page.input_value("[data-testid=find-versions]")
    rule = page.input_value("[data-testid=find-rule]")
    assert version.isdigit() and rule, (version, rule)
    hits = page.locator("[data-testid=find-hit] .fp-where")
    # each a rollout of that version, named by its group (a version's groups each have a rollout 0)
    assert hits.count() > 0 and all(w.startswith(f"v{version} · group ") and " · rollout " in w
                                    for w in hits.all_inner_texts())
    shots(page, "find-run-finding")
    assert not page.errors


def test_a_link_with_marks_opens_them_and_a_bad_one_is_named(app_url, page):
    from rollout_trace.artifact.collection import open_collection
    from viewer.find import answers
    from viewer.find.build import index_collection

    index = index_collection(open_collection("trl-run"))  # a hit as the panel lists it: its row, turn and tokens
    hit = answers.search(index, {"pattern": "Wrote file", "fields": ["tool-output"], "limit": 1}, False).hits[0]
    index.close()
    row, turn, a, b = hit.path, hit.turn, hit.token, hit.token_end
    page.goto(url_of(app_url, "trl-run", row=row, turn=turn, scope="full", found=f"{a}-{b}"))
    found = page.locator(".tv-tokens .t.tv-found")
    found.first.wait_for(timeout=60_000)
    assert found.count() == b - a and int(found.first.get_attribute("data-i")) == a
    page.wait_for_function(IN_VIEW, timeout=30_000)
    page.set_viewport_size({"width": 1024, "height": 768})
    page.wait_for_function(IN_VIEW, timeout=30_000)
    page.click(f"[data-testid=nav-turn][data-turn='{0 if turn else 1}']")  # another turn: no marks
    page.wait_for_function("() => !new URL(location.href).searchParams.has('found')", timeout=30_000)
    page.goto(url_of(app_url, "trl-run", row=row, turn=turn, scope="full", found=f"{b}-{a}"))
    page.wait_for_selector("[data-testid=tokens] .t", timeout=60_000)
    assert page.locator(".tv-tokens .t.tv-found").count() == 0
    assert "found is not a token range" in page.inner_text(".tv-note-box")
    assert not page.errors


def test_a_finding_lists_its_rollouts_and_a_bad_regex_is_named(app_url, page):
    page.goto(url_of(app_url, "smollm2-group"))
    _ready(page)
    # one bar (one rule, no versions): a low chart, its bar still painted
    assert page.eval_on_selector("[data-testid=find-chart]", "c => c.clientHeight") <= 80
    assert page.eval_on_selector("[data-testid=find-chart]", """c => { const d = c.getContext('2d').getImageData(0, 0,
        c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }""") > 100
    before = page.eval_on_selector(".fp-mount", "b => b.dataset.answered || ''")
    page.click("[data-testid=find-legend] [data-rule=cut-at-limit]")
    page.wait_for_function("b => document.querySelector('.fp-mount').dataset.answered !== b", arg=before)
    hits = page.locator("[data-testid=find-hit]")
    assert hits.count() == 1 and "cut at the token limit" in hits.first.inner_text()
    shots(page, "find-collection-finding")
    page.select_option("[data-testid=find-rule]", "")
    _search(page, "/(unclosed/")
    assert "not a valid regular expression" in page.inner_text("[data-testid=find-status]")
    assert not page.errors


def test_no_panel_on_a_single_rollout(app_url, page):
    page.goto(url_of(app_url, "scripted-smollm2"))
    page.wait_for_selector("[data-testid=tokens] .t", timeout=60_000)
    assert page.locator(PANEL).count() == 0


FOLDED = "() => { const p = document.querySelector('[data-testid=find-panel]'); return !!p && p.classList.contains('fp-folded'); }"
OPEN = "() => { const p = document.querySelector('[data-testid=find-panel]'); return !!p && !p.classList.contains('fp-folded'); }"


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_the_panel_folds_away_on_a_group_and_a_rollout(app_url, page, size):
    """On the run page the chart and the hits show; on a group's map and a rollout only the search row does, so the
    map's table and the token pane start within the first screen; the button, a search or Back unfold it."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(url_of(app_url, "trl-run"))
    _ready(page)
    assert page.evaluate(OPEN) and page.locator("[data-testid=find-chart]").is_visible()
    page.locator(".rp-vrow").first.click()  # a version's groups, then its first group's map
    page.locator("tr.rp-grow .rp-open, tr.rp-grow").first.click()
    page.wait_for_function(FOLDED, timeout=60_000)
    page.locator(".gm-table").first.wait_for(timeout=60_000)
    assert not page.locator("[data-testid=find-chart]").is_visible()
    panel = page.locator(PANEL).bounding_box()
    assert panel and panel["height"] < 90  # the search row alone
    top = page.locator(".gm-table").first.bounding_box()
    assert top and top["y"] < size[1] * 0.85  # the map's table begins on the first screen
    shots(page, f"find-folded-group-{size[0]}")
    page.click("[data-testid=find-unfold]")
    assert page.evaluate(OPEN) and page.locator("[data-testid=find-chart]").is_visible()
    page.click("[data-testid=find-unfold]")
    assert page.evaluate(FOLDED)
    page.go_back()  # the run page again: unfolded
    page.wait_for_function(OPEN, timeout=30_000)
    page.goto(url_of(app_url, "trl-run", row="groups/20261203T090858Z-506fa9-v000001-g000003/rollout-03"))  # a deep link
    page.locator(".tv-tokens").first.wait_for(timeout=60_000)
    page.wait_for_function(FOLDED, timeout=30_000)
    _search(page, "Wrote file")  # a search unfolds it, with its hits
    assert page.evaluate(OPEN) and page.locator("[data-testid=find-hit]").count() > 0
    # a source that is one group: its map is the source's page (the panel open), a rollout of it is drilled into
    page.goto(url_of(app_url, "smollm2-group"))
    page.locator(".gm-table").first.wait_for(timeout=60_000)
    page.wait_for_function(OPEN, timeout=30_000)
    page.locator("[data-testid=group-row][data-rollout='1'] .gm-name").click()
    page.locator(".tv-tokens").first.wait_for(timeout=60_000)
    page.wait_for_function(FOLDED, timeout=30_000)
    assert not page.errors and not page.outside_requests


@pytest.mark.parametrize("width", [1024, 1280])
def test_the_search_box_says_what_it_searches_whole(app_url, page, width):
    """The box's placeholder reads whole at a projector's width (it was cut to "…tool calls, tool (")."""
    page.set_viewport_size({"width": width, "height": 768})
    page.goto(url_of(app_url, "trl-run"))
    box = page.locator("[data-testid=find-input]")
    box.wait_for(timeout=120_000)
    fits = box.evaluate("""e => { const cs = getComputedStyle(e), c = document.createElement('canvas').getContext('2d');
      c.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      return {text: c.measureText(e.placeholder).width,
              room: e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20}; }""")
    assert fits["text"] <= fits["room"], fits  # 20 px for the search box's clear button
    assert "tool calls" in box.get_attribute("title")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_versions_field_shows_where_there_are_versions_and_a_refusal_reads_as_one(browser, app_url, scheme):
    """A group (or a rollout) has no policy versions: the search has no versions field there. On a run, a value
    the field cannot read is refused in words marked as an error (4.5:1 in both schemes), and the next answer is
    plain again."""
    ctx = browser.new_context(viewport={"width": 1024, "height": 768}, color_scheme=scheme)
    page = ctx.new_page()
    try:
        page.goto(url_of(app_url, "smollm2-group"))
        _ready(page)
        assert page.locator("[data-testid=find-versions]").is_hidden()
        page.goto(url_of(app_url, "trl-run"))
        _ready(page)
        assert page.locator("[data-testid=find-versions]").is_visible()
        page.fill("[data-testid=find-versions]", "banana")
        _search(page, "solution")
        status = page.locator("[data-testid=find-status]")
        assert "expected A:B" in status.inner_text() and "fp-bad" in (status.get_attribute("class") or "")
        ratio = min(page.evaluate(CONTRAST, "[data-testid=find-status]"))  # against the panel's own background
        assert ratio >= 4.5, ratio
        page.fill("[data-testid=find-versions]", "2:3")
        _search(page, "solution")
        assert "match" in status.inner_text() and "fp-bad" not in (status.get_attribute("class") or "")
    finally:
        ctx.close()
