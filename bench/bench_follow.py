"""What watching a large live run costs the server: the run page's poll (viewer/ui/run_view.py `poll`, every
POLL_S) on a local run of a million rollouts while a recorder appends a group every second.

    .venv/bin/python bench/bench_follow.py [--run /work/bench-runs/run-1m-c] [--seconds 30] [--rounds 2]

The run (bench/make_run.py's, `--run`) is linked into a temporary folder (its shards hard-linked: a sealed shard
is never rewritten); a recorder in a child process appends one of the bundled run's groups to its open tail every
second, as the recorder does while training (tests/support/run_tables.py `append_group`, through the recorder's
own writer). A watcher in another child makes the run page's first visit, then polls as a browser's timer does
for `--seconds`, re-rendering the page whenever the snapshot it gets is a new one. Measured: the watcher's CPU
seconds per second of watching (a share of a core), and how many polls re-rendered. Each watcher is measured with
the snapshot's hold (rollout_trace/artifact/run_table.py FOLLOW_ROWS_S) and without it (a new snapshot at every
poll that finds the run grown, as before the hold), alternately, `--rounds` times each; medians.

Measured on the 2-core machine at 1,024,000 rollouts, a group appended every second, 30 s of watching, 2 rounds
each: without the hold 0.26-0.27 of a core (every poll re-rendered: 11-12 of them, each ~0.65 s of CPU), with it
0.07 (3 of 14-15 polls re-rendered).
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


def recorder(run: str, every: float) -> None:
    """Append one bundled group to the run's segment every `every` seconds, at versions past the run's, until
    killed."""
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    import pyarrow.compute as pc

    from rollout_trace.artifact.run_table import run_table
    from support.run_places import placed
    from support.run_tables import append_group, bundled_rows, groups

    t = run_table(run)
    segment, top = t.segment_names()[0], int(pc.max(t.column("policy_version")).as_py())
    group = groups(bundled_rows())[0]
    n = 0
    while True:
        n += 1
        append_group(Path(run), placed(group, version=top + n, group_id=10**6 + n, segment=segment))
        time.sleep(every)


def watcher(run: str, seconds: float, hold: bool) -> dict:
    """The run page's first visit, then its poll every POLL_S for `seconds`: CPU per second of watching."""
    sys.path[:0] = [str(ROOT)]
    from bench.bench_run_table import _app
    from rollout_trace.artifact import run_table as rt
    from viewer.ui.run_view import POLL_S

    if not hold:
        rt.FOLLOW_ROWS_S = 10**18  # a new snapshot at every poll that finds the run grown
    service, rv = _app(public=False)
    rv.on_page_load({"src": run})
    seen = (run, service.run_table(run).state)
    polls = rendered = 0
    c0, t0 = time.process_time(), time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        time.sleep(POLL_S)
        got = rv.poll(seen)
        polls += 1
        if rv.src_state in got:
            seen = got[rv.src_state]
            rendered += 1
    wall = time.perf_counter() - t0
    return {"core_share": (time.process_time() - c0) / wall, "polls": polls, "rendered": rendered,
            "rollouts": len(service.run_table(run))}


def measure(run: Path, seconds: float, hold: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-follow-") as tmp:
        live = Path(tmp) / "run"
        live.mkdir()
        for item in run.iterdir():
            if item.is_dir() and item.name in ("rollouts", "files", "consumed", "tokenizer"):
                subprocess.run(["cp", "-al", str(item), str(live / item.name)], check=True)
            elif item.is_dir():
                subprocess.run(["cp", "-r", str(item), str(live / item.name)], check=True)
            else:
                (live / item.name).write_bytes(item.read_bytes())
        rec = subprocess.Popen([sys.executable, __file__, "--child", "recorder", "--run", str(live)])
        try:
            out = subprocess.run([sys.executable, __file__, "--child", "watcher", "--run", str(live), "--seconds",
                                  str(seconds)] + ([] if hold else ["--no-hold"]),
                                 capture_output=True, text=True, check=True)
        finally:
            rec.kill()
            rec.wait()
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=Path("/work/bench-runs/run-1m-c"))
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", choices=["recorder", "watcher"], help=argparse.SUPPRESS)
    ap.add_argument("--no-hold", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "recorder":
        recorder(str(args.run), 1.0)
        return
    if args.child == "watcher":
        print(json.dumps(watcher(str(args.run), args.seconds, not args.no_hold)), flush=True)
        return
    if not (args.run / "run.json").exists():
        raise SystemExit(f"{args.run}: no run (write one with bench/make_run.py)")
    got: dict[str, list[dict]] = {"without the hold": [], "with the hold": []}
    for _ in range(args.rounds):
        for name in got:
            got[name].append(measure(args.run, args.seconds, name == "with the hold"))
            print(name, got[name][-1], flush=True)
    print(f"\nwatching {got['with the hold'][-1]['rollouts']:,} rollouts, a group appended every second, "
          f"{args.seconds:g} s, load {os.getloadavg()[0]:.1f}:")
    for name, runs in got.items():
        share = statistics.median(r["core_share"] for r in runs)
        each = ", ".join(f"{r['core_share']:.2f}" for r in runs)
        rendered = ", ".join(f"{r['rendered']} of {r['polls']}" for r in runs)
        print(f"    {name:<18} {share:.2f} of a core ({each}); polls re-rendered {rendered}")


if __name__ == "__main__":
    main()
