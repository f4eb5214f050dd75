"""The run index as Arrow columns (rollout_trace/artifact/run_table.py) at a million rollouts: first open,
cached reopen, filters and sorts, memory, and ten visitors of one run.

The synthetic run is bench/bench_run_page.py's (the run format's own records and encoders), at 15,625
versions x 8 groups x 8 rollouts = 1,000,000 rollouts, written once into --dir and reused. The measures run
in a child process so its peak memory (ru_maxrss) is the engine's alone.

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


def measure(folder: str) -> dict:
    import pyarrow.compute as pc

    from rollout_trace.artifact.run_table import run_table

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out: dict = {}
    t = time.perf_counter()
    table = run_table(folder)
    for col in ("reward", "trained_tokens", "timed_out", "trained"):
        table.per_version(col)
    out["first_open_s"] = time.perf_counter() - t
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/bench-run-1m")
    ap.add_argument("--versions", type=int, default=15625)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        sys.stdout.write(json.dumps(measure(args.dir)))
        return
    folder = Path(args.dir)
    if not (folder / "run.json").exists():
        from bench.bench_run_page import make_run

        t = time.perf_counter()
        n = make_run(folder, versions=args.versions)
        print(f"wrote {n:,} rollouts into {folder} in {time.perf_counter() - t:.0f} s")
    size = sum(p.stat().st_size for p in (folder / "index").iterdir()) / 1e6
    got = json.loads(subprocess.run([sys.executable, __file__, "--child", "--dir", str(folder)], check=True,
                                    capture_output=True, text=True).stdout)
    print(f"run: {got['rollouts']:,} rollouts, {got['versions']:,} versions, index {size:.0f} MB")
    for key, target in TARGETS.items():
        unit = "MB" if key.endswith("mb") else "s"
        print(f"  {key:<14} {got[key]:8.3f} {unit}  (target <= {target:g} {unit}) {'PASS' if got[key] <= target else 'MISS'}")
    for name, (s, total) in got["queries"].items():
        print(f"    {name:<40} {s * 1000:7.1f} ms  ({total:,} rows match)")
    r = got["ten_visitors_ratio"]
    print(f"  ten visitors' memory / one's  {r:.2f}x  (target <= 1.2x) {'PASS' if r <= 1.2 else 'MISS'}")


if __name__ == "__main__":
    main()
