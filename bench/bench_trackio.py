"""The run page's charts against trackio's (TRL's default tracker) for the same per-version series, both drawn in
the same Chromium, each as a ratio to the same baseline bench/bench_run_page.py uses: a single rollout's first
paint. Pages alternate (run page, trackio, single rollout, ...), fresh browser contexts, medians.

The synthetic runs are bench/bench_run_page.py's (200 and 2,000 versions x 8 groups x 8 rollouts). Their
per-version numbers, as the run page computes them (viewer/run_stats.py `version_stats`), are logged into
trackio, one step per version, one metric per series the run page's four charts draw (reward mean, sd, min,
max; pass rate, zero-spread groups, unscorable, timed out, never trained; trained tokens; dropped per cause).
trackio lives in a venv of its own (bench/trackio_venv.sh makes bench/.venv-trackio: benchmark-only, not in the
app's requirements) and runs locally: its logs in a temp TRACKIO_DIR, its dashboard on loopback, no Hub.

trackio's dashboard draws a chart only near the viewport (its IntersectionObserver, 600 px margin): it is
painted when it shows one chart per logged metric and every chart on the first screen has its canvas drawn.
The run page is painted when its four charts are drawn from every version (bench/bench_run_page.py).

    bash bench/trackio_venv.sh            # once; needs PyPI
    .venv/bin/python bench/bench_trackio.py [--runs 5] [--versions 200 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_first_paint import ARGS, CHROMIUM, VIEWPORT, first_paint_s, launch  # noqa: E402
from bench.bench_run_page import RUN_ON_SCREEN, make_run  # noqa: E402
from processes import free_port  # noqa: E402

VENV = ROOT / "bench" / ".venv-trackio"
# painted: one plot per metric listed, and every plot whose top is on the first screen holds a drawn canvas
TRACKIO_ON_SCREEN = """(n) => {
  const plots = Array.from(document.querySelectorAll(".plot-container"));
  if (plots.length < n) return false;
  const first = plots.filter((p) => p.getBoundingClientRect().top < window.innerHeight);
  return first.length > 0 && first.every((p) => {
    const c = p.querySelector(".plot canvas");
    return !!c && c.width > 0 && c.getBoundingClientRect().width > 0; }); }"""

LOG = r"""
import json, sys, trackio
series = json.load(open(sys.argv[1]))
trackio.init(project=sys.argv[2], name="synthetic", space_id=None)
for step, metrics in series:
    trackio.log(metrics, step=step)
trackio.finish()
"""

SHOW = r"""
import sys, trackio
trackio.show(project=sys.argv[1], open_browser=False, block_thread=True, server_port=int(sys.argv[2]))
"""


def series(root: Path) -> list[tuple[int, dict[str, float]]]:
    """The run page's per-version series of the run at `root`, as (version, {metric: value}) steps."""
    from rollout_trace.artifact.run import open_run
    from viewer.run_stats import version_stats

    run = open_run(str(root))
    out = []
    for s in version_stats(run):
        m: dict[str, float] = {}
        for name, value in (("reward/mean", s.reward_mean), ("reward/sd", s.reward_sd), ("reward/min", s.reward_min),
                            ("reward/max", s.reward_max), ("outcome/pass_rate", s.pass_rate),
                            ("outcome/zero_spread", s.zero_spread / s.groups if s.groups else None),
                            ("outcome/unscorable", s.unscorable / s.rollouts if s.rollouts else None),
                            ("outcome/timed_out", s.timeouts / s.rollouts if s.rollouts else None),
                            ("outcome/never_trained", sum(s.dropped.values()) / s.rollouts if s.rollouts else None),
                            ("trained_tokens", s.trained_tokens)):
            if value is not None:
                m[name] = float(value)
        for cause, n in s.dropped.items():
            m[f"dropped/{cause}"] = float(n)
        out.append((s.version, m))
    run.close()
    return out


def trackio_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "TRACKIO_"))}
    return {**env, "TRACKIO_DIR": str(folder), "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--versions", type=int, nargs="+", default=[200, 2000])
    ap.add_argument("--shots", action="store_true", help="screenshots of each side's first visit in bench/out/")
    args = ap.parse_args()
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run(["bash", str(ROOT / "bench" / "trackio_venv.sh")], check=True)
    version = subprocess.run([str(python), "-c", "import trackio; print(trackio.__version__)"], check=True,
                             capture_output=True, text=True).stdout.strip()
    from playwright.sync_api import sync_playwright

    from viewer.ui.app import build_app

    with tempfile.TemporaryDirectory(prefix="bench-trackio-") as tmp:
        tdir = Path(tmp) / "trackio"
        roots, metrics = {}, {}
        for v in args.versions:
            roots[v] = Path(tmp) / f"run-{v}"
            n = make_run(roots[v], versions=v)
            steps = series(roots[v])
            metrics[v] = len({k for _, m in steps for k in m})
            (Path(tmp) / f"series-{v}.json").write_text(json.dumps(steps))
            t = time.perf_counter()
            subprocess.run([str(python), "-c", LOG, str(Path(tmp) / f"series-{v}.json"), f"bench-{v}"], check=True,
                           env=trackio_env(tdir), capture_output=True)
            print(f"synthetic run: {v} versions, {n:,} rollouts; {metrics[v]} series logged into trackio {version} "
                  f"in {time.perf_counter() - t:.1f} s")
        port = free_port()
        dash = subprocess.Popen([str(python), "-c", SHOW, "", str(port)], env=trackio_env(tdir),
                                start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        turl = f"http://127.0.0.1:{port}"
        try:
            import httpx

            for _ in range(240):
                try:
                    if httpx.get(turl, timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            url = launch(build_app(default_source="scripted-smollm2"))
            one_url, tok = f"{url}/?src=scripted-smollm2", ".tv-tokens .t[data-mask='1']"
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)

                def paint(u: str, check: str, arg: int, shot: str = "") -> float:
                    ctx = browser.new_context(viewport=VIEWPORT)
                    page = ctx.new_page()
                    try:
                        t0 = time.perf_counter()
                        page.goto(u)
                        page.wait_for_function(check, arg=arg, timeout=300_000, polling="raf")
                        took = time.perf_counter() - t0
                        if shot and args.shots:
                            (ROOT / "bench" / "out").mkdir(exist_ok=True)
                            page.screenshot(path=str(ROOT / "bench" / "out" / shot))
                        return took
                    finally:
                        ctx.close()

                ours = {v: f"{url}/?src={roots[v]}" for v in args.versions}
                theirs = {v: f"{turl}/?project=bench-{v}" for v in args.versions}
                for v in args.versions:  # each side's first visitor reads the run; not counted
                    paint(ours[v], RUN_ON_SCREEN, v, f"run-page-{v}.png")
                    paint(theirs[v], TRACKIO_ON_SCREEN, metrics[v], f"trackio-{v}.png")
                first_paint_s(browser, one_url, tok)
                ra: dict[int, list[float]] = {v: [] for v in args.versions}
                ta: dict[int, list[float]] = {v: [] for v in args.versions}
                oa: list[float] = []
                for _ in range(args.runs):
                    for v in args.versions:  # alternating: run page, trackio, single rollout, ...
                        ra[v].append(paint(ours[v], RUN_ON_SCREEN, v))
                        ta[v].append(paint(theirs[v], TRACKIO_ON_SCREEN, metrics[v]))
                        oa.append(first_paint_s(browser, one_url, tok))
                browser.close()
        finally:
            dash.terminate()
            try:
                dash.wait(20)
            except subprocess.TimeoutExpired:
                dash.kill()
    med = statistics.median
    print(f"charts drawn, median of {args.runs} fresh visitors each, alternating (s); trackio {version}:")
    print(f"  single rollout's first paint (baseline)  {med(oa):.3f}  [{min(oa):.3f} .. {max(oa):.3f}]")
    for v in args.versions:
        print(f"  {v:>5} versions x 8 x 8: run page {med(ra[v]):.3f} [{min(ra[v]):.3f} .. {max(ra[v]):.3f}] = "
              f"{med(ra[v]) / med(oa):.2f}x;  trackio {med(ta[v]):.3f} [{min(ta[v]):.3f} .. {max(ta[v]):.3f}] = "
              f"{med(ta[v]) / med(oa):.2f}x  ({metrics[v]} charts)")


if __name__ == "__main__":
    main()
