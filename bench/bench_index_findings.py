"""The collection index's findings column and filter on a synthetic 100k-row collection, against the same page
without findings, in the same run.

The rows are copies of a bundled rollout's index record (no files are read: an index page is built from records);
the findings are written into a real search index (viewer/find/text_index.py) without text, as a build leaves them:
30% of the rollouts with `drift-fork`, 1% with `cut-at-limit`. Measured, median of --repeat:

    plain       build_page(...) with no findings (the index as before: the baseline)
    first       `rules_by_path()` read from the search index (once per index state: kept until it grows)
    column      the same page with the rules (kept) and the column filled in
    filter      the same with `finding=cut-at-limit` (every row tested, one page of the 1,000 kept)

    .venv/bin/python bench/bench_index_findings.py [--rows 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rollout_trace.analysis.findings import Finding  # noqa: E402
from rollout_trace.artifact.collection import Collection, open_collection  # noqa: E402
from viewer.find.text_index import FindIndex, RolloutRow  # noqa: E402
from viewer.index.page import build_page  # noqa: E402


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    template = next(r for r in open_collection("smollm2-offline").records if r.kind == "artifact")
    records = [msgspec.structs.replace(template, path=f"day-{i // 1000:03d}/run-{i:06d}") for i in range(args.rows)]
    c = Collection("synthetic", "folder", records)
    with tempfile.TemporaryDirectory() as tmp:
        index = FindIndex(Path(tmp) / "index.sqlite")
        drift, cut = Finding("drift-fork", 1, 509, 510, "drift"), Finding("cut-at-limit", 0, 0, 512, "cut")
        index.add((RolloutRow(r.path), None, ([drift] if i % 10 < 3 else []) + ([cut] if i % 100 == 7 else []))
                  for i, r in enumerate(records))
        t = time.perf_counter()
        index.rules_by_path()  # once per index state (kept until the index grows)
        first = time.perf_counter() - t
        plain = _median(lambda: build_page(c, "synthetic", {}, 1), args.repeat)
        column = _median(lambda: build_page(c, "synthetic", {}, 1, findings=index.rules_by_path()), args.repeat)
        filt = _median(lambda: build_page(c, "synthetic", {"finding": "cut-at-limit"}, 1,
                                          findings=index.rules_by_path()), args.repeat)
        got = build_page(c, "synthetic", {"finding": "cut-at-limit"}, 1, findings=index.rules_by_path())
        assert got.matched == args.rows // 100 and got.findings_known
        index.close()
    print(f"{args.rows:,} rows, median of {args.repeat}")
    print(f"reading every row's rules    {first * 1000:8.1f} ms  (once per index state)")
    print(f"plain index page (baseline)  {plain * 1000:8.1f} ms")
    print(f"with the findings column     {column * 1000:8.1f} ms  x{column / plain:.2f}")
    print(f"filtered by a finding        {filt * 1000:8.1f} ms  x{filt / plain:.2f}")


if __name__ == "__main__":
    main()
