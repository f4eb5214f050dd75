"""Benchmark the collection index against reading every turns.json, in the same run.

    python bench/bench_collection.py [--n 1000] [--turns 10 --max-context 12000] [--repeat 3]

Generates (once; reused while the parameters match) a local collection of `--n` synthetic artifacts
with bench/make_large.py into bench/out/collection-N/, nested two levels deep (day-XX/run-XXXX), each
with a multi-MB turns.json (about 2 MB at the defaults) and a summary.json varied by model and date.
Then, with the files in the page cache for both sides:

    index      artifact.collection.open_collection(folder): list + read summary/task.json  [median of --repeat]
    json.load  stdlib json.load of every turns.json                                        [baseline, once]

Targets: index <= 1 s and <= 0.05x the baseline. Prints a table and writes
bench/out/collection.json. The exit code is 0 either way: this measures, it does not gate.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from make_large import make_large  # bench/ is on sys.path: this file runs as a script

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out"
MODELS = ("synthetic/bench-135M", "synthetic/bench-1.7B", "synthetic/bench-7B")


def generate(folder: Path, n: int, turns: int, max_context: int) -> None:
    """Write the collection unless a complete one with the same parameters is already there."""
    params = {"n": n, "turns": turns, "max_context": max_context}
    marker = folder / ".complete.json"
    if marker.is_file() and json.loads(marker.read_text()) == params:
        return
    print(f"generating {n} artifacts into {folder} (once) ...", flush=True)
    t = time.perf_counter()
    for i in range(n):
        art = make_large(folder / f"day-{i // 100:02d}" / f"run-{i:04d}", turns=turns, max_context=max_context, seed=i)
        summary = json.loads((art / "summary.json").read_text())
        summary["model"] = MODELS[i % len(MODELS)]
        summary["captured_at"] = f"2026-11-{1 + i // 100:02d}T{i % 24:02d}:00:00Z"
        (art / "summary.json").write_text(json.dumps(summary, indent=2))
    marker.write_text(json.dumps(params))
    print(f"  done in {time.perf_counter() - t:.1f} s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--max-context", type=int, default=12_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from rollout_trace.artifact.collection import open_collection

    folder = OUT / f"collection-{args.n}"
    generate(folder, args.n, args.turns, args.max_context)
    turns_files = sorted(folder.rglob("turns.json"))
    total_bytes = sum(p.stat().st_size for p in turns_files)

    open_collection(str(folder))  # one untimed pass so both sides start from a warm page cache
    index_times, rows = [], 0
    for _ in range(args.repeat):
        t = time.perf_counter()
        c = open_collection(str(folder))
        index_times.append(time.perf_counter() - t)
        rows = len(c.records)
        assert rows == args.n and all(r.valid for r in c.records), "the index must list every artifact, all valid"

    t = time.perf_counter()
    for p in turns_files:
        with open(p, "rb") as f:
            json.load(f)
    baseline = time.perf_counter() - t

    index = statistics.median(index_times)
    ratio = index / baseline
    result = {"artifacts": args.n, "turns_json_total_mb": round(total_bytes / 1e6, 1),
              "turns_json_mean_mb": round(total_bytes / 1e6 / args.n, 2), "index_s": round(index, 4),
              "index_runs_s": [round(x, 4) for x in index_times], "baseline_json_load_s": round(baseline, 3),
              "ratio": round(ratio, 5), "target_index_s": 1.0, "target_ratio": 0.05,
              "meets_targets": index <= 1.0 and ratio <= 0.05}
    print(f"{args.n} artifacts, turns.json {result['turns_json_mean_mb']} MB each ({result['turns_json_total_mb']} MB)")
    print(f"  index (open_collection, median of {args.repeat})  {index:8.3f} s   target <= 1 s")
    print(f"  json.load of every turns.json [baseline]  {baseline:8.3f} s")
    print(f"  index / baseline                          {ratio:8.4f}     target <= 0.05")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "collection.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
