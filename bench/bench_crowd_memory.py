"""Server memory under a crowd: RSS after ten visitors of one ~97 MB artifact, against one visitor.

The app runs as its own process (`app.py`, as a deployment would) and each visitor is a fresh browser
context opening a deep link to the big artifact (bench/make_large.py) and waiting for its tokens.
Rollouts are shared by source identity (viewer/ui/store.py), so ten visitors should cost about what
one does (target: at most 1.2x). Both numbers are measured in the same run.

    .venv/bin/python bench/bench_crowd_memory.py
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from processes import free_port

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]




def rss_mb(pid: int) -> float:
    import psutil

    return psutil.Process(pid).memory_info().rss / 2**20


def visit(browser, url: str) -> None:
    ctx = browser.new_context()
    page = ctx.new_page()
    try:
        page.goto(url)
        page.wait_for_selector(".tv-tokens .t", timeout=180_000)
    finally:
        ctx.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    from bench.bench_first_paint import large_artifact

    big = large_artifact()
    port = free_port()
    app = subprocess.Popen([sys.executable, "app.py", "--port", str(port)], cwd=ROOT, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        link = f"{url}/?{urllib.parse.urlencode({'src': str(big), 'turn': 99})}"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            base = rss_mb(app.pid)
            visit(browser, link)
            time.sleep(1)
            one = rss_mb(app.pid)
            for _ in range(9):
                visit(browser, link)
            time.sleep(1)
            ten = rss_mb(app.pid)
            browser.close()
    finally:
        os.killpg(app.pid, signal.SIGTERM)
        app.wait(timeout=30)
    size = (big / "turns.json").stat().st_size / 1e6
    ratio = ten / one
    print(f"server RSS (MB), {size:.0f} MB turns.json: before any visitor {base:.0f}, after 1 visitor {one:.0f}, "
          f"after 10 visitors {ten:.0f}")
    print(f"ratio 10 / 1 visitors: {ratio:.2f}x (target <= 1.2x) {'PASS' if ratio <= 1.2 else 'MISS'}")


if __name__ == "__main__":
    main()
