"""Every process group a capture or the offline model server starts, so that none outlives us: the one
place that kills them (and `free_port`, the loopback port a child server listens on).

A capture starts process groups (the proxy's `sh -c` wrapper and its python child, opencode and
the tools it runs, the local vLLM server), each in its own session so one `killpg` reaches every
member. Normal endings (done, cancel, error, timeout, Ctrl-C) stop them in `finally` blocks. What a
`finally` cannot cover is the app itself being stopped: SIGTERM's default action ends Python at
once, and an exit without unwinding skips them. So each group is registered here when it starts
and forgotten when it is reaped, and `install()` (run from the main thread when this module is
imported, since only the main thread may set signal handlers) adds:

  * an atexit hook that kills every group still registered, and
  * a SIGTERM handler that does the same, then ends the process as an exit, not as a signal
    (`SystemExit(143)`, the status a shell reports for SIGTERM), so `finally` blocks and atexit
    hooks still run: the app's downloads folder, its Gradio cache and every temporary folder a
    load or a sandbox made are removed (rollout_trace/artifact/unpack.py). Re-raising SIGTERM with its default
    action, as this once did, ended Python at once and left them all on disk.
    A handler that was there before ours is called instead.

What no handler can cover is SIGKILL of this process: every group is led by processes/guard.py,
which the kernel tells when we die (PR_SET_PDEATHSIG), and which then SIGKILLs its group.

Killing is SIGKILL to the whole group: the point is that nothing keeps running or listening.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

GUARD = Path(__file__).with_name("guard.py")  # leads every group; ends it if we are killed outright
_lock = threading.RLock()  # the SIGTERM handler takes it too, and may interrupt a holder in the main thread
_groups: set[int] = set()
_installed = False
_previous_sigterm: Any = signal.SIG_DFL


def free_port() -> int:
    """A loopback port nothing listens on now (the kernel picks it), for a server we are about to start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def register(pgid: int) -> None:
    """Remember a process group this process started (its leader's pid, with start_new_session)."""
    with _lock:
        _groups.add(pgid)
    install()


def forget(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Signal every member of the group; False when none is left. The group stays registered."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # not ours any more (the id was reused): leave it alone
        return False


def kill_all() -> None:
    """SIGKILL every registered group (at exit, or on SIGTERM)."""
    with _lock:
        groups = list(_groups)
        _groups.clear()
    for pgid in groups:
        kill_group(pgid)


def popen(args: str | Sequence[str], **kw: Any) -> subprocess.Popen:
    """`subprocess.Popen` in a new session (its own process group), registered until `stop`.

    The command runs under processes/guard.py, which leads the group and SIGKILLs all of it if this
    process dies without a chance to (SIGKILL of the app): the kernel tells it (PR_SET_PDEATHSIG)."""
    if kw.pop("shell", False):
        argv = ["/bin/sh", "-c", args] if isinstance(args, str) else ["/bin/sh", "-c", *args]
    else:
        argv = [args] if isinstance(args, str) else list(args)
    path = (kw.get("env") or os.environ).get("PATH", os.defpath)
    program = os.path.join(kw.get("cwd") or "", argv[0]) if os.sep in argv[0] else argv[0]  # as exec will see it
    if shutil.which(program, path=path) is None:
        raise FileNotFoundError(2, "No such file or directory", argv[0])  # as Popen would, before starting anything
    kw["start_new_session"] = True
    proc = subprocess.Popen([sys.executable, "-I", "-S", str(GUARD), str(os.getpid()), "--", *argv], **kw)
    register(proc.pid)
    return proc


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Kill the group `proc` leads, reap the leader, and forget the group.

    The group is killed even when its leader already exited: a `sh -c` wrapper can be gone while
    the server it started keeps running in the same group."""
    kill_group(proc.pid)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:  # unkillable (stuck in the kernel): nothing more we can do
        pass
    forget(proc.pid)


def _on_sigterm(signum: int, frame: Any) -> None:
    kill_all()
    previous = _previous_sigterm
    if callable(previous):
        previous(signum, frame)
        return
    if previous == signal.SIG_IGN:
        return
    # end, but as an exit: the main thread unwinds and atexit runs (this handler runs in the main thread)
    raise SystemExit(128 + signum)


def install() -> bool:
    """Add the atexit hook and the SIGTERM handler once; True when they are in place.

    Signal handlers can only be set from the main thread; from another thread this returns False
    (capture/__init__ imports this module from the main thread, so it is installed by then)."""
    global _installed, _previous_sigterm
    if _installed:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    with _lock:
        if _installed:
            return True
        previous = signal.getsignal(signal.SIGTERM)
        if previous is not _on_sigterm:
            _previous_sigterm = previous
            signal.signal(signal.SIGTERM, _on_sigterm)
        atexit.register(kill_all)
        _installed = True
    return True


install()
