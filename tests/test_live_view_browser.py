"""The live view in a real browser: a capture through the Capture tab with the scripted endpoint holding each
agent reply until the test lets it go, watched in the View tab while the agent works. Turns appear before the capture ends, the view
follows the newest turn until the reader moves, "follow" resumes, the written artifact replaces the live
view in place, the page stops asking once the run ended, cancel keeps what was seen; presentation mode
follows too. The first test is also the Capture tab's whole run: preview, endpoint check, the log, the status,
download and push once done. Screenshots in light and dark, at 1440x900 and 1024x768."""

from __future__ import annotations

import math
from contextlib import contextmanager

import pytest
from test_capture_browser import capture_app, fill, fill_form  # noqa: F401  (capture_app is a fixture)
from test_view_browser import CONTRAST

from conftest import SHOTS
from support.scripted_llm import DEFAULT_STEPS

BADGE_PARTS = ("[data-testid=live-badge] b", "[data-testid=live-badge] span:not(.tv-live-dot)",
               "[data-testid=live-badge] button")
STEPS = [DEFAULT_STEPS[0], DEFAULT_STEPS[1], DEFAULT_STEPS[1], DEFAULT_STEPS[2]]  # four turns: write, bash, bash, stop

pytestmark = [pytest.mark.browser, pytest.mark.capture]
TIMEOUT = 180_000

# Records, in the page, every change of the turn count and badge state with its time: the order of events
# is then asserted from one timeline instead of racing the capture.
TIMELINE = """() => {
  window.__timeline = [];
  const note = () => {
    const badge = document.querySelector('#view-tab [data-testid=live-badge]');
    const status = document.querySelector('[data-testid=capture-status]');
    const row = {t: Date.now(), turns: badge ? document.querySelectorAll('#view-tab [data-testid=nav-turn]').length : 0,
                 badge: badge ? badge.dataset.state : null, status: status ? status.innerText.split(' ')[0] : null};
    const last = window.__timeline[window.__timeline.length - 1];
    if (!last || last.turns !== row.turns || last.badge !== row.badge || last.status !== row.status) window.__timeline.push(row);
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true});
  note();
}"""
NAV = "#view-tab [data-testid=nav-turn]"
ACTIVE = "() => [...document.querySelectorAll('#view-tab [data-testid=nav-turn]')].findIndex((e) => e.classList.contains('active'))"


@contextmanager
def filled_form(browser, url: str, llm, task_file, tokenizer_dir, size: tuple[int, int], scheme: str):
    """A page of the app at `size` in `scheme`, the Capture form filled for `llm`; a page error fails the test."""
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url)
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        fill_form(page, llm, task_file, tokenizer_dir)
        yield page
        assert not errors, errors
    finally:
        ctx.close()


# Resolves after `n` of the live view's poll intervals (live.js LIVE_POLL_MS), counted by the page's own timers:
# a poll timer armed before it would have fired first, however slowly the machine runs.
POLL_INTERVALS = """(n) => new Promise((done) => {
  const tick = () => (n-- > 0 ? setTimeout(tick, 500) : done());
  tick();
})"""


def later_polls_answered(page, n: int = 2) -> None:
    """Wait until the page has asked `n` more times about the watched run: each ask follows the answer before
    it (live.js), so every answer up to then has been shown."""
    polls = page.evaluate("window.__traceView.watching().polls")
    page.wait_for_function(f"window.__traceView.watching().polls >= {polls + n}", timeout=10_000)


def turns(page) -> int:
    return page.locator(NAV).count()


def wait_turns(page, n: int) -> None:
    page.wait_for_function(f"document.querySelector('#view-tab [data-testid=live-badge]') && "
                           f"document.querySelectorAll('{NAV}').length >= {n}", timeout=TIMEOUT)


def test_live_view_follows_a_capture_and_becomes_the_artifact(browser, capture_app, scripted_llm, task_file,  # noqa: F811
                                                              tokenizer_dir):
    url, captures = capture_app
    llm = scripted_llm(held=True, steps=STEPS)  # each agent turn arrives when the test lets it
    with filled_form(browser, url, llm, task_file, tokenizer_dir, (1440, 900), "light") as page:
        # the Capture tab before the run: the task's preview, the endpoint's check, nothing to cancel or push yet
        page.click("#cap-preview")
        preview = page.locator("[data-testid=task-preview]")
        preview.wait_for(timeout=TIMEOUT)
        assert "distinct values" in preview.inner_text() and "3 held-out tests" in preview.inner_text()
        page.click("#cap-check")
        verdict = page.locator("[data-testid=endpoint-verdict]")
        verdict.wait_for(timeout=TIMEOUT)
        assert "Ready" in verdict.inner_text() and "token ids: yes" in verdict.inner_text()
        assert "secondary" in page.locator("#cap-cancel").get_attribute("class")  # quiet beside Capture
        assert "primary" in page.locator("#cap-run").get_attribute("class")
        assert page.locator("#cap-push").is_disabled()
        page.evaluate(TIMELINE)
        page.click("#cap-run")
        llm.allow(1)
        # the log names the first model call (opencode says so once its reply starts); the second one is held
        page.wait_for_function("document.querySelector('#cap-log textarea') && "
                               "document.querySelector('#cap-log textarea').value.includes('model call 1')",
                               timeout=TIMEOUT)
        page.screenshot(path=str(SHOTS / "capture_running.png"), full_page=True)
        wait_turns(page, 1)  # the View tab comes to the front with the first turn
        assert page.locator("#view-tab").is_visible()
        badge = page.locator("#view-tab [data-testid=live-badge]")
        assert badge.get_attribute("data-state") == "running" and "running" in badge.inner_text()
        assert "reward pending" in page.locator("#view-tab [data-testid=summary]").inner_text()
        # the source box names the capture, not the example the page opened on
        assert page.locator("#source input").input_value().startswith("live capture · task ")
        page.wait_for_selector("#view-tab .t[data-mask='1']", timeout=TIMEOUT)  # its tokens, coloured by mask
        page.screenshot(path=str(SHOTS / "live_running_1440_light.png"))
        page.set_viewport_size({"width": 1024, "height": 768})
        page.screenshot(path=str(SHOTS / "live_running_1024_light.png"))
        page.set_viewport_size({"width": 1440, "height": 900})

        # following: the newest turn is on screen as it arrives
        llm.allow(2)
        wait_turns(page, 2)
        page.wait_for_function(f"({ACTIVE})() === 1", timeout=10_000)
        assert page.get_by_test_id("following").is_visible()
        for sel in BADGE_PARTS:  # readable in light (and, below, in dark)
            assert min(page.evaluate(CONTRAST, sel)) >= 4.5, sel
        # the reader moves away: the view stays where they are while turns keep arriving
        page.locator(NAV).nth(0).click()
        page.get_by_test_id("follow").wait_for(timeout=10_000)
        llm.allow(3)
        wait_turns(page, 3)
        later_polls_answered(page)  # the grown view has been followed, or not, by now
        assert page.evaluate(ACTIVE) == 0
        page.get_by_test_id("follow").click()  # resume: to the newest turn, and stay there as turns arrive
        page.wait_for_function(f"({ACTIVE})() === 2", timeout=10_000)
        llm.allow(math.inf)
        wait_turns(page, 4)
        page.wait_for_function(f"({ACTIVE})() === 3", timeout=10_000)
        shown = page.locator(NAV).all_inner_texts()
        # the written artifact replaces the live view in place: the same element, nothing repainted
        page.evaluate("document.querySelector('#view-tab .tv').__sameView = 1; "
                      "window.__scrollBefore = document.querySelector('#view-tab .tv-tokens').scrollTop")
        page.wait_for_function("document.querySelector('#view-tab [data-testid=live-badge]').dataset.state === 'done'",
                               timeout=TIMEOUT)
        assert page.evaluate("document.querySelector('#view-tab .tv').__sameView") == 1
        assert page.evaluate("document.querySelector('#view-tab .tv-tokens').scrollTop === window.__scrollBefore")
        assert page.locator(NAV).all_inner_texts() == shown  # the same turns, the same token counts
        summary = page.locator("#view-tab [data-testid=summary]").inner_text()
        assert "2 of 3 held-out tests passed" in summary and "reward +" in summary
        [folder] = list(captures.iterdir())
        # the source box follows with the capture's last update, which may land just after the badge's poll
        page.wait_for_function("f => document.querySelector('#source input').value === f", arg=str(folder),
                               timeout=10_000)

        timeline = page.evaluate("window.__timeline")
        first = next(r for r in timeline if r["turns"] >= 1)
        assert first["badge"] == "running" and first["status"] not in ("done", "failed")  # turn 0 before the end
        done = next(r for r in timeline if r["badge"] == "done")
        assert [r["turns"] for r in timeline if r["t"] <= done["t"] and r["turns"]][-1] == 4
        # once the run ended the page stops asking
        polls = page.evaluate("window.__traceView.watching().polls")
        page.evaluate(POLL_INTERVALS, 5)  # five of the page's own poll intervals: a poll would have gone out
        assert page.evaluate("window.__traceView.watching().polls") == polls
        page.screenshot(path=str(SHOTS / "live_done_1440_light.png"))
        # the new artifact in the View tab, and in the Capture tab: done, downloadable, ready to push
        assert "scripted-model" in page.locator("#view-tab .tv-model").inner_text()
        assert (folder / "turns.json").is_file()
        page.screenshot(path=str(SHOTS / "capture_landed_in_view.png"), full_page=True)
        page.click("button[role=tab]:has-text('Capture')")
        status = page.locator("[data-testid=capture-status]").inner_text()
        assert status.startswith("done") and f"{len(STEPS)} agent turn(s)" in status
        assert page.locator("#cap-download a").count() >= 1
        assert page.locator("#cap-push").is_enabled()  # an artifact to push now


def test_presentation_follows_live_and_cancel_keeps_what_was_seen(browser, capture_app, scripted_llm,  # noqa: F811
                                                                  task_file, tokenizer_dir):
    url, captures = capture_app
    llm = scripted_llm(held=True, steps=STEPS)
    with filled_form(browser, url, llm, task_file, tokenizer_dir, (1024, 768), "dark") as page:
        page.click("#cap-run")
        llm.allow(1)
        wait_turns(page, 1)
        page.keyboard.press("p")  # presentation: the room sees the tokens arrive
        assert page.evaluate("document.body.classList.contains('tv-present')")
        llm.allow(2)  # the third reply stays held: the capture is still running when it is cancelled
        wait_turns(page, 2)
        page.wait_for_function(f"({ACTIVE})() === 1", timeout=10_000)  # it follows in presentation too
        assert page.locator(".tv.present [data-testid=live-badge]").is_visible()
        assert page.locator(".tv.present .tv-tokens").evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 24
        page.wait_for_selector(".tv.present .t[data-mask='1']", timeout=TIMEOUT)
        page.screenshot(path=str(SHOTS / "live_present_1024_dark.png"))
        page.set_viewport_size({"width": 1440, "height": 900})
        page.screenshot(path=str(SHOTS / "live_present_1440_dark.png"))
        page.keyboard.press("Escape")
        page.screenshot(path=str(SHOTS / "live_running_1440_dark.png"))
        for sel in BADGE_PARTS:
            assert min(page.evaluate(CONTRAST, sel)) >= 4.5, sel
        seen = turns(page)
        # cancel from the badge: the view keeps what it showed, marked cancelled, and nothing is written
        page.get_by_test_id("live-cancel").click()
        page.wait_for_function("document.querySelector('#view-tab [data-testid=live-badge]').dataset.state === 'cancelled'",
                               timeout=TIMEOUT)
        badge = page.locator("#view-tab [data-testid=live-badge]").inner_text()
        assert "cancelled" in badge and "nothing was written" in badge
        for sel in BADGE_PARTS[:2]:
            assert min(page.evaluate(CONTRAST, sel)) >= 4.5, sel
        assert turns(page) >= seen >= 2
        assert "never ran" in page.locator("#view-tab [data-testid=summary]").inner_text()
        page.click("button[role=tab]:has-text('Capture')")
        assert page.locator("[data-testid=capture-status]").inner_text().startswith("cancelled")
        page.click("button[role=tab]:has-text('View')")
        page.set_viewport_size({"width": 1024, "height": 768})
        page.screenshot(path=str(SHOTS / "live_cancelled_1024_dark.png"))
        assert not captures.exists() or not any(captures.iterdir())


def test_a_group_is_watched_one_rollout_at_a_time(browser, capture_app, scripted_llm, task_file,  # noqa: F811
                                                  tokenizer_dir):
    url, captures = capture_app
    llm = scripted_llm(held=True)
    with filled_form(browser, url, llm, task_file, tokenizer_dir, (1440, 900), "light") as page:
        fill(page, "cap-k", "2")
        fill(page, "cap-parallel", "2")
        page.click("#cap-run")
        llm.allow(1)  # each rollout's first turn; the rest wait until the other rollout is being followed
        wait_turns(page, 1)
        sibs = page.locator("#view-tab [data-live-rollout]")
        pressed = [sibs.nth(i).get_attribute("aria-pressed") for i in range(sibs.count())]
        assert sorted(pressed) == ["false", "true"]  # the view follows whichever rollout reported first
        other = pressed.index("false")
        sibs.nth(other).click()  # follow the other rollout of the group
        page.wait_for_function(f"document.querySelector('#view-tab [data-live-rollout=\"{other}\"]')"
                               ".getAttribute('aria-pressed') === 'true'", timeout=10_000)
        wait_turns(page, 1)
        page.screenshot(path=str(SHOTS / "live_group_1440_light.png"))
        llm.allow(math.inf)
        page.wait_for_function("document.querySelector('#view-tab [data-testid=live-badge]').dataset.state === 'done'",
                               timeout=TIMEOUT)
        assert page.locator(f"#view-tab [data-live-rollout='{other}']").get_attribute("aria-pressed") == "true"
        assert "held-out tests passed" in page.locator("#view-tab [data-testid=summary]").inner_text()
        assert turns(page) == 3
        page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)  # the group map opens above
        [group] = list(captures.iterdir())
        assert (group / "group.json").is_file()
