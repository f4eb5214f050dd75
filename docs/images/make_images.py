"""The README's pictures: the token view (the default example, turn 1), the group map (the bundled group,
two siblings compared) and the run page (the bundled TRL run), at 1440x900, in the light and the dark scheme. Rebuild them after a UI change:

    HF_HUB_OFFLINE=1 .venv/bin/python docs/images/make_images.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from playwright.sync_api import sync_playwright  # noqa: E402

from conftest import CHROMIUM, CHROMIUM_ARGS, launch_app  # noqa: E402


def main() -> None:
    demo, url = launch_app(default_source="scripted-smollm2")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for scheme in ("light", "dark"):
                ctx = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
                page = ctx.new_page()
                page.goto(f"{url}/?turn=1")
                page.wait_for_selector(".t[data-mask]")
                page.wait_for_timeout(2500)  # the landing settles
                page.screenshot(path=str(HERE / f"token-view-{scheme}.png"))
                page.goto(f"{url}/?src=smollm2-group")
                page.wait_for_selector("[data-testid=group-map]")
                for k in (0, 2):
                    page.locator(f"tr[data-rollout='{k}'] [data-testid=group-pick]").check()
                page.locator("[data-testid=compare]").click()
                page.wait_for_selector("[data-testid=compare-side]")
                page.wait_for_timeout(800)
                page.screenshot(path=str(HERE / f"group-map-{scheme}.png"))
                page.goto(f"{url}/?src=trl-run")
                page.wait_for_selector("[data-testid=run-versions]")
                page.wait_for_selector("#run-reward-plot canvas, #run-reward-plot svg.marks")
                page.wait_for_timeout(1500)  # the four plots draw
                page.screenshot(path=str(HERE / f"run-page-{scheme}.png"))
                ctx.close()
            browser.close()
    finally:
        demo.close()


if __name__ == "__main__":
    main()
