"""Benchmark the recorder's cost to TRL's rollout worker: samples/s with and without it, in the same run.

    python bench/bench_record.py [--rounds 3] [--samples 300] [--session-s 0.0 0.05 0.2] [--json]

TRL 1.16's real `HarnessRolloutWorker` in its real child over replayed sessions (tests/support/trl_runs.py,
the same worker the tests build), the plain one and the `RecordingHarnessRolloutWorker` alternately, the
order swapped every round. Throughput is the samples a consumer takes from the real queue per second, from
the first sample to the `--samples`-th (the child's spawn is not counted). `--session-s` is the agent's time
per rollout in the replayed session: 0 is the worst case for the recorder (the child does nothing but TRL's
bookkeeping, and the recorder's writer thread competes with it for the GIL); a real coding agent takes
minutes. Also reported, from the recorder's own segment files: its time on TRL's event loop per group (the
critical path) and its writer thread's time per group (off it).

Target: recorded / plain throughput >= 0.98. Measured on the shared 2-core machine (3 rounds, 300
samples): sessions of 0.2 s 1.00 (32 samples/s), 0.05 s 1.07 (120 samples/s: noise), no session time 0.49-0.62
(about 1,300 samples/s, 200 groups a second: the writer's 15-19 ms a group competes for the child's GIL).
Prints a table and writes bench/out/record.json.
The exit code is 0 either way: this measures, it does not gate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
OUT = ROOT / "bench" / "out"


def one(tok, record_dir: Path | None, n: int, session_s: float) -> float:
    from support import trl_runs

    w = trl_runs.worker(record_dir, traces=trl_runs.MIXED, tok=tok, inflight=4, session_s=session_s, n_prompts=64,
                        queue_maxsize=64)
    w.start()
    w.rollout_buffer.get(timeout=600)
    t0 = time.perf_counter()
    for _ in range(n):
        w.rollout_buffer.get(timeout=600)
    rate = n / (time.perf_counter() - t0)
    done = trl_runs.drain(w)
    w.stop()
    done.set()
    return rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--session-s", type=float, nargs="+", default=[0.0, 0.05, 0.2])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from support import trl_cpu

    tok = trl_cpu.tokenizer()
    report = []
    with tempfile.TemporaryDirectory(prefix="bench-record-") as tmp:
        for session_s in args.session_s:
            rates: dict[str, list[float]] = {"plain": [], "recorded": []}
            for r in range(args.rounds):
                for label in ("plain", "recorded") if r % 2 == 0 else ("recorded", "plain"):
                    run = Path(tmp) / f"run-{session_s}-{r}" if label == "recorded" else None
                    rates[label].append(one(tok, run, args.samples, session_s))
            ends = [json.loads(p.read_text()) for p in Path(tmp).glob(f"run-{session_s}-*/segments/*.end.json")]
            groups = sum(e["groups_written"] for e in ends) or 1
            row = {"session_s": session_s, "plain_samples_per_s": [round(x, 1) for x in rates["plain"]],
                   "recorded_samples_per_s": [round(x, 1) for x in rates["recorded"]],
                   "ratio": round(statistics.median(rates["recorded"]) / statistics.median(rates["plain"]), 3),
                   "event_loop_ms_per_group": round(1000 * sum(e["handoff_s"] for e in ends) / groups, 3),
                   "writer_ms_per_group": round(1000 * sum(e["writer_busy_s"] for e in ends) / groups, 1),
                   "groups_written": groups}
            report.append(row)
            print(f"session {session_s:.2f} s: plain {row['plain_samples_per_s']} samples/s, recorded "
                  f"{row['recorded_samples_per_s']}; recorded/plain {row['ratio']:.3f} (target >= 0.98); the recorder "
                  f"spent {row['event_loop_ms_per_group']} ms per group on TRL's event loop, "
                  f"{row['writer_ms_per_group']} ms in its writer thread ({groups} groups)", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "record.json").write_text(json.dumps(report, indent=2))
    if args.json:
        print(json.dumps(report))


if __name__ == "__main__":
    main()
