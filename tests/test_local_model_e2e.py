"""One real rollout fully offline: vLLM's CPU build serving SmolLM2-135M-Instruct (shipped by a PyPI
package), the real opencode CLI and openenv's real capture proxy. Slow: it prepares a second venv
and converts the model once (minutes; scripts/test.sh does this before the tests), then serves it (about a
minute). Deselect with -m "not slow"."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import local_model
from capture import CaptureConfig, capture
from conftest import ROOT
from rollout_trace.recipe.reward import reward

pytestmark = pytest.mark.slow


def test_offline_capture_with_a_real_model(tmp_path, task_file):
    lines = []
    # 64 tokens a completion instead of the local model's 512: on CPU the 135M model mostly writes to its cap, and
    # every check below holds for any cap (test_local_model_unit checks the 512 a capture is given by default)
    a = capture(CaptureConfig(local_model=True, dataset=str(task_file), n_prompts=1, out_dir=str(tmp_path / "out"),
                              timeout_s=900, max_output_tokens=64), progress=lambda p: lines.append(p))
    assert local_model.is_prepared()
    assert a.summary.model == local_model.MODEL_NAME and "vLLM" in a.summary.produced_by
    assert len(a.turns) >= 1 and a.trace is not None
    for t, call in zip(a.turns, [c for c in a.trace if c.tools], strict=False):
        assert t.prompt_source == "engine" and call.engine_prompt_ids is not None
        assert np.array_equal(t.prompt_ids, call.engine_prompt_ids)  # the engine's own ids
        assert t.n_output > 0 and t.logprobs.size == t.n_output  # a real logprob for every generated token
        assert np.isfinite(t.logprobs).all() and (t.logprobs <= 0).all() and np.unique(t.logprobs).size > 1
        assert t.mask.size == t.n_prompt + t.n_output and t.mask[: t.n_prompt].sum() == 0
        assert t.mask[t.n_prompt:].all()
        assert t.n_prompt + t.n_output <= local_model.MAX_MODEL_LEN
    s = a.summary
    assert s.env_reward is not None and len(a.test_results) == len(a.held_out_tests)
    assert s.reward_after_penalties == reward(s.env_reward, s.tool_calls_by_name, s.timed_out)
    assert a.tokenizer_dir is not None  # renders offline
    r = subprocess.run([sys.executable, "-m", "viewer", "check", str(tmp_path / "out")], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert lines[-1].stage == "done"
