"""No process a capture started outlives it even when it is killed outright.

SIGKILL leaves no handler a chance, so every group is led by processes/guard.py, which the kernel tells
when its parent dies (PR_SET_PDEATHSIG) and which then kills its group: the command and what that
started (a `sh -c` wrapper's server, opencode's tools). Tested by SIGKILLing a parent process.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from conftest import ROOT
from processes import free_port

PARENT = textwrap.dedent("""
    import subprocess, sys, time
    import processes

    # a wrapper shell whose child listens on a port (the proxy's shape), and a plain long command
    server = processes.popen("python3 -c 'import socket,time; s=socket.socket(); s.bind((\\"127.0.0.1\\", %d)); "
                             "s.listen(); time.sleep(600)'; echo never", shell=True)
    sleeper = processes.popen(["sh", "-c", "sleep 600 & sleep 600; wait"])
    print("STARTED", server.pid, sleeper.pid, flush=True)
    time.sleep(600)
""")




def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def descendants(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


def gone(procs: list[psutil.Process], within_s: float = 10.0) -> list[str]:
    deadline = time.monotonic() + within_s
    while True:
        left = []
        for p in procs:
            try:
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    left.append(f"{p.pid} {' '.join(p.cmdline())[:80]}")
            except psutil.NoSuchProcess:
                pass
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def test_sigkill_of_the_parent_ends_every_group_it_started():
    port = free_port()
    parent = subprocess.Popen([sys.executable, "-c", PARENT % port], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        line = parent.stdout.readline()
        assert line.startswith("STARTED"), line
        deadline = time.monotonic() + 20
        while not listening(port):
            assert time.monotonic() < deadline, "the server never listened"
            time.sleep(0.2)
        kids = descendants(parent.pid)
        assert len(kids) >= 6, [k.cmdline() for k in kids]  # guards, sh, python, sleeps
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        assert gone(kids) == []
        assert not listening(port)
    finally:
        if parent.poll() is None:
            parent.kill()


def test_the_guard_is_transparent():
    import processes

    p = processes.popen("read x; echo got $x; exit 3", shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        text=True)
    assert p.communicate("hi", timeout=20) == ("got hi\n", None) and p.returncode == 3
    p = processes.popen(["sh", "-c", "kill -TERM $$"])
    assert p.wait(timeout=20) == -signal.SIGTERM  # it ends as the command ended
    with pytest.raises(FileNotFoundError):
        processes.popen(["no-such-command-here"])
    p = processes.popen(["sh", "-c", "trap 'exit 7' TERM; sleep 30 & wait"])
    time.sleep(0.5)
    os.killpg(p.pid, signal.SIGTERM)  # a SIGTERM to the group (vLLM's clean stop) reaches the command only
    assert p.wait(timeout=20) == 7
    processes.forget(p.pid)


@pytest.mark.capture
def test_sigkill_mid_capture_without_bubblewrap_leaves_no_process(tmp_path):
    tmp = tmp_path / "tmp"  # the sandbox folder a SIGKILLed capture cannot remove lands here, not in /tmp
    tmp.mkdir()
    child = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "capture_child.py"),
                              str(tmp_path / "out"), "--isolation", "none"], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp)})
    lines = []
    try:
        deadline = time.monotonic() + 240
        for line in child.stdout:  # until the agent made a tool call and waits on the (hanging) model
            lines.append(line)
            if "tool write" in line or time.monotonic() > deadline:
                break
        assert any("tool write" in x for x in lines), "".join(lines)
        assert any("NOT isolated" in x for x in lines), "".join(lines)
        time.sleep(2)
        kids = descendants(child.pid)
        names = " ".join(k.name() for k in kids)
        assert "opencode" in names and "python" in names, names  # the agent and the capture proxy
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        assert gone(kids) == [], "".join(lines)
    finally:
        if child.poll() is None:
            child.kill()
