"""Where the agent runs: a Hugging Face sandbox, or this machine behind the same interface.

Capture drives the agent through the subset of `huggingface_hub.Sandbox` it needs: `run` (foreground
or background), `processes`, `files.write/read/exists`, and `kill`. `LocalSandbox` implements that
subset with subprocesses in a fresh temporary folder, fenced in with bubblewrap where the machine
allows (capture/isolation.py: read-only system, only that folder writable); `isolation` says which.
It is the `local` backend, and it is the stand-in the tests use for the `hf-sandbox` backend, which
cannot be reached from our machines. Fenced, its commands see the folder at one fixed path
(`isolation.INSIDE`), so every sandbox gives the agent the same working directory; `home` is the folder
as commands see it, `root` as this process does, and `path` maps one to the other.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import processes
from rollout_trace.artifact.unpack import remove_folder, temporary_folder

from . import isolation as fence


@dataclass
class CommandResult:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass
class LocalProcess:
    id: str
    pid: int
    cmd: str | list[str]
    _popen: subprocess.Popen = field(repr=False, compare=False)

    @property
    def running(self) -> bool:
        return self._popen.poll() is None

    @property
    def exit_code(self) -> int | None:
        return self._popen.poll()

    def kill(self) -> bool:
        """Kill the whole group (opencode spawns children), even when the leader already exited."""
        was_running = self.running
        processes.stop(self._popen)
        return was_running


class _Files:
    def __init__(self, box: "LocalSandbox"):
        self._box = box

    def write(self, path: str, data: str | bytes, mode: str | None = None) -> None:
        p = self._box.path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        if mode:
            p.chmod(int(mode, 8))

    def read(self, path: str) -> bytes:
        return self._box.path(path).read_bytes()

    def exists(self, path: str) -> bool:
        return self._box.path(path).exists()


class LocalSandbox:
    """The Sandbox subset on this machine: commands run as subprocesses, relative paths under `root`."""

    def __init__(self, root: Path, env: dict[str, str] | None = None, isolate: bool = True):
        self.id = f"local-{root.name}"
        self.root = root
        usable, self.isolation_note = fence.available() if isolate else (False, "isolation was not asked for")
        self.isolation = fence.BUBBLEWRAP if usable else fence.NONE
        # where commands see the folder: one path for every fenced sandbox; unfenced, it is where it is
        self.home = fence.INSIDE if self.isolation == fence.BUBBLEWRAP else str(root)
        self._env = {**os.environ, **(env or {})}
        self._procs: list[LocalProcess] = []
        self.files = _Files(self)

    @classmethod
    def create(cls, image: str | None = None, *, env: dict[str, Any] | None = None, isolate: bool = True,
               **_: Any) -> "LocalSandbox":
        """Same call shape as `huggingface_hub.Sandbox.create`; image and flavor mean nothing here."""
        # removed by kill(), or at exit if the capture's thread is abandoned (the app stopped mid-capture)
        return cls(temporary_folder("rollout-sandbox-"), {k: str(v) for k, v in (env or {}).items()},
                   isolate=isolate)

    def path(self, p: str) -> Path:
        """The file on this machine that `p` (relative to the folder, or as commands see it) names."""
        q = Path(p)
        if not q.is_absolute():
            return self.root / q
        if self.home != str(self.root) and (p == self.home or p.startswith(self.home + "/")):
            return self.root / p[len(self.home):].lstrip("/")
        return q

    def inside(self, p: str) -> str:
        """`p` (relative to the folder, or absolute) as commands see it."""
        return p if Path(p).is_absolute() else f"{self.home}/{p}"

    def run(self, cmd: str | list[str], *, env: dict[str, Any] | None = None, cwd: str | None = None,
            timeout: float | None = None, stdin: str | None = None, on_stdout: Callable[[str], None] | None = None,
            check: bool = True, background: bool = False, **_: Any) -> CommandResult | LocalProcess:
        full_env = {**self._env, **{k: str(v) for k, v in (env or {}).items()}}
        where = str(self.path(cwd)) if cwd else str(self.root)
        shell = isinstance(cmd, str)
        if self.isolation == fence.BUBBLEWRAP:  # the command, shell included, runs inside the fence
            inner = self.inside(cwd) if cwd else self.home
            cmd, shell = fence.wrap(["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd), self.root, inner,
                                    self.home), False
            where = str(self.root)
        if background:
            popen = processes.popen(cmd, shell=shell, cwd=where, env=full_env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            proc = LocalProcess(str(len(self._procs)), popen.pid, cmd, popen)
            self._procs.append(proc)
            return proc
        popen = processes.popen(cmd, shell=shell, cwd=where, env=full_env, text=True,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert popen.stdout is not None and popen.stderr is not None  # both are pipes above
        stdout, stderr = popen.stdout, popen.stderr
        out_parts: list[str] = []

        def pump() -> None:
            for line in stdout:
                out_parts.append(line)
                if on_stdout is not None:
                    on_stdout(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        if stdin is not None and popen.stdin is not None:
            popen.stdin.write(stdin)
            popen.stdin.close()
        timed_out = False
        try:
            popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:  # whatever ended the wait (timeout, Ctrl-C), nothing of the command outlives it
            processes.stop(popen)
        reader.join(timeout=5)
        result = CommandResult(popen.returncode, "".join(out_parts), stderr.read(), timed_out)
        if check and (not result.ok or timed_out):
            raise RuntimeError(f"command failed in sandbox (exit {result.exit_code}): {result.stderr[-500:]}")
        return result

    def processes(self) -> list[LocalProcess]:
        return list(self._procs)

    def kill(self) -> None:
        for p in self._procs:
            p.kill()
        remove_folder(self.root)

    def __enter__(self) -> "LocalSandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()
