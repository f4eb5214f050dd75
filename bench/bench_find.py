"""Search and findings on a synthetic 100k-rollout run, against a naive scan in the same run.

The run is 100,000 rollouts of `--turns` agent turns (200 versions x 500 rollouts), each turn a generated text, one
tool call and a tool output made of words drawn from a fixed vocabulary (with a few rare markers planted at known
rates), built in memory as rollout_trace/analysis/texts.py's `RolloutText`, so the bench measures the index and the
rules, not the reading of 100k folders (the per-rollout cost of reading a real artifact's text is measured on the
bundled run and printed beside). Measured:

- findings: every rule over every rollout (once per run state), then the per-version counts from the index
  against recomputing the rules over every rollout (the baseline: what a page would do without the index);
- the index build (SQLite FTS5 trigram, viewer/find/text_index.py), its size on disk;
- queries (a rare word, a common word, a regex with a literal, a regex without one) against a scan of every
  piece's text with the same compiled pattern, in memory (the baseline: a scan per query, with no file reads).

    .venv/bin/python bench/bench_find.py [--rollouts 100000] [--turns 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rollout_trace.analysis.findings import findings  # noqa: E402
from rollout_trace.analysis.texts import Piece, RolloutText, TurnText  # noqa: E402
from rollout_trace.analysis.tools import ToolCall  # noqa: E402
from viewer.find.query import parse_query  # noqa: E402
from viewer.find.text_index import FindIndex, RolloutRow  # noqa: E402

WORDS = ("the value is read from input and the answer printed to stdout then we check each case loop over the "
         "numbers sum count sort list dict set def return if else for while import sys print int str split map "
         "len range open file write solution tests pass fail error ok done next").split()
PER_VERSION = 500


def _text(rng: np.random.Generator, n: int) -> str:
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), n))


def synthetic(i: int, rng: np.random.Generator, turns: int) -> tuple[RolloutRow, RolloutText]:
    out = []
    for t in range(turns):
        gen = _text(rng, 18)
        if i % 1000 == 7 and t == 0:
            gen += " zebracorn"  # rare: 0.1% of rollouts
        ctx = _text(rng, 18) + (" Traceback (most recent call last)" if i % 50 == 3 else "")
        ids = rng.integers(0, 50_000, 40).astype(np.int32)
        if i % 200 == 11:  # 0.5%: a looping turn
            ids = np.tile(ids[:4], 30)
        call = ToolCall(t, f"c{t}", "bash", {"command": f"python solution.py < case{t}.txt"}, True,
                        "Traceback" if i % 50 == 3 else "ok", i % 50 == 3)
        n_prompt = 500 + 200 * t
        out.append(TurnText(index=t, n_prompt=n_prompt, output_ids=ids,
                            generated=Piece("generated", t, gen, n_prompt, np.cumsum([0] + [len(w) + 1 for w in gen.split()][:-1])),
                            context=Piece("tool-output", t, ctx, n_prompt - 100, np.cumsum([0] + [len(w) + 1 for w in ctx.split()][:-1])),
                            calls=(call,), finish_reason="length" if i % 100 == 5 else "stop", content=gen,
                            shared=n_prompt - 100, continuous=not (i % 25 == 1 and t == 1)))
    row = RolloutRow(path=f"groups/v{i // PER_VERSION + 1:06d}/rollout-{i % PER_VERSION:03d}", version=i // PER_VERSION + 1,
                     rollout=i % 8, status="ok")
    return row, RolloutText(turns=tuple(out), workdir="/work")


def real_rollout_cost() -> float:
    """ms per rollout to read the bundled run's rollouts' text and findings (artifact read included)."""
    from viewer.find.build import collection_items
    from viewer.index import open_index

    c = open_index("trl-run")
    t = time.perf_counter()
    n = sum(1 for _ in collection_items(c))
    c.close()
    return (time.perf_counter() - t) * 1000 / max(n, 1)


def _median(fn, runs: int) -> tuple[float, object]:
    times, got = [], None
    for _ in range(runs):
        t = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rollouts", type=int, default=100_000)
    ap.add_argument("--turns", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    run = [synthetic(i, rng, args.turns) for i in range(args.rollouts)]
    print(f"synthetic run: {len(run):,} rollouts x {args.turns} turns, made in {time.perf_counter() - t:.1f} s")
    print(f"reading a real rollout's text + findings (bundled trl-run): {real_rollout_cost():.1f} ms a rollout")

    t = time.perf_counter()
    found = [findings(text) for _, text in run]
    rules_s = time.perf_counter() - t
    print(f"findings, every rule over every rollout: {rules_s:.1f} s ({rules_s * 1e6 / len(run):.0f} us a rollout), "
          f"{sum(map(len, found)):,} findings")

    with tempfile.TemporaryDirectory(prefix="bench-find-") as tmp:
        index = FindIndex(Path(tmp) / "index.sqlite")
        t = time.perf_counter()
        index.add((row, text, f) for (row, text), f in zip(run, found, strict=True))
        build_s = time.perf_counter() - t
        size = (Path(tmp) / "index.sqlite").stat().st_size / 1e6
        texts = [(row, p) for row, text in run for p in text.pieces()]
        chars = sum(len(p.text) for _, p in texts)
        print(f"index build: {build_s:.1f} s for {len(texts):,} pieces ({chars / 1e6:.0f} M characters); {size:.0f} MB on disk")

        counts_s, counts = _median(index.finding_counts, args.runs)

        def recount():
            per: dict = {}
            for (row, text) in run:
                for f in findings(text):
                    per.setdefault(row.version, {}).setdefault(f.rule, set()).add(row.path)
            return per

        base_s, _ = _median(recount, 1)
        print(f"findings per version: index {counts_s * 1000:.1f} ms, recomputing the rules {base_s:.1f} s "
              f"(x{base_s / counts_s:,.0f})")

        queries = {"rare word": "zebracorn", "common word": "solution", "regex with a literal": r"/Traceback \(most/",
                   "regex without one": r"/\bz\w+n\b/"}
        print(f"{'query':24} {'index':>10} {'scan':>10} {'ratio':>8}  rollouts")
        for name, pattern in queries.items():
            q = parse_query(pattern, limit=50)
            idx_s, res = _median(lambda q=q: index.search(q), args.runs)

            def scan(q=q):
                hit: dict = {}
                for row, p in texts:
                    if q.compiled.search(p.text):
                        hit[row.path] = row.version
                return hit

            scan_s, hits = _median(scan, 1)
            partial = res.partial  # type: ignore[attr-defined]
            if not partial:  # the same answer, or the bench says which
                assert res.rollouts == len(hits), (name, res.rollouts, len(hits))  # type: ignore[attr-defined]
            note = f"  (partial: {res.rollouts:,} found within the {q.budget_s:g} s budget)" if partial else ""  # type: ignore[attr-defined]
            print(f"{name:24} {idx_s * 1000:8.1f}ms {scan_s * 1000:8.0f}ms {scan_s / idx_s:7.1f}x  {len(hits):,}{note}")
        index.close()


if __name__ == "__main__":
    main()
