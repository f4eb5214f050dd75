"""A process that does nothing but record groups, for the SIGKILL test: `python record_writer_child.py RUN SEG N`.

It drives the recorder's real writer (rollout_trace/record/writer.py) with groups built from TRL's own
objects: OpenEnv's TrainingTrace of the repo's scripted trace, and the RolloutSamples TRL builds for it
(`_chain_to_sequences` rows, TRL's advantages). It prints "ready" once a group is on disk and then writes
groups as fast as the writer goes, so a SIGKILL lands in the middle of some write.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main(run_dir: str, segment: str, n: int) -> None:
    from openenv.core.harness import TrainingTrace
    from openenv.core.harness.rollout import VerifyResult
    from trl.experimental.async_grpo.async_rollout_worker import RolloutSample, _chain_to_sequences
    from trl.experimental.async_grpo.openenv_harness import _turns_from_training_trace

    from rollout_trace.artifact.group import grpo_advantages
    from rollout_trace.record.build import ScoredGroup, ScoredRollout
    from rollout_trace.record.manifest import begin_segment
    from rollout_trace.record.sessions import SessionRecord
    from rollout_trace.record.writer import GroupWriter
    from support.trl_replay import SCRIPTED_TRACE, load_trace

    entries = load_trace(SCRIPTED_TRACE)
    trace = TrainingTrace.from_entries(entries)
    seqs, tally = _chain_to_sequences(_turns_from_training_trace(trace), "r", 0)
    prompt = entries[-1]["request"]["messages"][:2]
    begin_segment(Path(run_dir), segment, {"model_name": "tiny-llama", "num_generations": 4}, 0)
    writer = GroupWriter(Path(run_dir), segment)
    ordinal = 0
    for g in range(n):
        rewards = [1.0, 0.0, 0.5, -0.1]
        rollouts = []
        for k, adv in enumerate(grpo_advantages(rewards)):
            rec = SessionRecord(rollout_id=f"g{g}r{k}", created=True, training_trace=trace,
                                verify=VerifyResult(env_reward=rewards[k], done=True), ended_at=time.time(),
                                session_metrics={"turns": 4, "sequences": len(seqs), "tally": tally})
            samples = [RolloutSample(prompt=prompt, completion=[], input_ids=np.asarray(s.input_ids, np.int64),
                                     completion_mask=np.asarray(s.completion_mask, np.int64),
                                     old_log_probs=np.asarray(s.old_log_probs, np.float32), advantage=float(adv),
                                     model_version=g // 2, group_id=g,
                                     metrics={"reward": rewards[k], "rewards/harness_reward": rewards[k]})
                       for s in seqs]
            rollouts.append(ScoredRollout(k, rec, prompt, samples, list(range(ordinal, ordinal + len(samples))), None, 2, 0))
            ordinal += len(samples)
        writer.put(ScoredGroup(segment, g, g // 2, g, "tiny-llama", ["harness_reward"], rollouts))
        while writer._q.qsize() > 1:  # at the writer's pace: a kill finds it in the middle of a write
            time.sleep(0.001)
        if g == 0:
            while writer.written == 0:
                time.sleep(0.001)
            print("ready", flush=True)  # one group is on disk
    writer.close(600, rollouts_never_scored=0, handoff_s=0.0, max_queued_samples=0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
