"""Fence the local backend's processes in with bubblewrap where the machine allows it.

The local backend runs opencode, and whatever its bash tool is told to run, on this machine as this
user. Under `bwrap` every command sees the whole file system read-only except its own work folder
(and a private /tmp), gets fresh /dev and /proc, its own PID namespace (so it cannot signal our
processes, and everything in it dies with it), and dies if we die. The network is shared, as
without bwrap: the proxy, the model endpoint and opencode talk over loopback.

Inside the fence the work folder is always at one path, `INSIDE`, whatever its temporary name on the
host: opencode writes its working directory into the system prompt, so without this every sandbox's
prompt names its own folder and the K rollouts of a group start from different prompts, where the
training example's siblings share a byte-identical one.

`available()` runs a quick self-test once per process (bwrap present, and a write outside the work
folder really fails). When it fails, the caller falls back to running commands unfenced and says
so (a progress warning, and `isolation: "none"` in the artifact's summary.capture).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

BUBBLEWRAP = "bubblewrap"
NONE = "none"


def runs_from() -> tuple[str, ...]:
    """What fenced commands are started with and run from: this Python (the path `sys.executable` names, its
    venv and base install) and the project (opencode in its node_modules), each as named and as resolved.

    A command is started by the path it is named with (`sys.executable`: a venv reached through a symlink
    is named by the link) and its files live at the resolution; the private tmpfs on /tmp hides either that
    lies there (a checkout in /tmp, a venv linked from the system temp folder), so both are bound back.
    A path inside another one listed is seen through it, and left out."""
    here = Path(__file__).parent.parent
    named = [sys.executable, sys.prefix, sys.base_prefix, str(here)]
    paths = list(dict.fromkeys([os.path.abspath(p) for p in named] + [str(Path(p).resolve()) for p in named]))
    return tuple(p for p in paths if not any(p.startswith(q.rstrip("/") + "/") for q in paths if q != p))


RUNS_FROM = runs_from()


# Where every fenced command sees its work folder: on the fence's private /tmp, so it can always be made
# and names nothing on the host.
INSIDE = "/tmp/rollout-sandbox"


def wrap(argv: list[str], workdir: Path, cwd: str, inside: str = INSIDE) -> list[str]:
    """`argv` run under bwrap with only `workdir` writable, seen at `inside` (a private tmpfs on /tmp
    besides); `cwd` is a path as the command sees it."""
    under_tmp = [x for p in RUNS_FROM if p == "/tmp" or p.startswith("/tmp/") for x in ("--ro-bind", p, p)]
    return ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            *under_tmp,  # after the tmpfs, read-only as everywhere else
            "--bind", str(workdir), inside,  # after the tmpfs, which `inside` lies on
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
            "--chdir", cwd, "--", *argv]


@lru_cache(maxsize=1)
def available() -> tuple[bool, str]:
    """(usable, why not): bwrap exists, and a fenced command can write its folder but nothing outside
    it that the host sees."""
    if shutil.which("bwrap") is None:
        return False, "bwrap is not installed (Debian package `bubblewrap`)"
    with tempfile.TemporaryDirectory(prefix="rollout-bwrap-test-") as d:
        work, outside = Path(d) / "work", Path(d) / "outside"
        work.mkdir()
        # the work folder is seen at INSIDE; outside it a write either fails or lands in the private /tmp: never
        # on the host
        probe = f"echo ok > {INSIDE}/in && {{ (echo no > {outside}) 2>/dev/null; true; }}"
        try:
            r = subprocess.run(wrap(["sh", "-c", probe], work, INSIDE), capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as e:
            return False, f"bwrap did not run: {type(e).__name__}"
        if r.returncode != 0 or not (work / "in").is_file() or outside.exists():
            return False, f"bwrap failed its self-test (exit {r.returncode}: {r.stderr.strip()[:200]})"
    return True, ""
