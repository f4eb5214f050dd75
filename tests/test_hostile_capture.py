"""Capture against hostile requests: password guesses are throttled, a FIFO as the dataset is named (never sent
to the Hub as an id), and a public capture connects to the address its policy checked."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}


# -- capture-password guesses are throttled ------------------------------------------------------------------

def test_wrong_capture_passwords_are_throttled():
    from test_capture_tab import profile

    from viewer.ui.capture_gate import FAILURE_WINDOW_S, MAX_FAILURES, Gate, Throttle

    now = [0.0]
    gate = Gate("right-pass", frozenset({"alice"}), Throttle(clock=lambda: now[0]))
    for _ in range(MAX_FAILURES):
        assert gate.refusal("guess", None) == gate.how()
    refused = gate.refusal("right-pass", None)  # not even compared now, however fast the guesses come
    assert refused is not None and refused.startswith("Too many wrong capture passwords on this server")
    assert gate.refusal(None, profile("alice")) is None  # a listed user still gets in
    now[0] += FAILURE_WINDOW_S
    assert gate.refusal("right-pass", None) is None


# -- a FIFO as --dataset is named, never sent to the Hub as an id --------------------------------------------

def test_a_fifo_dataset_is_refused_without_asking_the_hub(tmp_path, monkeypatch):
    import socket

    from capture import hub
    from capture.tasks import TaskError, load_rows

    fifo = tmp_path / "tasks"
    os.mkfifo(fifo)
    asked: list = []
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: asked.append(a) or [])
    monkeypatch.setattr(hub, "unreachable", lambda: asked.append("hub") or None)
    with pytest.raises(TaskError) as e:
        load_rows(str(fifo))
    assert "not a regular file (a FIFO, socket or device)" in str(e.value) and asked == []
    r = subprocess.run([sys.executable, "-m", "capture", "--backend", "local", "--endpoint", "http://127.0.0.1:9/v1",
                        "--dataset", str(fifo), "--n-prompts", "1", "--out-dir", str(tmp_path / "o")], cwd=ROOT,
                       env=ENV, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "not a regular file" in r.stderr and "Traceback" not in r.stderr


# -- DNS rebinding of the capture endpoint: the address checked is the address connected to ------------------

@pytest.fixture
def rebinding(monkeypatch):
    """vllm.example.org answers the documentation fixture's public address once, then 127.0.0.1 (a rebinding
    DNS server's trick); every answer the process asked for is recorded."""
    import socket

    from conftest import PUBLIC_ADDRESS

    documented, answers = socket.getaddrinfo, []

    def getaddrinfo(host, port, *args, **kw):
        if str(host).startswith("vllm.example.org"):
            address = PUBLIC_ADDRESS if not answers else "127.0.0.1"
            answers.append(address)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port or 0))]
        return documented(host, port, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


def test_a_public_capture_connects_to_the_address_it_checked(rebinding, monkeypatch, tmp_path):
    import socket
    from types import SimpleNamespace

    import capture.run as run
    from capture import CaptureConfig, CaptureError
    from capture.preflight import Verdict
    from conftest import PUBLIC_ADDRESS

    connected: list[str] = []

    def probe(url, model, **kw):  # what openenv's urllib probe does first: resolve the host, connect there
        connected.extend(info[4][0] for info in socket.getaddrinfo("vllm.example.org", 443, type=socket.SOCK_STREAM))
        return Verdict(False, False, False, False, "", "stopped by the test")

    monkeypatch.setattr(run, "check_endpoint", probe)
    monkeypatch.setattr(run, "task_for", lambda cfg: SimpleNamespace(index=0, task_id="t" * 12, held_out=[]))
    monkeypatch.setattr(run.hub, "unreachable", lambda: None)
    cfg = CaptureConfig(backend="hf-sandbox", sandbox_vllm_url="https://vllm.example.org/v1", model="Qwen/Qwen3-8B",
                        dataset="org/tasks", out_dir=str(tmp_path / "out"))
    with pytest.raises(CaptureError, match="stopped by the test"):
        run.capture(cfg, public=True)
    assert rebinding[0] == PUBLIC_ADDRESS  # the policy's check saw a public address...
    assert connected == [PUBLIC_ADDRESS]  # ...and the probe connected there, not to 127.0.0.1
    assert socket.getaddrinfo("vllm.example.org", 443)[0][4][0] == "127.0.0.1"  # the pin ends with the capture


def test_a_pinned_endpoint_is_refused_when_its_checked_answer_is_private(monkeypatch):
    from capture.policy import PolicyError, pinned_endpoint

    with pytest.raises(PolicyError, match="Endpoint URL"), pinned_endpoint("http://127.0.0.1:8000/v1"):
        pass
