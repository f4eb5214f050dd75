"""The View tab in a real browser: loading, keyboard, deep links, modes and scopes, presentation,
export, upload, malformed input, and hostile artifacts rendered as inert text."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import EXAMPLE, ROOT, SHOTS, artifact_without_turns, launch_app, zip_folder
from rollout_trace.artifact import open_artifact, write_artifact
from support.viewer_cli import viewer

pytestmark = pytest.mark.browser
TIMEOUT = 60_000


def open_view(page, url: str):
    page.goto(url)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    return page


def active_turn(page) -> str:
    return page.locator(".tv-navitem.active .tv-nav-h").inner_text()


def test_loads_example_with_masks(page, app_url):
    open_view(page, app_url)
    assert page.locator("[data-testid=nav-turn]").count() == 3
    assert page.locator("[data-testid=summary]").inner_text() == (
        "4 of 5 held-out tests passed · reward +0.800 · 3 of 3 turns trained by TRL")
    assert page.locator(".tv-reward-value.pos").count() == 1
    # plain words first, the exact numbers kept for the RL engineer
    assert page.locator("[data-testid=counts]").inner_text() == (
        "3 agent turns · 3 trained by TRL 1.16.0 · 4 model calls recorded (1 by opencode itself, e.g. the session title)")
    assert page.locator("[data-testid=continuity]").inner_text() == "turn 1's prompt rewrites turn 0's tokens (1 of 2 boundaries drift)"
    assert page.locator(".t[data-mask='1']").count() > 0 and page.locator(".t[data-mask='0']").count() > 0
    assert page.locator("[data-testid=held-out-test]").count() == 5
    assert page.locator("[data-testid=reward-step]").count() == 5
    assert page.outside_requests == [] and page.errors == []


def test_keyboard_steps_through_turns(page, app_url):
    from playwright.sync_api import expect

    open_view(page, app_url)
    page.keyboard.press("j")
    page.wait_for_function("location.search.includes('turn=1')")
    # the URL is told first; the navigator and the boundary box follow in the same update, so wait on them too
    expect(page.locator(".tv-navitem.active .tv-nav-h")).to_contain_text("turn 1", timeout=TIMEOUT)
    expect(page.locator(".tv-boundary-box")).to_contain_text("drift at position 509", timeout=TIMEOUT)
    page.wait_for_selector(".tv-tokens[data-landed]", timeout=TIMEOUT)  # turn 1 painted before the next key
    page.keyboard.press("ArrowRight")
    page.wait_for_function("location.search.includes('turn=2')")
    # no tool call, trained all the same (TRL 1.16 trains every turn's loss mask); the page says so on the turn
    # the turn's panes follow the URL in the same update: wait on turn 2's own note, then read the rest
    expect(page.locator("[data-testid=trained-note]")).to_contain_text(
        "TRL 1.16.0 trains 17 of this turn's 17 generated tokens", timeout=TIMEOUT)
    assert "not trained" not in page.locator(".tv-turn-title").inner_text()
    assert page.locator(".tv-tokens.untrained").count() == 0
    page.keyboard.press("k")
    page.wait_for_function("location.search.includes('turn=1')")
    page.keyboard.press("?")
    assert "jump to the generated tokens" in page.locator(".tv-help").inner_text()
    assert page.locator(".tv-help").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator(".tv-help").is_visible()


def test_the_page_load_answers_the_link_as_it_was_opened(page, app_url):
    """The page load answers in two steps (the run page, then the index and the view). Both answer the link as the
    page was opened, kept before anything ran: on a busy machine Gradio sends the load's events after the reader
    has moved, with the page's URL as it is then (the view writes the reader's place there), and the view was
    opened again at that place, undoing the keys pressed meanwhile (tests/test_view_browser.py's keyboard test
    met it under load)."""
    from viewer.ui.app import build_app

    opened = "?src=scripted-smollm2&turn=1"
    open_view(page, f"{app_url}/{opened}")
    page.keyboard.press("j")
    page.wait_for_function("location.search.includes('turn=2')")
    assert page.evaluate("window.__openedLink") == opened
    demo = build_app(default_source="scripted-smollm2")
    loads = [d for d in demo.config["dependencies"] if d["targets"] and d["targets"][0][1] == "load"]
    first = next(d for d in loads if d["js"] and "__openedLink" in d["js"])
    second = next(d for d in demo.config["dependencies"] if d.get("trigger_after") == first["id"])
    state = {c["id"] for c in demo.config["components"] if c.get("type") == "state"}
    assert set(second["inputs"]) <= state and second["inputs"], "the second step reads the first step's link, not the URL"


def test_deep_link_restores_view(page, app_url):
    open_view(page, f"{app_url}/?src=scripted-smollm2&turn=2&mode=logprob&scope=full")
    assert active_turn(page).startswith("turn 2")
    assert page.locator("[data-mode=logprob].on").count() == 1 and page.locator("[data-scope=full].on").count() == 1
    assert page.locator(".t[data-i='0']").count() == 1  # full context starts at position 0
    # prompt positions have no logprob: drawn as missing, never as p = 1
    assert page.locator(".t[data-mask='0'].nolp").count() > 0
    generated = page.locator(".t[data-mask='1']").first
    assert generated.get_attribute("style").startswith("--a:")
    assert generated.evaluate("e => getComputedStyle(e).backgroundColor").startswith("rgba(")


def test_modes_scopes_and_hover(page, app_url):
    open_view(page, f"{app_url}/?turn=1")
    page.click("[data-mode=drift]")
    assert page.locator(".t.d-rewritten").count() > 0 and page.locator(".t.d-out").count() > 0
    page.keyboard.press("m")  # drift -> the next mode
    assert page.locator("[data-mode=drift].on").count() == 0
    page.click("[data-mode=mask]")
    assert page.locator("[data-mode=mask].on").count() == 1
    first = page.locator(".t").first
    assert first.get_attribute("data-i") == "509"  # new-in-turn scope starts after the shared prefix
    page.click("[data-testid=collapsed-prefix]")
    page.wait_for_selector(".t[data-i='0']", timeout=TIMEOUT)
    page.locator(".t[data-i='3']").hover()
    tip = page.locator(".tv-tip").inner_text()
    assert re.match(r"position 3 · id \d+ · mask 0 · no logprob", tip)
    page.click("[data-scope=row]")
    page.wait_for_selector(".tv-rowbar button[data-row]", timeout=TIMEOUT)
    assert "2 training rows" in page.locator(".tv-rowbar").inner_text()
    assert "forked" in page.locator(".tv-terms").inner_text()  # the terms are explained where they appear
    # TRL's boundaries are between every call it chains (opencode's title call too), which the header's agent-turn
    # count is not: the sentence says what it counts
    assert ("of the 3 boundaries between the 4 model calls it chains (3 agent turns and 1 call the recipe does not "
            "count as one)") in page.locator(".tv-training").inner_text()
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    # Row scope is coherent: no drift mode, no single turn's tool calls, the row's turns marked in the navigator.
    assert page.locator("[data-mode=drift]").is_disabled()
    assert not page.locator(".tv-tools-part").is_visible()
    # opened on the row of the turn on screen: row 1 holds turns 1 and 2, row 0 turn 0 only
    page.wait_for_function("document.querySelectorAll('.tv-navitem.active').length === 2")
    assert "turns 1, 2" in page.locator(".tv-turn-title").inner_text()
    page.click("[data-row='0']")
    page.wait_for_function("document.querySelectorAll('.tv-navitem.active').length === 1")
    assert "TRL training row 0 (2 in all): turn 0" in page.locator(".tv-turn-title").inner_text()


# Whether a token of the drift (rewritten at the turn boundary) is in the token pane's visible lines
DRIFT_SEEN = """() => { const box = document.querySelector('.tv-tokens'), r = box.getBoundingClientRect();
  return [...box.querySelectorAll('.t.d-rewritten, .t.dmark')].some((t) => { const b = t.getBoundingClientRect();
    return b.height > 0 && b.top >= r.top - 0.5 && b.bottom <= r.bottom + 0.5; }); }"""


@pytest.mark.parametrize("size", [(1024, 768), (1440, 900)])
def test_the_drift_mode_lands_on_the_drift(page, app_url, size):
    """The drift mode's story is the drift: a link in drift mode and a switch to it land on the rewritten tokens,
    even where the turn's generated tokens would fit the pane without them (the mask mode lands on those)."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_view(page, f"{app_url}/?turn=1&mode=drift")
    page.wait_for_function(DRIFT_SEEN, timeout=TIMEOUT)
    page.goto(f"{app_url}/?turn=1")
    page.wait_for_selector(".tv-tokens .t[data-mask='1']", timeout=TIMEOUT)
    page.wait_for_timeout(600)  # the mask mode's landing settles
    page.click("[data-mode=drift]")
    page.wait_for_function(DRIFT_SEEN, timeout=TIMEOUT)
    assert page.errors == []


def test_the_tests_and_reward_panels_keep_inside_their_columns_at_1024(page, app_url):
    """At 1024x768 the held-out tests' columns are narrow: a stdin line longer than its cell scrolls sideways with a
    shadow at the edge it continues past, a verdict's detail wraps inside its cell, the reward's steps sit under the
    tests with each reason on a line, and the tool names' bullets sit inside the reward column."""
    page.set_viewport_size({"width": 1024, "height": 768})
    open_view(page, app_url)
    page.locator("[data-testid=held-out-test]").first.scroll_into_view_if_needed()
    got = page.evaluate("""() => {
      const pres = [...document.querySelectorAll('[data-testid=held-out-test] .tv-pre')];
      const long = pres.filter((e) => e.scrollWidth > e.clientWidth + 1);
      const cells = [...document.querySelectorAll('[data-testid=held-out-test] td:last-child')];
      const box = document.querySelector('.tv-reward').getBoundingClientRect();
      const bullets = [...document.querySelectorAll('.tv-reward li')].map((li) => li.getBoundingClientRect().left - box.left);
      const whys = [...document.querySelectorAll('[data-testid=reward-step] td:last-child')];
      const lines = whys.map((c) => c.getBoundingClientRect().height / parseFloat(getComputedStyle(c).lineHeight));
      return {long: long.length, shadowed: long.every((e) => getComputedStyle(e).backgroundImage.includes('radial-gradient')),
              spilled: cells.filter((c) => c.scrollWidth > c.clientWidth + 1).length, bullets, whyLines: Math.max(...lines)};
    }""")
    assert got["long"] >= 1 and got["shadowed"], got  # the bundled test 3's "1000000000 999999999 ..."
    assert got["spilled"] == 0 and got["bullets"] and min(got["bullets"]) >= 12, got  # a bullet's room to its left
    # the reward's steps under the tests, whole: a step's "why" on one line (beside the tests it took up to 7)
    assert got["whyLines"] < 2, got
    assert page.errors == []


def test_token_cursor_follows_arrow_keys(page, app_url):
    open_view(page, f"{app_url}/?turn=1")
    page.focus("[data-testid=tokens]")
    page.keyboard.press("ArrowRight")
    cursor = page.locator(".t.cursor")
    first = int(cursor.get_attribute("data-i"))
    page.keyboard.press("ArrowRight")
    assert int(page.locator(".t.cursor").get_attribute("data-i")) == first + 1
    assert page.locator(".tv-tip").inner_text().startswith(f"position {first + 1} ·")
    assert "turn=1" in page.url  # arrows inside the tokens move the cursor, not the turn
    toggles = page.locator(".tv-toolbar [aria-pressed]")
    assert toggles.count() >= 7
    assert page.locator("[data-mode=mask]").get_attribute("aria-pressed") == "true"
    assert page.locator(".tv-help-btn").get_attribute("aria-label")


IN_BOX = """e => { const b = e.closest('.tv-tokens').getBoundingClientRect(), r = e.getBoundingClientRect();
                    return r.top >= b.top && r.bottom <= b.bottom && r.bottom <= window.innerHeight; }"""


def test_opens_on_the_generated_tokens_and_jumps_back(page, app_url):
    """4,392 prompt tokens then 512 generated: the view lands on the generated ones, and g returns there."""
    open_view(page, f"{app_url}/?src=smollm2-offline")
    n_prompt = 4392
    first = page.locator(f".t[data-i='{n_prompt}']")
    first.wait_for(timeout=TIMEOUT)
    assert first.get_attribute("data-mask") == "1"
    page.wait_for_function(IN_BOX, arg=first.element_handle(), timeout=TIMEOUT)  # the landing
    page.locator(".tv-tokens").hover()
    page.mouse.wheel(0, -100_000)  # the reader scrolls to the top
    page.wait_for_function(f"e => !({IN_BOX})(e)", arg=first.element_handle(), timeout=TIMEOUT)
    page.keyboard.press("g")
    # the first generated token is scrolled into the token box's view
    page.wait_for_function(IN_BOX, arg=first.element_handle(), timeout=TIMEOUT)
    assert page.locator(f".t[data-i='{n_prompt - 1}']").get_attribute("data-mask") == "0"


GENERATED_ON_SCREEN = """() => [...document.querySelectorAll(".t[data-mask='1']")].some(e => {
                            const r = e.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })"""
COVERED = """() => { const s = document.querySelector('#source').getBoundingClientRect();
                       const hit = document.elementFromPoint(s.left + 5, s.top + 5);
                       return !!(hit && hit.closest('.tv.present')); }"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_presentation_at_1024x768(browser, app_url, scheme):
    """A projector: no chrome, big type, every control in the window, generated tokens on the first screen of every turn."""
    ctx = browser.new_context(viewport={"width": 1024, "height": 768}, color_scheme=scheme)
    page = ctx.new_page()
    try:
        open_view(page, app_url)
        page.keyboard.press("p")
        assert page.evaluate("document.body.classList.contains('tv-present')")
        page.wait_for_function(COVERED, timeout=10_000)  # the app's chrome is covered by the view
        assert page.locator(".tv-tokens").evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 24
        inside = page.locator(".tv-toolbar button").evaluate_all(
            "bs => bs.every(b => { const r = b.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= innerWidth; })")
        assert inside, "every toolbar button is in the window (the toolbar wraps rather than scroll or clip)"
        for turn in (1, 2):
            page.keyboard.press("j")
            page.wait_for_function(f"location.search.includes('turn={turn}')")
            page.wait_for_function(GENERATED_ON_SCREEN, timeout=TIMEOUT)  # generated tokens on screen in this turn
            page.screenshot(path=str(SHOTS / f"presentation-{scheme}-1024-turn{turn}.png"))
        assert page.locator(".tv-tokens.untrained").count() == 0  # TRL trains turn 2: no hatch
        page.keyboard.press("Escape")
        assert not page.evaluate(COVERED)
    finally:
        ctx.close()


def test_first_screen_at_1440x900_shows_generated_tokens(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    try:
        open_view(page, app_url)
        page.wait_for_function(GENERATED_ON_SCREEN, timeout=TIMEOUT)
        assert page.evaluate("window.scrollY") == 0
        assert page.locator("[data-testid=summary]").evaluate("e => e.getBoundingClientRect().bottom") < 900
        page.screenshot(path=str(SHOTS / "first-screen-1440x900.png"))
    finally:
        ctx.close()


CONTRAST = r"""(sel) => {
  const lum = (c) => { const [r, g, b] = c.match(/[0-9.]+/g).slice(0, 3).map(Number).map((v) => {
      v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const bg = (e) => { for (; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor;
      if (!/rgba\(.*, 0\)$/.test(c) && c !== 'transparent') return c; } return 'rgb(255, 255, 255)'; };
  return [...document.querySelectorAll(sel)].slice(0, 40).map((e) => {
    const a = lum(getComputedStyle(e).color), b = lum(bg(e));
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); });
}"""


# (luminance + 0.05) of the first matching token's background: context and generated must differ in
# lightness too, so they stay apart in greyscale and for colour-blind readers.
BACKGROUNDS_APART = CONTRAST.replace("return [...document", "return 0.05 + [...document").replace(
    "const a = lum(getComputedStyle(e).color), b = lum(bg(e));\n    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); });",
    "return lum(bg(e)); })[0];")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_contrast_in_both_schemes(browser, app_url, scheme):
    """WCAG 4.5:1 for token text and the view's buttons against their real backgrounds."""
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
    page = ctx.new_page()
    try:
        open_view(page, f"{app_url}/?turn=1")
        assert page.evaluate("document.body.classList.contains('dark')") == (scheme == "dark")
        for sel in (".t[data-mask='0']", ".t[data-mask='1']", ".tv-toolbar button", ".tv-toolbar button.on",
                    ".tv-navitem .tv-nav-h", ".tv-badge", ".tv-boundary", ".tv-legend", ".tv-summary span",
                    "#load", ".tv-chrome-tabs button.selected"):  # the chrome a first visitor reads first
            ratios = page.evaluate(CONTRAST, sel)
            assert ratios and min(ratios) >= 4.5, f"{sel} in {scheme}: {min(ratios or [0]):.2f}"
        # context and generated differ in lightness too, not only in hue
        ctx_bg, gen_bg = (page.evaluate(BACKGROUNDS_APART, s) for s in (".t[data-mask='0']", ".t[data-mask='1']"))
        assert max(ctx_bg, gen_bg) / min(ctx_bg, gen_bg) >= 1.3
        page.screenshot(path=str(SHOTS / f"view-{scheme}-1440.png"))
    finally:
        ctx.close()


def test_export_cli_opens_offline(page, tmp_path):
    out = tmp_path / "rollout.html"
    r = viewer("export", "scripted-smollm2", "-o", str(out))  # the command, in this process
    assert r.returncode == 0, r.stdout + r.stderr
    open_view(page, out.as_uri())
    assert page.locator("[data-testid=nav-turn]").count() == 3
    page.keyboard.press("j")
    page.wait_for_selector(".tv-navitem.active[data-turn='1']")
    page.wait_for_selector(".t[data-i='509']", timeout=TIMEOUT)
    assert page.outside_requests == [] and page.errors == []


def export_from_page(page, what: str = "turn"):
    """Press export, then one of its two choices; the download starts by itself."""
    page.click("[data-testid=export]")
    with page.expect_download(timeout=TIMEOUT) as dl:
        page.click(f"[data-testid=export-{what}]")
    return dl.value


def test_export_button_one_turn(page, app_url, tmp_path):
    open_view(page, f"{app_url}/?turn=1&mode=logprob")
    dl = export_from_page(page, "turn")
    assert page.locator("[data-testid=export-link]").inner_text() == "rollout-305e0809-turn1.html"
    saved = tmp_path / "turn1.html"
    dl.save_as(saved)
    open_view(page, saved.as_uri())
    assert page.locator("[data-testid=nav-turn]").count() == 1
    assert active_turn(page).startswith("turn 1")  # the turn, mode and scope that were on screen
    assert page.locator("[data-mode=logprob].on").count() == 1
    border = page.locator(".tv-table td").first.evaluate("e => getComputedStyle(e).borderTopWidth")
    assert border == "1px"  # tables keep their borders outside the app
    page.click("[data-scope=full]")
    page.wait_for_selector(".t[data-i='0']", timeout=TIMEOUT)
    assert page.outside_requests == []


def test_upload_zip(page, app_url, tmp_path):
    open_view(page, app_url)
    page.set_input_files(".tv-sourcebar input[type=file]", str(zip_folder(EXAMPLE, tmp_path / "rollout.zip")))
    page.wait_for_function("location.search.includes('turn=0') && location.search.includes('src=upload')", timeout=TIMEOUT)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    assert page.locator("[data-testid=nav-turn]").count() == 3


def test_malformed_artifact_shows_message(page, app_url, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLE, bad)
    data = json.loads((bad / "turns.json").read_text())
    data["turns"][1]["mask"] = data["turns"][1]["mask"][:-3]
    (bad / "turns.json").write_text(json.dumps(data))
    open_view(page, app_url)
    page.set_input_files(".tv-sourcebar input[type=file]", str(zip_folder(bad, tmp_path / "bad.zip")))
    err = page.locator(".tv-error")
    err.wait_for(timeout=TIMEOUT)
    text = err.inner_text()
    assert "turns.json, turn 1, field `mask`" in text and "Traceback" not in page.content()


PAYLOADS = ["<script>window.__pwned = 1</script>", "<img src=x onerror=\"window.__pwned = 2\">",
            "[x](javascript:window.__pwned=3) ![i](http://example.invalid/i.png)"]


def hostile_artifact(tmp_path: Path, tokenizer) -> Path:
    """The example with attack strings in model output, tool output, instruction, tests and labels."""
    a = open_artifact("scripted-smollm2")
    evil = " ".join(PAYLOADS)
    trace = json.loads((a.root / "trace.json").read_text())["turns"]
    for e in trace:
        for m in e["request"]["messages"]:
            if m["role"] == "tool":
                m["content"] = evil
        for tc in e["response"]["choices"][0]["message"].get("tool_calls") or []:
            tc["function"]["arguments"] = json.dumps({"command": evil})
    t0 = a.turns[0]
    out = np.asarray(tokenizer.encode(evil, add_special_tokens=False), np.int32)
    import dataclasses
    turns = [dataclasses.replace(t0, output_ids=out, logprobs=np.full(out.size, -1.0),
                                 mask=np.concatenate([t0.mask[: t0.n_prompt], np.ones(out.size, np.int8)]))] + a.turns[1:]
    for e in trace:
        if e["metadata"]["node_id"] == "call-1":
            e["completion_token_ids"], e["per_token_logps"] = out.tolist(), [-1.0] * out.size
            e["loss_mask"] = [0] * t0.n_prompt + [1] * out.size
    import msgspec

    from rollout_trace.artifact import Task, TestCase
    summary = msgspec.structs.replace(a.summary, produced_by=evil, model="evil/" + PAYLOADS[1][:20])
    task = Task(a.task.task_id, 0, a.task.instruction + "\n\n" + evil)
    summary = msgspec.structs.replace(summary, task_id=task.task_id)
    held = [TestCase(evil, evil)] + a.held_out_tests[1:]
    dest = tmp_path / "hostile"
    write_artifact(dest, summary=summary, turns=turns, task=task, visible_tests=evil, held_out_tests=held,
                   trace_entries=trace, test_results=a.test_results, solution=a.solution, tokenizer=tokenizer)
    return dest


def test_hostile_artifact_renders_as_text(page, app_url, tmp_path, hf_tokenizer):
    folder = hostile_artifact(tmp_path, hf_tokenizer)
    open_view(page, app_url)
    page.set_input_files(".tv-sourcebar input[type=file]", str(zip_folder(folder, tmp_path / "hostile.zip")))
    page.wait_for_selector("text=evil/", timeout=TIMEOUT)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    page.click("summary:has-text('instruction')")
    page.keyboard.press("j")
    page.wait_for_selector(".tv-navitem.active[data-turn='1']")
    # a broken image of our own, added after the hostile ones: once its onerror ran, theirs would have
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<img id=control src=x onerror=\"window.__control = 1\">')")
    page.wait_for_function("window.__control === 1", timeout=TIMEOUT)
    assert page.evaluate("window.__pwned") is None
    body = page.locator(".tv").inner_text()
    assert "<script>window.__pwned = 1</script>" in body  # shown as text
    assert page.locator(".tv img").count() == 0 and page.locator(".tv script").count() == 0
    assert page.locator(".tv a[href^='javascript']").count() == 0
    assert page.outside_requests == [] and page.errors == []


def test_public_mode_refuses_server_paths(browser, tmp_path):
    demo, url = launch_app(public=True)
    page = browser.new_page()
    try:
        page.goto(f"{url}/?src={EXAMPLE}")
        err = page.locator(".tv-error")
        err.wait_for(timeout=TIMEOUT)
        assert "neither a bundled example nor a Hub dataset id" in err.inner_text()
        page.screenshot(path=str(SHOTS / "public_mode_refuses_paths.png"))
        page.goto(f"{url}/?src=scripted-smollm2")
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    finally:  # the page told what it heard first (a failure's report), then closed before its app
        page.close()
        demo.close()


def test_a_crowd_does_not_break_an_open_page(browser, app_url, tmp_path):
    """Other visitors' page loads used to push an open page's rollout out of the server."""
    first = browser.new_context(viewport={"width": 1400, "height": 900})
    page = first.new_page()
    try:
        open_view(page, f"{app_url}/?turn=1")
        others = []
        for k in range(10):  # ten visitors, half of them on other sources (each its own identity), all open at
            folder = tmp_path / f"copy{k}"  # once: more pages than one profile has connections to a server
            if k % 2:
                shutil.copytree(EXAMPLE, folder)
            ctx = browser.isolated_context()
            p = ctx.new_page()
            open_view(p, f"{app_url}/?src={folder}" if k % 2 else app_url)
            others.append(ctx)
        for ctx in others:
            ctx.close()
        page.click("[data-scope=full]")
        page.wait_for_selector(".t[data-i='0']", timeout=TIMEOUT)
        page.click("[data-scope=row]")
        page.wait_for_selector(".tv-rowbar button[data-row]", timeout=TIMEOUT)
        assert page.locator(".tv-err").count() == 0 and "no longer loaded" not in page.content()
    finally:
        first.close()


def test_a_rollout_without_agent_turns_shows_a_message(page, app_url, tmp_path):
    dest = artifact_without_turns(tmp_path / "empty")
    page.goto(f"{app_url}/?src={dest}")
    page.wait_for_selector("[data-testid=no-turns]", timeout=TIMEOUT)
    assert "no agent turn" in page.locator("[data-testid=no-turns]").inner_text()
    assert page.locator("[data-testid=held-out-test]").count() == 5 and page.errors == []


# Text on a logprob-coloured token: its translucent red composited over the pane's background, as the screen shows it;
# and the whitespace markers inside them, their opacity blended in. {text: ratios, marks: ratios}
LOGPROB_CONTRAST = r"""(alpha) => {
  const rgba = (c) => { const v = c.match(/[0-9.]+/g).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const ratio = (x, y) => (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  const pane = rgba(getComputedStyle(document.querySelector('.tv-tokens')).backgroundColor);
  const shown = (e) => {  // the token's background as composited over the pane
    if (alpha !== null) e.style.setProperty('--a', String(alpha));
    const [r, g, b, a] = rgba(getComputedStyle(e).backgroundColor);
    return [0, 1, 2].map((k) => [r, g, b][k] * a + pane[k] * (1 - a)); };
  const text = [...document.querySelectorAll('.tv-tokens .t[style]')].slice(0, 60)
    .map((e) => ratio(lum(rgba(getComputedStyle(e).color)), lum(shown(e))));
  const marks = [...document.querySelectorAll('.tv-tokens .t[style] .ws')].slice(0, 60).map((m) => {
    const back = shown(m.closest('.t'));
    const [cr, cg, cb, ca] = rgba(getComputedStyle(m).color), o = Number(getComputedStyle(m).opacity) * ca;
    return ratio(lum([cr, cg, cb].map((v, k) => v * o + back[k] * (1 - o))), lum(back)); });
  return {text, marks};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_logprob_mode_keeps_contrast(browser, app_url, scheme):
    """Token text on the logprob colours keeps 4.5:1 in both schemes, at the real logprobs and at both ends of the
    scale (p ≈ 1: alpha 0.08, p ≈ 0: alpha 0.93, format.js lpAlpha's range)."""
    ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
    page = ctx.new_page()
    try:
        open_view(page, f"{app_url}/?turn=1&mode=logprob")
        page.wait_for_selector(".tv-tokens .t[style]", timeout=TIMEOUT)
        for alpha in (None, 0.93, 0.08):
            got = page.evaluate(LOGPROB_CONTRAST, alpha)
            ratios, marks = got["text"], got["marks"]
            assert ratios and min(ratios) >= 4.5, f"alpha {alpha} in {scheme}: {min(ratios):.2f}"
            # a space's or a newline's marker is a graphic: 3:1 (WCAG's non-text contrast), on the strongest red too
            assert marks and min(marks) >= 3, f"whitespace marks at alpha {alpha} in {scheme}: {min(marks):.2f}"
        page.screenshot(path=str(SHOTS / f"logprob-strongest-{scheme}.png"))
    finally:
        ctx.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", [(1024, 768), (1280, 720), (1440, 900)])
def test_presentation_shows_the_drift_whole(browser, app_url, scheme, size):
    """On a projector the drift banner keeps its before/after and its cause, and mask mode marks the drifted
    tokens (the speaker need not press m)."""
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme)
    page = ctx.new_page()
    try:
        open_view(page, f"{app_url}/?turn=1")
        assert page.locator(".tv-present-btn").inner_text() == "present"
        page.keyboard.press("p")
        page.wait_for_selector(".tv.present", timeout=TIMEOUT)
        assert page.locator(".tv-present-btn").inner_text() == "leave (Esc)"  # the way out, on screen
        banner = page.locator(".tv-boundary.drift")
        said = banner.inner_text()
        assert "TURN 0 HAD" in said.upper() and "TURN 1'S PROMPT HAS" in said.upper() and "likely cause: whitespace" in said
        for part in (".tv-sides", ".tv-cause"):
            assert banner.locator(part).is_visible(), part
        assert page.locator("[data-mode=mask].on").count() == 1
        marked = page.locator(".tv-tokens .t.dmark")
        marked.first.wait_for(timeout=TIMEOUT)
        assert marked.first.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
        assert "rewritten at the turn boundary (drift)" in page.locator(".tv-legend").inner_text()
        # the toolbar stays on one line, the tokens keep most of the screen
        rows = page.locator(".tv-toolbar > *").evaluate_all("es => new Set(es.filter(e => e.offsetParent).map(e => Math.round(e.getBoundingClientRect().top))).size")
        assert rows == 1, "the presentation toolbar wraps"
        assert page.locator(".tv-tokens").evaluate("e => e.getBoundingClientRect().height") >= 0.4 * size[1]
        page.screenshot(path=str(SHOTS / f"present-drift-{size[0]}x{size[1]}-{scheme}.png"))
        page.keyboard.press("p")
        page.wait_for_selector(".tv:not(.present)")
        assert page.locator(".tv-tokens .t.dmark").count() > 0  # on the page too, not only in presentation
    finally:
        ctx.close()


def test_held_out_inputs_are_shown_as_the_program_reads_them(page, app_url):
    """stdin keeps its lines: a long line scrolls sideways rather than wrapping into lines the program never reads."""
    open_view(page, app_url)
    cell = page.locator("[data-testid=held-out-test] td:nth-child(2) pre").first
    cell.scroll_into_view_if_needed()
    assert cell.evaluate("e => getComputedStyle(e).whiteSpace") == "pre"
    lines = cell.inner_text().split("\n")
    height = cell.evaluate("e => e.clientHeight")
    line_h = cell.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || parseFloat(getComputedStyle(e).fontSize) * 1.2")
    assert height <= (len([x for x in lines if x]) + 1) * line_h + 16, "no wrapped line"
    assert "stdin" in page.locator(".tv-heldout th").nth(1).inner_text()


def test_first_screen_says_what_this_is_and_what_to_try(page, app_url):
    """One sentence, three first clicks (the drifting turn, a group, the run page) and every source described."""
    open_view(page, app_url)
    intro = page.locator("#intro").inner_text()
    assert "token by token, exactly as RL training" in intro
    for tid, want in (("try-drift", "src=scripted-smollm2&turn=1&mode=drift"), ("try-group", "src=smollm2-group"),
                      ("try-run", "src=trl-run")):
        assert want in page.locator(f"[data-testid={tid}]").get_attribute("href")
    page.click("#source input")
    options = page.locator("[role=option]").all_inner_texts()
    assert any(o.startswith("trl-run") and "run page" in o for o in options), options
    assert all(" · " in o for o in options), options
    page.keyboard.press("Escape")
    page.click("[data-testid=try-run]")
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    assert "src=trl-run" in page.url and page.errors == []


def test_a_link_value_the_view_cannot_use_is_named(page, app_url):
    """scope=rows is not a scope: the view opens on the default scope and says which value it replaced."""
    open_view(page, f"{app_url}/?src=scripted-smollm2&turn=1&scope=rows")
    note = page.locator("[data-testid=export-note]")
    note.wait_for(timeout=TIMEOUT)
    assert "scope must be one of new, full, row; using new" in note.inner_text()
    assert page.locator("[data-scope=new].on").count() == 1 and active_turn(page).startswith("turn 1")
    open_view(page, f"{app_url}/?src=scripted-smollm2&turn=1")
    assert page.locator("[data-testid=export-note]").is_hidden()  # a good link says nothing


@pytest.mark.parametrize("src,extra,ready,what", [
    ("scripted-smollm2", {}, ".tv-tokens .t", "rollout"),
    ("trl-run", {}, "[data-testid=run-versions]", "run"),
    ("smollm2-group", {}, ".ci[data-mode=group]", "group"),
    ("smollm2-group", {"rollout": 1}, ".tv-tokens .t", "rollout"),
    (str(ROOT / "examples"), {}, ".ci[data-mode=index]", "index"),
])
def test_the_title_line_says_what_this_page_is(page, app_url, src, extra, ready, what):
    """The title line's sentence is the page's: a rollout's token view, the run page, a group's map, the index."""
    from support import pages

    page.goto(pages.url_of(app_url, src, **extra))
    page.wait_for_selector(ready, timeout=TIMEOUT)
    shown = page.locator("#intro [data-testid=page-what]:visible")
    assert shown.count() == 1 and shown.get_attribute("data-page") == what
    if what != "rollout":
        assert "token by token, exactly as RL training" not in page.locator("#intro").inner_text()
    if what in ("run", "index"):
        pages.shots(page, f"title-line-{what}")
    assert page.errors == []


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_scripted_examples_caveat_reads_whole_on_the_first_screen(page, app_url, width):
    """How the rollout was made ("Scripted rollout, not sampled from a model: …") is the first thing to know about
    it: its sentences are whole within three lines at 1024 wide, never cut after a few words."""
    page.set_viewport_size({"width": width, "height": 768})
    open_view(page, app_url)
    summary = page.locator(".tv-produced summary")
    box = summary.bounding_box()
    lines = summary.evaluate("s => Math.round(s.getBoundingClientRect().height / parseFloat(getComputedStyle(s).lineHeight))")
    shown = summary.evaluate("s => s.scrollHeight <= s.clientHeight + 1")  # nothing clamped away
    assert box and box["y"] + box["height"] <= 768 and lines <= 3
    assert summary.inner_text().startswith("Scripted rollout, not sampled from a model") and shown
