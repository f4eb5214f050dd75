"""The viewer's processes use jemalloc returning freed pages at once (viewer/memory_pool.py), unless the process
names its own Arrow pool."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def _pool(code: str, **env: str) -> str:
    import os

    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_the_app_and_the_command_line_use_jemalloc_returning_at_once():
    code = ("import pyarrow as pa; from viewer.ui.app import build_app; build_app(); "
            "print(pa.default_memory_pool().backend_name)")
    assert _pool(code) == "jemalloc"
    cli = ("import pyarrow as pa; from viewer.cli import main; main(['ls', 'trl-run']); "
           "print(pa.default_memory_pool().backend_name)")
    assert _pool(cli) == "jemalloc"


def test_a_pool_the_process_names_is_kept():
    code = "import pyarrow as pa; from viewer.memory_pool import use_returning_pool; print(use_returning_pool())"
    assert _pool(code, ARROW_DEFAULT_MEMORY_POOL="system") == "system"


def test_numpy_arrays_freed_after_a_large_one_leave_nothing_resident():
    """The first large array freed would raise malloc's mmap threshold: the next ones would come from the heap
    and stay resident when freed (small blocks that stay sit between them). Without the fixed threshold this process keeps ~8 arrays' worth (64 MB)."""
    code = """
import numpy as np
from viewer.memory_pool import use_returning_pool
use_returning_pool()
rss = lambda: int(open('/proc/self/statm').read().split()[1]) * 4096 >> 20
big = np.ones(4_000_000); del big          # 32 MB, freed: glibc would raise its threshold to it
base = rss()
kept, small = [], []
for _ in range(8):                         # 8 MB each, written, each followed by a small block that stays
    kept.append(np.ones(1_000_000)); small.append(np.ones(2_000))
del kept
print(rss() - base)
"""
    assert int(_pool(code)) < 16


def test_the_server_freezes_what_its_start_up_made_before_it_serves():
    """app.py builds the app, then freezes the start-up's objects (the imports', the app's: hundreds of thousands)
    out of Python's full collections before it serves (viewer/memory_pool.py `settle_startup`): a full collection
    walked all of them every few requests, adding 0.3 s to the request it fell in."""
    code = """
import gc, sys
import app
class Demo:
    def launch(self, **kw):
        print(gc.get_freeze_count())
app.build_app = lambda **kw: Demo()
sys.argv = ["app.py", "scripted-smollm2", "--port", "0"]
app.main()
"""
    frozen = int(_pool(code))
    assert frozen > 100_000
