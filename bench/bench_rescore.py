"""Re-scoring cost: time against a bare transformers forward, and peak memory at 60k tokens.

    python bench/bench_rescore.py time [--example scripted-smollm2] [--dtype float32] [--repeat 2]
    python bench/bench_rescore.py memory [--tokens 60000] [--vocab 151936] [--completion 4096]
    python bench/bench_rescore.py all          # both, each measurement in a fresh subprocess

time:   the real SmolLM2-135M-Instruct (scripts/local_model.sh convert) on a bundled example. In one
        process, alternately: the rescore of every sequence the plan forwards (TRL's fused head,
        entropy, top-1, top-5) and a bare `model(input_ids).logits` forward of the same sequences
        (what any per-token view would cost without TRL's head). Best of --repeat each; target: the
        rescore takes at most 1.3x the bare forward.
memory: one synthetic row of --tokens tokens (the last --completion of them scored) through a
        model with SmolLM2's width but one layer and a --vocab vocabulary (151936 = Qwen's, where a
        full-logits row of 60k tokens would be 36 GB), random weights, in a fresh process. Reports
        the model's own bytes and the peak RSS above the RSS after building it; target: <= 1.5 GB.
The numbers are printed as one JSON object per measurement and a summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _rss_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_now_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure_time(example: str, dtype: str, repeat: int) -> dict:
    import torch

    import local_model as lm
    from rescore import forward
    from rescore.model import load
    from rescore.plan import plan
    from rollout_trace.artifact import open_artifact

    if not lm.is_converted():
        raise SystemExit("convert the offline model first: bash scripts/local_model.sh convert")
    a = open_artifact(example)
    tm = load(str(lm.model_dir()), dtype, "cpu", 1.0, local_files_only=True)
    seqs, _ = plan(a.turns)

    def rescore_all() -> None:
        for s in seqs:
            forward.score_sequence(tm.model, s.ids, s.targets, 5, 1.0)

    def bare_all() -> None:
        with torch.inference_mode():
            for s in seqs:
                tm.model(input_ids=torch.as_tensor(s.ids, dtype=torch.long)[None]).logits.sum()

    times: dict[str, list[float]] = {"bare": [], "rescore": []}
    bare_all()  # warm-up: first-call allocations and thread pools are not what we measure
    for _ in range(repeat):
        for name, fn in (("bare", bare_all), ("rescore", rescore_all)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    bare, res = min(times["bare"]), min(times["rescore"])
    return {"measure": "time", "example": example, "dtype": dtype, "sequences": len(seqs),
            "tokens": int(sum(s.ids.size for s in seqs)), "scored": int(sum(s.targets.size for s in seqs)),
            "bare_s": round(bare, 2), "rescore_s": round(res, 2), "ratio": round(res / bare, 2),
            "all_runs": {k: [round(x, 2) for x in v] for k, v in times.items()}, "target_ratio": 1.3}


def measure_memory(tokens: int, vocab: int, completion: int) -> dict:
    import numpy as np
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    from rescore import forward
    from rescore.model import OUTPUTS

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=576, intermediate_size=1536, num_hidden_layers=1,
                      num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=tokens + 1,
                      tie_word_embeddings=True)
    model = LlamaForCausalLM(cfg).eval()
    add_fused_lm_head(model, temperature=1.0, outputs=OUTPUTS)
    model_mb = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    ids = np.random.default_rng(0).integers(0, vocab, tokens)
    targets = np.arange(tokens - completion, tokens)
    base = _rss_now_mb()
    t0 = time.perf_counter()
    s = forward.score_sequence(model, ids, targets, 5, 1.0)
    took = time.perf_counter() - t0
    peak = _rss_peak_mb()
    assert np.isfinite(s.logprobs).all()
    return {"measure": "memory", "tokens": tokens, "scored": completion, "vocab": vocab, "layers": 1,
            "model_mb": round(model_mb), "rss_after_model_mb": round(base), "peak_rss_mb": round(peak),
            "peak_above_model_mb": round(peak - base), "full_logits_would_be_mb": round(tokens * vocab * 4 / 2**20),
            "seconds": round(took, 1), "target_above_model_mb": 1536}


def _fresh(args: list[str]) -> dict:
    """Run one measurement in a new interpreter, so peaks and caches of the others do not count."""
    out = subprocess.run([sys.executable, __file__, *args, "--json"], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(f"{args} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["time", "memory", "all"])
    p.add_argument("--example", default="scripted-smollm2")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--tokens", type=int, default=60000)
    p.add_argument("--vocab", type=int, default=151936)
    p.add_argument("--completion", type=int, default=4096)
    p.add_argument("--json", action="store_true", help="(internal) measure in this process, print JSON")
    a = p.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    if a.json:
        r = (measure_time(a.example, a.dtype, a.repeat) if a.what == "time"
             else measure_memory(a.tokens, a.vocab, a.completion))
        print(json.dumps(r))
        return
    results = []
    if a.what in ("time", "all"):
        results.append(_fresh(["time", "--example", a.example, "--dtype", a.dtype, "--repeat", str(a.repeat)]))
    if a.what in ("memory", "all"):
        results.append(_fresh(["memory", "--tokens", str(a.tokens), "--vocab", str(a.vocab),
                               "--completion", str(a.completion)]))
    for r in results:
        print(json.dumps(r))
        if r["measure"] == "time":
            print(f"time: rescore {r['rescore_s']} s vs bare forward {r['bare_s']} s over {r['tokens']:,} tokens "
                  f"= {r['ratio']}x (target <= {r['target_ratio']}x)")
        else:
            print(f"memory: {r['tokens']:,}-token row, vocab {r['vocab']:,}: peak {r['peak_above_model_mb']} MB above "
                  f"the {r['model_mb']} MB model (target <= {r['target_above_model_mb']} MB; full logits would be "
                  f"{r['full_logits_would_be_mb']:,} MB) in {r['seconds']} s")


if __name__ == "__main__":
    main()
