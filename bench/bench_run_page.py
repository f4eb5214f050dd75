"""First paint of the run page for synthetic 200- and 2,000-version x 8-group x 8-rollout runs, against a single
rollout's first paint, in the same process run (the harness of bench/bench_first_paint.py: fresh browser contexts,
pages alternating, medians).

The synthetic run (12,800 rollouts at 200 versions) is bench/make_run.py's: every row a real rollout of the
bundled run (its index columns, text, findings and files), placed at its synthetic version, group and index and
written through the recorder's own shard writer into Parquet shards (rollout_trace/artifact/run_format.py,
format 2), with a consumption table. The run page's first paint reads the rollouts table's index columns only
(opening a group reads its rows' files). The run page is painted when its versions list and all four charts are
on screen, drawn from every version; the rollout when its first generated token is. The bench counts the
snapshots of each run the server makes (rollout_trace/artifact/run_table.py `open_table`: each one reads the
run's index columns; target: once, shared by every visitor).

    .venv/bin/python bench/bench_run_page.py [--runs 5] [--versions 200 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_first_paint import ARGS, CHROMIUM, VIEWPORT, first_paint_s, launch  # noqa: E402

RUN_ON_SCREEN = """(n) => {
  const v = document.querySelector("[data-testid=run-version]");
  const charts = document.querySelector("[data-testid=run-charts]");
  const drawn = document.querySelectorAll("[data-testid=run-chart] canvas");
  return !!v && !!charts && charts.dataset.drawn === String(n) && drawn.length >= 4 &&
    v.getBoundingClientRect().width > 0 && Array.from(drawn).every((c) => c.getBoundingClientRect().width > 0); }"""


def make_run(root: Path, versions: int = 200, groups: int = 8, k: int = 8, rare_every: int = 0) -> int:
    """Write bench/make_run.py's synthetic run of `versions` x `groups` x `k` real rollouts at `root` (format 2);
    returns how many rollouts it holds."""
    from bench.make_run import make

    return int(make(root, versions, groups, k, rare_every)["rollouts"])


TARGETS = {200: 1.3, 2000: 1.5}  # run page drawn / a single rollout's first paint


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--versions", type=int, nargs="+", default=[200, 2000])
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    import rollout_trace.artifact.run as run_module
    import rollout_trace.artifact.run_table as table_module
    from viewer.ui.app import build_app

    reads: list[str] = []
    real = table_module.open_table

    def counted(store, label, kind, *a, **kw):
        reads.append(label)
        return real(store, label, kind, *a, **kw)

    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        roots = {}
        for v in args.versions:
            roots[v] = Path(tmp) / f"run-{v}"
            t = time.perf_counter()
            n = make_run(roots[v], versions=v)
            size = sum(p.stat().st_size for p in (roots[v] / "rollouts").iterdir()) / 1e6
            print(f"synthetic run: {v} versions, {n:,} rollouts, rollouts table {size:.1f} MB, written in "
                  f"{time.perf_counter() - t:.1f} s")
        table_module.open_table = run_module.open_table = counted  # from here on: run_table's and open_run's
        url = launch(build_app(default_source="scripted-smollm2"))
        one_url = f"{url}/?src=scripted-smollm2"
        tok = ".tv-tokens .t[data-mask='1']"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)

            def paint(u: str, sel: str | None, versions: int = 0) -> float:
                if sel is not None:
                    return first_paint_s(browser, u, sel)
                ctx = browser.new_context(viewport=VIEWPORT)
                page = ctx.new_page()
                try:
                    t0 = time.perf_counter()
                    page.goto(u)
                    page.wait_for_function(RUN_ON_SCREEN, arg=versions, timeout=300_000, polling="raf")
                    return time.perf_counter() - t0
                finally:
                    ctx.close()

            firsts = {v: paint(f"{url}/?src={roots[v]}", None, v) for v in args.versions}  # reads each run
            paint(one_url, tok)
            ra: dict[int, list[float]] = {v: [] for v in args.versions}
            oa: list[float] = []
            for _ in range(args.runs):
                for v in args.versions:  # alternating: run page, single rollout, run page, ...
                    ra[v].append(paint(f"{url}/?src={roots[v]}", None, v))
                    oa.append(paint(one_url, tok))
            browser.close()
    med = statistics.median
    print(f"first paint, median of {args.runs} fresh visitors each, alternating (s):")
    print(f"  single rollout (default)        {med(oa):.3f}  [{min(oa):.3f} .. {max(oa):.3f}]")
    for v in args.versions:
        ratio = med(ra[v]) / med(oa)
        target = TARGETS.get(v, 1.5)
        print(f"  run page, {v:>5} x 8 x 8         {med(ra[v]):.3f}  [{min(ra[v]):.3f} .. {max(ra[v]):.3f}]  (its first "
              f"visitor, who reads the run: {firsts[v]:.3f})")
        print(f"    ratio                         {ratio:.2f}x  (target <= {target}x) {'PASS' if ratio <= target else 'MISS'}")
    ok = len(reads) == len(args.versions)
    print(f"  snapshots read                  {len(reads)}  (target: one per run) {'PASS' if ok else 'MISS'}")


if __name__ == "__main__":
    main()
