"""The Capture tab in a real browser: fill the form, check the endpoint, capture through the real
opencode and proxy against the scripted server, watch progress, land in the View tab; cancel midway;
and the public-Space mode with capture off."""

from __future__ import annotations

import pytest

from conftest import SHOTS, launch_app

pytestmark = [pytest.mark.browser, pytest.mark.capture]
TIMEOUT = 180_000


@pytest.fixture
def capture_app(tmp_path, monkeypatch):
    monkeypatch.setenv("ROLLOUT_VIEWER_CAPTURE_DIR", str(tmp_path / "captures"))
    demo, url = launch_app()
    yield url, tmp_path / "captures"
    demo.close()


def fill(page, elem_id: str, value: str) -> None:
    page.locator(f"#{elem_id} textarea, #{elem_id} input").first.fill(value)


def fill_form(page, llm, task_file, tokenizer_dir) -> None:
    page.click("#capture-tab-button, button[role=tab]:has-text('Capture')")
    page.locator("#cap-backend label:has-text('local')").click()
    fill(page, "cap-model", "scripted-model")
    fill(page, "cap-endpoint", llm.url)
    fill(page, "cap-dataset", str(task_file))
    fill(page, "cap-tokenizer", str(tokenizer_dir))
    fill(page, "cap-n", "1")
    fill(page, "cap-timeout", "120")


def test_capture_through_the_tab(page, capture_app, scripted_llm, task_file, tokenizer_dir):
    url, captures = capture_app
    llm = scripted_llm()
    page.goto(url)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    fill_form(page, llm, task_file, tokenizer_dir)
    page.click("#cap-preview")
    preview = page.locator("[data-testid=task-preview]")
    preview.wait_for(timeout=TIMEOUT)
    assert "distinct values" in preview.inner_text() and "3 held-out tests" in preview.inner_text()
    page.click("#cap-check")
    verdict = page.locator("[data-testid=endpoint-verdict]")
    verdict.wait_for(timeout=TIMEOUT)
    assert "Ready" in verdict.inner_text() and "token ids: yes" in verdict.inner_text()
    page.click("#cap-run")
    page.wait_for_function("document.querySelector('#cap-log textarea') && "
                           "document.querySelector('#cap-log textarea').value.includes('model call 1')", timeout=TIMEOUT)
    page.screenshot(path=str(SHOTS / "capture_running.png"), full_page=True)
    # on success the View tab opens the new artifact
    page.wait_for_selector("#view-tab .tv-navitem", timeout=TIMEOUT)
    page.wait_for_selector("#view-tab .t[data-mask]", timeout=TIMEOUT)
    assert page.locator("[data-testid=nav-turn]").count() == 3
    assert "scripted-model" in page.locator(".tv-model").inner_text()
    page.screenshot(path=str(SHOTS / "capture_landed_in_view.png"), full_page=True)
    [folder] = list(captures.iterdir())
    assert (folder / "turns.json").is_file()
    assert page.locator("#source input").input_value() == str(folder)  # the source names the new artifact
    page.click("button[role=tab]:has-text('Capture')")
    status = page.locator("[data-testid=capture-status]").inner_text()
    assert status.startswith("done") and "3 agent turn(s)" in status
    assert page.locator("#cap-download a").count() >= 1


def test_cancel_midway_leaves_nothing(page, capture_app, scripted_llm, task_file, tokenizer_dir):
    url, captures = capture_app
    llm = scripted_llm(delay_s=60.0, slow_after=1)
    page.goto(url)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    fill_form(page, llm, task_file, tokenizer_dir)
    page.click("#cap-run")
    page.wait_for_function("document.querySelector('#cap-log textarea').value.includes('tool write')", timeout=TIMEOUT)
    page.click("#cap-cancel")
    page.wait_for_function("document.querySelector('[data-testid=capture-status]') && "
                           "document.querySelector('[data-testid=capture-status]').innerText.startsWith('cancelled')",
                           timeout=TIMEOUT)
    page.screenshot(path=str(SHOTS / "capture_cancelled.png"), full_page=True)
    assert not captures.exists() or not any(captures.iterdir())


def test_public_space_has_capture_off(browser, monkeypatch):
    monkeypatch.delenv("ROLLOUT_VIEWER_ENABLE_CAPTURE", raising=False)
    demo, url = launch_app(public=True)
    try:
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        page.click("button[role=tab]:has-text('Capture')")
        note = page.locator("#capture-disabled")
        note.wait_for(timeout=TIMEOUT)
        assert "Capture is off on this server" in note.inner_text()
        assert page.locator("#cap-run").count() == 0
        page.screenshot(path=str(SHOTS / "capture_public_off.png"), full_page=True)
        page.close()
    finally:
        demo.close()
