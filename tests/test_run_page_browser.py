"""The run page in a real browser, on the bundled run (examples/trl-run) and a copy of it that grows: the charts
(drawn on canvas in the page, also at 2,000 versions, light and dark, in presentation at 1024x768), the versions → groups → group map → rollout path and back, the
`?src=RUN&version=&group=&rollout=&turn=` deep link, one task followed across versions with two siblings of
different versions compared, presentation mode, and following a run while it is recorded. Screenshots light
and dark at 1440x900 and 1024x768."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from test_run_stats import TASK5, add_version

from conftest import SHOTS
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support import pages
from support.pages import error_toasts, query, url_of

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
PLOTS = ("run-reward-plot", "run-share-plot", "run-tokens-plot", "run-dropped-plot")




# Per chart: its canvas's size, how many points it drew of how many versions, and how many of its pixels
# are painted (a blank canvas has none).
CHARTS = """() => Array.from(document.querySelectorAll('[data-testid=run-chart]')).map((c) => {
  const cv = c.querySelector('canvas');
  const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
  let painted = 0;
  for (let i = 3; i < d.length; i += 4 * 7) if (d[i] > 0) painted++;
  return {id: c.id, width: cv.getBoundingClientRect().width, right: c.getBoundingClientRect().right,
          points: Number(c.dataset.points), drawn: Number(c.dataset.drawn), painted,
          title: parseFloat(getComputedStyle(c.querySelector('.rp-chart-title')).fontSize),
          legend: parseFloat(getComputedStyle(c.querySelector('.rp-legend')).fontSize)};
})"""


def open_run_page(page, url: str):
    page.goto(url)
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    for p in PLOTS:  # each chart drew on its canvas
        page.wait_for_selector(f"#{p} canvas", timeout=TIMEOUT)
    return page



def shots(page, name: str):
    pages.shots(page, f"run-{name}", settle_ms=400)  # the plots redraw for each size and scheme

def test_run_page_chart_versions_groups_and_back(page, app_url):
    open_run_page(page, url_of(app_url, "trl-run"))
    assert page.locator("[data-testid=run-version]").count() == 4
    head = page.locator("[data-testid=run-head]").inner_text()
    assert "4 policy versions" in head and "13 groups" in head and "52 rollouts" in head and "TRL 1.16.0" in head
    assert "28 of 52 rollouts were never trained" in page.locator("[data-testid=run-notes]").inner_text()
    assert "Reward per version" in page.locator("#run-reward-plot").inner_text()
    assert "in-queue (waiting, harmless)" in page.locator("#run-dropped-plot").inner_text()
    # each cause its own colour: the two waiting causes of this run are told apart
    swatches = page.eval_on_selector_all("#run-dropped-plot .rp-legend span", """ss => Object.fromEntries(ss.map(s =>
        [s.textContent.split(' (')[0], s.querySelector('i').style.getPropertyValue('--sw')]))""")
    assert {"in-queue", "read-ahead"} <= set(swatches) and len(set(swatches.values())) == len(swatches), swatches
    charts = page.evaluate(CHARTS)
    assert [c["id"] for c in charts] == list(PLOTS) and all(c["painted"] > 100 and c["drawn"] == 4 for c in charts)
    for plot in PLOTS:  # a scale on every chart; counts in whole numbers, never 2.5 rollouts
        ticks = json.loads(page.locator(f"#{plot}").get_attribute("data-yticks"))
        assert len(ticks) >= 2, (plot, ticks)
        assert plot not in ("run-dropped-plot", "run-tokens-plot") or all(float(t).is_integer() for t in ticks), (plot, ticks)
    assert page.locator("#collection-index [data-testid=index-filters]").is_visible()  # the run's filters below
    shots(page, "page")
    page.locator("[data-testid=run-version][data-version='3']").click()
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    assert page.locator("[data-testid=run-group]").count() == 5 and query(page)["version"] == "3"
    # the pass rate says its numerator and denominator: its groups' passed add up to the first, and the rollouts a
    # failed session left without a verifier score are why the second is below the version's rollouts
    from rollout_trace.artifact.run import open_run
    from viewer.run_stats import version_stats

    v3 = next(s for s in version_stats(open_run("trl-run")) if s.version == 3)
    cell = page.locator("[data-testid=run-version][data-version='3'] td").nth(4)
    assert cell.inner_text() == f"{round(100 * v3.passed / v3.verified)}% ({v3.passed}/{v3.verified})"
    passed = [t.split("/") for t in page.locator("[data-testid=run-group] td:nth-child(5)").all_inner_texts()]
    # the groups' passed add up to the version's, out of the same rollouts (those with a verifier score), not K
    assert (sum(int(a) for a, _ in passed), sum(int(b) for _, b in passed)) == (v3.passed, v3.verified)
    assert v3.verified < v3.rollouts and "without one: a failed session is never verified" in cell.get_attribute("title")
    for w, h in ((1024, 768), (1280, 720)):  # a version's groups inside the versions table: every column in its box
        page.set_viewport_size({"width": w, "height": h})
        settle(page)
        assert page.evaluate(FITS), f"the versions table with a version's groups is wider than its box at {w}"
        page.locator("[data-testid=run-group]").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"run-groups-{w}x{h}.png"))
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.locator("[data-testid=run-group] .rp-open").nth(2).click()
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    assert not page.locator("#run-page").is_visible()  # the group map has the screen
    assert query(page)["row"].endswith("v000003-g000002")
    page.locator("[data-testid=back-to-index]").click()
    page.wait_for_selector("[data-testid=run-versions]", state="visible", timeout=TIMEOUT)
    assert "row" not in query(page)
    assert page.errors == []


# the versions box scrolls nothing sideways, and its groups' last column (the follow-task button) is inside it
FITS = """() => { const box = document.querySelector('.rp-vbox'), b = box.getBoundingClientRect();
  const follow = [...box.querySelectorAll('.rp-follow')].map(e => e.getBoundingClientRect().right);
  return box.scrollWidth <= box.clientWidth + 1 && follow.length > 0 && Math.max(...follow) <= b.right; }"""


def test_the_index_and_the_search_panel_say_where_the_heads_rollouts_went(page, app_url):
    """The run's head counts 52 rollouts; 2 failed before an artifact, so the index lists 50 and the search panel
    searches 50: each says why its count is smaller, so no number on the page contradicts another."""
    open_run_page(page, url_of(app_url, "trl-run"))
    assert "52 rollouts" in page.locator("[data-testid=run-head]").inner_text()
    counts = page.locator("[data-testid=index-counts]")
    counts.wait_for(timeout=TIMEOUT)
    page.wait_for_function("document.querySelector('[data-testid=index-counts]').innerText.includes('50 rollouts')",
                           timeout=TIMEOUT)
    assert "2 failed rollouts have no artifact to list (counted in their group's K)" in counts.inner_text()
    page.wait_for_selector(".fp-mount[data-ready='1']", timeout=120_000)
    status = page.locator("[data-testid=find-status]").inner_text()
    assert "50 rollouts with recorded text searchable (2 failed before any text was recorded)" in status
    assert page.errors == []


def test_an_answer_asked_for_below_the_fold_is_brought_into_sight(page, app_url):
    """On the run page the search panel and the run compare lie below the charts: a search asked for there (Enter
    in the versions field searches too) and a comparison each bring their answer on screen at 1024x768."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_run_page(page, url_of(app_url, "trl-run"))
    page.wait_for_selector(".fp-mount[data-ready='1'] [data-testid=find-input]", timeout=120_000)
    page.fill("[data-testid=find-input]", "solution")  # scrolled to as little as it takes: at the window's bottom
    page.fill("[data-testid=find-versions]", "2:3")
    page.press("[data-testid=find-versions]", "Enter")
    page.wait_for_selector("[data-testid=find-hit]", timeout=60_000)
    status = page.locator("[data-testid=find-status]").bounding_box()
    assert status is not None and 0 <= status["y"] and status["y"] + status["height"] <= 768, status
    assert "match" in page.locator("[data-testid=find-status]").inner_text()
    page.fill("[data-testid=run-vs-input]", "trl-run")
    page.press("[data-testid=run-vs-input]", "Enter")
    page.wait_for_selector("[data-testid=run-vs-sides]", timeout=TIMEOUT)
    sides = page.locator("[data-testid=run-vs-sides]").bounding_box()
    assert sides is not None and 0 <= sides["y"] < 768 * 0.75, sides
    assert page.errors == []


def test_filters_work_inside_a_run(page, app_url):
    open_run_page(page, url_of(app_url, "trl-run", timed_out="yes"))
    counts = page.locator("[data-testid=index-counts]")
    page.wait_for_function("el => / 4 matching rows/.test(el.textContent)", arg=counts.element_handle(), timeout=TIMEOUT)
    # the rows are groups and rollouts, said apart: the head counts rollouts only
    said = re.search(r"(\d+) matching rows \((\d+) groups?, (\d+) rollouts\)", counts.inner_text())
    assert said and int(said[2]) >= 1 and int(said[2]) + int(said[3]) == int(said[1]) == 4, counts.inner_text()
    assert page.locator("[data-testid=run-version]").count() == 4  # the run page still shows the whole run
    # a run's table says TRL's status: a timed-out rollout (a group: one of its rollouts) reads "timed-out"
    statuses = page.locator("#collection-index tr.ci-row [data-testid=run-status]").all_inner_texts()
    assert statuses and all("timed-out" in t for t in statuses)


def test_deep_link_to_a_rollout_of_a_group(page, app_url):
    page.goto(url_of(app_url, "trl-run", version=3, group=2, rollout=1, turn=1))
    page.wait_for_selector(".tv-tokens .t[data-mask]", timeout=TIMEOUT)
    q = query(page)
    assert q["row"].endswith("v000003-g000002") and q["rollout"] == "1" and q["turn"] == "1"
    assert "back to the group map" in page.locator("[data-testid=back-to-index]").inner_text()
    assert not page.locator("#run-page").is_visible()
    # a reward function that returned None (brevity_reward here) is "none" in the reward's steps, as in the
    # verifier's table beside them; only a final without a value is unscorable
    steps = page.locator("[data-testid=reward-step]").all_inner_texts()
    brevity = next(x for x in steps if x.startswith("brevity_reward"))
    assert "none" in brevity.split() and "unscorable" not in brevity and "returned None" in brevity, steps
    assert "brevity_reward\tnone" in page.locator("[data-testid=verifier]").inner_text()
    page.locator("[data-testid=back-to-index]").click()
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    page.locator("[data-testid=back-to-index]").click()
    page.wait_for_selector("[data-testid=run-versions]", state="visible", timeout=TIMEOUT)
    page.wait_for_function("!new URL(location.href).searchParams.has('group')", timeout=TIMEOUT)
    assert page.errors == []


# The token pane's lines on screen: where the window shows it, whether its top and bottom lines are whole, and
# whether the turn's last generated token is in the window
PANE_LINES = """() => {
  const box = document.querySelector('.tv-tokens'), r = box.getBoundingClientRect();
  const inner = {top: r.top + box.clientTop, bottom: r.top + box.clientTop + box.clientHeight};
  const seen = [...box.querySelectorAll('.t')].flatMap((t) => [...t.getClientRects()])
    .filter((b) => b.bottom > inner.top && b.top < inner.bottom && b.height > 0);
  const gen = [...box.querySelectorAll('.t[data-mask="1"]')].pop().getBoundingClientRect();
  return {cut: seen.filter((b) => b.top < inner.top - 0.5 || b.bottom > inner.bottom + 0.5).length,
          top: r.top, bottom: r.bottom, window: innerHeight,
          lastGenerated: gen.top >= Math.max(inner.top, 0) - 0.5 && gen.bottom <= Math.min(inner.bottom, innerHeight) + 0.5};
}"""


@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_jumping_to_the_generated_tokens_shows_them_in_whole_lines(page, app_url, size):
    """A run rollout's header is long: at 1024x768 its token pane starts near the window's bottom. `g` lands the
    turn's generated tokens in the pane and brings the pane into the window; no line is cut at its top or bottom
    (a scroll box's padding showed the line above the landing, half cut)."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(url_of(app_url, "trl-run", version=3, group=2, rollout=2, turn=0))
    page.wait_for_selector(".tv-tokens .t[data-mask='1']", timeout=TIMEOUT)
    page.locator(".tv-tokens").click()
    page.keyboard.press("g")
    page.wait_for_function(f"({PANE_LINES})().lastGenerated", timeout=TIMEOUT)
    got = page.evaluate(PANE_LINES)
    assert got["cut"] == 0 and got["top"] >= 0 and got["bottom"] <= got["window"], got
    page.screenshot(path=str(SHOTS / f"run-rollout-jump-{size[0]}x{size[1]}.png"))
    assert page.errors == []


def test_task_across_versions_and_compare(page, app_url):
    open_run_page(page, url_of(app_url, "trl-run", task=TASK5))
    summary = page.locator("[data-testid=run-task-summary]")
    summary.wait_for(timeout=TIMEOUT)
    assert "at 2 versions" in summary.inner_text() and "first solved at version 2" in summary.inner_text()
    assert page.locator("[data-testid=run-task-group]").count() == 2
    page.wait_for_selector("#run-task-plot canvas, #run-task-plot svg.marks", timeout=TIMEOUT)
    picks = page.locator("[data-testid=run-task-rollout]")
    picks.nth(3).check()  # version 2, rollout 3
    picks.nth(4).check()  # version 3, rollout 0
    page.locator("[data-testid=run-compare]").click()
    box = page.locator("[data-testid=run-compare-box]")
    page.wait_for_function("el => el.querySelector('.gm-compare-out, .gm-cmp, table, .gm-side') !== null || "
                           "/rollout/.test(el.textContent)", arg=box.element_handle(), timeout=TIMEOUT)
    assert "comparing" not in box.inner_text() and "could not" not in box.inner_text()
    shots(page, "task")
    # choosing another task from the picker follows that one (and the URL says which)
    page.locator("[data-testid=run-task-pick]").select_option(index=2)
    page.wait_for_function(f"new URL(location.href).searchParams.get('task') !== '{TASK5}'", timeout=TIMEOUT)
    page.wait_for_function("() => !/first solved at version 2 · /.test(document.body.innerText) || true")
    page.locator("[data-testid=run-task-summary]").wait_for(timeout=TIMEOUT)
    assert page.errors == [] and error_toasts(page) == []


def test_presentation_mode_on_the_run_page(page, app_url):
    open_run_page(page, url_of(app_url, "trl-run"))
    page.locator("body").press("p")
    page.wait_for_selector("#run-page.rp-present", timeout=TIMEOUT)
    assert not page.locator("#source").is_visible() or page.evaluate(
        "getComputedStyle(document.querySelector('.tv-sourcebar')).visibility") == "hidden"
    assert page.evaluate("parseFloat(getComputedStyle(document.querySelector('.rp-versions')).fontSize)") >= 19
    assert page.locator("button.rp-present").inner_text() == "leave (Esc)"  # the way out, on screen
    page.set_viewport_size({"width": 1024, "height": 768})
    page.wait_for_timeout(300)
    page.screenshot(path=str(SHOTS / "run-present-1024x768-light.png"))
    assert not page.locator("[data-testid=run-vs-input]").is_visible()  # asking for another run is off-stage
    assert page.evaluate("document.querySelector('.rp-versions').getBoundingClientRect().right <= "
                         "document.querySelector('#run-page').clientWidth"), "every column on a 1024 px projector"
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert page.locator("tr.rp-cursor[data-version='2']").count() == 1
    page.keyboard.press("Enter")  # a version row opens its groups, brought on screen in large type
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    page.wait_for_function("""() => { const g = document.querySelector('[data-testid=run-group]');
        return !!g && g.getBoundingClientRect().bottom <= innerHeight; }""", timeout=TIMEOUT)
    page.keyboard.press("j")
    page.keyboard.press("Enter")  # the cursor's group opens its map, still presenting
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    assert page.locator(".ci.present").count() == 1
    assert page.locator(".gm-present").inner_text() == "leave (Esc)"
    page.keyboard.press("Escape")
    # leaving presentation on the group map brings the app's chrome back: no blank room above the map
    page.wait_for_function("!document.body.classList.contains('tv-present')")
    assert page.evaluate("getComputedStyle(document.querySelector('.tv-sourcebar')).visibility") == "visible"
    assert page.locator(".gm-present").inner_text() == "present"
    # the search panel (viewer/ui/find_panel.py) sits between the source bar and the index, above the map too:
    # the room measured is what lies below the last of them that shows
    gap = page.evaluate("""(() => {
        const above = [".tv-sourcebar", "#find-panel"].map(s => document.querySelector(s))
          .filter(e => e && e.getClientRects().length && getComputedStyle(e).visibility !== "hidden");
        return document.querySelector("[data-testid=group-map]").getBoundingClientRect().top -
          Math.max(...above.map(e => e.getBoundingClientRect().bottom)); })()""")
    assert gap < 120, gap
    page.screenshot(path=str(SHOTS / "run-group-after-present-1024x768-light.png"))
    assert page.errors == []


# How far each presentation's scrolling box is scrolled: the run page, the index's group map, the token pane
SCROLLED = """() => ({run: document.querySelector('#run-page').scrollTop,
                     map: document.querySelector('.ci').scrollTop,
                     tokens: document.querySelector('.tv-tokens') ? document.querySelector('.tv-tokens').scrollTop : 0})"""


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
def test_a_version_clicked_shows_its_groups_in_the_window(page, app_url, size):
    """A version's groups open under its row; when that is below the window's fold the row goes to the top, so the
    click is seen to have done something (its groups were drawn off-screen at 1024x768)."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_run_page(page, url_of(app_url, "trl-run"))
    page.locator("[data-testid=run-version][data-version='4']").click()
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    page.wait_for_function("() => { const g = document.querySelector('[data-testid=run-group]').getBoundingClientRect(); "
                           "return g.top >= 0 && g.bottom <= innerHeight; }", timeout=TIMEOUT)
    row = page.locator("[data-testid=run-version][data-version='4']").bounding_box()
    assert row["y"] >= -1  # its version's row above it, in the window too
    assert page.errors == []


@pytest.mark.parametrize("size", [(1440, 900), (1280, 720), (1024, 768)])
def test_the_present_button_keeps_to_the_runs_title_line(page, app_url, size):
    """The run's name and facts wrap among themselves; the present button sits at the right of their first line,
    never on a line of its own under them (it did at 1280 and 1440 px, where the facts filled the line)."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_run_page(page, url_of(app_url, "trl-run"))
    got = page.evaluate("""() => {
      const b = document.querySelector('.rp-present').getBoundingClientRect();
      const m = document.querySelector('.rp-model').getBoundingClientRect();
      const t = document.querySelector('.rp-title').getBoundingClientRect();
      return {button_top: b.top, button_bottom: b.bottom, button_right: b.right, model_top: m.top, model_bottom: m.bottom,
              title_right: t.right};
    }""")
    assert got["button_top"] < got["model_bottom"] and got["button_bottom"] > got["model_top"], got  # one line
    assert abs(got["button_right"] - got["title_right"]) < 2, got  # at its right end
    assert page.errors == []


def test_a_presenters_clicker_scrolls_every_presentation(page, app_url):
    """A clicker sends PageDown and PageUp: the run page, a group map and a rollout in presentation each scroll with
    them (each is a box fixed over the page, which the page's own scrolling never moves), from the `p` key and
    from the presentation button alike."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_run_page(page, url_of(app_url, "trl-run"))
    page.locator("button.rp-present").click()  # a pressed button keeps no focus that Space would press again
    page.wait_for_selector("#run-page.rp-present", timeout=TIMEOUT)
    page.keyboard.press("PageDown")
    page.wait_for_function(f"({SCROLLED})().run > 200", timeout=TIMEOUT)
    page.keyboard.press("Space")
    assert page.locator("#run-page.rp-present").count() == 1  # still presenting
    page.keyboard.press("Home")
    page.wait_for_function(f"({SCROLLED})().run === 0", timeout=TIMEOUT)
    page.keyboard.press("Escape")
    page.wait_for_function("!document.body.classList.contains('tv-present')")
    group = "groups/20261203T090916Z-f44f09-v000003-g000002"
    page.set_viewport_size({"width": 1024, "height": 420})  # a map of 4 rollouts fits a 768 px screen
    page.goto(url_of(app_url, "trl-run", row=group))
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    page.locator("body").press("p")
    page.wait_for_selector(".ci.present", timeout=TIMEOUT)
    page.keyboard.press("PageDown")
    page.wait_for_function(f"({SCROLLED})().map > 100", timeout=TIMEOUT)
    page.keyboard.press("Escape")
    page.wait_for_function("!document.body.classList.contains('tv-present')")
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(url_of(app_url, "trl-run", row=group, rollout=1, turn=0))
    page.wait_for_selector(".tv-tokens .t[data-mask]", timeout=TIMEOUT)
    page.locator("body").press("p")
    page.wait_for_selector(".tv.present", timeout=TIMEOUT)
    page.wait_for_timeout(600)  # its landing on the story settles first (token_pane.js goTo: 200 ms)
    landed = page.evaluate(SCROLLED)["tokens"]
    assert landed > 300  # the story lies at the turn's end: up first
    page.keyboard.press("PageUp")
    page.wait_for_function(f"({SCROLLED})().tokens < {landed - 200}", timeout=TIMEOUT)
    up = page.evaluate(SCROLLED)["tokens"]
    page.keyboard.press("PageDown")
    page.wait_for_function(f"({SCROLLED})().tokens > {up + 200}", timeout=TIMEOUT)
    assert page.errors == []


def test_question_mark_shows_the_run_pages_keys(page, app_url):
    open_run_page(page, url_of(app_url, "trl-run"))
    page.locator("body").press("?")
    help_box = page.locator("[data-testid=run-help]")
    help_box.wait_for(timeout=TIMEOUT)
    assert "Enter" in help_box.inner_text() and "presentation mode" in help_box.inner_text()
    page.keyboard.press("Escape")
    assert help_box.is_hidden()
    assert page.errors == []


def live_copy(tmp_path):
    """The bundled run as if still recorded (its segment's end file removed), in a folder of its own."""
    root = tmp_path / "live-run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    (root / "segments" / next(p.name for p in (root / "segments").glob("*.end.json"))).unlink()  # not ended
    return root


def test_following_a_run_while_it_is_recorded(page, app_url, tmp_path):
    root = live_copy(tmp_path)
    open_run_page(page, url_of(app_url, str(root)))
    page.wait_for_selector("[data-testid=run-live]", timeout=TIMEOUT)
    assert page.locator("[data-testid=run-live]").inner_text() == "● recording · following"  # read at every poll
    page.locator("[data-testid=run-version][data-version='4']").click()
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    joined: list[str] = []  # each poll of the run is one Gradio event: a request to its queue
    page.on("request", lambda r: joined.append(r.url) if "/queue/join" in r.url else None)
    seen = len(joined)
    for _ in range(600):  # polls that find nothing new must keep following (they once lost the state): two of them
        if len(joined) >= seen + 2:
            break
        page.wait_for_timeout(100)
    assert len(joined) >= seen + 2, "the run page stopped polling a run that is still recorded"
    add_version(root, 5)
    page.wait_for_selector("[data-testid=run-version][data-version='5']", timeout=20_000)  # no reload
    assert "5 policy versions" in page.locator("[data-testid=run-head]").inner_text()
    assert page.locator("[data-testid=run-group]").count() == 1  # the open version stayed open
    page.wait_for_function("() => document.querySelector('[data-testid=run-charts]').dataset.drawn === '5'",
                           timeout=TIMEOUT)  # the charts were drawn again with the new version
    page.locator("[data-testid=run-version][data-version='5']").click()
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    page.locator("[data-testid=run-group] .rp-open").first.click()  # the new group opens: the collection followed
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    assert page.errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_large_live_run_says_how_often_it_is_read_again(page, app_url, tmp_path, monkeypatch, scheme):
    """A run so large that its snapshot stands longer than the page's poll (rollout_trace/artifact/run_table.py
    FOLLOW_ROWS_S: ~10 s at a million rollouts) says so on its live badge, not "following" as if at every poll."""
    from rollout_trace.artifact import run_table as rt

    monkeypatch.setattr(rt, "FOLLOW_ROWS_S", 10)  # the bundled run's 52 rollouts stand 5.2 s
    text, title = live_badge(page, app_url, str(live_copy(tmp_path)), scheme, "large")
    assert text == "● recording · read every ~5 s" and "read again every ~5 s" in title
    assert page.errors == []


def live_badge(page, app_url, src: str, scheme: str, shot: str) -> tuple[str, str]:
    """The live badge's text and title on the run page of `src` at 1024x768 in `scheme` (a screenshot kept)."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_run_page(page, url_of(app_url, src, **({"__theme": "dark"} if scheme == "dark" else {})))
    badge = page.locator("[data-testid=run-live]")
    badge.wait_for(timeout=TIMEOUT)
    page.screenshot(path=str(SHOTS / f"run-live-{shot}-1024x768-{scheme}.png"))
    return badge.inner_text(), badge.get_attribute("title") or ""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_zip_of_a_live_run_says_it_is_a_copy(page, app_url, tmp_path, scheme):
    """A zip of a run still being recorded never changes: its badge says it is a copy that is not followed, not
    "following" (its page sets no timer: tests/test_run_view.py)."""
    zipped = shutil.make_archive(str(tmp_path / "copy"), "zip", live_copy(tmp_path))
    text, title = live_badge(page, app_url, zipped, scheme, "copy")
    assert text == "● recorded live · a copy, not followed" and "not read again" in title
    assert page.errors == []


def _scale_run(tmp_path_factory, name: str, **shape: int):
    """A synthetic run of `shape` (versions, groups, k: tests/support/scale_run.py) in a folder of its own."""
    from support.scale_run import make_run

    root = tmp_path_factory.mktemp(name) / "run"
    make_run(root, **shape)
    return root


@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    """2,000 versions (1 group of 2 rollouts each: the charts' width, not the index's length, is the point)."""
    return _scale_run(tmp_path_factory, "big", versions=2000, groups=1, k=2)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_charts_draw_2000_versions_reduced_to_their_pixels(page, app_url, big_run, scheme):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_run_page(page, url_of(app_url, str(big_run), **({"__theme": "dark"} if scheme == "dark" else {})))
    page.wait_for_function("() => document.querySelector('[data-testid=run-charts]').dataset.drawn === '2000'",
                           timeout=TIMEOUT)
    charts = page.evaluate(CHARTS)
    assert len(charts) == 4
    for c in charts:
        assert c["drawn"] == 2000 and c["painted"] > 100, c
        assert c["points"] <= 2 * c["width"], c  # lines: two points per bin at most one per pixel; bars fewer
    assert "each bar: the mean of" in page.locator("#run-tokens-plot").inner_text()
    # a bar reads per version, at any width: the never-trained bars count one version's rollouts (2 each here), where
    # a bar of 14 versions summed reached 28
    assert "each bar: the mean of" in page.locator("#run-dropped-plot").inner_text()
    ticks = [float(t) for t in json.loads(page.locator("#run-dropped-plot").get_attribute("data-yticks"))]
    assert 2 <= max(ticks) <= 3, ticks
    head = page.locator("[data-testid=run-head]").inner_text()
    assert "2,000 policy versions" in head and "4,000 rollouts" in head, head  # counts with their separators
    if scheme == "light":  # the list shows its first versions; the rest on request
        assert page.locator("[data-testid=run-version]").count() == 100
        page.locator("[data-testid=run-show-all]").click()
        page.wait_for_function("() => document.querySelectorAll('[data-testid=run-version]').length === 2000",
                               timeout=TIMEOUT)
    page.screenshot(path=str(SHOTS / f"run-2000-1440x900-{scheme}.png"))
    # presentation on a 1024x768 projector: type grows, charts redrawn to the new width, all on screen
    normal = charts[0]["title"], charts[0]["legend"]
    page.set_viewport_size({"width": 1024, "height": 768})
    page.locator("body").press("p")
    page.wait_for_selector("#run-page.rp-present", timeout=TIMEOUT)
    page.wait_for_function("""() => { const c = document.querySelector('#run-reward-plot .rp-chart-title');
        return c && parseFloat(getComputedStyle(c).fontSize) >= 18; }""", timeout=TIMEOUT)
    present = page.evaluate(CHARTS)
    for c in present:
        assert c["title"] > normal[0] and c["legend"] > normal[1], c
        assert c["right"] <= 1024 and c["painted"] > 100 and c["points"] <= 2 * c["width"], c
    page.screenshot(path=str(SHOTS / f"run-2000-present-1024x768-{scheme}.png"))
    assert page.errors == []


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768), (1440, 900)])
def test_the_versions_table_starts_on_the_first_screen_of_a_short_window(page, app_url, size):
    """A short window (1280x720, 1024x768) lays the charts in one row, each lower: the versions table's first
    rows are on the first screen, and every chart still draws all four versions (title, legend and axes kept).
    A tall one (1440x900) keeps the two-by-two grid."""
    w, h = size
    page.set_viewport_size({"width": w, "height": h})
    open_run_page(page, url_of(app_url, "trl-run"))
    page.wait_for_function("document.querySelector('.rp-charts').dataset.drawn > 0", timeout=TIMEOUT)
    charts = page.evaluate(CHARTS)
    assert len(charts) == 4 and all(c["painted"] > 0 and c["points"] == 4 for c in charts)
    tops = {round(c) for c in page.locator("[data-testid=run-chart]").evaluate_all(
        "cs => cs.map(c => c.getBoundingClientRect().top)")}
    first_rows = page.locator("[data-testid=run-versions] tbody tr").evaluate_all(
        f"rs => rs.filter(r => r.getBoundingClientRect().bottom <= {h}).length")
    if h < 850:
        assert len(tops) == 1 and first_rows >= 2, (tops, first_rows)
        shots(page, f"short-window-{w}x{h}")
    else:
        assert len(tops) == 2  # two rows of two
    assert page.errors == []


# -- reading the charts: a crosshair and readout, a click that opens; the table sorted; smoothing; ticks --------

FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"  # a redraw waits one frame


def settle(page):
    """Until the charts' pending redraw (a resize or a scheme change schedules one for the next frame) ran."""
    page.evaluate(FRAMES)
    page.evaluate(FRAMES)


def point_at(page, chart: str, fraction: float):
    """The pointer over `chart`'s plotting area, `fraction` of its width from the left; the readout it shows."""
    over = page.locator(f"#{chart} .u-over").bounding_box()
    page.mouse.move(over["x"] + over["width"] * fraction, over["y"] + over["height"] / 2)
    readout = page.locator(f"#{chart} [data-testid=chart-readout]")
    readout.wait_for(state="visible", timeout=TIMEOUT)
    return readout


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_chart_reads_the_version_under_the_pointer_and_a_click_opens_it(page, app_url, scheme):
    open_run_page(page, url_of(app_url, "trl-run", **({"__theme": "dark"} if scheme == "dark" else {})))
    for w, h in ((1440, 900), (1024, 768)):
        page.set_viewport_size({"width": w, "height": h})
        settle(page)
        readout = point_at(page, "run-reward-plot", 0.98)  # the last version, 4
        text = readout.inner_text()
        assert "version 4" in text, text
        # the readout says what the table's row says: the mean, the band's edges, the counts
        row = page.locator("[data-testid=run-version][data-version='4'] td").all_inner_texts()
        assert row[3].split(" ")[0].rstrip("0") in text and f"{row[1]} group" in text and f"{row[2]} rollout" in text, (row, text)
        assert "± 1 sd" in text and "min … max" in text
        assert page.locator("#run-reward-plot .rp-cross").is_visible()
        for chart in PLOTS[1:]:  # every chart reads the version under the pointer
            got = point_at(page, chart, 0.02).inner_text()
            assert "version 1" in got and "rollouts" in got, (chart, got)
        readout = point_at(page, "run-share-plot", 0.5)
        page.screenshot(path=str(SHOTS / f"run-readout-{w}x{h}-{scheme}.png"))
        box = readout.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= w, box  # on screen, beside the crosshair
    # a click opens the version under the pointer, as its row in the table does (URL, row open, its groups)
    page.set_viewport_size({"width": 1440, "height": 900})
    settle(page)
    point_at(page, "run-reward-plot", 0.4)
    version = page.locator("#run-reward-plot").get_attribute("data-hover")
    page.locator("#run-reward-plot .u-over").click(position={"x": page.locator("#run-reward-plot .u-over").bounding_box()["width"] * 0.4, "y": 20})
    page.wait_for_selector(f"[data-testid=run-version][data-version='{version}'][aria-expanded=true]", timeout=TIMEOUT)
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    assert query(page)["version"] == version
    # the keyboard: a focused chart reads the version before with ←, and Enter opens that one
    page.locator("#run-tokens-plot").focus()
    page.wait_for_function("document.querySelector('#run-tokens-plot').dataset.hover === '4'", timeout=TIMEOUT)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("document.querySelector('#run-tokens-plot').dataset.hover === '2'", timeout=TIMEOUT)
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=run-version][data-version='2'][aria-expanded=true]", timeout=TIMEOUT)
    assert query(page)["version"] == "2" and page.locator("tr.rp-cursor[data-version='2']").count() == 1
    assert page.errors == []


IN_BOX = """v => { const b = document.querySelector('.rp-vbox').getBoundingClientRect();
    const r = document.querySelector(`[data-testid=run-version][data-version='${v}']`).getBoundingClientRect();
    const g = document.querySelector('[data-testid=run-group]').getBoundingClientRect();
    return r.top >= b.top - 1 && g.bottom <= b.bottom + 1; }"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_version_opened_far_down_the_table_stays_in_sight(page, app_url, big_run, scheme):
    """2,000 versions in a table with its own scroll: a row clicked past the first screen, a version a chart's click
    opens beyond the rows listed, and a link's version are each shown with their groups in the table's box (its
    scroll once went back to the top when the groups arrived, and a chart's version was left out of sight). A
    click opens the version the readout names, though a pixel holds several versions and the click's position
    is not the pointer's last one to the fraction of a pixel."""
    page.set_viewport_size({"width": 1024, "height": 768})
    dark = {"__theme": "dark"} if scheme == "dark" else {}
    open_run_page(page, url_of(app_url, str(big_run), **dark))
    box = page.locator(".rp-vbox")
    box.evaluate("b => { b.scrollTop = b.scrollHeight / 3; }")
    row = page.locator("[data-testid=run-version][data-version='45']")
    row.click()
    page.wait_for_selector("[data-testid=run-version][data-version='45'][aria-expanded=true]", timeout=TIMEOUT)
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    page.wait_for_function(IN_BOX, arg=45, timeout=TIMEOUT)
    assert box.evaluate("b => b.scrollTop") > 0
    # a chart's click, within a pixel of where the readout was read: the readout's version opens, in sight
    page.locator("#run-reward-plot").scroll_into_view_if_needed()
    over = page.locator("#run-reward-plot .u-over").bounding_box()
    x, y = round(over["x"] + over["width"] * 0.7), round(over["y"] + over["height"] / 2)
    page.mouse.move(x + 0.45, y)
    page.wait_for_function("document.querySelector('#run-reward-plot').dataset.hover", timeout=TIMEOUT)
    read = page.locator("#run-reward-plot").get_attribute("data-hover")
    assert int(read) > 100  # beyond the rows the table lists
    # the click as a browser may report it, at the whole pixel (a real click does not move the pointer first)
    page.locator("#run-reward-plot .u-over").dispatch_event("click", {"clientX": x, "clientY": y, "bubbles": True})
    page.wait_for_selector(f"[data-testid=run-version][data-version='{read}'][aria-expanded=true]", timeout=TIMEOUT)
    assert query(page)["version"] == read
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    page.wait_for_function(IN_BOX, arg=int(read), timeout=TIMEOUT)
    page.screenshot(path=str(SHOTS / f"run-2000-chart-opened-1024x768-{scheme}.png"))
    # a link to a version beyond the rows listed opens with it in sight
    open_run_page(page, url_of(app_url, str(big_run), version="1500", **dark))
    page.wait_for_selector("[data-testid=run-version][data-version='1500'][aria-expanded=true]", timeout=TIMEOUT)
    page.wait_for_function(IN_BOX, arg=1500, timeout=TIMEOUT)
    assert page.errors == []


def test_the_versions_table_sorts_every_version_and_the_link_keeps_it(page, app_url, big_run):
    """2,000 versions, 100 listed: a heading sorts all of them (the worst reward mean first, then reversed),
    aria-sort says which way, the link keeps it and a reload restores it."""
    open_run_page(page, url_of(app_url, str(big_run)))
    first = "document.querySelector('[data-testid=run-version]').dataset.version"
    page.locator(".rp-sort[data-sort=version]").click()  # run order already ascending: reversed
    page.locator(".rp-sort[data-sort=version]").click()
    page.wait_for_function(f"{first} === '2000'", timeout=TIMEOUT)  # not among the 100 listed before
    assert query(page)["vsort"] == "-version"
    page.locator(".rp-sort[data-sort=reward_mean]").click()
    page.wait_for_function(f"{first} === '3'", timeout=TIMEOUT)  # the lowest mean (-0.05) first, ties in run order
    th = page.locator("th[data-sort=reward_mean]")
    assert th.get_attribute("aria-sort") == "ascending" and query(page)["vsort"] == "reward_mean"
    means = page.locator("[data-testid=run-version] td:nth-child(4)").all_inner_texts()
    assert len(means) == 100 and all(m.startswith("-0.050") for m in means), means[:5]
    page.locator(".rp-sort[data-sort=reward_mean]").click()
    page.wait_for_function(f"{first} === '5'", timeout=TIMEOUT)  # the highest (0.75) first
    assert th.get_attribute("aria-sort") == "descending" and query(page)["vsort"] == "-reward_mean"
    assert page.locator("th[data-sort=version]").get_attribute("aria-sort") == "none"
    page.reload()
    open_run_page(page, page.url)
    page.wait_for_function(f"{first} === '5'", timeout=TIMEOUT)
    assert page.locator("th[data-sort=reward_mean]").get_attribute("aria-sort") == "descending"
    # a chart's click opens a version beyond the listed ones: it is listed after them, open
    page.locator("#run-reward-plot").focus()
    page.keyboard.press("Home")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=run-version][data-version='1'][aria-expanded=true]", timeout=TIMEOUT)
    assert "the open version" in page.locator("tr.rp-gap").inner_text()
    assert page.errors == []


def _smooth(page, weight: str) -> None:
    page.locator("[data-testid=run-smooth]").evaluate(
        f"el => {{ el.value = '{weight}'; el.dispatchEvent(new Event('input', {{bubbles: true}})); "
        "el.dispatchEvent(new Event('change', {bubbles: true})); }")


def test_smoothing_draws_the_ema_over_the_raw_curve_and_the_link_keeps_it(page, app_url, big_run):
    """A run of 2,000 versions opens smoothed (EMA 0.9, its raw curve faint beneath: raw, its versions' zigzags fill
    the plot); a short run opens raw. The slider's weight, 0 too, is kept in the link and restored by a reload."""
    open_run_page(page, url_of(app_url, "trl-run"))
    assert "EMA" not in page.locator("#run-reward-plot .rp-legend").inner_text()  # 4 versions: raw
    assert page.locator("[data-testid=run-smooth]").input_value() == "0"
    open_run_page(page, url_of(app_url, str(big_run)))
    page.wait_for_function("/EMA 0.9/.test(document.querySelector('#run-reward-plot .rp-legend').textContent)", timeout=TIMEOUT)
    assert "smooth" not in query(page) and page.locator("[data-testid=run-smooth]").input_value() == "0.9"
    legend = page.locator("#run-reward-plot .rp-legend").inner_text()
    assert "mean (raw)" in legend and "mean, EMA 0.9" in legend  # the raw curve is kept
    assert "EMA 0.9" in page.locator("#run-task-plot, #run-share-plot .rp-legend").first.inner_text()
    text = point_at(page, "run-reward-plot", 0.5).inner_text()
    assert "EMA 0.9" in text
    shots_of = page.locator("[data-testid=run-charts]")
    shots_of.screenshot(path=str(SHOTS / "run-smoothed-1400x1000-light.png"))
    _smooth(page, "0")  # raw, asked for: kept in the link, so a reload does not smooth it again
    page.wait_for_function("!/EMA/.test(document.querySelector('#run-reward-plot .rp-legend').textContent)", timeout=TIMEOUT)
    assert query(page)["smooth"] == "0"
    page.reload()
    open_run_page(page, page.url)
    assert page.locator("[data-testid=run-smooth]").input_value() == "0"
    assert "EMA" not in page.locator("#run-reward-plot .rp-legend").inner_text()
    _smooth(page, "0.5")
    page.wait_for_function("/EMA 0.5/.test(document.querySelector('#run-reward-plot .rp-legend').textContent)", timeout=TIMEOUT)
    page.reload()
    open_run_page(page, page.url)
    page.wait_for_function("/EMA 0.5/.test(document.querySelector('#run-reward-plot .rp-legend').textContent)", timeout=TIMEOUT)
    assert page.locator("[data-testid=run-smooth]").input_value() == "0.5"
    assert page.errors == []


def tick_overlaps(page) -> list:
    """Per chart, its x labels as drawn and any two that overlap (with a 2 px gap)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid=run-chart]')).map((c) => {
      const ts = JSON.parse(c.dataset.xticks || '[]').sort((a, b) => a.left - b.left);
      return {id: c.id, n: ts.length, bad: ts.filter((t, i) => i > 0 && t.left < ts[i - 1].right + 2).map((t) => t.text)};
    })""")


def test_tick_labels_never_collide_at_2000_versions(page, app_url, big_run):
    page.set_viewport_size({"width": 1024, "height": 768})
    open_run_page(page, url_of(app_url, str(big_run)))
    for present in (False, True):
        if present:
            page.locator("body").press("p")
            page.wait_for_selector("#run-page.rp-present", timeout=TIMEOUT)
            settle(page)
        for c in tick_overlaps(page):
            assert c["n"] >= 2 and c["bad"] == [], c
    # presenting at 1024x768, two charts a row: each plot readable, larger than its legend
    sizes = page.evaluate("""() => Array.from(document.querySelectorAll('[data-testid=run-chart]')).map((c) => {
      const p = c.querySelector('.u-over').getBoundingClientRect(), l = c.querySelector('.rp-legend').getBoundingClientRect();
      return {id: c.id, w: p.width, h: p.height, legend: l.height};
    })""")
    for s in sizes:
        assert s["w"] >= 300 and s["h"] >= 120 and s["legend"] < s["h"], s
    page.screenshot(path=str(SHOTS / "run-2000-ticks-present-1024x768-light.png"))
    assert page.errors == []


@pytest.fixture(scope="module")
def flat_run(tmp_path_factory):
    """300 versions of one group whose rollouts all have the same reward: every version's band has no width,
    its mean changes from version to version (dense: more versions than the chart's pixels allow one each)."""
    from support.scale_run import make_run

    root = tmp_path_factory.mktemp("flat") / "run"
    make_run(root, versions=300, groups=1, k=2, zero_spread=True)
    return root


BAND_PIXELS = """() => {  // the share of the plot's pixels a band's fill paints: one translucency, over a whole area
  const cv = document.querySelector('#run-reward-plot canvas');
  const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
  const counts = new Array(256).fill(0);  // a line's antialiased edges spread over many translucencies
  for (let i = 3; i < d.length; i += 4) if (d[i] > 0 && d[i] < 255) counts[d[i]]++;
  return Math.max(...counts) / (d.length / 4);
}"""


@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
def test_a_series_without_spread_draws_a_line_not_a_band(page, app_url, flat_run, big_run, size):
    w, h = size
    page.set_viewport_size({"width": w, "height": h})
    open_run_page(page, url_of(app_url, str(flat_run)))
    page.wait_for_function("document.querySelector('[data-testid=run-charts]').dataset.drawn === '300'", timeout=TIMEOUT)
    chart = page.locator("#run-reward-plot")
    assert chart.get_attribute("data-band") == "none"
    assert "no band" in chart.inner_text() and "mean ± 1 sd" not in chart.inner_text()
    flat = page.evaluate(BAND_PIXELS)
    chart.screenshot(path=str(SHOTS / f"run-flat-band-{w}x{h}-light.png"))
    open_run_page(page, url_of(app_url, str(big_run)))  # a run with spread: its band is filled
    page.wait_for_function("document.querySelector('[data-testid=run-charts]').dataset.drawn === '2000'", timeout=TIMEOUT)
    assert page.locator("#run-reward-plot").get_attribute("data-band") == "drawn"
    banded = page.evaluate(BAND_PIXELS)
    assert flat < 0.01 and banded > 0.05, (flat, banded)
    assert page.errors == []


def test_opening_a_group_that_takes_a_while_says_so_at_once(page, app_url, monkeypatch):
    """An action that takes more than 0.3 s says what it is doing at once (here the group's map, held back a second
    on the server), and the word goes when the map is drawn; no console error on the way."""
    import time

    from viewer.ui.rows import Rows

    slow = Rows.open_row

    def held(self, *args, **kwargs):
        time.sleep(1.5)
        return slow(self, *args, **kwargs)

    monkeypatch.setattr(Rows, "open_row", held)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    open_run_page(page, url_of(app_url, "trl-run", version="3"))
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    page.locator("[data-testid=run-group] .rp-open").nth(2).click()
    working = page.locator("[data-testid=working]")
    working.wait_for(state="visible", timeout=TIMEOUT)
    assert working.inner_text() == "opening version 3 · group 2…"
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    working.wait_for(state="hidden", timeout=TIMEOUT)
    assert page.errors == [] and not [c for c in console if "not valid JSON" in c]


def test_back_from_a_linked_group_map_lands_on_that_group(page, app_url):
    """A group map reached by a link has no run page behind it in the history: Back to the index opens the group's
    version on the run page and brings its row on screen, as if the group had been opened from there."""
    group = "groups/20261203T090916Z-f44f09-v000003-g000002"
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(url_of(app_url, "trl-run", row=group))
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    page.locator("[data-testid=back-to-index]").click()
    row = page.locator(f"tr.rp-grow[data-path='{group}']")
    row.wait_for(timeout=TIMEOUT)
    page.wait_for_function(f"""() => {{ const r = document.querySelector("tr.rp-grow[data-path='{group}']");
        if (!r) return false; const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= innerHeight; }}""",
                           timeout=TIMEOUT)
    assert query(page).get("version") == "3" and "rp-came" in (row.get_attribute("class") or "")
    assert page.errors == []


def test_a_run_page_link_to_a_group_keeps_its_comparison(page, app_url):
    """`version=&group=` names a group map as `row=` does: a comparison in such a link (`cmp=A,B&cturn=T`) opens with
    it, and the link the page then writes has the group's row and the comparison."""
    page.goto(url_of(app_url, "trl-run", version=3, group=2, cmp="0,2", cturn=1))
    page.wait_for_selector("[data-testid=divergence]", timeout=TIMEOUT)
    assert page.locator("[data-testid=compare-side]").count() == 2
    ticked = page.locator("[data-testid=group-pick]:checked").evaluate_all("cs => cs.map(c => c.dataset.rollout)")
    assert sorted(ticked) == ["0", "2"]
    assert page.locator("[data-testid=compare-turn]").input_value() == "1"
    q = query(page)
    assert q["row"].endswith("-v000003-g000002") and sorted(q["cmp"].split(",")) == ["0", "2"] and q["cturn"] == "1"
    assert page.errors == []


@pytest.fixture(scope="module")
def long_task_run(tmp_path_factory):
    """2,000 versions of 2 groups: each task (tests/support/scale_run.py: every 97th group) has 41-42 groups."""
    from support.scale_run import make_run

    root = tmp_path_factory.mktemp("long-task") / "run"
    make_run(root, versions=2000, groups=2, k=2)
    return root


def test_a_task_of_a_long_run_lists_its_groups_near_the_open_version(page, app_url, long_task_run):
    """Following a task with more groups than a page lists: its chart has every version, its table the groups
    nearest the open version (else the latest), and it says so; opening another version lists those near it."""
    from viewer.run_stats import MAX_TASK_GROUPS

    task = f"{5:040x}"
    page.set_viewport_size({"width": 1440, "height": 900})
    open_run_page(page, url_of(app_url, str(long_task_run), task=task))
    cut = page.locator("[data-testid=run-task-cut]")
    cut.wait_for(timeout=TIMEOUT)
    assert f"showing {MAX_TASK_GROUPS} of 42 groups, at versions" in cut.inner_text()
    rows = page.locator("[data-testid=run-task-group]")

    def listed() -> list[int]:
        return [int(v[1:]) for v in rows.locator("td:first-child").all_inner_texts()]

    assert rows.count() == MAX_TASK_GROUPS and max(listed()) > 1900  # the latest
    page.locator("#run-task-plot").scroll_into_view_if_needed()
    readout = point_at(page, "run-task-plot", 0.5)  # every version's counts, listed or not
    assert "1 group" in readout.inner_text() and "passed" in readout.inner_text()
    page.locator("[data-testid=run-version][data-version='30']").click()  # an early version opened
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=run-task-group] td:first-child')]"
                           ".some((td) => td.textContent === 'v3')", timeout=TIMEOUT)
    assert rows.count() == MAX_TASK_GROUPS and min(listed()) == 3 and query(page)["version"] == "30"
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)  # version 30's own groups, opened
    # both of the body's click handlers hear each event: the one it is not for leaves every output as it is
    assert error_toasts(page) == []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for w, h in ((1440, 900), (1280, 720), (1024, 768)):
            page.set_viewport_size({"width": w, "height": h})
            cut.scroll_into_view_if_needed()
            settle(page)
            page.screenshot(path=str(SHOTS / f"run-task-cut-{w}x{h}-{scheme}.png"))
    assert page.errors == []


@pytest.fixture(scope="module")
def wide_groups(tmp_path_factory):
    """3 versions of 2 groups of 16 rollouts: a group too large to write its rewards out."""
    return _scale_run(tmp_path_factory, "wide", versions=3, groups=2, k=16)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_large_groups_rewards_are_a_strip_not_a_wall_of_numbers(page, app_url, wide_groups, scheme):
    """A group of 16 rollouts shows its rewards as one strip of bars (highest first) with its range, every value in
    its title, on one line: a version of 8 groups of 64 once took twenty lines a group."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_run_page(page, url_of(app_url, str(wide_groups), **({"__theme": "dark"} if scheme == "dark" else {})))
    page.locator("[data-testid=run-version][data-version='1']").click()
    group = page.locator("[data-testid=run-group]").first
    group.wait_for(timeout=TIMEOUT)
    strip = group.locator(".rp-strip")
    assert strip.locator("i").count() == 16
    label, title = strip.get_attribute("aria-label"), strip.get_attribute("title")
    assert label.startswith("16 rewards") and len(title.split()) == 16, (label, title)
    heights = strip.locator("i").evaluate_all("bs => bs.map(b => b.getBoundingClientRect().height)")
    assert heights == sorted(heights, reverse=True) and heights[0] > heights[-1] > 0, heights
    line = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.rp-groups td')).lineHeight) || 20")
    assert group.bounding_box()["height"] < 1.8 * line  # one line, not a wall
    top = strip.bounding_box()["y"]
    assert abs(group.locator(".rp-dimnum").bounding_box()["y"] - top) < line  # its range beside it
    group.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / f"run-wide-groups-1024x768-{scheme}.png"))
    assert page.errors == []


def test_the_findings_chart_of_2000_versions_writes_round_versions(page, app_url, big_run):
    """The search panel's chart of 2,000 versions writes round versions under its bars (250, 500, …), not every
    n-th version (1, 99, 197, …)."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_run_page(page, url_of(app_url, str(big_run)))
    chart = page.locator("[data-testid=find-chart][data-ticks]")
    chart.wait_for(state="attached", timeout=TIMEOUT)
    ticks = [int(v) for v in chart.get_attribute("data-ticks").split()]
    step = ticks[1] - ticks[0]
    assert len(ticks) >= 3 and str(step).strip("0") in ("1", "2", "5"), ticks
    assert all(v % step == 0 for v in ticks) and ticks == sorted(ticks), ticks
    for width in (1024, 1280):  # every version written whole inside the canvas, the last one too
        page.set_viewport_size({"width": width, "height": 768})
        page.wait_for_function(SIZED_CHART)
        canvas = chart.evaluate("c => ({w: c.clientWidth, spans: JSON.parse(c.dataset.tickSpans)})")
        assert canvas["spans"] and all(0 <= a < b <= canvas["w"] for a, b in canvas["spans"]), canvas


# the findings chart drawn at its box's size (a resize redraws it: the canvas's pixels follow its CSS width)
SIZED_CHART = """() => { const c = document.querySelector('[data-testid=find-chart]');
  return !!c && !!c.dataset.tickSpans && c.width === Math.round(c.clientWidth * (window.devicePixelRatio || 1)); }"""



@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_no_button_sits_alone_on_a_line(page, app_url, size):
    """A run rollout's "↓ generated" wraps with the scopes it follows, never alone under them; the index's present
    button keeps to the right of its counts, never on a row of its own under them."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(url_of(app_url, "trl-run", version=3, group=2, rollout=1, turn=1))
    page.wait_for_selector(".tv-tokens .t[data-mask]", timeout=TIMEOUT)
    tops = page.evaluate("""() => ({jump: document.querySelector('.tv-jump-btn').getBoundingClientRect().top,
      scope: [...document.querySelectorAll('[data-scope]')].pop().getBoundingClientRect().top})""")
    assert abs(tops["jump"] - tops["scope"]) < 6, tops
    open_run_page(page, url_of(app_url, "trl-run"))
    head = page.evaluate("""() => { const c = document.querySelector('[data-testid=index-counts]').getBoundingClientRect();
      const b = document.querySelector('.ci-present').getBoundingClientRect();
      return {counts_top: c.top, button_top: b.top, button_bottom: b.bottom}; }""")
    assert head["button_top"] < head["counts_top"] + 20 and head["button_bottom"] > head["counts_top"], head
    assert page.errors == []
