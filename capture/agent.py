"""One opencode session inside a sandbox, behind openenv's capture proxy.

In the sandbox: openenv's capture proxy (`openenv.core.harness.capture.server`, started through
`in_sandbox.py proxy`) on loopback forwards to the model endpoint and records every call with the engine's token ids; a capture session is minted
and handed to opencode as its API key; opencode runs `opencode run --format json TASK` in a fresh
workdir. We poll its event stream for progress, stop it at the timeout (keeping what it produced),
then read back the trace entries and the final `solution.py`, and run the held-out tests there too,
so the agent's code never runs outside the sandbox.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rollout_trace.artifact.errors import RolloutTraceError
from rollout_trace.recipe import verifier

from . import opencode
from .errors import CaptureError
from .progress import Reporter

HERE = Path(__file__).resolve().parent
VERIFIER = Path(verifier.__file__)  # copied into the sandbox: the held-out tests run there
HELPER = HERE / "in_sandbox.py"
POLL_S = 0.5


class AgentError(RolloutTraceError, RuntimeError):
    """The agent could not run or produced nothing usable; the message says what to do."""


class Cancelled(RolloutTraceError, RuntimeError):
    pass


@dataclass(frozen=True)
class Layout:
    """Where things live inside the sandbox."""

    home: str  # base folder: /root in the HF image; locally the one fixed path fenced commands see (or the temp root)
    python: str  # a python with openenv installed
    opencode: str  # the opencode binary
    proxy_port: int = 8100
    proxy_from_host: bool = False  # the proxy's port is reachable from here (local backend: shared network)

    @property
    def workdir(self) -> str:
        return f"{self.home}/workdir"

    @property
    def state(self) -> str:
        return f"{self.home}/.capture"


class AgentRun:
    def __init__(self, sandbox, layout: Layout, report: Reporter):
        self.box, self.lay, self.report = sandbox, layout, report
        self._proxy = None
        self._agent = None
        self.session_id: str | None = None

    def _run(self, argv: list[str], timeout: float = 120, check: bool = True):
        return self.box.run(argv, timeout=timeout, check=check)

    def start(self, llm_url: str, model: str, task_text: str, max_output_tokens: int, context: int,
              api_key: str | None = None, deny: tuple[str, ...] = opencode.DENIED_TOOLS,
              seed: int | None = None) -> None:
        lay = self.lay
        for d in (lay.workdir, f"{lay.state}/home/.config", f"{lay.state}/home/.local/share", f"{lay.state}/home/.cache"):
            self.box.files.write(f"{d}/.keep", b"")
        self.box.files.write(f"{lay.state}/in_sandbox.py", HELPER.read_bytes())
        self.box.files.write(f"{lay.state}/verifier.py", VERIFIER.read_bytes())
        self.box.files.write(f"{lay.state}/task.txt", task_text)
        proxy = [lay.python, f"{lay.state}/in_sandbox.py", "proxy", "--llm-url", llm_url, "--model", model,
                 "--host", "127.0.0.1", "--port", str(lay.proxy_port), "--max-output-tokens", str(max_output_tokens),
                 "--capture-level", "tokens"]
        env = {"OPENENV_LLM_API_KEY": api_key} if api_key else None  # through the environment, never argv
        self.report(f"starting the capture proxy on port {lay.proxy_port}", stage="sandbox")
        self._proxy = self.box.run(f"{shlex.join(proxy)} > {lay.state}/proxy.log 2>&1", env=env, background=True)
        health = self._run([lay.python, f"{lay.state}/in_sandbox.py", "health", str(lay.proxy_port), "60"], check=False)
        if not health.ok:
            raise AgentError(f"the capture proxy did not start: {self._tail('proxy.log')}")
        session = self._run([lay.python, f"{lay.state}/in_sandbox.py", "session", str(lay.proxy_port)])
        self.session_id = json.loads(session.stdout)["session_id"]
        cfg = opencode.config(f"http://127.0.0.1:{lay.proxy_port}/v1", self.session_id, model, max_output_tokens,
                              context, deny, seed=seed)
        cfg_path = f"{lay.state}/opencode.json"
        self.box.files.write(cfg_path, json.dumps(cfg, indent=2))
        agent_env = opencode.environment(f"{lay.state}/home", cfg_path)
        agent_env["PWD"] = lay.workdir  # opencode reads its working directory from $PWD before cwd
        # the task goes on stdin: a positional argument with spaces reaches the model wrapped in quotes
        run = (f"cd {shlex.quote(lay.workdir)} && {shlex.quote(lay.opencode)} run --format json"
               f" < {lay.state}/task.txt > {lay.state}/events.jsonl 2> {lay.state}/agent.err;"
               f" echo $? > {lay.state}/agent.exit")
        self.report(f"starting opencode {opencode.OPENCODE_VERSION} in {lay.workdir}", stage="agent", turns=0)
        self._agent = self.box.run(run, env=agent_env, background=True)

    def _read(self, name: str) -> str:
        path = f"{self.lay.state}/{name}"
        try:
            return self.box.files.read(path).decode("utf-8", "replace") if self.box.files.exists(path) else ""
        except Exception:  # a file being written can vanish or be partial: next poll reads it again
            return ""

    def _tail(self, name: str, n: int = 800) -> str:
        text = self._read(name).strip()
        return text[-n:] if text else f"(no {name})"

    def proxy_get(self, path: str) -> dict:
        """GET `path` on the capture proxy: directly when its port is reachable from here, else from inside
        the sandbox (a Hugging Face sandbox's proxy listens on its own loopback only)."""
        port = self.lay.proxy_port
        if self.lay.proxy_from_host:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
                return json.loads(r.read())
        r = self._run([self.lay.python, f"{self.lay.state}/in_sandbox.py", "get", str(port), path], timeout=30)
        return json.loads(r.stdout)

    def wait(self, timeout_s: float, cancel: threading.Event | None = None,
             on_poll: Callable[[], None] | None = None) -> tuple[bool, int | None, list[dict]]:
        """Until opencode exits or the timeout: (timed out, exit code, events seen). `on_poll` runs on every
        pass of the loop (the live view's proxy watch, which keeps its own pace)."""
        deadline = time.monotonic() + timeout_s
        events: list[dict] = []
        seen = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled("capture cancelled")
            lines = self._read("events.jsonl").splitlines()
            for line in lines[seen:]:
                try:
                    ev = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the last line may still be half-written
                events.append(ev)
                self._narrate(ev, events)
            seen = len(lines) if lines and lines[-1].strip().endswith("}") else max(0, len(lines) - 1)
            if on_poll is not None:
                on_poll()
            done = self._read("agent.exit").strip()
            if done:
                return False, int(done) if done.lstrip("-").isdigit() else None, events
            if time.monotonic() > deadline:
                self.report(f"the agent did not finish within {timeout_s:g} s: stopping it, keeping what it produced")
                if self._agent is not None:
                    self._agent.kill()
                return True, None, events
            time.sleep(POLL_S)

    def _narrate(self, ev: dict, events: list[dict]) -> None:
        kind = ev.get("type")
        part = ev.get("part") or {}
        if kind == "step_start":
            self.report(f"model call {sum(e.get('type') == 'step_start' for e in events)}",
                        turns=sum(e.get("type") == "step_start" for e in events))
        elif kind == "tool_use":
            state = part.get("state") or {}
            self.report(f"tool {part.get('tool')}: {state.get('status', '')}")
        elif kind == "text" and part.get("text"):
            self.report("model says: " + " ".join(str(part["text"]).split())[:160])
        elif kind == "error":
            self.report(f"agent error: {str(ev.get('error') or part)[:300]}")

    def collect(self) -> tuple[list[dict], str | None]:
        """The captured entries and the final solution.py (None when the agent wrote none)."""
        lay = self.lay
        if self.session_id is None:
            raise CaptureError("collect() before start(): no capture-proxy session")
        out = f"{lay.state}/entries.json"
        r = self._run([lay.python, f"{lay.state}/in_sandbox.py", "entries", str(lay.proxy_port), self.session_id, out],
                      check=False)
        if not r.ok:
            raise AgentError(f"could not read the capture back from the proxy: {r.stderr.strip()[-500:]}")
        entries = json.loads(self.box.files.read(out))
        sol = f"{lay.workdir}/solution.py"
        solution = self.box.files.read(sol).decode("utf-8", "replace") if self.box.files.exists(sol) else None
        return entries, solution

    def verify(self, tests: list[dict]) -> list[dict]:
        lay = self.lay
        self.box.files.write(f"{lay.state}/tests.json", json.dumps(tests))
        r = self._run([lay.python, f"{lay.state}/verifier.py", f"{lay.state}/tests.json", f"{lay.workdir}/solution.py"],
                      timeout=60 + 10 * len(tests), check=False)
        if not r.ok:
            raise AgentError(f"the verifier failed to run: {r.stderr.strip()[-500:]}")
        return json.loads(r.stdout)

    def agent_stderr(self) -> str:
        return self._tail("agent.err")

    def stop(self) -> None:
        for proc in (self._agent, self._proxy):
            if proc is not None:
                try:
                    proc.kill()
                except Exception:  # already gone
                    pass
