"""First paint of the run page for synthetic 200- and 2,000-version x 8-group x 8-rollout runs, against a single
rollout's first paint, in the same process run (the harness of bench/bench_first_paint.py: fresh browser contexts,
pages alternating, medians).

The synthetic run (12,800 rollouts) is written into a temp folder with the run format's own records and
encoders (rollout_trace/artifact/run_format.py: RunManifest, SegmentStart/End, IndexEntry, encode_line),
the bundled run's manifest and index lines as templates. It holds the run's small files and its index only,
no rollout folders: the run page's first paint reads nothing else (opening a group would need them). The run
page is painted when its versions list and all four charts are on screen, drawn from every version; the rollout when its first generated
token is. The bench counts the reads of the whole index (target: once, shared by every visitor).

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


def make_run(root: Path, versions: int = 200, groups: int = 8, k: int = 8) -> int:
    """Write the synthetic run; returns how many rollouts its index holds."""
    import msgspec

    from rollout_trace.artifact.run import open_run
    from rollout_trace.artifact.run_format import SegmentEnd, SegmentStart, encode_file, encode_line

    template = open_run("trl-run")
    entry = next(e for e in template.entries.values() if e.rows)
    seg = "20270101T000000Z-bench0"
    (root / "segments").mkdir(parents=True)
    (root / "index").mkdir()
    (root / "run.json").write_bytes(encode_file(msgspec.structs.replace(template.manifest, tokenizer=None)))
    (root / "segments" / f"{seg}.json").write_bytes(encode_file(SegmentStart(
        segment=seg, started_at="2027-01-01T00:00:00.000Z", dataset_start_index=0, model_version=1, num_generations=k)))
    (root / "segments" / f"{seg}.end.json").write_bytes(encode_file(SegmentEnd(
        segment=seg, ended_at="2027-01-01T09:00:00.000Z", groups_written=versions * groups, groups_lost=0,
        write_errors=0, rollouts_never_scored=0, writer_busy_s=0.0, handoff_s=0.0, max_queued_samples=0)))
    rewards = (1.0, 0.0, 0.5, -0.1, 0.0, 1.0, 0.5, 0.0)
    n = 0
    with open(root / "index" / f"{seg}.jsonl", "wb") as f:
        for v in range(1, versions + 1):
            for g in range(groups):
                gid = (v - 1) * groups + g
                gpath = f"groups/{seg}-v{v:06d}-g{gid:06d}"
                for r in range(k):
                    reward = rewards[(r + v + g) % k] if v % 50 else 0.0  # every 50th version: all rewards 0
                    f.write(encode_line(msgspec.structs.replace(
                        entry, segment=seg, policy_version=v, group_id=gid, rollout=r, rollout_id=f"{gid:08x}{r:04x}",
                        group_path=gpath, path=f"{gpath}/rollout-{r:02d}", reward=reward, env_reward=reward,
                        advantage=0.0, rows=[], task_id=f"{gid % 97:040x}", title=f"[task {gid % 97}] synthetic")))
                    n += 1
    template.close()
    return n


TARGETS = {200: 1.3, 2000: 1.5}  # run page drawn / a single rollout's first paint


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--versions", type=int, nargs="+", default=[200, 2000])
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    import rollout_trace.artifact.run as run_module
    from viewer.ui.app import build_app

    reads: list[str] = []
    real = run_module.read_run

    def counted(store, label, kind, prior=None):
        if prior is None:
            reads.append(label)
        return real(store, label, kind, prior)

    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        roots = {}
        for v in args.versions:
            roots[v] = Path(tmp) / f"run-{v}"
            t = time.perf_counter()
            n = make_run(roots[v], versions=v)
            size = sum(p.stat().st_size for p in (roots[v] / "index").iterdir()) / 1e6
            print(f"synthetic run: {v} versions, {n:,} rollouts, index {size:.1f} MB, written in "
                  f"{time.perf_counter() - t:.1f} s")
        run_module.read_run = counted  # from here on (artifact.collection imports it at call time)
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

            firsts = {v: paint(f"{url}/?src={roots[v]}", None, v) for v in args.versions}  # reads each index
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
              f"visitor, who reads the index: {firsts[v]:.3f})")
        print(f"    ratio                         {ratio:.2f}x  (target <= {target}x) {'PASS' if ratio <= target else 'MISS'}")
    ok = len(reads) == len(args.versions)
    print(f"  whole-index reads               {len(reads)}  (target: one per run) {'PASS' if ok else 'MISS'}")


if __name__ == "__main__":
    main()
