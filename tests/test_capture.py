"""Capture end to end with real parts: the real opencode CLI, openenv's real capture proxy, and a
scripted vLLM-shaped server; plus the faults a capture must survive with a clear message."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from capture import CaptureConfig, CaptureError, capture
from capture.agent import Cancelled
from capture.sandbox import LocalSandbox
from conftest import ROOT
from rollout_trace.artifact import load_artifact
from rollout_trace.recipe.reward import reward
from support.trl_reference import assert_matches_trl, reference_of
from viewer.rollout import Rollout

pytestmark = pytest.mark.capture


def config(tmp_path, task_file, tokenizer_dir, url, **kw) -> CaptureConfig:
    base = dict(model="scripted-model", backend="local", endpoint=url, dataset=str(task_file), n_prompts=1,
                out_dir=str(tmp_path / "out"), timeout_s=120, tokenizer=str(tokenizer_dir))
    return CaptureConfig(**(base | kw))


def test_local_capture_end_to_end(tmp_path, task_file, tokenizer_dir, scripted_llm):
    llm = scripted_llm()
    lines = []
    secret = "sk-test-secret-7d41"
    a = capture(config(tmp_path, task_file, tokenizer_dir, llm.url, api_key=secret), progress=lines.append)
    # a real multi-turn loop: write, then bash, then stop
    assert [t.tool_calls for t in a.turns] == [("write",), ("bash",), ()]
    assert [t.seed_trained for t in a.turns] == [True, True, False]
    # what TRL 1.16 trains, by its own functions on the trace.json the capture wrote: every turn's loss mask
    trl_turns, trl_rows, _ = reference_of(tmp_path / "out")
    recorded = a.summary.trl_training
    assert recorded is not None and recorded.trl == "1.16.0" and recorded.basis == "trace"
    assert recorded.trained_turns == sum(any(t.output_mask) for t in trl_turns) == 3
    assert recorded.trained_tokens == sum(sum(t.output_mask) for t in trl_turns) == sum(t.n_output for t in a.turns)
    assert recorded.rows == len(trl_rows)
    assert_matches_trl(tmp_path / "out", Rollout.load(load_artifact(tmp_path / "out")))
    assert all(t.prompt_source == "engine" and t.retokenized_prompt_ids is not None for t in a.turns)
    for t, call in zip(a.turns, a.trace, strict=False):
        assert np.array_equal(t.prompt_ids, call.engine_prompt_ids)
        assert t.logprobs.size == t.n_output and np.isfinite(t.logprobs).all() and (t.logprobs < 0).all()
        assert t.mask[: t.n_prompt].sum() == 0 and t.mask[t.n_prompt:].all()
    # the held-out tests ran in the sandbox against the agent's solution.py: 2 of 3 pass (n = 0 has no 2nd line)
    assert [r.status for r in a.test_results] == ["pass", "pass", "error"]
    assert a.summary.env_reward == pytest.approx(2 / 3)
    assert a.summary.reward_after_penalties == reward(2 / 3, {"write": 1, "bash": 1}, False)
    assert a.solution.startswith("n = int(input())") and a.tokenizer_dir is not None
    assert a.summary.format_version == 2 and a.summary.capture["backend"] == "local"
    stages = [p.stage for p in lines]
    assert stages[0] == "task" and "agent" in stages and stages[-1] == "done"
    assert max(p.turns for p in lines) == 3
    # the tool saw the agent's call executed for real
    tool_msgs = [m for m in a.trace[-1].messages if m.get("role") == "tool"]
    assert any("3" in str(m.get("content")) for m in tool_msgs)
    # no secret anywhere: not in a file, not in a progress line
    for f in (tmp_path / "out").rglob("*"):
        if f.is_file():
            assert secret not in f.read_text(errors="ignore"), f
    assert all(secret not in p.line for p in lines)
    r = subprocess.run([sys.executable, "-m", "viewer", "check", str(tmp_path / "out")], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "3 agent turns, 3 trained by TRL 1.16.0 (the capture script's rule: 2)" in r.stdout, \
        r.stdout + r.stderr
    assert "MISMATCH" not in r.stdout


def test_preflight_refuses_endpoint_without_token_ids(tmp_path, task_file, tokenizer_dir, scripted_llm):
    llm = scripted_llm(token_ids=False)
    with pytest.raises(CaptureError, match="--return-tokens-as-token-ids"):
        capture(config(tmp_path, task_file, tokenizer_dir, llm.url))
    assert not (tmp_path / "out").exists()
    assert not any(r.get("tools") and len(r["tools"]) > 3 for r in llm.requests)  # opencode never started


def test_unreachable_endpoint(tmp_path, task_file, tokenizer_dir):
    with pytest.raises(CaptureError, match="not reachable"):
        capture(config(tmp_path, task_file, tokenizer_dir, "http://127.0.0.1:9/v1"))


def test_timeout_keeps_partial_work(tmp_path, task_file, tokenizer_dir, scripted_llm, monkeypatch):
    # the first agent call answers at once, the second hangs past the budget. The capture's clock jumps past its
    # budget once the hanging call has begun: however slow the machine is to start the agent, the timeout falls
    # after the first turn
    from capture import agent

    llm = scripted_llm(delay_s=600.0, slow_after=1)
    real = time.monotonic
    monkeypatch.setattr(agent, "time", SimpleNamespace(
        monotonic=lambda: real() + (10_000.0 if llm.slowed.is_set() else 0.0), sleep=time.sleep))
    a = capture(config(tmp_path, task_file, tokenizer_dir, llm.url, timeout_s=3600))
    assert a.summary.timed_out and [t.tool_calls for t in a.turns] == [("write",)]
    assert a.solution is not None  # the file the agent wrote before the timeout is kept and verified
    assert a.summary.reward_after_penalties == reward(a.summary.env_reward, a.summary.tool_calls_by_name, True)


def test_no_solution_written(tmp_path, task_file, tokenizer_dir, scripted_llm):
    llm = scripted_llm(steps=["I will not write any code."])
    a = capture(config(tmp_path, task_file, tokenizer_dir, llm.url))
    assert a.solution is None and a.summary.env_reward == 0.0
    assert {r.status for r in a.test_results} == {"not-run"}
    assert a.summary.reward_after_penalties == pytest.approx(-0.1)  # no bash call at all


def test_cancel_leaves_nothing(tmp_path, task_file, tokenizer_dir, scripted_llm):
    llm = scripted_llm()
    cancel = threading.Event()
    roots = []

    def on_progress(p):
        if p.stage == "agent" and p.turns >= 1:
            cancel.set()

    def factory(**kw):
        box = LocalSandbox.create(**kw)
        roots.append(box.root)
        return box

    with pytest.raises(Cancelled):
        capture(config(tmp_path, task_file, tokenizer_dir, llm.url), progress=on_progress, cancel=cancel,
                sandbox_factory=factory)
    assert not (tmp_path / "out").exists() and not any(p.name.startswith(".out") for p in tmp_path.iterdir())
    assert roots and not roots[0].exists()  # the sandbox and its processes are gone


def test_hf_sandbox_backend_through_stand_in(tmp_path, task_file, tokenizer_dir, scripted_llm):
    """The hf-sandbox path (Sandbox.create -> run/files/kill) against the local stand-in."""
    llm = scripted_llm()
    made = []

    def stand_in(image, flavor):
        made.append((image, flavor))
        return LocalSandbox.create(image)

    cfg = config(tmp_path, task_file, tokenizer_dir, None, backend="hf-sandbox", endpoint=None,
                 sandbox_vllm_url=llm.url)
    a = capture(cfg, sandbox_factory=stand_in)
    assert made == [("ghcr.io/huggingface/openenv-opencode-sandbox:latest", "cpu-basic")]
    assert a.summary.capture["backend"] == "hf-sandbox" and len(a.turns) == 3


def test_out_dir_that_exists(tmp_path, task_file, tokenizer_dir):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("keep")
    with pytest.raises(CaptureError, match="already exists"):
        capture(config(tmp_path, task_file, tokenizer_dir, "http://127.0.0.1:9/v1"))
    assert (tmp_path / "out" / "x").read_text() == "keep"


def test_agent_crash_is_explained(tmp_path, task_file, tokenizer_dir, scripted_llm, monkeypatch):
    llm = scripted_llm()
    fake = tmp_path / "opencode"
    fake.write_text("#!/bin/sh\necho 'opencode: fatal: something broke' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setattr("capture.opencode.LOCAL_BINARY", fake)
    # Unfenced: the fake lives under this test's /tmp folder, which bubblewrap's private /tmp hides.
    from capture.sandbox import LocalSandbox

    with pytest.raises(CaptureError, match="no model call.*exit status 3.*something broke"):
        capture(config(tmp_path, task_file, tokenizer_dir, llm.url),
                sandbox_factory=lambda **kw: LocalSandbox.create(isolate=False, **kw))
    assert not (tmp_path / "out").exists()


def test_cli_usage_errors_are_messages(tmp_path):
    r = subprocess.run([sys.executable, "-m", "capture", "--backend", "local", "--out-dir", str(tmp_path / "o")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "--endpoint is required" in r.stderr and "Traceback" not in r.stderr
