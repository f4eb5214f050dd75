"""Arrow's memory pool for the viewer's processes (the app, `python -m viewer`): jemalloc, returning freed pages to
the system at once.

A run's snapshot is built from many short-lived Arrow buffers (each shard's columns decoded, then concatenated and
aggregated); Arrow's default pool (mimalloc) keeps what they freed, so a server's resident memory grows by about
a third more than the snapshot holds. With jemalloc's decay at 0 the per-version numbers of a 1,024,000-rollout run
peaked at ~410 MB above the imports instead of ~520 MB, and took less CPU (bench/bench_run_table.py `stats`). A
process that names its pool (ARROW_DEFAULT_MEMORY_POOL) keeps it; a pyarrow built without jemalloc keeps its own.
"""

from __future__ import annotations

import pyarrow as pa

from .settings import named_arrow_pool


def use_returning_pool() -> str:
    """Make jemalloc with immediate decay Arrow's default pool (once per process); the pool's name in use."""
    if named_arrow_pool():
        return pa.default_memory_pool().backend_name
    try:
        pool = pa.jemalloc_memory_pool()
        pa.jemalloc_set_decay_ms(0)
    except NotImplementedError:  # pyarrow built without jemalloc
        return pa.default_memory_pool().backend_name
    pa.set_memory_pool(pool)
    return pool.backend_name
