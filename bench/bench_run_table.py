"""The run index as Arrow columns (rollout_trace/artifact/run_table.py) at a million rollouts: first open,
cached reopen, filters and sorts, memory, and ten visitors of one run; then the run page's server handlers
(viewer/ui/run_view.py `show` and the run's collection index, viewer/ui/rows.py `index_page`) on it,
a first visitor and a second; then the drill-down (a group's map, a rollout, Back, the text search's rows),
which reads one group's rows from the columns, never the whole run (counted).

The synthetic run is bench/bench_run_page.py's (the run format's own records and encoders), at 15,625
versions x 8 groups x 8 rollouts = 1,000,000 rollouts, written once into --dir and reused. Each part runs in
a child process of its own so its peak memory (ru_maxrss) is the engine's alone. Beside each wall time the
CPU seconds it took (all threads): on a machine other work loads, the wall time grows and the CPU time is
what the open itself costs.

    .venv/bin/python bench/bench_run_table.py [--dir /tmp/bench-run-1m] [--versions 15625]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGETS = {"first_open_s": 10.0, "reopen_s": 1.0, "query_s": 0.3, "peak_mb": 1024.0}
SEGMENT = "20270101T000000Z-bench0"  # bench/bench_run_page.py make_run's segment


def measure(folder: str) -> dict:
    import pyarrow.compute as pc

    from rollout_trace.artifact.run_table import run_table

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out: dict = {}
    t, cpu = time.perf_counter(), time.process_time()
    table = run_table(folder)
    for col in ("reward", "trained_tokens", "timed_out", "trained"):
        table.per_version(col)
    out["first_open_s"] = time.perf_counter() - t
    out["first_open_cpu_s"] = time.process_time() - cpu
    out["rollouts"] = len(table)
    out["versions"] = table.per_version("reward").num_rows
    t = time.perf_counter()
    again = run_table(folder)
    for col in ("reward", "trained_tokens", "timed_out", "trained"):
        again.per_version(col)
    out["reopen_s"] = time.perf_counter() - t
    queries = {
        "filter reward>0.5, first page": dict(where=pc.field("reward") > 0.5),
        "sort by reward desc, page 3": dict(sort=[("reward", "descending")], offset=100),
        "filter version range + sort by tokens": dict(where=(pc.field("policy_version") >= 5000) &
                                                      (pc.field("policy_version") < 6000),
                                                      sort=[("trained_tokens", "descending")]),
        "filter task + sort by version": dict(where=pc.field("task_id") == f"{5:040x}",
                                              sort=[("policy_version", "ascending")]),
    }
    out["queries"] = {}
    for name, q in queries.items():
        t = time.perf_counter()
        total, rows = again.page(limit=50, **q)
        out["queries"][name] = (time.perf_counter() - t, total)
    again.page(sort=[("reward", "descending")], offset=200)  # the order is kept: a later page is a slice
    t = time.perf_counter()
    total, _ = again.page(sort=[("reward", "descending")], offset=400)
    out["queries"]["sort by reward desc, a later page"] = (time.perf_counter() - t, total)
    out["query_s"] = max(v[0] for v in out["queries"].values())
    one = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    threads = [threading.Thread(target=lambda: (run_table(folder).per_version("reward"),
                                                run_table(folder).page(sort=[("reward", "ascending")])))
               for _ in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    ten = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["peak_mb"] = one - base
    out["ten_visitors_ratio"] = (ten - base) / max(1.0, one - base)
    return out


def measure_page(folder: str) -> dict:
    """The run page's handlers as a visitor's page load calls them (head and body, then the run's index)."""
    from types import SimpleNamespace

    import gradio as gr

    from viewer.ui.run_view import RunView
    from viewer.ui.service import Service

    service = Service(folder, public=False)
    rv = RunView(service)
    with gr.Blocks():
        rv.render()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out: dict = {}
    for who in ("first", "second"):
        t, cpu = time.perf_counter(), time.process_time()
        rv.show(folder, {})
        service.rows.index_page(folder, {})
        out[f"page_{who}_s"] = time.perf_counter() - t
        out[f"page_{who}_cpu_s"] = time.process_time() - cpu
    out["index"] = {}
    for query in ({"sort": "-reward"}, {"kind": "group", "sort": "-policy_version", "page": "3"},
                  {"task": f"{5:040x}"[:12]}, {"q": "task 5]", "sort": "tokens"}, {"timed_out": "no", "tool": "bash"}):
        t = time.perf_counter()
        got = service.rows.index_page(folder, query)
        out["index"]["&".join(f"{k}={v}" for k, v in query.items())] = (time.perf_counter() - t, got.matched)
    t = time.perf_counter()
    rv.on_task(SimpleNamespace(_data={"action": "task", "src": folder, "task": f"{5:040x}", "version": "7"}))
    out["index"]["follow a task (body with its track)"] = (time.perf_counter() - t, 0)
    out["page_query_s"] = max(v[0] for v in out["index"].values())
    out["page_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base
    out.update(measure_drill(service, folder))
    return out


def _bench_group(folder: str, version: int) -> str:
    """The first group of `version` in the synthetic run, with the bundled run's first group's rollout folders
    copied in (the synthetic run writes no folders): a rollout of it opens as a real one."""
    import shutil

    from rollout_trace.artifact.sources import EXAMPLES_DIR

    group = f"groups/{SEGMENT}-v{version:06d}-g{(version - 1) * 8:06d}"
    target = Path(folder) / group
    if not target.exists():
        source = next((EXAMPLES_DIR / "trl-run" / "groups").iterdir())
        shutil.copytree(source, target)
    return group


def measure_drill(service, folder: str) -> dict:
    """Drill-down from the run page: a group's map, a rollout of it, Back to the run's index, another group,
    and the rows the text search reads; and how many times the whole run was read into Python rows."""
    import msgspec

    import rollout_trace.artifact.run as run_module
    from rollout_trace.analysis.training import import_trl
    from viewer.contract import Initial
    from viewer.index.contract import IndexPage

    import_trl()  # as the app does at start-up: seconds, once, whatever the run

    reads: list[int] = []
    real = run_module.read_run

    def counted(*a, **k):
        reads.append(1)
        return real(*a, **k)

    run_module.read_run = counted
    from rollout_trace.artifact.run_table import run_table

    versions = run_table(folder).per_version("reward")["version"].to_pylist()
    group, other = (_bench_group(folder, versions[len(versions) * k // 16]) for k in (7, 12))
    steps = {
        "open a group (its map, 8 rollouts)": lambda: service.rows.open_row(folder, group, {}, Initial()),
        "open a rollout of it (token view)": lambda: service.rows.open_row(folder, group, {}, Initial(), 1),
        "back to the run's index": lambda: service.rows.index_page(folder, {}),
        "open another group": lambda: service.rows.open_row(folder, other, {}, Initial()),
        "the same group again": lambda: service.rows.open_row(folder, other, {}, Initial()),
        "the text search's rows (first 20,000)": lambda: service.find_source(folder),
    }
    out: dict = {"drill": {}}
    for name, step in steps.items():
        t, cpu = time.perf_counter(), time.process_time()
        got = step()
        view, page = getattr(got, "view", None), getattr(got, "page", None)
        ok = not (page and msgspec.json.decode(page, type=IndexPage).error_html) and \
            not (isinstance(view, str) and '"error_html"' in view[:200] and "tv-cleared" not in view[:200])
        out["drill"][name] = (time.perf_counter() - t, time.process_time() - cpu, ok)
    out["drill_whole_reads"] = len(reads)
    run_module.read_run = real
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/bench-run-1m")
    ap.add_argument("--versions", type=int, default=15625)
    ap.add_argument("--child", choices=("table", "page"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        sys.stdout.write(json.dumps((measure if args.child == "table" else measure_page)(args.dir)))
        return
    folder = Path(args.dir)
    if not (folder / "run.json").exists():
        from bench.bench_run_page import make_run

        t = time.perf_counter()
        n = make_run(folder, versions=args.versions)
        print(f"wrote {n:,} rollouts into {folder} in {time.perf_counter() - t:.0f} s")
    size = sum(p.stat().st_size for p in (folder / "index").iterdir()) / 1e6
    def child(part: str) -> dict:
        return json.loads(subprocess.run([sys.executable, __file__, "--child", part, "--dir", str(folder)],
                                         check=True, capture_output=True, text=True).stdout)

    got = child("table")
    print(f"run: {got['rollouts']:,} rollouts, {got['versions']:,} versions, index {size:.0f} MB")
    for key, target in TARGETS.items():
        unit = "MB" if key.endswith("mb") else "s"
        cpu_key = key.removesuffix("_s") + "_cpu_s"
        cpu = f"  [{got[cpu_key]:.1f} s CPU]" if cpu_key in got else ""
        print(f"  {key:<14} {got[key]:8.3f} {unit}  (target <= {target:g} {unit}) "
              f"{'PASS' if got[key] <= target else 'MISS'}{cpu}")
    for name, (s, total) in got["queries"].items():
        print(f"    {name:<40} {s * 1000:7.1f} ms  ({total:,} rows match)")
    r = got["ten_visitors_ratio"]
    print(f"  ten visitors' memory / one's  {r:.2f}x  (target <= 1.2x) {'PASS' if r <= 1.2 else 'MISS'}")
    page = child("page")
    print("run page handlers (RunView.show + the run's collection index page):")
    for who in ("first", "second"):
        print(f"  {who} visitor  {page[f'page_{who}_s']:8.3f} s  [{page[f'page_{who}_cpu_s']:.1f} s CPU]")
    for name, (s, total) in page["index"].items():
        print(f"    {name:<40} {s * 1000:7.1f} ms  ({total:,} rows match)")
    print(f"  slowest page query {page['page_query_s'] * 1000:.0f} ms (target <= 300 ms) "
          f"{'PASS' if page['page_query_s'] <= 0.3 else 'MISS'}; server memory {page['page_peak_mb']:.0f} MB "
          f"(target <= 1024 MB) {'PASS' if page['page_peak_mb'] <= 1024 else 'MISS'}")
    print(f"drill-down from the run page (beside the first open's {got['first_open_s']:.2f} s):")
    for name, (s, cpu, ok) in page["drill"].items():
        print(f"    {name:<40} {s * 1000:7.1f} ms  [{cpu:.2f} s CPU]  {s / got['first_open_s']:6.1%} of the first open"
              f"{'' if ok else '  (an error value)'}")
    print(f"  the whole run read into Python rows (read_run): {page['drill_whole_reads']} times (target 0) "
          f"{'PASS' if page['drill_whole_reads'] == 0 else 'MISS'}")


if __name__ == "__main__":
    main()
