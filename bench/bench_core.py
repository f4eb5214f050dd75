"""Benchmark the artifact core against the stdlib on a large synthetic rollout, and check the targets.

    python bench/bench_core.py [--turns 100 --max-context 60000] [--repeat 3]

Writes a seed-format artifact with bench/make_large.py into bench/out/large/ (replaced each run), then
times each measurement in a fresh subprocess, so memory and caches start the same every time, and
reports the median of `--repeat` runs:

    json.load        stdlib json.load of turns.json: time, and memory kept (RSS after - before)
    load_artifact    artifact.load_artifact(folder), full read + validate: time, memory kept
    load_index       artifact.load_index(folder), the per-turn small fields only: time
    token_texts      viewer.tokens.token_texts on 1M random ids (display table built beforehand,
                     and timed on its own)
    decode_batch     tokenizers' decode_batch of the same 1M ids as one-id sequences, the per-token
                     baseline

Targets: load_artifact <= 0.5x json.load; load_index <= 0.15x json.load; memory kept by
load_artifact <= 2x the int32 size of all prompt + output ids; 1M ids decoded in <= 0.1 s.
The table is printed and the results go to bench/out/core.json. The exit code is 0 either way:
this measures, it does not gate.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

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


def _json_load(folder: Path) -> dict[str, float]:
    before = _rss()
    t0 = time.perf_counter()
    with (folder / "turns.json").open(encoding="utf-8") as f:
        data = json.load(f)
    seconds = time.perf_counter() - t0
    kept = _rss() - before
    assert data["turns"]
    return {"seconds": seconds, "kept_bytes": kept}


def _load_artifact(folder: Path) -> dict[str, float]:
    from artifact import load_artifact

    before = _rss()
    t0 = time.perf_counter()
    art = load_artifact(folder)
    seconds = time.perf_counter() - t0
    kept = _rss() - before
    assert art.turns
    return {"seconds": seconds, "kept_bytes": kept}


def _load_index(folder: Path) -> dict[str, float]:
    from artifact import load_index

    t0 = time.perf_counter()
    index = load_index(folder)
    seconds = time.perf_counter() - t0
    assert index
    return {"seconds": seconds}


def _random_ids(vocab_size: int):
    """The N_DECODE ids both decoders get: uniform over the vocabulary, fixed seed."""
    import numpy as np

    return np.random.default_rng(0).integers(0, vocab_size, size=N_DECODE)


def _token_texts(folder: Path) -> dict[str, float]:
    from tokenizers import Tokenizer

    from viewer.tokens import token_texts, vocab_from_tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    t0 = time.perf_counter()
    vocab = vocab_from_tokenizer(tok, "bench")
    table = time.perf_counter() - t0
    ids = _random_ids(vocab.size)
    t0 = time.perf_counter()
    texts = token_texts(vocab, ids)
    seconds = time.perf_counter() - t0
    assert texts.text.size == N_DECODE
    return {"seconds": seconds, "table_seconds": table}


def _decode_batch(folder: Path) -> dict[str, float]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    ids = _random_ids(tok.get_vocab_size())
    batch = [[i] for i in ids.tolist()]
    t0 = time.perf_counter()
    texts = tok.decode_batch(batch, skip_special_tokens=False)
    seconds = time.perf_counter() - t0
    assert len(texts) == N_DECODE
    return {"seconds": seconds}


# Each worker runs alone in a fresh process and takes the artifact folder (the decoders ignore it).
WORKERS: dict[str, Callable[[Path], dict[str, float]]] = {
    "json.load": _json_load,
    "load_artifact": _load_artifact,
    "load_index": _load_index,
    "token_texts": _token_texts,
    "decode_batch": _decode_batch,
}


def measure(name: str, folder: Path, repeat: int) -> dict[str, float]:
    """Median of each field over `repeat` fresh subprocesses running the worker `name`."""
    runs = []
    for _ in range(repeat):
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", name, str(folder)],
                              cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"the {name} worker failed:\n{done.stderr}")
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def int32_bytes(folder: Path) -> int:
    """What every prompt and output id of the artifact takes as int32."""
    from artifact import load_index

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


def report(m: dict[str, dict[str, float]], checks: list[dict], ids_bytes: int, turns_bytes: int, repeat: int) -> str:
    """The printed table: every measurement, then every target with PASS or MISS."""
    mb, w = 1e6, 52
    rows = [
        ("json.load(turns.json)  [baseline]", m["json.load"]["seconds"], m["json.load"]["kept_bytes"]),
        ("artifact.load_artifact  (load + validate)", m["load_artifact"]["seconds"], m["load_artifact"]["kept_bytes"]),
        ("artifact.load_index  (turn index)", m["load_index"]["seconds"], None),
        ("vocab_from_tokenizer  (display table, built once)", m["token_texts"]["table_seconds"], None),
        (f"token_texts, {N_DECODE:,} ids", m["token_texts"]["seconds"], None),
        (f"tokenizers decode_batch, {N_DECODE:,} ids  [baseline]", m["decode_batch"]["seconds"], None),
    ]
    lines = [f"turns.json {turns_bytes / mb:.1f} MB; all ids as int32 {ids_bytes / mb:.1f} MB; "
             f"median of {repeat} fresh-process runs", "",
             f"{'measurement':<{w}}{'time':>10}{'kept memory':>14}"]
    for label, seconds, kept in rows:
        lines.append(f"{label:<{w}}{seconds:>9.3f}s" + (f"{kept / mb:>11.1f} MB" if kept is not None else ""))
    lines += ["", f"{'target':<{w}}{'measured':>10}{'limit':>10}  result"]
    for c in checks:
        limit = f"<= {c['limit']:g}{c['unit']}"
        lines.append(f"{c['target']:<{w}}{c['value']:>9.3f}{c['unit']}{limit:>10}  {'PASS' if c['pass'] else 'MISS'}")
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
        print(json.dumps(WORKERS[name](Path(folder))))
        return

    folder = OUT / "large"
    shutil.rmtree(folder, ignore_errors=True)
    t0 = time.perf_counter()
    make_large(folder, turns=args.turns, max_context=args.max_context)
    print(f"generated {folder} in {time.perf_counter() - t0:.1f} s", flush=True)

    results = {}
    for name in WORKERS:
        print(f"measuring {name}...", flush=True)
        results[name] = measure(name, folder, args.repeat)
    ids_bytes = int32_bytes(folder)
    turns_bytes = (folder / "turns.json").stat().st_size
    checks = targets(results, ids_bytes)
    print()
    print(report(results, checks, ids_bytes, turns_bytes, args.repeat))
    (OUT / "core.json").write_text(json.dumps({
        "config": {"turns": args.turns, "max_context": args.max_context, "repeat": args.repeat,
                   "decode_ids": N_DECODE,
                   "python": sys.version.split()[0]},
        "turns_json_bytes": turns_bytes,
        "int32_ids_bytes": ids_bytes,
        "measurements": results,
        "targets": checks,
    }, indent=2))
    print(f"\nresults written to {OUT / 'core.json'}")


if __name__ == "__main__":
    main()
