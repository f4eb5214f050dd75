"""group.json, the GRPO group contract: TRL's advantage formula, the validating reader, its error messages."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rollout_trace.artifact.group import GroupFile, encode_group, grpo_advantages, load_group, reward_spread
from rollout_trace.artifact.problems import ArtifactError
from support.collection_data import GROUP_REWARDS, build_group


def trl_reference(rewards: list[float | None]) -> list[float]:
    """The lines of trl/experimental/async_grpo/async_rollout_worker.py `_score_group`, with numpy."""
    rewards = np.array([np.nan if r is None else r for r in rewards], dtype=float)
    scored_mask = ~np.isnan(rewards)
    advantages = np.zeros_like(rewards)
    if scored_mask.any():
        scored = rewards[scored_mask]
        advantages[scored_mask] = (scored - scored.mean()) / (scored.std() + 1e-8)
    return advantages.tolist()


@pytest.mark.parametrize("rewards", [
    [1.0, 0.0, 0.5, 0.25],
    [0.8, 0.3, -0.1, None],  # an unscorable rollout: advantage 0, left out of mean and std
    [None, None, None],  # nothing scorable: all 0
    [0.7],  # one rollout: std 0, advantage 0
    [1.0, 1.0, 1.0, 1.0],  # no spread: nothing to learn, all 0
    [float("nan"), 2.0, -3.0],
])
def test_advantages_are_trls(rewards):
    assert grpo_advantages(rewards) == pytest.approx(trl_reference(rewards), abs=1e-12)


def test_advantages_sum_to_zero_and_nan_gets_zero():
    adv = grpo_advantages(GROUP_REWARDS)
    assert adv[3] == 0.0
    assert sum(adv) == pytest.approx(0.0, abs=1e-9)
    assert reward_spread(GROUP_REWARDS) == pytest.approx((-0.1, 0.8, 1.0 / 3))
    assert reward_spread([None, math.nan]) == (None, None, None)


def test_group_round_trip(tmp_path):
    folder = build_group(tmp_path / "g")
    g = load_group(folder)
    assert isinstance(g, GroupFile) and g.k == 4 and g.format_version == 1
    assert [r.reward for r in g.rollouts] == GROUP_REWARDS
    assert json.loads((folder / "group.json").read_text())["rollouts"][3]["reward"] is None  # JSON has no NaN
    assert encode_group(g) == (folder / "group.json").read_bytes()


def _problems(folder) -> list[str]:
    with pytest.raises(ArtifactError) as e:
        load_group(folder)
    return [str(p) for p in e.value.problems]


def test_wrong_advantage_is_named(tmp_path):
    folder = build_group(tmp_path / "g", advantages=[1.0, 0.0, -1.0, 0.0])
    problems = _problems(folder)
    assert any(p.startswith("group.json, field `rollouts[0].advantage`") and "expected 1.2675" in p and "found 1" in p
               for p in problems), problems


def test_reader_names_file_field_expected_found(tmp_path):
    folder = build_group(tmp_path / "g")
    data = json.loads((folder / "group.json").read_text())
    data["k"] = 5
    data["rollouts"][1]["rollout_seed"] = 99
    data["rollouts"][2]["folder"] = "../escape"
    (folder / "group.json").write_text(json.dumps(data))
    problems = _problems(folder)
    assert "group.json, field `k`: k is the number of rollouts (expected 4, found 5)" in problems
    assert "group.json, field `rollouts[1].rollout_seed`: rollout i uses rollout_seed + i (expected 8, found 99)" in problems
    assert any("rollouts[2].folder" in p and "../escape" in p for p in problems)


def test_missing_rollout_folder_and_bad_types(tmp_path):
    folder = build_group(tmp_path / "g")
    import shutil

    shutil.rmtree(folder / "rollout-01")
    assert any("rollouts[1].folder" in p and "missing" in p for p in _problems(folder))
    data = json.loads((folder / "group.json").read_text())
    data["rollouts"][0]["status"] = "exploded"
    (folder / "group.json").write_text(json.dumps(data))
    problems = _problems(folder)
    assert any("rollouts[0].status" in p for p in problems), problems
    (folder / "group.json").write_text("")
    assert _problems(folder) == ["group.json: the file is empty"]
