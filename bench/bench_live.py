"""Benchmark the live view: how soon a recorded call is painted, and what watching costs.

    python bench/bench_live.py [--turns 8] [--delay-s 2.0] [--repeats 2] [--json]

Every capture here is real (capture/run.py): the real opencode CLI behind openenv's real capture proxy,
answered by the scripted vLLM-shaped server of tests/support/scripted_llm.py with `--delay-s` of latency
per agent call (the model's generation time) and a script of `--turns` agent turns.

1. Paint delay: the app runs in this process, Chromium drives its Capture tab, and the page notes when each
   new turn appears in the View tab's navigator. The delay is that moment minus the proxy's own record of
   when it stored the call (`Live.recorded_at`, from the session's `idle_s`). Target: under 2 s.
2. Cost of watching: the same capture with and without the live view's work (polling the proxy, deriving
   turns, building the Rollout and outline the page gets), alternately, `--repeats` times each: wall
   time and this process's CPU time (opencode and the proxy are other processes), as ratios in one run;
   proxy requests per second and milliseconds per request; the page's questions per second and
   milliseconds per answer.

Prints a table and writes bench/out/live.json. The exit code is 0 either way: this measures, it does not gate.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from bench_group import tokenizer  # noqa: E402  the scripted server's tokenizer, as the group benchmark loads it

from conftest import CHROMIUM, CHROMIUM_ARGS, TASK_ROWS  # noqa: E402

OUT = ROOT / "bench" / "out"

PAINTS = """() => {
  window.__paints = [];
  let seen = 0;
  new MutationObserver(() => {
    const badge = document.querySelector('#view-tab [data-testid=live-badge]');
    if (!badge) return;
    const n = document.querySelectorAll('#view-tab [data-testid=nav-turn]').length;
    if (n > seen) { seen = n; window.__paints.push({t: Date.now() / 1000, turns: n, recorded: Number(badge.dataset.recordedAt)}); }
  }).observe(document.body, {subtree: true, childList: true, attributes: true});
}"""


def steps(turns: int) -> list:
    from support.scripted_llm import DEFAULT_STEPS

    return [DEFAULT_STEPS[0]] + [DEFAULT_STEPS[1]] * (turns - 2) + [DEFAULT_STEPS[2]]


def config(url: str, tok_dir: str, task_file: Path, out: Path):
    from capture import CaptureConfig

    return CaptureConfig(model="scripted-model", backend="local", endpoint=url, dataset=str(task_file), n_prompts=1,
                         out_dir=str(out), timeout_s=600, tokenizer=tok_dir)


class Timed:
    """Wraps a method to count and time its calls."""

    def __init__(self, owner, name: str):
        self.owner, self.name, self.real = owner, name, getattr(owner, name)
        self.times: list[float] = []
        timed = self

        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return timed.real(*a, **k)
            finally:
                timed.times.append(time.perf_counter() - t0)

        setattr(owner, name, wrapper)

    def restore(self) -> None:
        setattr(self.owner, self.name, self.real)


def one_capture(url: str, tok_dir: str, task_file: Path, work: Path, watch: bool) -> dict:
    from capture import capture
    from capture.agent import AgentRun
    from viewer.ui.service import Service
    from viewer.ui.view_tab import ViewTab

    polls = Timed(AgentRun, "proxy_get")
    tab = ViewTab(Service("scripted-smollm2", public=False))
    run = tab.service.live.start()

    def on_live(u) -> None:  # what the Capture tab does, plus the outline the page then asks for
        tab.service.live.update(run, u)
        tab.service.live.answer({"run": run, "version": 0})

    stages: dict[str, float] = {}
    t0, c0 = time.monotonic(), time.process_time()
    try:
        capture(config(url, tok_dir, task_file, work / f"{'live' if watch else 'plain'}-{time.time_ns()}"),
                progress=lambda p: stages.setdefault(p.stage, time.monotonic()), live=on_live if watch else None)
    finally:
        polls.restore()
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    agent_s = stages.get("verify", time.monotonic()) - stages.get("agent", t0)
    return {"watch": watch, "wall_s": round(wall, 2), "cpu_s": round(cpu, 3), "agent_s": round(agent_s, 2),
            "proxy_requests": len(polls.times), "proxy_ms": [round(1000 * t, 2) for t in polls.times]}


def paint_delays(url: str, tok_dir: str, task_file: Path, captures: Path) -> dict:
    import os

    from playwright.sync_api import sync_playwright

    from viewer.ui.live import LiveRuns

    os.environ["ROLLOUT_VIEWER_CAPTURE_DIR"] = str(captures)
    from test_capture_browser import fill_form

    from conftest import launch_app

    answers = Timed(LiveRuns, "answer")
    demo, app = launch_app()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(app)
            page.wait_for_selector(".t[data-mask]", timeout=120_000)

            class Llm:  # fill_form reads .url
                pass
            llm = Llm()
            llm.url = url
            fill_form(page, llm, task_file, Path(tok_dir))
            page.evaluate(PAINTS)
            t0 = time.monotonic()
            page.click("#cap-run")
            page.wait_for_function("document.querySelector('#view-tab [data-testid=live-badge]') && "
                                   "document.querySelector('#view-tab [data-testid=live-badge]').dataset.state === 'done'",
                                   timeout=600_000)
            wall = time.monotonic() - t0
            paints = page.evaluate("window.__paints")
            browser.close()
    finally:
        demo.close()
        answers.restore()
    delays = [p["t"] - p["recorded"] for p in paints if p["recorded"]]
    return {"paints": paints, "delays_s": [round(d, 3) for d in delays], "wall_s": round(wall, 1),
            "page_questions": len(answers.times), "answer_ms": [round(1000 * t, 2) for t in answers.times]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--delay-s", type=float, default=2.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    from support.scripted_llm import ScriptedLLM

    tok = tokenizer()
    with tempfile.TemporaryDirectory(prefix="bench-live-") as d:
        work = Path(d)
        tok_dir = work / "tok"
        tok.save_pretrained(str(tok_dir))
        task_file = work / "tasks.jsonl"
        task_file.write_text("\n".join(json.dumps(r) for r in TASK_ROWS))
        llm = ScriptedLLM(tok, steps=steps(a.turns), delay_s=a.delay_s, slow_after=0).start()
        try:
            paint = paint_delays(llm.url, str(tok_dir), task_file, work / "captures")
            runs = [one_capture(llm.url, str(tok_dir), task_file, work, watch) for _ in range(a.repeats)
                    for watch in (False, True)]
        finally:
            llm.stop()
    plain = [r for r in runs if not r["watch"]]
    live = [r for r in runs if r["watch"]]
    med = lambda rows, k: statistics.median(r[k] for r in rows)  # noqa: E731
    status = [t for r in live for t in r["proxy_ms"]]
    result = {
        "turns": a.turns, "delay_s": a.delay_s, "repeats": a.repeats,
        "paint_delay_s": {"median": round(statistics.median(paint["delays_s"]), 3), "max": round(max(paint["delays_s"]), 3),
                          "all": paint["delays_s"]},
        "page": {"questions": paint["page_questions"], "per_s": round(paint["page_questions"] / paint["wall_s"], 2),
                 "answer_ms_median": round(statistics.median(paint["answer_ms"]), 2),
                 "answer_ms_max": round(max(paint["answer_ms"]), 2)},
        "proxy": {"requests_per_s": round(sum(r["proxy_requests"] for r in live) / sum(r["agent_s"] for r in live), 2),
                  "ms_median": round(statistics.median(status), 2), "ms_max": round(max(status), 2)},
        "capture_wall_ratio": round(med(live, "wall_s") / med(plain, "wall_s"), 3),
        "capture_cpu_ratio": round(med(live, "cpu_s") / med(plain, "cpu_s"), 3),
        # the live view's own work, as CPU seconds and as a share of one core over the capture
        "added_cpu_s": round(med(live, "cpu_s") - med(plain, "cpu_s"), 3),
        "added_cpu_share": round((med(live, "cpu_s") - med(plain, "cpu_s")) / med(live, "wall_s"), 4),
        "runs": [{k: v for k, v in r.items() if k != "proxy_ms"} for r in runs],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "live.json").write_text(json.dumps(result, indent=2))
    if a.json:
        print(json.dumps(result, indent=2))
        return
    pd, pg, px = result["paint_delay_s"], result["page"], result["proxy"]
    print(f"paint delay (proxy record -> navigator), {len(pd['all'])} turns: median {pd['median']:.2f} s, "
          f"max {pd['max']:.2f} s (target < 2 s)")
    print(f"page questions: {pg['per_s']:.2f}/s, answer {pg['answer_ms_median']:.2f} ms median ({pg['answer_ms_max']:.1f} max)")
    print(f"proxy polls while the agent works: {px['requests_per_s']:.2f}/s, {px['ms_median']:.2f} ms median "
          f"({px['ms_max']:.1f} max)")
    print(f"capture with the live view / without: wall {result['capture_wall_ratio']:.3f}x, "
          f"this process's CPU {result['capture_cpu_ratio']:.3f}x (median of {a.repeats}): "
          f"+{result['added_cpu_s']:.2f} s CPU, {100 * result['added_cpu_share']:.1f}% of one core over the capture")


if __name__ == "__main__":
    main()
