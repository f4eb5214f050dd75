"""Build small test collections from the bundled example: nested artifacts, a GRPO group, invalid ones.

Copies examples/scripted-smollm2 without its tokenizer (3 MB the index never needs) and edits
summary.json so the rows differ. Layout made by `build`:

    a/                       the example as it is (valid everywhere)
    deep/nested/b/           model, rewards, captured_at, n_tokens, drift edited (still valid when fully read)
    broken/c/                summary.json `agent_turns` is a string: invalid in the index
    broken/d/                turns.json truncated: valid in the index (small files are fine), invalid for check
    grp/                     a GRPO group, K=4: group.json + rollout-00..03, rollout-03 timed out, unscorable
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rollout_trace.artifact import load_artifact
from rollout_trace.artifact.group import GroupFile, GroupRollout, encode_group, grpo_advantages

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scripted-smollm2"
GROUP_REWARDS = [0.8, 0.3, -0.1, None]


def copy_example(dest: Path, **summary_changes) -> Path:
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("tokenizer"))
    if summary_changes:
        path = dest / "summary.json"
        data = json.loads(path.read_text())
        data.update(summary_changes)
        path.write_text(json.dumps(data, indent=2))
    return dest


def build(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    copy_example(root / "a")
    n_tokens = load_artifact(EXAMPLE).n_tokens
    copy_example(root / "deep" / "nested" / "b", model="org/Other-7B", reward_after_penalties=1.0, env_reward=1.0,
                 captured_at="2026-12-01T10:00:00Z", n_tokens=n_tokens, drifting_boundaries=1)
    copy_example(root / "broken" / "c", agent_turns="three")
    d = copy_example(root / "broken" / "d")
    raw = (d / "turns.json").read_bytes()
    (d / "turns.json").write_bytes(raw[: len(raw) // 2])
    build_group(root / "grp")
    return root


def build_group(folder: Path, rewards: list[float | None] = GROUP_REWARDS, advantages: list[float] | None = None) -> Path:
    rollouts = []
    for i, r in enumerate(rewards):
        name = f"rollout-{i:02d}"
        copy_example(folder / name, reward_after_penalties=r, timed_out=r is None)
        rollouts.append(GroupRollout(index=i, folder=name, status="timed-out" if r is None else "ok", reward=r,
                                     advantage=0.0, rollout_seed=7 + i, wall_s=1.5))
    adv = advantages if advantages is not None else grpo_advantages(rewards)
    for r, a in zip(rollouts, adv, strict=True):
        r.advantage = a
    task = json.loads((EXAMPLE / "task.json").read_text())
    g = GroupFile(task_id=task["task_id"], k=len(rewards), rollouts=rollouts, model="HuggingFaceTB/SmolLM2-135M-Instruct",
                  rollout_seed=7, parallel=4, backend="local", created_at="2026-12-02T08:00:00Z", wall_s=3.0)
    (folder / "group.json").write_bytes(encode_group(g))
    return folder
