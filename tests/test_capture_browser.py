"""The Capture tab in a real browser: cancel midway; the form's fields and messages; the form fetched when the
tab is first opened; and the public-Space mode with capture off. A whole capture through the tab (preview,
endpoint check, progress, landing in the View tab) is test_live_view_browser's first test, which watches it live."""

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


def assert_capture_off(page, timeout: int = TIMEOUT) -> None:
    """The Capture tab of a public server without ROLLOUT_VIEWER_ENABLE_CAPTURE: a note, no run button."""
    page.click("button[role=tab]:has-text('Capture')")
    note = page.locator("#capture-disabled")
    note.wait_for(timeout=timeout)
    said = note.inner_text()  # a visitor's reason, not an operator's switch
    assert "Capture is closed on this" in said and "python -m capture" in said and "ROLLOUT_VIEWER" not in said
    assert page.locator("#cap-run").count() == 0


# Resolves once the page has drawn two frames: an answer received before it is applied (Gradio updates its
# components in the microtasks after the response) and painted by then.
TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def is_capture_tab_opening(response) -> bool:
    """The answer to the Capture tab's select event (viewer/ui/deferred_tab.py's first_opening)."""
    body = response.request.post_data or ""
    return response.url.endswith("/gradio_api/run/predict") and '"value":"Capture"' in body


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


def test_cancel_midway_leaves_nothing(page, capture_app, scripted_llm, task_file, tokenizer_dir):
    url, captures = capture_app
    llm = scripted_llm(delay_s=60.0, slow_after=1)
    page.goto(url)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    fill_form(page, llm, task_file, tokenizer_dir)
    page.click("#cap-run")
    page.wait_for_function("document.querySelector('#cap-log textarea').value.includes('tool write')", timeout=TIMEOUT)
    # the View tab comes to the front with the first turn, which a busy machine may say after the log line
    page.wait_for_selector("button[role=tab][aria-selected=true]:has-text('View')", timeout=TIMEOUT)
    page.click("button[role=tab]:has-text('Capture')")
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
        assert_capture_off(page)
        page.screenshot(path=str(SHOTS / "capture_public_off.png"), full_page=True)
        page.close()
    finally:
        demo.close()


SCREENS = [((1440, 900), "light"), ((1440, 900), "dark"), ((1024, 768), "light"), ((1024, 768), "dark")]


def test_backend_fields_and_form_messages(browser, capture_app):
    """Only the chosen backend's fields show; the local backend says what it is; a missing required
    field is named by its label before anything starts. At both sizes, in light and dark."""
    from playwright.sync_api import expect

    url, captures = capture_app
    for (width, height), scheme in SCREENS:
        ctx = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
        page = ctx.new_page()
        try:
            page.goto(url)
            page.click("button[role=tab]:has-text('Capture')")
            page.wait_for_selector("#cap-backend", timeout=TIMEOUT)
            assert "Model *" in page.locator("#cap-model").inner_text()  # required fields are marked
            # hf-sandbox (the library's default): its image and flavor show, the local note does not
            expect(page.locator("#cap-image")).to_be_visible()
            expect(page.locator("#cap-flavor")).to_be_visible()
            expect(page.locator("#cap-local-note")).to_be_hidden()
            page.locator("#cap-backend label:has-text('local')").click()
            expect(page.locator("#cap-image")).to_be_hidden()
            expect(page.locator("#cap-flavor")).to_be_hidden()
            expect(page.locator("#cap-local-note")).to_be_visible()
            assert "run on this machine, as the user running this app" in page.locator("#cap-local-note").inner_text()
            # a problem is said beside its own field (Gradio's validator), and nothing runs
            page.click("#cap-run")
            said = page.locator("#cap-endpoint div.validation-error")
            said.wait_for(timeout=TIMEOUT)
            assert "Endpoint URL is required with the local backend" in said.inner_text()
            assert "--" not in said.inner_text()
            assert page.locator("[data-testid=capture-status]").count() == 0
            box, field = page.locator("#cap-endpoint").bounding_box(), said.bounding_box()
            assert box and field and box["y"] <= field["y"] <= box["y"] + box["height"]  # inside the field's box
            # the task's own fields, checked by Preview beside them
            fill(page, "cap-n", "1")
            fill(page, "cap-index", "5")
            page.click("#cap-preview")
            index_said = page.locator("#cap-index div.validation-error")
            index_said.wait_for(timeout=TIMEOUT)
            assert "Task index must be from 0 to 0" in index_said.inner_text()
            assert page.locator("#cap-endpoint div.validation-error").count() == 0  # Preview reads no endpoint
            page.screenshot(path=str(SHOTS / f"capture_form_fields_{width}x{height}_{scheme}.png"))
            page.screenshot(path=str(SHOTS / f"capture_form_local_{width}x{height}_{scheme}.png"), full_page=True)
            page.locator("#cap-backend label:has-text('hf-sandbox')").click()
            expect(page.locator("#cap-image")).to_be_visible()
            expect(page.locator("#cap-local-note")).to_be_hidden()
        finally:
            ctx.close()
    assert not captures.exists()  # no capture started


def test_the_form_is_fetched_when_the_tab_is_first_opened(page, capture_app):
    """The page opens on View without the Capture form's component code (viewer/ui/deferred_tab.py); the first
    opening of the tab fetches it and shows the form; a later opening keeps what the form's own events hid."""
    from playwright.sync_api import expect

    url, _ = capture_app
    page.goto(url)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    scripts = "() => performance.getEntriesByType('resource').filter(e => e.name.endsWith('.js')).length"
    tabs = "els => els.map(e => e.innerText.trim())"
    assert page.eval_on_selector_all("button[role=tab]", tabs) == ["Capture", "View"]  # the deferral adds no tab
    before = page.evaluate(scripts)
    assert page.locator("#cap-status").count() == 0  # not mounted: a gr.HTML is deferred like the rest
    page.click("button[role=tab]:has-text('Capture')")
    expect(page.locator("#cap-model textarea, #cap-model input").first).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#cap-n input")).to_be_visible()  # a Number: a component type the View tab has not
    assert page.evaluate(scripts) > before  # its code came only now
    page.locator("#cap-backend label:has-text('local')").click()
    expect(page.locator("#cap-local-note")).to_be_visible()
    page.locator("#cap-backend label:has-text('hf-sandbox')").click()
    expect(page.locator("#cap-local-note")).to_be_hidden()
    page.click("button[role=tab]:has-text('View')")
    with page.expect_response(is_capture_tab_opening, timeout=TIMEOUT) as opening:
        page.click("button[role=tab]:has-text('Capture')")
    opening.value.finished()
    page.evaluate(TWO_FRAMES)  # its answer is applied: what it would show again is on screen by now
    expect(page.locator("#cap-image")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#cap-local-note")).to_be_hidden()  # the backend's choice stands
    assert page.eval_on_selector_all("button[role=tab]", tabs) == ["Capture", "View"]
    assert page.errors == []


def test_public_capture_form_names_no_path(browser, monkeypatch):
    """A public app with capture on: a password field, no backend choice, no training script, and the
    dataset a fixed list."""
    monkeypatch.setenv("ROLLOUT_VIEWER_ENABLE_CAPTURE", "1")
    monkeypatch.setenv("ROLLOUT_VIEWER_CAPTURE_SECRET", "pw-for-the-test")
    demo, url = launch_app(public=True)
    try:
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(url)
        page.click("button[role=tab]:has-text('Capture')")
        page.wait_for_selector("#cap-secret", timeout=TIMEOUT)
        assert page.locator("#cap-backend").count() == 0 and page.locator("#cap-example").count() == 0
        page.fill("#cap-secret input", "wrong")
        page.click("#cap-preview")
        box = page.locator("[data-testid=task-preview]")
        box.wait_for(timeout=TIMEOUT)
        assert "Not allowed" in box.inner_text() and "capture password" in box.inner_text()
        page.screenshot(path=str(SHOTS / "capture_public_gate.png"), full_page=True)
        page.close()
    finally:
        demo.close()
