"""Every screen, every size: what a person meets in Chromium at 1440x900, 1280x720 and 1024x768,
light and dark, as the engineer, the Space visitor and the speaker. One test per item of the issue, each
one failing before its fix; each saves the screenshots it was judged by (tests/screenshots/screen-*)."""

from __future__ import annotations

import json
import math
import re
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_group_view import make_group

from conftest import EXAMPLE, ROOT, SHOTS, artifact_without_turns, launch_app, zip_folder
from support.pages import url_of

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
SCHEMES = ("light", "dark")
F32, BF16 = "smollm2-135m-instruct.float32.cpu.t1", "smollm2-135m-instruct.bfloat16.cpu.t1"
EXAMPLES = ROOT / "examples"

# Generated tokens wholly on screen: inside the window and inside the token pane's box.
GEN_ON_SCREEN = """() => { const b = document.querySelector('.tv-tokens').getBoundingClientRect();
  return [...document.querySelectorAll('.tv-tokens .t[data-mask="1"]')].filter(e => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.top >= Math.max(0, b.top) && r.bottom <= Math.min(innerHeight, b.bottom); }).length; }"""
# Tokens the pane's edges cut: a line box of theirs partly inside the pane's box, partly outside (a line cut in
# half). Each line's box on its own: a newline token's <br> puts its end on the next line, a line that may be whole.
CUT_AT_EDGES = """() => { const box = document.querySelector('.tv-tokens'), b = box.getBoundingClientRect();
  const top = b.top + box.clientTop, bottom = top + box.clientHeight;
  return [...box.querySelectorAll('.t')].filter(e => [...e.getClientRects()].some(r =>
    r.height > 0 && r.bottom > top + 1 && r.top < bottom - 1 && (r.top < top - 1 || r.bottom > bottom + 1)))
    .map(e => e.dataset.i); }"""


# The token pane says what is still under way (token_pane.js `data-landing`: chunk requests in flight, landings
# still settling, a paint whose chunks it has not yet seen): "0" when the tokens on screen are all there and placed.
# Asked from the second frame after the step that moved the view on (the wait polls once a frame), so a reaction
# scheduled for the next frame (a resize's re-landing, a chunk the pane finds in view) has begun; `also`, a
# condition of the test's, must hold too.
LANDED = """(ask) => { const seen = window.__landedAsk && window.__landedAsk.ask === ask ? window.__landedAsk : {ask, polls: 0};
  window.__landedAsk = seen;
  if (++seen.polls < 3) return false;
  const box = document.querySelector('.tv-tokens');
  return (!box || box.dataset.landing === '0') && !!(ALSO); }"""
_asks = iter(range(1 << 30))


def landed(page, also: str = "true") -> None:
    """Until the token pane has nothing under way and `also`, a JavaScript expression, is true."""
    page.wait_for_function(LANDED.replace("ALSO", also), arg=next(_asks), polling="raf", timeout=TIMEOUT)


@contextmanager
def screen(browser, size: tuple[int, int], scheme: str):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme, accept_downloads=True)
    page = ctx.new_page()  # watched (tests/support/page_watch.py): its errors and outside requests
    try:
        yield page
    finally:
        ctx.close()


def shot(page, name: str, full: bool = False) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"screen-{name}.png"), full_page=full)


def shots_at(page, name: str, sizes=((1440, 900), (1024, 768))) -> None:
    """The page as it is, also at the other sizes (then back to its own)."""
    own = page.viewport_size
    for w, h in sizes:
        if (w, h) != (own["width"], own["height"]):
            page.set_viewport_size({"width": w, "height": h})
            landed(page)  # the pane fitted and landed again at the new size
            shot(page, f"{name}-{w}x{h}")
    page.set_viewport_size(own)


def open_view(page, url: str):
    page.goto(url)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    page.wait_for_selector(".tv-tokens[data-landed]", timeout=TIMEOUT)  # the first landing settled (its chunk, one more pass)
    # and, in the app, the page's load event answered: the source box names what is shown (until then Gradio fades
    # the app); an exported file has no source box
    landed(page, "!document.querySelector('#source input') || document.querySelector('#source input').value !== ''")
    return page


@pytest.fixture(scope="module")
def public_url():
    demo, url = launch_app(public=True)
    yield url
    demo.close()


@pytest.fixture(scope="module")
def run_group() -> tuple[str, int]:
    """The bundled run's widest group map: the first group whose rollouts have the most turns, asked of the run's
    reader (a re-recorded run renames its groups), and that many turns."""
    from rollout_trace.artifact.run import open_run

    run = open_run(str(EXAMPLES / "trl-run"))
    try:
        turns = {g.path: max(len(run.open(r.path).turns) for r in run.rows if r.group == g.path and r.path is not None)
                 for g in run.groups if any(r.group == g.path and r.path is not None for r in run.rows)}
    finally:
        run.close()
    path = max(turns, key=lambda k: turns[k])
    assert turns[path] >= 3, "the bundled run has a group of three turns: the widest map the test fits"
    return path, turns[path]


@pytest.fixture(scope="module")
def grp(tmp_path_factory) -> Path:
    return make_group(tmp_path_factory.mktemp("grp21") / "grp")


# -- 1. the first screen shows the model's tokens ------------------------------------------------------

# WCAG's contrast ratio of the intro's subdued hint ("Open an example, ...") against the page behind it
HINT_CONTRAST = """() => {
  const rgb = (c) => c.match(/[0-9.]+/g).slice(0, 3).map(Number);
  const lum = (c) => { const [r, g, b] = rgb(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                       return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  let bg = document.querySelector('#intro');
  while (bg && getComputedStyle(bg).backgroundColor.match(/[0-9.]+/g)?.[3] === '0') bg = bg.parentElement;
  const back = bg ? getComputedStyle(bg).backgroundColor : 'rgb(255, 255, 255)';
  const [a, b] = [lum(getComputedStyle(document.querySelector('#intro .tv-title > span:not(.tv-what)')).color), lum(back)];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""

@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size,public", [((1440, 900), False), ((1280, 720), False), ((1280, 720), True),
                                         ((1024, 768), False)])
def test_first_screen_shows_generated_tokens(browser, app_url, public_url, scheme, size, public):
    with screen(browser, size, scheme) as page:
        open_view(page, public_url if public else app_url)
        assert page.evaluate("window.scrollY") == 0
        assert page.evaluate(GEN_ON_SCREEN) >= 10, "generated tokens on the first screen, without scrolling"
        bar = page.locator("#source").bounding_box()
        assert bar["y"] + bar["height"] < 170, "a compact source bar"
        hint = page.evaluate(HINT_CONTRAST)  # the intro's secondary line, on a projector in either scheme
        assert hint >= 4.5, f"the intro's hint is {hint:.1f}:1 against the page"
        shot(page, f"1-first-screen-{size[0]}x{size[1]}{'-public' if public else ''}-{scheme}")
        assert page.errors == []


# Lines of tokens the window shows of the token pane, without scrolling: tokens wholly inside both
TOKEN_LINES_ON_SCREEN = """() => { const b = document.querySelector('.tv-tokens').getBoundingClientRect();
  const tops = [...document.querySelectorAll('.tv-tokens .t[data-mask]')].map(e => e.getBoundingClientRect())
    .filter(r => r.width > 0 && r.top >= Math.max(0, b.top) && r.bottom <= Math.min(innerHeight, b.bottom)).map(r => Math.round(r.top));
  return new Set(tops).size; }"""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_rollout_opened_in_a_run_shows_its_tokens_on_a_projectors_first_screen(browser, app_url, scheme):
    """A run's rollout brings the search panel and the back bar above its own header: at 1024x768 the token pane
    still starts on the first screen with lines of tokens in it (they once started below it)."""
    with screen(browser, (1024, 768), scheme) as page:
        open_view(page, url_of(app_url, "trl-run", version=3, group=2, rollout=1))
        assert page.locator("[data-testid=back-to-index]").is_visible() and page.locator("#find-panel").is_visible()
        assert page.evaluate("window.scrollY") == 0
        bar = page.locator("[data-testid=back-to-index]").bounding_box()
        find = page.locator("#find-panel .fp-bar").bounding_box()
        assert find["height"] < 40, "the folded search panel is one line"
        assert bar["y"] - (find["y"] + find["height"]) < 48, "no empty band between the search panel and Back"
        lines = page.evaluate(TOKEN_LINES_ON_SCREEN)
        shot(page, f"1-run-rollout-1024x768-{scheme}")
        assert lines >= 3, f"{lines} lines of tokens on the first screen"
        assert page.errors == []


# -- 2. trainer modes keep the tokens where they were ----------------------------------------------------

# The trainer's numbers for the turn have landed: its generated tokens wear their mismatch colours.
TRAINER_COLOURED = "document.querySelector('.tv-tokens .t[data-mask=\"1\"][class*=\" mm-\"]')"

@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
def test_trainer_modes_keep_the_tokens_on_screen(browser, app_url, scheme, size):
    with screen(browser, size, scheme) as page:
        open_view(page, f"{app_url}/?turn=1")
        before = page.locator(".tv-tokens").bounding_box()["y"]
        page.click("[data-mode=mismatch]")
        page.wait_for_selector("[data-testid=trainer-stats]", timeout=TIMEOUT)
        landed(page, TRAINER_COLOURED)
        after = page.locator(".tv-tokens").bounding_box()
        assert after["y"] - before < 60, (before, after["y"])  # only the legend grows
        assert page.evaluate(GEN_ON_SCREEN) > 0
        panel = page.locator("[data-testid=trainer-panel]").bounding_box()
        assert panel["y"] >= after["y"] + after["height"], "the trainer panel sits below the tokens"
        open_view(page, f"{app_url}/?turn=1&mode=mismatch")  # the deep link
        page.wait_for_selector("[data-testid=trainer-stats]", timeout=TIMEOUT)
        landed(page, TRAINER_COLOURED)
        assert page.evaluate("window.scrollY") == 0 and page.evaluate(GEN_ON_SCREEN) > 0
        assert "part float32" in page.locator("[data-testid=legend-part]").inner_text()
        shot(page, f"2-mismatch-deep-link-{size[0]}x{size[1]}-{scheme}")
        if size[0] == 1024:
            shots_at(page, f"2-mismatch-deep-link-{scheme}", ((1440, 900),))
        assert page.errors == []


# -- 3. an export carries the trainer's view --------------------------------------------------------------

def export_from(page, what: str, tmp_path: Path) -> Path:
    page.click("[data-testid=export]")
    with page.expect_download(timeout=TIMEOUT) as dl:
        page.click(f"[data-testid=export-{what}]")
    saved = tmp_path / f"export-{what}.html"
    dl.value.save_as(saved)
    return saved


@pytest.mark.parametrize("scheme", SCHEMES)
def test_export_carries_the_trainer_view(browser, app_url, grp, tmp_path, scheme):
    with screen(browser, (1440, 900), scheme) as page:
        open_view(page, f"{app_url}/?turn=1&mode=mismatch")
        page.click(f"[data-tpart='{BF16}']")
        page.wait_for_function("document.querySelectorAll('.t.tr-out').length > 0", timeout=TIMEOUT)
        saved = export_from(page, "turn", tmp_path)
        assert page.locator("[data-testid=export-link]").inner_text().endswith("-turn1.html")
        open_view(page, saved.as_uri())
        assert page.locator("[data-mode=mismatch].on").count() == 1, "opens in the mode on screen"
        assert "part bfloat16" in page.locator("[data-testid=legend-part]").inner_text(), "says which part"
        page.wait_for_selector("[data-testid=trainer-stats]", timeout=TIMEOUT)
        assert page.locator(f"[data-tpart='{BF16}'].on").count() == 1
        assert page.locator(f"[data-tpart='{F32}']").count() == 1, "every part is in the file"
        assert page.locator(".t.tr-out").count() > 0 and page.locator("[data-mode=entropy]").count() == 1
        page.click(f"[data-tpart='{F32}']")  # the other part's numbers are embedded too
        page.wait_for_function("!document.querySelector('.t.tr-out')", timeout=TIMEOUT)
        shot(page, f"3-export-mismatch-{scheme}")
        shots_at(page, f"3-export-mismatch-{scheme}")
        # a rollout of a group carries the group's advantage into its export
        open_view(page, url_of(app_url, str(grp), rollout=2, turn=0, mode="advantage"))
        value = page.locator(".tv-legend b").inner_text()
        saved = export_from(page, "rollout", tmp_path)
        open_view(page, saved.as_uri())
        assert page.locator("[data-mode=advantage].on").count() == 1 and value in page.locator(".tv-legend").inner_text()
        assert page.locator(".t.adv-neg").count() > 0
        assert page.outside_requests == [] and page.errors == []


# -- 4. the presentation toolbar fits at 1024x768 -----------------------------------------------------------

FITS = """() => [...document.querySelectorAll('.tv.present .tv-toolbar button, .tv.present .tv-top button')]
  .filter(b => b.offsetParent !== null).every(b => { const r = b.getBoundingClientRect();
    return r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight; })"""
LEGEND_WHOLE = """() => { const l = document.querySelector('.tv.present .tv-legend');
  return l.scrollWidth <= l.clientWidth + 1 && getComputedStyle(l).textOverflow !== 'ellipsis'; }"""
# The legend's swatches that end a line while their label starts the next one
ORPHAN_SWATCHES = """() => [...document.querySelectorAll('.tv-legend .sw')].filter(sw => {
  let n = sw.nextSibling; while (n && n.nodeType === 3 && !n.textContent.trim()) n = n.nextSibling;
  if (!n) return false;
  const r = document.createRange();
  if (n.nodeType === 3) { const i = n.textContent.search(/\\S/); r.setStart(n, i); r.setEnd(n, i + 1); } else r.selectNode(n);
  return r.getBoundingClientRect().top >= sw.getBoundingClientRect().bottom; }).length"""


# the type sizes (px) a room reads in presentation: the drift banner's words, its side labels, the legend's
PRESENT_TYPE = """() => { const px = (sel) => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize);
  return {banner: px('.tv.present .tv-boundary'), side: px('.tv.present .tv-boundary .tv-side-h'), legend: px('.tv.present .tv-legend')}; }"""


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [(1024, 768), (1440, 900)])
def test_presentation_controls_fit(browser, app_url, grp, scheme, size):
    with screen(browser, size, scheme) as page:
        open_view(page, url_of(app_url, str(grp), rollout=1, turn=0))
        page.keyboard.press("p")
        page.wait_for_selector(".tv.present", timeout=TIMEOUT)
        for mode in ("mask", "logprob", "drift", "advantage", "mismatch", "entropy", "loss"):
            if mode != "mask":
                page.keyboard.press("m")
            page.wait_for_selector(f"[data-mode={mode}].on", timeout=TIMEOUT)
            landed(page, "!document.querySelector('.tv-legend').textContent.includes(\"loading the trainer's numbers\")")
            assert page.evaluate(FITS), f"every control is in the window in {mode}"
            assert page.evaluate(LEGEND_WHOLE), f"the {mode} legend is whole"
            assert page.evaluate(ORPHAN_SWATCHES) == 0, f"a swatch of the {mode} legend ends a line without its label"
            assert page.evaluate(GEN_ON_SCREEN) == 70, f"a mode change keeps the turn's 70 generated tokens on screen ({mode})"
            active = page.locator(f"[data-mode={mode}].on").bounding_box()
            assert active and active["x"] >= 0 and active["x"] + active["width"] <= size[0]
            if mode == "advantage":
                assert re.search(r"this rollout's advantage [+-]\d\.\d{3}", page.locator(".tv-legend").inner_text())
                shot(page, f"4-presentation-advantage-{size[0]}-{scheme}")
        shot(page, f"4-presentation-loss-{size[0]}-{scheme}")
        assert page.errors == []


# -- 5. the group map (and the index) in a talk ---------------------------------------------------------------

@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [(1024, 768), (1440, 900)])
def test_group_map_presentation(browser, app_url, scheme, size):
    with screen(browser, size, scheme) as page:
        page.goto(url_of(app_url, "smollm2-group"))
        page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
        page.keyboard.press("p")
        page.wait_for_selector(".ci.present", timeout=TIMEOUT)
        covered = page.evaluate("() => { const e = document.elementFromPoint(5, 5); return !!(e && e.closest('.ci.present')); }")
        assert covered, "the map covers the app's chrome"
        font = page.locator(".gm-table td").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        assert font >= 17, font
        order = page.locator("tr.gm-row").evaluate_all("rs => rs.map(r => r.dataset.rollout)")
        # a starting cursor on the first (best) row: Enter works before any j
        assert page.locator("tr.ci-cursor").get_attribute("data-rollout") == order[0]
        page.keyboard.press("j")
        assert page.locator("tr.ci-cursor").get_attribute("data-rollout") == order[1]
        page.keyboard.press("k")
        assert page.locator("tr.ci-cursor").get_attribute("data-rollout") == order[0]
        shot(page, f"5-group-map-presentation-{size[0]}-{scheme}")
        page.keyboard.press("Enter")  # opens the rollout, still presenting
        page.wait_for_selector(".tv.present .t[data-mask]", timeout=TIMEOUT)
        assert page.locator(".tv-tokens").evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 24
        assert f"rollout={order[0]}" in page.url
        page.keyboard.press("Escape")
        assert not page.evaluate("document.body.classList.contains('tv-present')")
        # the index presents too
        page.goto(url_of(app_url, str(EXAMPLES)))
        page.wait_for_selector("[data-testid=index-row]", timeout=TIMEOUT)
        page.keyboard.press("p")
        page.wait_for_selector(".ci.present", timeout=TIMEOUT)
        page.keyboard.press("j")
        assert page.locator("tr.ci-row.ci-cursor").count() == 1
        assert page.locator(".ci-tablebox").evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the big table fits"
        shot(page, f"5-index-presentation-{size[0]}-{scheme}")
        assert page.errors == []


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [(1024, 768), (1280, 720)])
def test_run_group_map_presentation_fits_and_leaves_no_gap(browser, app_url, run_group, scheme, size):
    """A run's group (three turn columns) in presentation keeps its last turn column on screen; Enter opens the
    first rollout straight away; leaving presentation puts the map back where it was (no blank space)."""
    with screen(browser, size, scheme) as page:
        group, turns = run_group
        page.goto(url_of(app_url, "trl-run", row=group))
        page.wait_for_selector("[data-testid=group-map] tr.gm-row", timeout=TIMEOUT)
        top = lambda: page.locator(".gm-table").evaluate("e => Math.round(e.getBoundingClientRect().top + scrollY)")  # noqa: E731
        before = top()
        page.keyboard.press("p")
        page.wait_for_selector(".ci.present", timeout=TIMEOUT)
        last = page.locator(".gm-turnh").last
        assert last.inner_text() == f"turn {turns - 1}"
        assert page.evaluate("() => { const h = [...document.querySelectorAll('.gm-turnh')].pop();"
                             " return h.getBoundingClientRect().right <= window.innerWidth; }"), "the last turn column is on screen"
        assert page.locator(".gm-tablebox").evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the map fits its width"
        shot(page, f"5-run-group-presentation-{size[0]}-{scheme}")
        page.keyboard.press("Escape")
        page.wait_for_function("!document.querySelector('.ci.present')")
        assert abs(top() - before) <= 2, (before, top())
        page.keyboard.press("p")
        page.wait_for_selector(".ci.present", timeout=TIMEOUT)
        page.keyboard.press("Enter")  # the starting cursor's rollout
        page.wait_for_selector(".tv.present .t[data-mask]", timeout=TIMEOUT)
        assert "rollout=" in page.url
        assert page.errors == []


# -- 6. compare shows the generated tokens --------------------------------------------------------------------

@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
def test_compare_shows_both_sides_generated_tokens(browser, app_url, scheme, size):
    from rollout_trace.artifact import open_artifact

    outs = [open_artifact(EXAMPLES / "smollm2-group" / f"rollout-0{i}").turns[0].n_output for i in (0, 2)]
    with screen(browser, size, scheme) as page:
        page.goto(url_of(app_url, "smollm2-group"))
        page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
        page.locator("tr[data-rollout='0'] [data-testid=group-pick]").check()
        page.locator("tr[data-rollout='2'] [data-testid=group-pick]").check()
        page.locator("[data-testid=compare]").click()
        page.wait_for_selector("[data-testid=compare-side]", timeout=TIMEOUT)
        sides = page.locator("[data-testid=compare-side]")
        for k, n in enumerate(outs):
            assert sides.nth(k).locator(".gm-t[data-mask='1']").count() == n  # every generated token, its mask
            assert sides.nth(k).locator("[data-testid=divergence]").count() == 1  # the first difference, boxed
        assert "their generated tokens differ from the first one" in page.locator(".gm-cmp-h").inner_text()
        note = page.locator("details[data-testid=prompt-note]")
        assert note.count() == 1 and not note.evaluate("e => e.open")  # the prompt difference: a folded note
        a, b = (sides.nth(k).bounding_box() for k in (0, 1))
        assert abs(a["y"] - b["y"]) < 2 if size[0] > 1100 else True  # side by side where there is room
        page.locator(".gm-cmp").scroll_into_view_if_needed()
        shot(page, f"6-compare-{size[0]}x{size[1]}-{scheme}")
        assert page.errors == []


# -- 7. presentation lands on the whole story -------------------------------------------------------------------

@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [(1024, 768), (1440, 900)])
def test_presentation_lands_on_the_whole_story(browser, app_url, scheme, size):
    with screen(browser, size, scheme) as page:
        open_view(page, app_url)
        page.keyboard.press("p")
        page.keyboard.press("j")
        page.wait_for_function("location.search.includes('turn=1')")
        landed(page, "document.querySelector('.tv-navitem.active[data-turn=\"1\"]')")
        assert page.evaluate(GEN_ON_SCREEN) == 51, "all 51 generated tokens of turn 1"
        assert page.evaluate(CUT_AT_EDGES) == [], "no line cut at the pane's edges"
        assert page.evaluate(ORPHAN_SWATCHES) == 0, "a swatch of the legend ends a line without its words"
        sizes = page.evaluate(PRESENT_TYPE)
        assert sizes["banner"] >= 15.9 and sizes["side"] >= 14 and sizes["legend"] >= 15, sizes  # read from the back
        shot(page, f"7-presentation-turn1-{size[0]}-{scheme}")
        page.keyboard.press("Escape")
        open_view(page, f"{app_url}/?turn=1&mode=mismatch")
        page.click(f"[data-tpart='{BF16}']")
        page.wait_for_function("document.querySelectorAll('.t.tr-out').length > 0", timeout=TIMEOUT)
        page.keyboard.press("p")
        page.keyboard.press("g")
        landed(page, "document.querySelector('.tv.present')")
        out = page.locator(".t.tr-out").first.evaluate("""e => { const b = e.closest('.tv-tokens').getBoundingClientRect(),
            r = e.getBoundingClientRect(); return r.top >= b.top && r.bottom <= b.bottom && r.bottom <= innerHeight; }""")
        assert out, "the outlined out-of-band token is on screen"
        assert page.evaluate(CUT_AT_EDGES) == []
        shot(page, f"7-presentation-bf16-mismatch-{size[0]}-{scheme}")
        assert page.errors == []


# -- 8. lines break between tokens; pills stay whole ----------------------------------------------------------------

BROKEN_TOKENS = """() => [...document.querySelectorAll('.tv-tokens .t')].filter(e => !e.querySelector('br') && e.textContent.length > 1
  && e.getClientRects().length > 1).map(e => e.textContent)"""
SAME_LINE = """(sel) => [...document.querySelectorAll('.tv-navitem')].every(n => { const t = n.querySelector('.tv-nav-turn');
  return [...n.querySelectorAll(sel)].every(x => Math.abs(x.getBoundingClientRect().top - t.getBoundingClientRect().top) < 8
    && x.getClientRects().length === 1); })"""


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
def test_lines_break_between_tokens_and_pills_stay_whole(browser, app_url, scheme, size):
    with screen(browser, size, scheme) as page:
        open_view(page, f"{app_url}/?turn=1&scope=full")
        page.locator(".tv-tokens").evaluate("e => { e.style.maxHeight = 'none'; }")  # every chunk in view
        landed(page, "[...document.querySelectorAll('.tv-chunk')].every((c) => c.querySelector('.t'))")
        assert page.locator(".tv-tokens .t").count() > 600
        assert page.evaluate(BROKEN_TOKENS) == [], "no token split across two lines"
        assert page.locator(".tv-collapsed").count() == 0 or page.locator(".tv-collapsed").evaluate(
            "e => e.getClientRects().length") == 1
        assert page.evaluate(SAME_LINE, ".tv-pill, .tv-driftmark"), "pills and the drift mark on the turn's line"
        if size[0] == 1440:
            top = page.locator(".tv-top").bounding_box()["height"]
            assert top < 40, "summary, export, present and ? on one line"
            bar, btn = page.locator(".tv-toolbar").bounding_box(), page.locator("[data-mode=mask]").bounding_box()
            assert bar["height"] < 2 * btn["height"], "modes, scopes and the jump on one line at 1440"
        shot(page, f"8-line-breaks-{size[0]}x{size[1]}-{scheme}")
        page.keyboard.press("p")
        landed(page, "document.querySelector('.tv.present')")
        assert page.evaluate(SAME_LINE, ".tv-pill, .tv-driftmark"), "the same in presentation"
        shot(page, f"8-line-breaks-presentation-{size[0]}x{size[1]}-{scheme}")
        assert page.errors == []


# -- 9. the index's columns -------------------------------------------------------------------------------------------

CELL = "([path, col]) => { const r = document.querySelector(`tr.ci-row[data-path='${path}']`); return r.children[col].innerText.trim(); }"
COLS = {"model": 2, "tokens": 8, "drift": 9, "findings": 10, "captured": 13}


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)])
def test_index_columns_say_what_is_known(browser, app_url, scheme, size, tmp_path):
    col = tmp_path / "examples"
    shutil.copytree(EXAMPLES, col, ignore=shutil.ignore_patterns("*.py", "*.jinja", "README.md", "trl-run"))
    created = json.loads((col / "smollm2-group" / "group.json").read_text())["created_at"][:10]
    with screen(browser, size, scheme) as page:
        page.goto(url_of(app_url, str(col)))
        page.wait_for_selector("[data-testid=index-row]", timeout=TIMEOUT)
        paths = page.locator("tr.ci-row").evaluate_all("rs => rs.map(r => r.dataset.path)")
        assert set(paths) >= {"scripted-smollm2", "smollm2-offline", "smollm2-group/rollout-00"}, paths
        cell = lambda p, c: page.evaluate(CELL, [p, COLS[c]])  # noqa: E731
        for p in ("scripted-smollm2", "smollm2-offline", "smollm2-group/rollout-00"):
            assert re.fullmatch(r"[\d,]+", cell(p, "tokens")), p  # counted from turns.json: summary.json has none
        assert cell("scripted-smollm2", "drift") == "drift" and cell("smollm2-offline", "drift") == "none"
        assert cell("smollm2-group/rollout-00", "captured") == created  # its group's capture date
        assert cell("scripted-smollm2", "captured") == "-"  # nothing records it: never the copy's file date
        models = page.locator("[data-testid=filter-model] option").evaluate_all("os => os.map(o => o.value).filter(Boolean)")
        assert models == ["SmolLM2-135M-Instruct"], models  # one model, spelled with and without its organisation
        one_line = page.locator(".ci-open").evaluate_all(
            "bs => bs.every(b => b.getClientRects().length === 1 && b.getBoundingClientRect().height < 24)")
        assert one_line, "paths on one line"
        box = page.locator(".ci-tablebox")
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "no sideways scroll"
        shot(page, f"9-index-{size[0]}x{size[1]}-{scheme}", full=True)
        page.select_option("[data-testid=filter-drift]", "drift")
        page.wait_for_function("location.search.includes('drift=drift')")
        page.wait_for_function("document.querySelectorAll('[data-testid=index-row]').length === 1")
        assert page.locator("[data-testid=index-row]").get_attribute("data-path") == "scripted-smollm2"
        page.select_option("[data-testid=filter-model]", "SmolLM2-135M-Instruct")
        page.select_option("[data-testid=filter-drift]", "")
        page.wait_for_function("document.querySelectorAll('[data-testid=index-row]').length === 7")
        assert page.errors == []


# -- 10. an upload names its source ------------------------------------------------------------------------------------

@pytest.mark.parametrize("scheme", SCHEMES)
def test_an_upload_is_named_in_the_source_field_and_the_url(browser, app_url, tmp_path, scheme):
    with screen(browser, (1280, 720), scheme) as page:
        open_view(page, f"{app_url}/?src=smollm2-offline")
        label = page.evaluate("""() => { const b = document.querySelector('#upload'), r = b.getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return hit && b.contains(hit) ? b.innerText : ''; }""")
        assert "Upload" in label, "the upload button's label is its own, uncovered"
        page.set_input_files(".tv-sourcebar input[type=file]", str(zip_folder(EXAMPLE, tmp_path / "rollout.zip")))
        page.wait_for_function("location.search.includes('src=upload%3A') || location.search.includes('src=upload:')",
                               timeout=TIMEOUT)
        page.wait_for_function("document.querySelectorAll('[data-testid=nav-turn]').length === 3", timeout=TIMEOUT)
        shown = page.locator("#source input").input_value()
        assert shown.startswith("upload:") and shown in page.url.replace("%3A", ":")
        page.wait_for_timeout(800)  # Gradio's pending overlay clears
        shot(page, f"10-after-upload-{scheme}")
        shots_at(page, f"10-after-upload-{scheme}")
        page.reload()
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        assert page.locator("[data-testid=nav-turn]").count() == 3, "a reload shows the upload, not the default"
        assert page.locator("#source input").input_value() == shown
        assert page.errors == []


# -- 11. every number has a label, every message is true ---------------------------------------------------------------

@pytest.mark.parametrize("scheme", SCHEMES)
def test_words_say_what_is_on_screen(browser, app_url, tmp_path, scheme):
    with screen(browser, (1440, 900), scheme) as page:
        open_view(page, f"{app_url}/?mode=mismatch")
        page.wait_for_selector("[data-testid=nav-trainer]", timeout=TIMEOUT)
        nav = page.locator("[data-testid=nav-trainer]").first
        assert nav.inner_text().startswith("trainer:") and "clip band" in nav.get_attribute("title")
        counts = page.locator("[data-testid=counts]")
        assert "(1 by opencode itself" in counts.inner_text() and "agent turns are the calls" in counts.get_attribute("title")
        heads = page.locator(".tv-reward th").all_inner_texts()
        assert len(heads) == 5 and all(h.strip() for h in heads), heads
        page.click("[data-mode=advantage]")
        assert "opened on its own" in page.locator("[data-testid=no-advantage]").inner_text()
        assert "open this rollout from its group map" not in page.content()
        shot(page, f"11-words-{scheme}")
        shots_at(page, f"11-words-{scheme}")
        empty = artifact_without_turns(tmp_path / "empty")
        page.goto(f"{app_url}/?src={empty}")
        page.wait_for_selector("[data-testid=no-turns]", timeout=TIMEOUT)
        assert page.locator("[data-testid=continuity]").inner_text() == "no agent turn: no boundary to check"
        # a group named directly: no index above its map, and its rollouts name it
        page.goto(url_of(app_url, "smollm2-group"))
        page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
        assert page.locator(".gm-table th").first.inner_text() == "compare"
        assert not page.locator("[data-testid=back-to-index]").is_visible()
        page.locator("tr[data-rollout='0'] [data-testid=group-pick]").check()
        page.locator("tr[data-rollout='1'] [data-testid=group-pick]").check()
        page.fill("[data-testid=compare-turn]", "1")
        page.locator("[data-testid=compare]").click()
        page.wait_for_selector("[data-testid=compare-note]", timeout=TIMEOUT)
        assert page.locator("[data-testid=compare-note]").inner_text() == (
            "neither has a turn 1 (both have 1 turn): comparing their last turns")
        page.locator("tr[data-rollout='1'] .gm-name").click()
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        here = page.locator(".ci-backinfo").inner_text()
        assert "in group smollm2-group" in here and "(this group)" not in here
        assert page.errors == []


# -- 12. export is offered only where it works ----------------------------------------------------------------------------

@pytest.mark.parametrize("scheme", SCHEMES)
def test_export_is_offered_only_with_a_rollout(browser, app_url, scheme):
    with screen(browser, (1024, 768), scheme) as page:
        for url, ready in ((url_of(app_url, "smollm2-group"), "[data-testid=group-map]"),
                           (url_of(app_url, str(EXAMPLES)), "[data-testid=index-row]")):
            page.goto(url)
            page.wait_for_selector(ready, timeout=TIMEOUT)
            page.wait_for_timeout(300)
            assert page.locator("[data-testid=export]").count() == 0
            assert page.get_by_text("Export a self-contained").count() == 0 and "Open a rollout first" not in page.content()
        shot(page, f"12-index-no-export-1024-{scheme}")
        shots_at(page, f"12-index-no-export-{scheme}")
        page.locator("tr.ci-row[data-path='scripted-smollm2'] .ci-open").click()
        page.wait_for_selector("[data-testid=export]", timeout=TIMEOUT)
        assert page.errors == []


# -- 13. a click sets the token cursor ------------------------------------------------------------------------------------

@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_click_sets_the_cursor(browser, app_url, scheme):
    with screen(browser, (1440, 900), scheme) as page:
        open_view(page, f"{app_url}/?turn=1&scope=full")
        tok = page.locator(".t[data-i='512']")
        tok.scroll_into_view_if_needed()
        assert tok.get_attribute("data-mask") == "0"
        tok.click()
        page.keyboard.press("ArrowRight")
        assert page.locator(".t.cursor").get_attribute("data-i") == "513"
        assert page.locator(".tv-tip").inner_text().startswith("position 513 ·")
        assert "turn=1" in page.url
        shot(page, f"13-cursor-{scheme}")
        shots_at(page, f"13-cursor-{scheme}")


# -- 14. the histogram draws the band where the counted tokens are -----------------------------------------------------------

HIST_OVERFLOW = """() => {
  const box = document.querySelector('.tv-trainer-out').getBoundingClientRect();
  return Math.max(...[...document.querySelectorAll('.tv-hist, .tv-hist figcaption')].map(e => e.getBoundingClientRect().right - box.right));
}"""
OUTSIDE_BARS = "() => [...document.querySelectorAll('[data-testid=trainer-histogram] rect.b-out')].reduce((s, r) => s + Number(r.dataset.count), 0)"


@pytest.mark.parametrize("scheme", SCHEMES)
def test_histogram_band_holds_the_tokens_counted_outside(browser, app_url, scheme):
    with screen(browser, (1440, 900), scheme) as page:
        open_view(page, f"{app_url}/?mode=mismatch")
        page.click(f"[data-tpart='{BF16}']")
        page.wait_for_function("(document.querySelector('[data-testid=trainer-stats]') || {innerText: ''}).innerText.includes('outside clip [0.8, 1.2] 2')",
                               timeout=TIMEOUT)
        edges = page.locator("[data-testid=band-line]").evaluate_all("ls => ls.map(l => Number(l.dataset.edge))")
        assert edges == pytest.approx([math.log(0.8), math.log(1.2)])
        assert page.evaluate(OUTSIDE_BARS) == 2, "the bars beyond the dashed lines hold the 2 tokens counted outside"
        page.locator("[data-testid=trainer-histogram]").scroll_into_view_if_needed()
        shot(page, f"14-histogram-{scheme}")
        shots_at(page, f"14-histogram-{scheme}")
        page.set_viewport_size({"width": 1024, "height": 768})  # a projector: the caption wraps inside its panel
        landed(page)
        assert page.evaluate(HIST_OVERFLOW) <= 0.5, "the histogram's caption reaches past the trainer's panel"
        page.set_viewport_size({"width": 1440, "height": 900})
        page.click("[data-teps='1']")  # DAPO's band: the line moves to log(1.28)
        page.wait_for_function("(document.querySelector('[data-testid=clip-band]') || {innerText: ''}).innerText.includes('1.28')")
        page.wait_for_function(f"[...document.querySelectorAll('[data-testid=band-line]')].some(l => Math.abs(l.dataset.edge - {math.log(1.28)}) < 1e-9)",
                               timeout=TIMEOUT)
        stats = page.locator("[data-testid=trainer-stats]").inner_text()
        outside = int(re.search(r"outside clip \[0\.8, 1\.28\] (\d+)", stats).group(1))
        assert page.evaluate(OUTSIDE_BARS) == outside
        assert page.errors == []
