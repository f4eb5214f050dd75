"""Build the bundled example run `trl-run`: a TRL 1.16 async-GRPO training run recorded by rollout_trace.record.

What is real: TRL 1.16's `HarnessRolloutWorker` in its real spawned child (its `_run_session`, `_score_group`
and multiprocessing queue), TRL's `AsyncGRPOTrainer` training a tiny model on CPU (5 optimizer steps, a
checkpoint after step 3 and a resume from it: two segments), accelerate's dataloader, OpenEnv's
`TrainingTrace` validation, and the recorder itself (`RecordingHarnessRolloutWorker` + `record_consumption`).
What stands in (tests/support/trl_cpu.py, the same stand-ins the tests use):
- the sessions: no sandbox, agent or vLLM runs here, so each session replays a trace the repo's capture
  recorded (examples/scripted-smollm2/trace.json, or its first 2 or 3 calls: a session that ended earlier),
  and verify() gives rewards that differ inside a group (1.0, 0.0, 0.5, -0.1 by position). They wait for the
  trainer's version (a gate) so every policy version gets groups; one sandbox fails to start, one rollout
  has no reward, one agent times out;
- the user's reward function: `brevity_reward` (tests/support/trl_replay.py), a small bonus for shorter
  transcripts, passed as `reward_funcs` as a training script passes one. TRL calls it on the failed
  rollout's empty completion too, so that rollout has a reward and counts in its group's baseline;
- the policy: a 2-layer Llama with SmolLM2-135M-Instruct's vocabulary and random weights (fixed seed),
  so the numbers it trains are not a real model's;
- CUDA's peak-FLOPs query (None), the FA3 tree-attention kernel (an SDPA equivalent), NCCL weight sync (a
  no-op transfer; TRL still bumps the version), and the vLLM availability check.

    python examples/make_trl_run.py [--out examples/trl-run]
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests")]

from support import trl_cpu, trl_replay, trl_runs  # noqa: E402

MODEL_NAME = "tiny-llama-2L (SmolLM2-135M-Instruct vocabulary, random weights)"
BATCH, SYNC, FIRST_STEPS, STEPS = 8, 2, 3, 5  # weights sync every 2 steps: about 2 groups a version


def _phase(work: Path, run: Path, tok, model: str, max_steps: int, start_version: int,
           resume: Path | None = None) -> dict:
    gate = str(work / f"gate-{max_steps}")
    trl_replay.write_gate(gate, 0)
    w = trl_runs.worker(run, traces=trl_runs.MIXED, tok=tok, gate=gate, model=MODEL_NAME, queue_maxsize=8,
                        gate_fn=functools.partial(trl_replay.trainer_version, batch=BATCH, weight_sync_steps=SYNC,
                                                start=start_version),
                        fail=((3, 1),), no_reward=((4, 2),), timeout=((5, 0),), session_s=0.05,
                        reward_funcs=(trl_replay.brevity_reward,))
    t, logs = trl_runs.trainer(work / "out", w, tok, model, max_steps=max_steps, gate=gate, record=True,
                               batch=BATCH, weight_sync_steps=SYNC, save_strategy="steps", save_steps=FIRST_STEPS)
    t0 = time.monotonic()
    t.train(resume_from_checkpoint=str(resume) if resume else None)
    print(f"  segment {w.segment}: steps to {t.state.global_step}, policy version {t.model_version}, "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    return {"losses": [round(x["loss"], 4) for x in logs]}


def build(out: Path) -> None:
    from rollout_trace.artifact.run import open_run

    work = Path(tempfile.mkdtemp(prefix="trl-run-"))
    run = work / "trl-run"
    try:
        tok = trl_cpu.tokenizer()
        model = trl_cpu.tiny_model(tok, work / "tiny-llama")
        print("phase 1: train 3 steps, checkpoint after step 3", flush=True)
        _phase(work, run, tok, model, FIRST_STEPS, start_version=1)
        state = json.loads((work / "out" / f"checkpoint-{FIRST_STEPS}" / "rollout_state.json").read_text())
        print(f"phase 2: resume from checkpoint-{FIRST_STEPS} ({state}), train to step {STEPS}", flush=True)
        _phase(work, run, tok, model, STEPS, start_version=state["model_version"] + 1,
               resume=work / "out" / f"checkpoint-{FIRST_STEPS}")
        r = open_run(str(run))
        per_version = Counter(g.policy_version for g in r.groups)
        full = [v for v, n in per_version.items() if n >= 2]
        assert len(full) >= 3, f"want 3 policy versions with 2 groups each, got {dict(per_version)}"
        assert all(g.k == 4 for g in r.groups) and all(len(set(g.rewards)) > 1 for g in r.groups)
        assert r.problems == [], r.problems
        failed = [x for x in r.rows if x.status == "failed" and x.path is None]
        assert any(x.reward is not None for x in failed), "want a failed rollout the reward function scored"
        assert all(s.end is not None and not s.end.write_errors and not s.end.first_error for s in r.segments)
        recorded = {(x.segment, o) for x in r.rows for o in x.ordinals}
        assert all((c.segment, c.ordinal) in recorded for c in r.consumed), "a row the trainer took is not recorded"
        print(f"{len(r.groups)} groups, {len(r.rows)} rollouts, groups per version {dict(sorted(per_version.items()))}, "
              f"trained steps {sorted({s for g in r.groups for s in g.trained_steps})}")
        r.close()
        (run / ".lock").unlink(missing_ok=True)  # the recorder's lock file: nothing to ship
        if out.exists():
            shutil.rmtree(out)
        shutil.move(str(run), str(out))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    from viewer.cli import main

    if main(["check", str(out)]) != 0:
        raise SystemExit(f"{out} does not check")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=HERE / "trl-run")
    build(ap.parse_args().out)
