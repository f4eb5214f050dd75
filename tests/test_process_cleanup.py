"""No process a capture started outlives it, however it ends: here, the app or CLI
being sent SIGTERM mid-capture, which used to leave the capture proxy running and listening."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

import processes
from conftest import ROOT

pytestmark = pytest.mark.capture
CHILD = ROOT / "tests" / "support" / "capture_child.py"


def _alive(snapshot: list[tuple[int, float, str]]) -> list[str]:
    left = []
    for pid, created, name in snapshot:
        try:
            p = psutil.Process(pid)
            if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{pid} {name} {' '.join(p.cmdline())[:120]}")
        except psutil.NoSuchProcess:
            pass
    return left


def _members(groups: set[int]) -> list[str]:
    """Live (not zombie) processes in these groups; zombies wait for a reaper and run nothing."""
    found = []
    for p in psutil.process_iter(["pid", "name", "status"]):
        try:
            if os.getpgid(p.pid) in groups and p.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(f"{p.pid} {p.info['name']}")
        except (ProcessLookupError, psutil.Error):
            pass
    return found


def test_sigterm_mid_capture_leaves_no_process(tmp_path):
    tmp = tmp_path / "tmp"  # the capture's temporary folders (its sandbox) go here: counted at the end
    tmp.mkdir()
    child = subprocess.Popen([sys.executable, str(CHILD), str(tmp_path / "out")], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp)})
    lines = []
    try:
        deadline = time.monotonic() + 240
        for line in child.stdout:  # wait until the agent has made one tool call and waits on the model
            lines.append(line)
            if "tool write" in line or time.monotonic() > deadline:
                break
        assert any("tool write" in x for x in lines), "".join(lines)
        time.sleep(2)
        kids = psutil.Process(child.pid).children(recursive=True)
        snapshot = [(p.pid, p.create_time(), p.name()) for p in kids]
        names = " ".join(n for _, _, n in snapshot)
        assert "sh" in names and "python" in names, names  # the proxy's wrapper and its server
        groups = {os.getpgid(p.pid) for p in kids if p.is_running()}
        assert len(groups) >= 2  # the proxy and opencode, each in its own group
        assert [p.name for p in tmp.iterdir() if p.name.startswith("rollout-sandbox-")]
        child.send_signal(signal.SIGTERM)
        # it ends as an exit with SIGTERM's shell status, so `finally` blocks and atexit ran
        assert child.wait(timeout=30) == 128 + signal.SIGTERM
        time.sleep(1)
        assert _alive(snapshot) == [], "".join(lines)
        assert _members(groups) == []
        assert [p.name for p in tmp.iterdir() if not p.name.startswith("torchinductor")] == []  # no sandbox left
    finally:
        if child.poll() is None:
            child.kill()


def test_stop_kills_a_group_whose_leader_already_exited():
    """A `sh -c` wrapper that exits leaves its server running in the same group: stop must reach it."""
    proc = processes.popen(["sh", "-c", "sleep 300 & echo $!"], stdout=subprocess.PIPE, text=True)
    server = int(proc.stdout.readline())
    proc.wait(timeout=10)  # the leader is gone, its child is not
    assert psutil.pid_exists(server) and proc.pid in processes._groups
    processes.stop(proc)
    time.sleep(0.2)
    assert not psutil.pid_exists(server) or psutil.Process(server).status() == psutil.STATUS_ZOMBIE
    assert proc.pid not in processes._groups
