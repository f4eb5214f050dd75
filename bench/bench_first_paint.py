"""First paint for a visitor: from navigation to the first token on screen, against a bare Gradio page.

Two comparisons, each measured in the same run with pages alternating, in fresh browser contexts
(a new visitor each time), medians reported. The ratio is the median of each adjacent pair's ratio (the machine's
speed drifts between pairs more than within one); the ratio of the two medians is printed beside it.

1. ours on the default example against a bare Gradio app that paints one span on page load
   (`demo.load` returning the span): the floor any Gradio page pays (target: ours <= 1.4x).
2. the last turn of a 100-turn, ~97 MB synthetic artifact (bench/make_large.py) against the last turn of
   the small default example, both opened by deep link (target: <= 1.2x). The big artifact is loaded
   once by the server and shared, so a later visitor pays only for the outline and the first chunk;
   the first visitor's time (the load itself) is reported too.

    .venv/bin/python bench/bench_first_paint.py [--runs 21]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
VIEWPORT = {"width": 1440, "height": 900}
TOKEN_ON_SCREEN = """(sel) => [...document.querySelectorAll(sel)].some(e => {
  const r = e.getBoundingClientRect(); return r.width > 0 && r.top >= 0 && r.bottom <= innerHeight; })"""


def bare_app():
    import gradio as gr

    with gr.Blocks() as demo:
        view = gr.HTML("")
        demo.load(lambda: "<span class='bare-t'>x</span>", None, view)
    return demo


def launch(demo) -> str:
    from viewer.ui.app import launch_options

    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True,
                            **launch_options(False))
    return url.rstrip("/")


def first_paint_s(browser, url: str, selector: str) -> float:
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    try:
        t = time.perf_counter()
        page.goto(url)
        page.wait_for_function(TOKEN_ON_SCREEN, arg=selector, timeout=120_000, polling="raf")
        return time.perf_counter() - t
    finally:
        ctx.close()


def alternate(browser, a: tuple[str, str], b: tuple[str, str], runs: int) -> tuple[list[float], list[float]]:
    ta, tb = [], []
    for _ in range(runs):
        ta.append(first_paint_s(browser, *a))
        tb.append(first_paint_s(browser, *b))
    return ta, tb


def large_artifact() -> Path:
    from bench.make_large import make_large

    folder = OUT / "large-100"
    if not (folder / "summary.json").is_file():
        make_large(folder)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)  # one run of 11 pairs moved by +-0.1x here
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from viewer.ui.app import build_app

    big = large_artifact()
    size_mb = (big / "turns.json").stat().st_size / 1e6
    ours = build_app(default_source="scripted-smollm2")
    ours_url, bare_url = launch(ours), launch(bare_app())
    tok = ".tv-tokens .t[data-mask='1']"
    big_q = urllib.parse.urlencode({"src": str(big), "turn": 99})
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        first_big = first_paint_s(browser, f"{ours_url}/?{big_q}", ".tv-tokens .t")
        first_paint_s(browser, ours_url, tok)  # warm both servers' caches (a visitor before ours)
        first_paint_s(browser, bare_url, ".bare-t")
        o, b = alternate(browser, (ours_url, tok), (bare_url, ".bare-t"), args.runs)
        lg, sm = alternate(browser, (f"{ours_url}/?{big_q}", ".tv-tokens .t"),
                           (f"{ours_url}/?src=scripted-smollm2&turn=2", ".tv-tokens .t"), args.runs)
        browser.close()
    med = statistics.median
    r1, r2 = med([x / y for x, y in zip(o, b, strict=True)]), med([x / y for x, y in zip(lg, sm, strict=True)])
    print(f"first paint, median of {args.runs} fresh visitors each, alternating (s):")
    print(f"  ours (default example)      {med(o):.3f}  [{min(o):.3f} .. {max(o):.3f}]")
    print(f"  bare Gradio, one span       {med(b):.3f}  [{min(b):.3f} .. {max(b):.3f}]")
    print(f"  ratio                       {r1:.2f}x  (of the medians {med(o) / med(b):.2f}x; target <= 1.4x) "
          f"{'PASS' if r1 <= 1.4 else 'MISS'}")
    print(f"  {size_mb:.0f} MB artifact, turn 99    {med(lg):.3f}  [{min(lg):.3f} .. {max(lg):.3f}]"
          f"  (its very first visitor, who pays the load: {first_big:.3f})")
    print(f"  small example, turn 2       {med(sm):.3f}  [{min(sm):.3f} .. {max(sm):.3f}]")
    print(f"  ratio                       {r2:.2f}x  (of the medians {med(lg) / med(sm):.2f}x; target <= 1.2x) "
          f"{'PASS' if r2 <= 1.2 else 'MISS'}")


if __name__ == "__main__":
    main()
