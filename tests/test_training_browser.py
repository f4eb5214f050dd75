"""What TRL trains, as a person meets it in the browser: the default example's headline, pills, row scope
and the note where the original capture script disagrees; an older-proxy capture's hatched turn and its
rule. Light and dark, 1440x900 and 1024x768 (screenshots in tests/screenshots)."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import SHOTS
from rollout_trace.artifact.sources import EXAMPLES_DIR

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
SIZES = [(1440, 900), (1024, 768)]


def _page(browser, size, scheme):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, color_scheme=scheme)
    return ctx, ctx.new_page()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_default_example_shows_what_trl_trains(browser, app_url, size, scheme):
    ctx, page = _page(browser, size, scheme)
    try:
        page.goto(f"{app_url}/?turn=2")
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        assert "3 of 3 turns trained by TRL" in page.locator("[data-testid=summary]").inner_text()
        assert "3 trained by TRL 1.16.0" in page.locator("[data-testid=counts]").inner_text()
        pills = page.locator(".tv-navitem .tv-pill").all_inner_texts()
        assert pills == ["trained", "trained", "trained"]
        # the pill says how many tokens, and where the capture script disagrees
        assert "17 of 17 generated tokens trained; the original capture script marks this turn untrained" in \
            page.locator(".tv-navitem .tv-pill").nth(2).get_attribute("title")
        badge = page.locator("[data-testid=trained-disagree]")
        assert badge.count() == 1 and badge.inner_text() == "TRL trains turn 2; the original capture script would not (no tool call)"
        assert "TRL 1.16.0 trains its 17 generated tokens" in badge.get_attribute("title")
        note = page.locator("[data-testid=trained-note]")
        assert note.is_visible() and "TRL 1.16.0 trains 17 of this turn's 17 generated tokens" in note.inner_text()
        assert page.locator(".tv-tokens.untrained").count() == 0
        page.screenshot(path=str(SHOTS / f"trained-turn2-{scheme}-{size[0]}.png"))
        page.click("[data-scope=row]")
        page.wait_for_selector(".tv-rowbar button[data-row]", timeout=TIMEOUT)
        assert "2 training rows" in page.locator(".tv-rowbar").inner_text()
        assert "OpenEnv's loss mask over every call of the training trace" in \
            page.locator("[data-testid=training-rule]").inner_text()
        page.click("[data-row='1']")
        page.wait_for_function("document.querySelectorAll('.tv-navitem.active').length === 2")
        assert "turns 1, 2" in page.locator(".tv-turn-title").inner_text()
        # row 1 trains turn 1's 51 and turn 2's 17 generated tokens
        assert "68" in page.locator(".tv-training table").inner_text()
        page.screenshot(path=str(SHOTS / f"trained-rows-{scheme}-{size[0]}.png"))
        assert page.errors == [] if hasattr(page, "errors") else True
    finally:
        ctx.close()


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    """The example as the older in-sandbox proxy would have recorded it: no engine ids, no loss mask."""
    dest = tmp_path_factory.mktemp("legacy") / "older-proxy"
    shutil.copytree(EXAMPLES_DIR / "scripted-smollm2", dest)
    trace = json.loads((dest / "trace.json").read_text())
    for e in trace["turns"]:
        e.pop("prompt_token_ids"), e.pop("loss_mask")
    (dest / "trace.json").write_text(json.dumps(trace))
    turns = json.loads((dest / "turns.json").read_text())
    for t in turns["turns"]:
        t["prompt_source"] = "retokenized"
        t.pop("retokenized_prompt_ids", None)
    (dest / "turns.json").write_text(json.dumps(turns))
    summary = json.loads((dest / "summary.json").read_text())
    summary.pop("trl_training")
    (dest / "summary.json").write_text(json.dumps(summary))
    return dest


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_an_older_proxy_capture_follows_the_capture_scripts_rule_and_says_so(browser, app_url, legacy, scheme):
    ctx, page = _page(browser, (1024, 768), scheme)
    try:
        page.goto(f"{app_url}/?src={legacy}&turn=2")
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        assert "2 of 3 turns trained (the capture script's rule)" in page.locator("[data-testid=summary]").inner_text()
        assert page.locator(".tv-navitem .tv-pill").all_inner_texts() == ["trained", "trained", "not trained"]
        assert page.locator(".tv-tokens.untrained").count() == 1  # hatched: no token of it is trained
        assert page.locator("[data-testid=trained-note]").count() == 0
        assert any("older in-sandbox proxy" in n for n in page.locator(".tv-notices li").all_inner_texts())
        page.screenshot(path=str(SHOTS / f"trained-older-proxy-{scheme}-1024.png"))
        page.click("[data-scope=row]")
        page.wait_for_selector("[data-testid=training-rule]", timeout=TIMEOUT)
        assert "older in-sandbox proxy" in page.locator("[data-testid=training-rule]").inner_text()
    finally:
        ctx.close()


def test_the_training_rows_open_on_the_turns_row_and_give_its_mode_back(page, app_url):
    """`s` into the training rows from turn 2 opens the row that trains turn 2 (not row 0), and `s` out of them
    gives back the drift mode they have not (shown as mask there), on the same turn."""
    page.goto(f"{app_url}/?turn=2&mode=drift")
    page.wait_for_function("document.querySelector('.tv-tokens') && document.querySelector('.tv-tokens').dataset.paint === 'drift'",
                           timeout=TIMEOUT)
    page.locator(".tv-tokens").click()
    for _ in range(len(page.locator(".tv-toolbar [data-scope]").all()) - 1):  # the scopes in order: rows last
        page.keyboard.press("s")
    page.wait_for_selector(".tv-rowbar button[data-row='1'][aria-pressed=true]", timeout=TIMEOUT)
    assert "turns 1, 2" in page.locator(".tv-turn-title").inner_text()
    page.keyboard.press("s")  # out of the rows: the first scope again
    page.wait_for_function("document.querySelector('.tv-tokens').dataset.paint === 'drift'", timeout=TIMEOUT)
    assert page.locator(".tv-turn-title").inner_text().startswith("turn 2")
    assert page.locator(".tv-rowbar").is_hidden()
    assert page.errors == []
