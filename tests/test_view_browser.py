"""The View tab in a real browser: loading, keyboard, deep links, modes and scopes, presentation,
export, upload, malformed input, and hostile artifacts rendered as inert text."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from artifact import open_artifact, write_artifact
from conftest import EXAMPLE, ROOT, SHOTS, launch_app

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
    assert "1 of 2 boundaries drift" in page.locator("[data-testid=continuity]").inner_text()
    assert page.locator(".t[data-mask='1']").count() > 0 and page.locator(".t[data-mask='0']").count() > 0
    assert page.locator("[data-testid=held-out-test]").count() == 5
    assert page.locator("[data-testid=reward-step]").count() == 5
    assert page.outside_requests == [] and page.errors == []


def test_keyboard_steps_through_turns(page, app_url):
    open_view(page, app_url)
    page.keyboard.press("j")
    page.wait_for_function("location.search.includes('turn=1')")
    assert active_turn(page).startswith("turn 1")
    assert "drift at position 509" in page.locator(".tv-boundary-box").inner_text()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("location.search.includes('turn=2')")
    assert "not trained" in page.locator(".tv-turn-title").inner_text()
    assert page.locator(".tv-tokens.untrained").count() == 1
    page.keyboard.press("k")
    page.wait_for_function("location.search.includes('turn=1')")
    page.keyboard.press("?")
    assert "jump to the generated tokens" in page.locator(".tv-help").inner_text()
    assert page.locator(".tv-help").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator(".tv-help").is_visible()


def test_deep_link_restores_view(page, app_url):
    open_view(page, f"{app_url}/?src=scripted-smollm2&turn=2&mode=logprob&scope=full")
    assert active_turn(page).startswith("turn 2")
    assert page.locator("[data-mode=logprob].on").count() == 1 and page.locator("[data-scope=full].on").count() == 1
    assert page.locator(".t[data-i='0']").count() == 1  # full context starts at position 0
    # prompt positions have no logprob: drawn as missing, never as p = 1
    assert page.locator(".t[data-mask='0'].nolp").count() > 0
    styled = page.locator(".t[data-mask='1']").first.get_attribute("style")
    assert styled and "background" in styled


def test_modes_scopes_and_hover(page, app_url):
    open_view(page, f"{app_url}/?turn=1")
    page.click("[data-mode=drift]")
    assert page.locator(".t.d-rewritten").count() > 0 and page.locator(".t.d-out").count() > 0
    page.keyboard.press("m")  # drift -> mask
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
    assert "2 training row(s)" in page.locator(".tv-rowbar").inner_text()
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)


def test_jump_to_generated_tokens(page, app_url):
    open_view(page, f"{app_url}/?src=smollm2-offline")
    n_prompt = 4392
    assert page.locator(f".t[data-i='{n_prompt}']").count() == 0  # the output is far below the first chunk
    page.keyboard.press("g")
    first = page.locator(f".t[data-i='{n_prompt}']")
    first.wait_for(timeout=TIMEOUT)
    assert first.get_attribute("data-mask") == "1"
    page.wait_for_timeout(400)
    inside = first.evaluate("""e => { const b = e.closest('.tv-tokens').getBoundingClientRect(),
                                      r = e.getBoundingClientRect(); return r.top >= b.top && r.bottom <= b.bottom; }""")
    assert inside, "the first generated token is scrolled into the token box's view"
    assert page.locator(f".t[data-i='{n_prompt - 1}']").get_attribute("data-mask") == "0"


def test_presentation_mode(page, app_url):
    open_view(page, f"{app_url}/?turn=1")
    page.keyboard.press("p")
    assert page.evaluate("document.body.classList.contains('tv-present')")
    assert not page.locator("#source").is_visible()
    size = page.locator(".tv-tokens").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert size >= 24
    page.screenshot(path=str(SHOTS / "presentation.png"))
    page.keyboard.press("Escape")
    assert page.locator("#source").is_visible()


def test_export_cli_opens_offline(page, tmp_path):
    out = tmp_path / "rollout.html"
    r = subprocess.run([sys.executable, "-m", "viewer", "export", "scripted-smollm2", "-o", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    open_view(page, out.as_uri())
    assert page.locator("[data-testid=nav-turn]").count() == 3
    page.keyboard.press("j")
    page.wait_for_selector(".tv-navitem.active[data-turn='1']")
    page.wait_for_selector(".t[data-i='509']", timeout=TIMEOUT)
    assert page.outside_requests == [] and page.errors == []


def test_export_button_one_turn(page, app_url, tmp_path):
    open_view(page, app_url)
    page.click("text=Export a self-contained HTML file")
    page.fill("#export-turn textarea, #export-turn input", "1")
    page.click("#export")
    link = page.locator("#export-file a").first
    link.wait_for(timeout=TIMEOUT)
    with page.expect_download() as dl:
        link.click()
    saved = tmp_path / "turn1.html"
    dl.value.save_as(saved)
    open_view(page, saved.as_uri())
    assert page.locator("[data-testid=nav-turn]").count() == 1
    page.click("[data-scope=full]")
    page.wait_for_selector(".t[data-i='0']", timeout=TIMEOUT)
    assert page.outside_requests == []


def _zip(folder: Path, dest: Path) -> Path:
    with zipfile.ZipFile(dest, "w") as zf:
        for f in folder.rglob("*"):
            if f.is_file():
                zf.write(f, Path("rollout") / f.relative_to(folder))
    return dest


def test_upload_zip(page, app_url, tmp_path):
    open_view(page, app_url)
    page.set_input_files("#upload input[type=file]", str(_zip(EXAMPLE, tmp_path / "rollout.zip")))
    page.wait_for_function("location.search.includes('turn=0') && !location.search.includes('src=')", timeout=TIMEOUT)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    assert page.locator("[data-testid=nav-turn]").count() == 3


def test_malformed_artifact_shows_message(page, app_url, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLE, bad)
    data = json.loads((bad / "turns.json").read_text())
    data["turns"][1]["mask"] = data["turns"][1]["mask"][:-3]
    (bad / "turns.json").write_text(json.dumps(data))
    open_view(page, app_url)
    page.set_input_files("#upload input[type=file]", str(_zip(bad, tmp_path / "bad.zip")))
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
    turns = [dataclasses.replace(t0, output_ids=out, logps=np.full(out.size, -1.0),
                                 mask=np.concatenate([t0.mask[: t0.n_prompt], np.ones(out.size, np.int8)]))] + a.turns[1:]
    for e in trace:
        if e["metadata"]["node_id"] == "call-1":
            e["completion_token_ids"], e["per_token_logps"] = out.tolist(), [-1.0] * out.size
            e["loss_mask"] = [0] * t0.n_prompt + [1] * out.size
    import msgspec
    from artifact import Task, TestCase
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
    page.set_input_files("#upload input[type=file]", str(_zip(folder, tmp_path / "hostile.zip")))
    page.wait_for_selector("text=evil/", timeout=TIMEOUT)
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    page.click("summary:has-text('instruction')")
    page.keyboard.press("j")
    page.wait_for_selector(".tv-navitem.active[data-turn='1']")
    page.wait_for_timeout(500)
    assert page.evaluate("window.__pwned") is None
    body = page.locator(".tv").inner_text()
    assert "<script>window.__pwned = 1</script>" in body  # shown as text
    assert page.locator(".tv img").count() == 0 and page.locator(".tv script").count() == 0
    assert page.locator(".tv a[href^='javascript']").count() == 0
    assert page.outside_requests == [] and page.errors == []


def test_public_mode_refuses_server_paths(browser, tmp_path):
    demo, url = launch_app(public=True)
    try:
        page = browser.new_page()
        page.goto(f"{url}/?src={EXAMPLE}")
        err = page.locator(".tv-error")
        err.wait_for(timeout=TIMEOUT)
        assert "bundled example or a Hub dataset id" in err.inner_text()
        page.screenshot(path=str(SHOTS / "public_mode_refuses_paths.png"))
        page.goto(f"{url}/?src=scripted-smollm2")
        page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
        page.close()
    finally:
        demo.close()
