"""Benchmark how fast the View tab paints a big turn, against a naive full render, in headless chromium.

    python bench/bench_paint.py [--sizes 2000,20000,100000,500000] [--repeat 3] [--baseline-timeout 120]

For each size N it writes a seed-format artifact into bench/out/paint/N/ (replaced each run): three
turns of N tokens each (prompt + a 200-600 token output), every turn's prompt fresh random ids in
[0, 49152) so no turn shares a prefix with the one before and the default "new" scope shows all N
tokens; SmolLM2's tokenizer is copied in so tokens render as text. Then, with the real app launched
in-process (as tests/conftest.py does) and Debian's chromium driven by Playwright:

    first   load `?src=<folder>&turn=2`, wait until its tokens are painted, then click turn 0 in the
            navigator and time click -> the first chunk's spans are in the DOM and painted
    switch  click turn 1 (waited for, not timed), then click turn 0 again and time it the same way

Timing happens in the page: `performance.now()` just before `button.click()`, a MutationObserver
notices the new turn's spans (turn 0's nav item active and `.tv-chunk[data-c="0"] .t` present, or
for the baseline the last span of the new turn), and the clock stops in a task queued from the next
`requestAnimationFrame`, i.e. after that frame's style, layout and paint. For ours, the resource
timing of the chunk request and the moment the spans appear split the time into JS before the
request, the request itself (server + transport), building the spans (JSON parse, HTML, innerHTML)
and style + layout + paint. Ours is the median of `--repeat` page loads.

The baseline is a tiny Gradio app (built here) with a button per turn and a `gr.HTML` output whose
value is every token of the turn as `<span class="t" data-mask=.. data-i=..>escaped text</span>`,
built in Python, with the same CSS; same protocol, one run for N >= 100k, and a run that takes more
than `--baseline-timeout` seconds is recorded as a timeout and ends that size's baseline (larger
sizes are then skipped: a render of more tokens is not faster).

Also measured: `Rollout.chunk` for one 2048-token chunk timed directly in Python (plus FastAPI's
JSON encoding of it), to separate server cost from browser cost; and, for the largest size, JS heap
(CDP `Performance.getMetrics` after a forced GC) and the number of `.t` spans while the token box is
scrolled to the bottom in steps, to show the view stays bounded (it keeps at most 12 chunks).

The table and the verdict (ours <= 300 ms first and switch at every size) are printed, and the
results go to bench/out/paint.json. The exit code is 0 either way: this measures, it does not gate.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import shutil
import statistics
import sys
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

# bench/ is on sys.path (this file runs as a script); _array and _SLOT lay arrays out as json.dumps(indent=2) does
from make_large import _SLOT, INSTRUCTION, MODEL, N_TESTS_EVAL, _array, _held_out_tests, _visible_tests_from

if TYPE_CHECKING:
    import gradio as gr
    from playwright.sync_api import Browser, CDPSession, Page

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out" / "paint"
RESULT = ROOT / "bench" / "out" / "paint.json"
TOKENIZER_DIR = ROOT / "examples" / "scripted-smollm2" / "tokenizer"
VOCAB = 49152
TURNS = 3
TARGET_MS = 300.0
NAIVE_REPEAT_LIMIT = 100_000  # from this size on the baseline runs once
SCROLL_STEPS = 60
BOOT_TIMEOUT_MS = 180_000
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 1000}


# -- the artifacts -----------------------------------------------------------------------------------

def make_artifact(out_dir: Path, n_tokens: int, seed: int = 0) -> Path:
    """Write a 3-turn seed-format artifact whose turns are `n_tokens` long and share no prefix; return its folder."""
    from rollout_trace.recipe.reward import reward

    rng = np.random.default_rng(seed)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    calls = [["bash"], ["bash"], []]  # the last turn answers without a tool, as agent runs end
    turns, arrays = [], []
    prev_first = None
    for k in range(TURNS):
        n_out = min(int(rng.integers(200, 601)), n_tokens // 2)
        prompt = rng.integers(0, VOCAB, size=n_tokens - n_out)
        while prev_first is not None and prompt[0] == prev_first:  # no shared prefix, not even one token
            prompt[0] = rng.integers(0, VOCAB)
        prev_first = int(prompt[0])
        output = rng.integers(0, VOCAB, size=n_out)
        logps = -5.0 * rng.random(n_out) + 0.0  # + 0.0 turns -0.0 into 0.0, as make_large does
        slots = [f"@@{len(arrays) + j}@@" for j in range(4)]
        arrays += [[str(i) for i in prompt.tolist()], [str(i) for i in output.tolist()],
                   [repr(x) for x in logps.tolist()], ["0"] * prompt.size + ["1"] * n_out]
        turns.append({"turn": k, "trained": bool(calls[k]), "tool_calls": calls[k], "n_prompt_ids": int(prompt.size),
                      "n_output_ids": n_out, "prompt_ids": slots[0], "output_ids": slots[1],
                      "per_token_logps": slots[2], "mask": slots[3]})
    parts = _SLOT.split(json.dumps({"turns": turns}, indent=2))
    with (out_dir / "turns.json").open("w", encoding="utf-8") as f:
        f.write(parts[0])
        for slot, text in zip(parts[1::2], parts[2::2], strict=True):
            f.write(_array(arrays[int(slot)]))
            f.write(text)

    held_out = _held_out_tests(rng)
    task_id = hashlib.sha1(INSTRUCTION.encode()).hexdigest()
    by_name = {"bash": sum(c.count("bash") for c in calls)}
    env_reward = int(rng.integers(0, N_TESTS_EVAL + 1)) / N_TESTS_EVAL
    summary = {"model": MODEL, "task_id": task_id, "captured_calls": TURNS + 1, "agent_turns": TURNS,
               "trained_turns": sum(1 for c in calls if c), "tool_calls_by_name": by_name,
               "held_out_tests": len(held_out), "n_tests_eval_cap": N_TESTS_EVAL, "env_reward": env_reward,
               "reward_after_penalties": reward(env_reward, by_name, False), "timed_out": False}
    (out_dir / "task.json").write_text(json.dumps({"task_id": task_id, "task_index": 0, "instruction": INSTRUCTION},
                                                  indent=2))
    (out_dir / "visible_tests.txt").write_text(_visible_tests_from(INSTRUCTION))
    (out_dir / "held_out_tests.json").write_text(json.dumps(held_out, indent=2))
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    shutil.copytree(TOKENIZER_DIR, out_dir / "tokenizer")
    return out_dir


def check_artifact(folder: Path, n_tokens: int) -> None:
    """Fail loudly unless the artifact loads, renders text, and its "new" scope is the whole turn."""
    from rollout_trace.artifact import load_artifact
    from viewer.rollout import Rollout

    r = Rollout.load(load_artifact(folder))
    if r.vocab is None:
        raise SystemExit(f"{folder}: no tokenizer found: {r.vocab_why}")
    for k in range(TURNS):
        start, size = r.scope_size(k, "new")
        if (start, size) != (0, n_tokens):
            raise SystemExit(f"{folder}: turn {k} 'new' scope is {size} tokens from {start}, "
                             f"expected {n_tokens} from 0")


def server_chunk_ms(folder: Path, calls: int = 15) -> dict[str, float]:
    """Median ms of `Rollout.chunk` for the first and the last full 2048-token chunk of turn 0, and of FastAPI's
    JSON encoding of one chunk (what the component_server route does with the returned dict)."""
    from fastapi.encoders import jsonable_encoder
    from gradio.routes import ORJSONResponse

    from rollout_trace.artifact import load_artifact
    from viewer.render.outline import outline
    from viewer.rollout import CHUNK, Rollout
    from viewer.server_api import answer

    r = Rollout.load(load_artifact(folder))
    outline(r)  # the app computes the outline (and its cached analyses) before any chunk is asked for
    last = max(0, r.scope_size(0, "new")[1] // CHUNK - 1)

    def median_ms(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            fn()
            times.append(1e3 * (time.perf_counter() - t))
        return statistics.median(times)

    first = answer(r.chunk(0, "new", 0))  # what the server function returns (viewer/ui/view_tab.py `chunk`)
    return {"chunk_first": median_ms(lambda: answer(r.chunk(0, "new", 0))),
            "chunk_last": median_ms(lambda: answer(r.chunk(0, "new", last))),
            "encode": median_ms(lambda: ORJSONResponse(content=jsonable_encoder(first))),
            "bytes": len(ORJSONResponse(content=jsonable_encoder(first)).body)}


# -- the apps ------------------------------------------------------------------------------------------

def launch(demo: gr.Blocks) -> str:
    """Launch a Blocks app in this process, as tests/conftest.py does, and return its URL."""
    from viewer.ui.app import launch_options

    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True,
                            **launch_options(False))
    return url.rstrip("/")


def naive_app(folder: Path) -> tuple[gr.Blocks, dict[str, float]]:
    """The baseline: a button per turn and a gr.HTML holding every token of the turn as a span.

    Returns the Blocks and a dict where each click stores how long Python took to build the HTML."""
    import gradio as gr

    from rollout_trace.analysis.tokens import resolve_vocab, token_texts
    from rollout_trace.artifact import load_artifact

    art = load_artifact(folder)
    vocab, _ = resolve_vocab(art.tokenizer_dir, None)
    built: dict[str, float] = {}

    def render(k: int) -> str:
        t0 = time.perf_counter()
        turn = art.turns[k]
        text = token_texts(vocab, turn.ids).text.tolist()
        spans = "".join(f'<span class="t" data-mask="{m}" data-i="{i}">{html.escape(s)}</span>'
                        for i, (s, m) in enumerate(zip(text, turn.mask.tolist(), strict=False)))
        built[f"turn{k}"] = 1e3 * (time.perf_counter() - t0)
        return f'<div class="tv-tokens" id="naive-view-{k}">{spans}</div>'

    with gr.Blocks(title="naive full render") as demo:
        buttons = [gr.Button(f"turn {k}", elem_id=f"naive-turn-{k}") for k in range(len(art.turns))]
        out = gr.HTML(elem_id="naive-out")
        for k, b in enumerate(buttons):
            b.click(lambda k=k: render(k), None, out)
    return demo, built


# -- in-page timing ------------------------------------------------------------------------------------

# Starts one measurement; the result lands in window.__bench. DONE is a JS expression that is true once
# the new turn is in the DOM. Clock: performance.now() before click() -> first mutation batch where DONE
# holds -> a task queued from the next animation frame (runs after that frame's layout and paint).
MEASURE_JS = """(button) => {
  window.__bench = null;
  performance.clearResourceTimings();
  performance.setResourceTimingBufferSize(10000);
  const done = () => DONE;
  let seen = false, mo = null;
  const t0 = performance.now();
  const finish = () => {
    if (seen) return;
    seen = true;
    mo.disconnect();
    const dom = performance.now() - t0;
    requestAnimationFrame(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        const ms = performance.now() - t0;
        const r = performance.getEntriesByType("resource")
          .find((e) => e.name.includes("component_server") && e.startTime >= t0);
        window.__bench = {ms, dom_ms: dom, req_start_ms: r ? r.startTime - t0 : null,
                          req_end_ms: r ? r.responseEnd - t0 : null};
      };
      ch.port2.postMessage(null);
    });
  };
  mo = new MutationObserver(() => { if (done()) finish(); });
  mo.observe(document.body, {childList: true, subtree: true});
  document.querySelector(button).click();
  if (done()) finish();
}"""


def ours_done(turn: int) -> str:
    """JS: `turn` is the active nav item and a chunk of the token box holds spans (the view lands on the
    turn's story, which need not be its first chunk)."""
    return (f"!!document.querySelector('.tv-navitem.active[data-turn=\"{turn}\"]') && "
            "!!document.querySelector('.tv-tokens .tv-chunk .t')")


def naive_done(turn: int, n_tokens: int) -> str:
    """JS: the baseline shows `turn` and its last span (position n_tokens - 1) is in the DOM."""
    return (f"(() => {{ const v = document.getElementById('naive-view-{turn}'); const s = v && v.lastElementChild; "
            f"return !!s && s.dataset.i === '{n_tokens - 1}'; }})()")


def time_click(page: Page, button: str, done: str, timeout_s: float) -> dict[str, float] | None:
    """Click `button` in the page and time it until `done` holds and the frame is painted; None on timeout."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate(MEASURE_JS.replace("DONE", done), button)
    try:
        return page.wait_for_function("window.__bench", timeout=timeout_s * 1e3).json_value()
    except PlaywrightTimeout:
        return None


def page_memory(page: Page, cdp: CDPSession) -> dict[str, float]:
    """JS heap after a forced GC (CDP), and how many token spans and rendered chunks the DOM holds."""
    cdp.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    dom = page.evaluate("""() => ({spans: document.querySelectorAll('.t').length,
      chunks: [...document.querySelectorAll('.tv-chunk')].filter((e) => e.childElementCount).length})""")
    return {"js_heap_mb": metrics["JSHeapUsedSize"] / 1e6, "dom_nodes": metrics["Nodes"], **dom}


SCROLL_JS = """async (frac) => {
  const box = document.querySelector('.tv-tokens');
  box.scrollTop = frac * (box.scrollHeight - box.clientHeight);
  const t0 = performance.now();
  while (performance.now() - t0 < 20000) {
    await new Promise((r) => requestAnimationFrame(r));
    const b = box.getBoundingClientRect();
    const vis = [...box.querySelectorAll('.tv-chunk')].filter((el) => {
      const r = el.getBoundingClientRect(); return r.bottom > b.top && r.top < b.bottom; });
    const loading = box.querySelector('.tv-chunk[data-loading="1"]');
    if (vis.length && vis.every((el) => el.querySelector('.t')) && !loading) break;
  }
  return {spans: box.querySelectorAll('.t').length,
          chunks: [...box.querySelectorAll('.tv-chunk')].filter((e) => e.childElementCount).length,
          bottom: box.scrollTop + box.clientHeight >= box.scrollHeight - 2};
}"""


def scroll_memory(page: Page) -> dict[str, Any]:
    """Memory with turn 0 at the top, then while scrolling the token box to the bottom in steps."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    top = page_memory(page, cdp)
    peak_spans = peak_chunks = 0
    steps = 0
    frac, at_bottom = 0.0, False
    while not at_bottom and steps < SCROLL_STEPS + 10:  # heights settle as chunks render: a few extra steps
        steps += 1
        frac = min(1.0, frac + 1.0 / SCROLL_STEPS)
        s = page.evaluate(SCROLL_JS, frac)
        peak_spans, peak_chunks = max(peak_spans, s["spans"]), max(peak_chunks, s["chunks"])
        at_bottom = frac >= 1.0 and s["bottom"]
    bottom = page_memory(page, cdp)
    last = page.evaluate("() => Math.max(...[...document.querySelectorAll('.tv-tokens .t')].map((e) => +e.dataset.i))")
    cdp.detach()
    return {"top": top, "bottom": bottom, "steps": steps, "peak_spans": peak_spans, "peak_chunks": peak_chunks,
            "last_position_rendered": last}


# -- the protocol ---------------------------------------------------------------------------------------

def measure_ours(browser: Browser, url: str, folder: Path, memory: bool) -> dict[str, Any]:
    """One fresh page: boot on turn 2, then time turn 0 first, turn 1, and turn 0 again (switch)."""
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        q = urllib.parse.urlencode({"src": str(folder), "turn": 2, "mode": "mask", "scope": "new"})
        t = time.perf_counter()
        page.goto(f"{url}/?{q}")
        page.wait_for_function(ours_done(2), timeout=BOOT_TIMEOUT_MS)
        boot = time.perf_counter() - t
        nav = 'button.tv-navitem[data-turn="{}"]'
        first = time_click(page, nav.format(0), ours_done(0), BOOT_TIMEOUT_MS / 1e3)
        other = time_click(page, nav.format(1), ours_done(1), BOOT_TIMEOUT_MS / 1e3)
        switch = time_click(page, nav.format(0), ours_done(0), BOOT_TIMEOUT_MS / 1e3)
        if None in (first, other, switch):
            raise SystemExit(f"our view did not paint within {BOOT_TIMEOUT_MS / 1e3:.0f} s: {errors}")
        result = {"boot_s": boot, "first": first, "other": other, "switch": switch, "page_errors": errors}
        if memory:
            result["memory"] = scroll_memory(page)
        return result
    finally:
        ctx.close()


def measure_naive(browser: Browser, url: str, n_tokens: int, timeout_s: float) -> dict[str, Any]:
    """One fresh page of the naive app: click turn 2 (warm-up), then time turn 0 first, turn 1, turn 0 again.

    Stops at the first click that takes longer than `timeout_s`; its time and the rest stay None."""
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    result: dict[str, Any] = {"warmup": None, "first": None, "other": None, "switch": None, "timed_out": None,
                              "memory": None}
    try:
        page.goto(url)
        page.wait_for_selector("#naive-turn-0", timeout=BOOT_TIMEOUT_MS)
        for name, turn in (("warmup", 2), ("first", 0), ("other", 1), ("switch", 0)):
            r = time_click(page, f"#naive-turn-{turn}", naive_done(turn, n_tokens), timeout_s)
            if r is None:
                result["timed_out"] = name
                break
            result[name] = r
        if result["timed_out"] is None:
            cdp = ctx.new_cdp_session(page)
            cdp.send("Performance.enable")
            result["memory"] = page_memory(page, cdp)
        return result
    finally:
        ctx.close()


def median_run(runs: list[dict[str, Any]], key: str) -> dict[str, float | None]:
    """Median per field of one timed click over runs (fields None when the request was not seen)."""
    fields = runs[0][key].keys()
    return {f: statistics.median(r[key][f] for r in runs) if all(r[key][f] is not None for r in runs) else None
            for f in fields}


# -- report --------------------------------------------------------------------------------------------

def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f}"


def _naive_cell(naive: dict[str, Any], key: str, timeout_s: float) -> str:
    if naive.get("skipped"):
        return "skipped"
    if naive[key] is not None:
        return _ms(naive[key]["ms"])
    return f">{timeout_s:.0f} s" if naive["timed_out"] else "-"


def _ratio(naive: dict[str, Any], ours_ms: float, key: str, timeout_s: float) -> str:
    if naive[key] is None:
        return f">{1e3 * timeout_s / ours_ms:,.0f}x" if naive["timed_out"] else "-"
    r = naive[key]["ms"] / ours_ms
    return f"{r:.1f}x" if r < 10 else f"{r:,.0f}x"


def table(results: list[dict[str, Any]], timeout_s: float) -> str:
    """The printed table: ours and naive first/switch, the ratio, and where ours spends its time."""
    head = (f"{'tokens':>8} | {'ours first/switch ms':>21} | {'naive first/switch ms':>23} | {'ratio naive/ours':>17}"
            f" | {'chunk+json ms':>13} | {'ours first: js/request/build/paint ms':>37}")
    lines = [head, "-" * len(head)]
    for res in results:
        o, nv = res["ours"], res["naive"]
        f = o["first"]
        split = "-" if f["req_start_ms"] is None else (
            f"{f['req_start_ms']:.0f}/{f['req_end_ms'] - f['req_start_ms']:.0f}/{f['dom_ms'] - f['req_end_ms']:.0f}"
            f"/{f['ms'] - f['dom_ms']:.0f}")
        server = f"{res['server']['chunk_first']:.1f}+{res['server']['encode']:.1f}"
        ours_cell = f"{_ms(o['first']['ms'])} / {_ms(o['switch']['ms'])}"
        naive_cell = f"{_naive_cell(nv, 'first', timeout_s)} / {_naive_cell(nv, 'switch', timeout_s)}"
        ratio = " / ".join(_ratio(nv, o[k]["ms"], k, timeout_s) for k in ("first", "switch"))
        lines.append(f"{res['n']:>8,} | {ours_cell:>21} | {naive_cell:>23} | {ratio:>17} | {server:>13} | {split:>37}")
    lines += ["", "chunk+json: Rollout.chunk for one 2048-token chunk + FastAPI/orjson encoding of it, in Python.",
              "js/request/build/paint (medians, ours, first): click -> chunk request sent -> response received"
              " -> spans in the DOM -> frame painted."]
    return "\n".join(lines)


def verdict(results: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether ours meets the target at every size, and the line that says so (naming each miss)."""
    misses = [f"{r['n']:,} {k} {r['ours'][k]['ms']:.0f} ms" for r in results for k in ("first", "switch")
              if r["ours"][k]["ms"] > TARGET_MS]
    ok = not misses
    return ok, (f"target: ours <= {TARGET_MS:.0f} ms first and switch at every size: "
                + ("PASS" if ok else "MISS (" + "; ".join(misses) + ")"))


def memory_lines(n: int, m: dict[str, Any], naive_mem: dict[str, float] | None) -> str:
    """The printed memory summary for the largest size."""
    top, bot = m["top"], m["bottom"]
    lines = [f"memory at {n:,} tokens (ours, turn 0, JS heap after forced GC):",
             f"  top of the turn: {top['js_heap_mb']:.1f} MB, {top['spans']:,} spans in {top['chunks']} chunks",
             f"  after scrolling to the bottom in {m['steps']} steps: {bot['js_heap_mb']:.1f} MB, "
             f"{bot['spans']:,} spans in {bot['chunks']} chunks",
             f"  peak while scrolling: {m['peak_spans']:,} spans in {m['peak_chunks']} chunks; "
             f"last position rendered {m['last_position_rendered']:,}"]
    if naive_mem is not None:
        lines.append(f"  naive, one turn shown: {naive_mem['js_heap_mb']:.1f} MB, {naive_mem['spans']:,} spans")
    return "\n".join(lines)


# -- main ----------------------------------------------------------------------------------------------

def ours_for_size(browser: Browser, url: str, folder: Path, n: int, repeat: int, memory: bool) -> dict[str, Any]:
    """`repeat` page loads of our view; medians of first and switch (memory measured on the last load)."""
    runs = []
    for k in range(repeat):
        r = measure_ours(browser, url, folder, memory=memory and k == repeat - 1)
        runs.append(r)
        print(f"[{n:,}] ours run {k + 1}/{repeat}: boot {r['boot_s']:.1f} s, first {r['first']['ms']:.0f} ms,"
              f" switch {r['switch']['ms']:.0f} ms", flush=True)
    return {"first": median_run(runs, "first"), "switch": median_run(runs, "switch"), "runs": runs}


def naive_for_size(browser: Browser, folder: Path, n: int, repeat: int, timeout_s: float) -> dict[str, Any]:
    """The baseline app for this artifact, `repeat` page loads (1 from NAIVE_REPEAT_LIMIT tokens on).

    A timeout ends the size's baseline and leaves first/switch None: one run too slow decides."""
    demo, built = naive_app(folder)
    url = launch(demo)
    runs = []
    try:
        for k in range(1 if n >= NAIVE_REPEAT_LIMIT else repeat):
            r = measure_naive(browser, url, n, timeout_s)
            runs.append(r)
            print(f"[{n:,}] naive run {k + 1}: " + ", ".join(
                f"{key} {_ms(r[key]['ms']) if r[key] else '-'} ms" for key in ("warmup", "first", "switch"))
                + (f"; {r['timed_out']} exceeded {timeout_s:.0f} s" if r["timed_out"] else ""), flush=True)
            if r["timed_out"]:
                break
    finally:
        demo.close()
    timed_out = next((r["timed_out"] for r in runs if r["timed_out"]), None)
    return {"runs": runs, "python_build_ms": built, "timed_out": timed_out,
            "first": None if timed_out else median_run(runs, "first"),
            "switch": None if timed_out else median_run(runs, "switch"),
            "memory": None if timed_out else runs[-1]["memory"]}


def run(sizes: list[int], repeat: int, timeout_s: float) -> dict[str, Any]:
    """Generate the artifacts, measure everything, and return the results (also what paint.json holds)."""
    from playwright.sync_api import sync_playwright

    from viewer.ui.app import build_app

    folders = {}
    for n in sizes:
        t = time.perf_counter()
        folders[n] = make_artifact(OUT / str(n), n)
        check_artifact(folders[n], n)
        print(f"artifact {n:,} tokens x {TURNS} turns written and checked in {time.perf_counter() - t:.1f} s",
              flush=True)

    results = []
    demo = build_app(default_source=str(folders[sizes[0]]), public=False)
    url = launch(demo)
    naive_gave_up = False
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for n in sizes:
                server = server_chunk_ms(folders[n])
                print(f"[{n:,}] Rollout.chunk: {server['chunk_first']:.1f} ms first chunk, "
                      f"{server['chunk_last']:.1f} ms last full one; JSON encode {server['encode']:.1f} ms, "
                      f"{server['bytes'] / 1e3:.0f} kB", flush=True)
                ours = ours_for_size(browser, url, folders[n], n, repeat, memory=n == sizes[-1])
                if naive_gave_up:
                    print(f"[{n:,}] naive skipped: a smaller size already timed out", flush=True)
                    naive = {"skipped": True, "timed_out": "a smaller size", "first": None, "switch": None,
                             "memory": None}
                else:
                    naive = naive_for_size(browser, folders[n], n, repeat, timeout_s)
                    naive_gave_up = naive["timed_out"] is not None
                results.append({"n": n, "server": server, "ours": ours, "naive": naive})
            browser.close()
    finally:
        demo.close()
    return {"sizes": sizes, "repeat": repeat, "baseline_timeout_s": timeout_s, "target_ms": TARGET_MS,
            "cpus": os.cpu_count(), "load_avg": os.getloadavg(), "results": results}


def main() -> None:
    p = argparse.ArgumentParser(description="Time first paint and turn switch of the token view vs a naive render.")
    p.add_argument("--sizes", default="2000,20000,100000,500000",
                   help="comma-separated tokens per turn (default: 2000,20000,100000,500000)")
    p.add_argument("--repeat", type=int, default=3, help="page loads per size for ours (median reported)")
    p.add_argument("--baseline-timeout", type=float, default=120.0, help="seconds before a naive render is given up")
    args = p.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    t0 = time.perf_counter()
    data = run(sizes, args.repeat, args.baseline_timeout)
    results = data["results"]
    ok, line = verdict(results)
    data["pass"] = ok
    big = results[-1]
    mem = big["ours"]["runs"][-1]["memory"]
    naive_mem = big["naive"]["memory"]
    print()
    print(f"median of {args.repeat} page loads for ours; naive {args.repeat} runs below "
          f"{NAIVE_REPEAT_LIMIT:,} tokens, 1 run from there; load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores")
    print(table(results, args.baseline_timeout))
    print()
    print(memory_lines(big["n"], mem, naive_mem))
    print()
    print(line)
    print(f"total {time.perf_counter() - t0:.0f} s")
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(data, indent=2))
    print(f"results in {RESULT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
