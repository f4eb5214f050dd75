"""What a killed instance of the app left in the temp folder is reclaimed at the next start, and nothing else
is; reading with TRL leaves nothing there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

# -- what a killed instance of the app left in the temp folder is reclaimed at the next start ----------------

def _dead_pid() -> int:

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_the_next_start_reclaims_a_killed_instances_gradio_folder(tmp_path, monkeypatch):

    from viewer.ui import cache_folder

    base = tmp_path / "gradio"
    base.mkdir()
    # a real killed instance: a child makes its private folder (and a partial upload in it), then is SIGKILLed
    child = subprocess.Popen([sys.executable, "-c", "import sys, os, signal\n"
                              "from rollout_trace.artifact.unpack import temporary_folder\n"
                              f"f = temporary_folder('rollout-viewer-gradio-', dir={str(base)!r})\n"
                              "(f / 'tmpupload').write_bytes(b'x' * 1000)\nprint(f, flush=True)\n"
                              "os.kill(os.getpid(), signal.SIGKILL)"], stdout=subprocess.PIPE, text=True)
    left = Path(child.communicate()[0].strip())
    assert (left / "tmpupload").is_file()
    not_ours = base / "rollout-viewer-gradio-x"  # no owner in its name
    not_ours.mkdir()
    link = base / f"rollout-viewer-gradio-{_dead_pid()}.1-abcdefgh"  # a link named like ours: never followed
    target = tmp_path / "elsewhere"
    target.mkdir()
    link.symlink_to(target)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(base))
    monkeypatch.setattr(cache_folder, "_folder", None)
    mine = cache_folder.private_cache()
    assert not left.exists()
    assert mine.is_dir() and not_ours.is_dir() and link.is_symlink() and target.is_dir()


def test_a_live_or_foreign_folder_is_never_reclaimed(tmp_path):

    from rollout_trace.artifact.unpack import _started, reclaim_dead, temporary_folder

    mine = temporary_folder("rollout-zip-", dir=tmp_path)  # this process: alive
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        alive = tmp_path / f"rollout-zip-{sleeper.pid}.{_started(sleeper.pid)}-abcdefgh"
        alive.mkdir()
        reused = tmp_path / f"rollout-zip-{sleeper.pid}.1-abcdefgh"  # the pid reused by another process: dead
        reused.mkdir()
        dead = tmp_path / f"rollout-zip-{_dead_pid()}.1-abcdefgh"
        dead.mkdir()
        assert sorted(reclaim_dead(tmp_path)) == sorted([dead, reused])
        assert mine.is_dir() and alive.is_dir()
        if os.getuid() == 0:  # a folder of another user is theirs, whatever its name
            other = tmp_path / f"rollout-zip-{_dead_pid()}.1-zzzzzzzz"
            other.mkdir()
            os.chown(other, 65534, 65534)
            assert reclaim_dead(tmp_path) == [] and other.is_dir()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_reading_with_trl_leaves_no_torchinductor_folder_in_the_temp_folder(tmp_path):
    """Importing TRL imports torch._dynamo, which made `torchinductor_<user>` in the temp folder for good."""


    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env.update(TMPDIR=str(tmp_path), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TRL_EXPERIMENTAL_SILENCE="1")
    probe = ("import os, sys\nfrom viewer.cli import main\ncode = main(['check', 'scripted-smollm2'])\n"
             "import torch._dynamo\nprint(os.environ['TORCHINDUCTOR_CACHE_DIR'])\nsys.exit(code)")
    r = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert Path(r.stdout.strip().splitlines()[-1]).parent == tmp_path  # ours while it ran...
    assert list(tmp_path.iterdir()) == []  # ...and gone with the process
