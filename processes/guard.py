"""The first process of every group a capture starts: it runs one command, and ends the group if we die.

    python -I -S processes/guard.py PARENT_PID -- ARGV...      (processes/__init__.py starts it)

`finally` blocks, the atexit hook and the SIGTERM handler (processes/__init__.py) end a capture's
processes however the capture ends, except when our process is killed outright (SIGKILL, the OOM
killer): then nothing of ours runs. So the kernel is asked to tell this guard when its parent dies
(`prctl(PR_SET_PDEATHSIG)`), and the guard then SIGKILLs its whole process group: the command and
everything it started (the proxy under its `sh -c`, opencode and its tools), which PDEATHSIG alone
would not reach, since it is cleared for every fork below the process that set it.

The guard otherwise stays out of the way: the command inherits its standard streams, working folder
and environment; SIGTERM and SIGINT sent to the group reach the command, which may shut down cleanly
(the guard ignores them and waits); the guard exits as the command did. The kernel sends the signal
when the thread that started the guard ends, so a capture starts its processes from the thread that
waits for them (it always has). Standalone on purpose: it imports nothing of this project and starts
in milliseconds. Where `prctl` does not exist (not Linux) it just runs the command.
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PARENT_DIED = signal.SIGUSR2  # a signal nobody else sends a capture's processes


def _end_group(*_: object) -> None:
    os.killpg(0, signal.SIGKILL)


def main() -> int:
    parent, argv = int(sys.argv[1]), sys.argv[3:]
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(PR_SET_PDEATHSIG, int(PARENT_DIED), 0, 0, 0) == 0
    except (OSError, AttributeError):
        armed = False
    if not armed:
        os.execvp(argv[0], argv)
    signal.signal(PARENT_DIED, _end_group)
    if os.getppid() != parent:  # the parent died before the kernel was asked to tell us
        _end_group()
    pid = os.fork()
    if pid == 0:
        signal.signal(PARENT_DIED, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            print(f"cannot run {argv[0]}: {e.strerror}", file=sys.stderr)
            os._exit(127)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # for the command; we wait for it to end
        signal.signal(sig, signal.SIG_IGN)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):  # end as the command ended
        ended = os.WTERMSIG(status)
        signal.signal(ended, signal.SIG_DFL)
        os.kill(os.getpid(), ended)
    return os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
