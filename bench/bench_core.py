"""Benchmark the artifact core against the stdlib on a large synthetic rollout, and check the targets.

    python bench/bench_core.py [--turns 100 --max-context 60000] [--repeat 3]

Writes a seed-format artifact with bench/make_large.py into bench/out/large/ (replaced each run), then
times each measurement in a fresh subprocess, so memory and caches start the same every time, and
reports the median of `--repeat` runs of wall time, CPU time (to tell a slow path from a busy
machine) and memory kept (RSS after - before, with the result still alive):

    json.load        stdlib json.load of turns.json  [baseline]
    load_artifact    artifact.load_artifact(folder), full read + validate
    load_index       artifact.load_index(folder), the per-turn small fields only
    vocab_table      rollout_trace.analysis.tokens.vocab_from_tokenizer, the display table (built once per vocabulary)
    token_texts      rollout_trace.analysis.tokens.token_texts on 1M random ids, table built before timing
    decode_batch     tokenizers' decode_batch of the same 1M ids as one-id sequences  [baseline]

Targets: load_artifact <= 0.5x json.load; load_index <= 0.15x json.load; memory kept by
load_artifact <= 2x the int32 size of all prompt + output ids; 1M ids decoded in <= 0.1 s.
The table is printed and the results go to bench/out/core.json. The exit code is 0 either way:
this measures, it does not gate.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from make_large import make_large  # bench/ is on sys.path: this file runs as a script

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out"
TOKENIZER = ROOT / "examples" / "scripted-smollm2" / "tokenizer" / "tokenizer.json"
N_DECODE = 1_000_000


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _timed(fn: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    """Run `fn` once: its result, and wall seconds, CPU seconds (all threads) and RSS growth with the result alive.

    CPU time is there to read a contended machine: wall well above CPU means something else had the cores.
    """
    before = _rss()
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return result, {"seconds": wall, "cpu_seconds": cpu, "kept_bytes": _rss() - before}


def _json_load(folder: Path) -> dict[str, float]:
    def load() -> Any:
        with (folder / "turns.json").open(encoding="utf-8") as f:
            return json.load(f)

    data, m = _timed(load)
    assert data["turns"]
    return m


def _load_artifact(folder: Path) -> dict[str, float]:
    from rollout_trace.artifact import load_artifact

    art, m = _timed(lambda: load_artifact(folder))
    assert art.turns
    return m


def _load_index(folder: Path) -> dict[str, float]:
    from rollout_trace.artifact import load_index

    index, m = _timed(lambda: load_index(folder))
    assert index
    return m


def _random_ids(vocab_size: int) -> Any:
    """The N_DECODE ids both decoders get: uniform over the vocabulary, fixed seed."""
    import numpy as np

    return np.random.default_rng(0).integers(0, vocab_size, size=N_DECODE)


def _vocab_table(folder: Path) -> dict[str, float]:
    from tokenizers import Tokenizer

    from rollout_trace.analysis.tokens import vocab_from_tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    vocab, m = _timed(lambda: vocab_from_tokenizer(tok, "bench"))
    assert vocab.size
    return m


def _token_texts(folder: Path) -> dict[str, float]:
    from tokenizers import Tokenizer

    from rollout_trace.analysis.tokens import token_texts, vocab_from_tokenizer

    vocab = vocab_from_tokenizer(Tokenizer.from_file(str(TOKENIZER)), "bench")
    ids = _random_ids(vocab.size)
    texts, m = _timed(lambda: token_texts(vocab, ids))
    assert texts.text.size == N_DECODE
    return m


def _decode_batch(folder: Path) -> dict[str, float]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    batch = [[i] for i in _random_ids(tok.get_vocab_size()).tolist()]
    texts, m = _timed(lambda: tok.decode_batch(batch, skip_special_tokens=False))
    assert len(texts) == N_DECODE
    return m


# name: (printed label, worker). Each worker runs alone in a fresh process and takes the artifact
# folder (the tokenizer ones ignore it).
MEASUREMENTS: dict[str, tuple[str, Callable[[Path], dict[str, float]]]] = {
    "json.load": ("json.load(turns.json)  [baseline]", _json_load),
    "load_artifact": ("artifact.load_artifact  (load + validate)", _load_artifact),
    "load_index": ("artifact.load_index  (turn index)", _load_index),
    "vocab_table": ("vocab_from_tokenizer  (display table, built once)", _vocab_table),
    "token_texts": (f"token_texts, {N_DECODE:,} ids", _token_texts),
    "decode_batch": (f"tokenizers decode_batch, {N_DECODE:,} ids  [baseline]", _decode_batch),
}


def run_worker(name: str, folder: Path) -> dict[str, float]:
    """One measurement in a fresh interpreter."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", name, str(folder)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the {name} worker failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def measure_all(folder: Path, repeat: int) -> dict[str, dict[str, float]]:
    """Median of each field per measurement over `repeat` rounds; a round runs every measurement once,
    so a baseline and what is compared with it see the same machine load."""
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in MEASUREMENTS}
    for k in range(repeat):
        print(f"round {k + 1}/{repeat}...", flush=True)
        for name in MEASUREMENTS:
            runs[name].append(run_worker(name, folder))
    return {name: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for name, rs in runs.items()}


def int32_bytes(folder: Path) -> int:
    """What every prompt and output id of the artifact takes as int32."""
    from rollout_trace.artifact import load_index

    return 4 * sum(h.n_prompt_ids + h.n_output_ids for h in load_index(folder))


def targets(m: dict[str, dict[str, float]], ids_bytes: int) -> list[dict]:
    """Each target with its measured ratio (or seconds), its limit and whether it is met."""
    base = m["json.load"]["seconds"]
    rows = [
        ("load_artifact time / json.load time", m["load_artifact"]["seconds"] / base, 0.5, "x"),
        ("load_index time / json.load time", m["load_index"]["seconds"] / base, 0.15, "x"),
        ("load_artifact kept memory / int32 ids", m["load_artifact"]["kept_bytes"] / ids_bytes, 2.0, "x"),
        (f"token_texts on {N_DECODE:,} ids", m["token_texts"]["seconds"], 0.1, "s"),
    ]
    return [{"target": t, "value": v, "limit": lim, "unit": u, "pass": v <= lim} for t, v, lim, u in rows]


def report(m: dict[str, dict[str, float]], checks: list[dict], ids_bytes: int, turns_bytes: int, repeat: int,
           load: tuple[float, float]) -> str:
    """The printed table: every measurement, then every target with PASS or MISS."""
    mb, w = 1e6, 52
    lines = [(f"turns.json {turns_bytes / mb:.1f} MB; all ids as int32 {ids_bytes / mb:.1f} MB; "
              f"median of {repeat} rounds, each measurement in a fresh process"),
             (f"load average {load[0]:.2f} before, {load[1]:.2f} after, on {os.cpu_count()} cores "
              "(this benchmark adds about 1; more means other work shared the cores)"), "",
             f"{'measurement':<{w}}{'wall':>9}{'cpu':>9}{'kept memory':>14}"]
    for name, (label, _) in MEASUREMENTS.items():
        r = m[name]
        lines.append(f"{label:<{w}}{r['seconds']:>8.3f}s{r['cpu_seconds']:>8.3f}s{r['kept_bytes'] / mb:>11.1f} MB")
    lines += ["", f"{'target':<{w}}{'measured':>9}{'limit':>10}  result"]
    for c in checks:
        limit = f"<= {c['limit']:g}{c['unit']}"
        lines.append(f"{c['target']:<{w}}{c['value']:>8.3f}{c['unit']}{limit:>10}  {'PASS' if c['pass'] else 'MISS'}")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description="Benchmark artifact loading and token decoding against the stdlib.")
    p.add_argument("--turns", type=int, default=100)
    p.add_argument("--max-context", type=int, default=60_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--worker", nargs=2, metavar=("NAME", "FOLDER"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        name, folder = args.worker
        print(json.dumps(MEASUREMENTS[name][1](Path(folder))))
        return

    folder = OUT / "large"
    shutil.rmtree(folder, ignore_errors=True)
    t0 = time.perf_counter()
    make_large(folder, turns=args.turns, max_context=args.max_context)
    print(f"generated {folder} in {time.perf_counter() - t0:.1f} s", flush=True)

    load_before = os.getloadavg()[0]
    results = measure_all(folder, args.repeat)
    load = (load_before, os.getloadavg()[0])
    ids_bytes = int32_bytes(folder)
    turns_bytes = (folder / "turns.json").stat().st_size
    checks = targets(results, ids_bytes)
    print()
    print(report(results, checks, ids_bytes, turns_bytes, args.repeat, load))
    (OUT / "core.json").write_text(json.dumps({
        "config": {"turns": args.turns, "max_context": args.max_context, "repeat": args.repeat,
                   "decode_ids": N_DECODE, "python": sys.version.split()[0], "cpus": os.cpu_count(),
                   "load_average": {"before": load[0], "after": load[1]}},
        "turns_json_bytes": turns_bytes,
        "int32_ids_bytes": ids_bytes,
        "measurements": results,
        "targets": checks,
    }, indent=2))
    print(f"\nresults written to {OUT / 'core.json'}")


if __name__ == "__main__":
    main()
