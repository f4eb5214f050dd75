"""Arrow's memory pool for the viewer's processes (the app, `python -m viewer`): jemalloc, returning freed pages to
the system at once; and the server's start-up objects frozen out of Python's full collections (`settle_startup`).

A run's snapshot is built from many short-lived Arrow buffers (each shard's columns decoded, then concatenated and
aggregated); Arrow's default pool (mimalloc) keeps what they freed, so a server's resident memory grows by about
a third more than the snapshot holds. With jemalloc's decay at 0 the per-version numbers of a 1,024,000-rollout run
peaked at ~410 MB above the imports instead of ~520 MB, and took less CPU (bench/bench_run_table.py `stats`). A
process that names its pool (ARROW_DEFAULT_MEMORY_POOL) keeps it; a pyarrow built without jemalloc keeps its own.

numpy's arrays come from the C library's malloc, whose threshold for giving a large block its own mapping rises
to the size of the largest block freed: after the first million-row array is freed, the next ones come from the
heap and stay resident when freed (~60 MB kept after a million-rollout run is opened). The threshold is fixed at
glibc's default (128 KiB), which keeps it from rising.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

import pyarrow as pa

from .settings import named_arrow_pool

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
MMAP_THRESHOLD = 128 * 1024


def _fix_malloc_threshold() -> bool:
    """glibc's mmap threshold fixed (True), or nothing done: another C library, or none found."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):
        return False


def use_returning_pool() -> str:
    """Make jemalloc with immediate decay Arrow's default pool, and fix malloc's mmap threshold (once per process);
    the pool's name in use."""
    _fix_malloc_threshold()
    if named_arrow_pool():
        return pa.default_memory_pool().backend_name
    try:
        pool = pa.jemalloc_memory_pool()
        pa.jemalloc_set_decay_ms(0)
    except NotImplementedError:  # pyarrow built without jemalloc
        return pa.default_memory_pool().backend_name
    pa.set_memory_pool(pool)
    return pool.backend_name


def settle_startup() -> int:
    """Once the server is built: what its start-up made (the imports of Gradio, TRL, transformers; the app), about
    600,000 objects that live as long as the process, collected once and then frozen out of Python's full
    collections, which otherwise walk all of them every few requests (0.3 s each on this machine: an index page
    of 0.1 s took 0.4 s when one fell in it). How many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
