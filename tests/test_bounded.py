"""The one bounded map every cache uses (rollout_trace/artifact/bounded.py), and the caches that use it keeping
their bound on every insert: the rollout store after 10,500 distinct opens (it kept all of them)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from rollout_trace.artifact.bounded import Bounded
from viewer.ui import store as store_module
from viewer.ui.store import RolloutStore


def test_least_recently_used_is_dropped_and_its_owner_told():
    dropped: list = []
    b: Bounded[str, int] = Bounded(2, on_evict=lambda k, v: dropped.append((k, v)))
    b.put("a", 1)
    b.put("b", 2)
    assert b.get("a") == 1  # a is now recent: b goes first
    b.put("c", 3)
    assert dropped == [("b", 2)] and b.keys() == ["a", "c"]
    assert b.peek("a") == 1 and b.keys() == ["a", "c"]  # peek leaves the order
    assert b.setdefault("a", lambda: 9) == 1 and b.setdefault("d", lambda: 4) == 4
    assert dropped == [("b", 2), ("c", 3)]
    assert b.pop("a") == 1 and dropped[-1] == ("c", 3)  # popped is not evicted: the caller has it
    b.clear()
    assert len(b) == 0 and dropped[-1] == ("d", 4)


def test_eviction_runs_outside_the_maps_lock():
    """An owner's hook may wait (a reader finishing with a dropped index): others use the map meanwhile."""
    inside, release = threading.Event(), threading.Event()

    def slow(key, value):
        inside.set()
        release.wait(600)

    b: Bounded[int, int] = Bounded(1, on_evict=slow)
    b.put(1, 1)
    t = threading.Thread(target=b.put, args=(2, 2))
    t.start()
    inside.wait(600)
    assert b.get(2) == 2 and b.peek(1) is None  # the map answers while the hook waits
    release.set()
    t.join()


def _tiny(_=None):
    return SimpleNamespace(artifact=SimpleNamespace(turns=[], tokenizer_json=None), vocab=None)


def test_the_rollout_store_keeps_its_bound_on_every_open():
    store = RolloutStore()
    for k in range(store_module.MAX_ENTRIES + 500):
        store.open(f"hub-row|org/run@{k}", _tiny)
    assert store.recipes() == store_module.MAX_ENTRIES
    loaded = store_module.BUDGET_BYTES // store_module.OVERHEAD_BYTES  # the newest that fit the byte budget
    assert store.loaded_bytes() == loaded * store_module.OVERHEAD_BYTES  # counted as it changed


def test_the_rollout_stores_byte_count_follows_loads_evictions_and_drops():
    store = RolloutStore(budget_bytes=3 * store_module.OVERHEAD_BYTES, max_entries=5)
    keys = [store.open(f"r{k}", _tiny)[0] for k in range(4)]  # the 4th load evicts the oldest rollout
    assert store.loaded_bytes() == 3 * store_module.OVERHEAD_BYTES
    assert store.get(keys[0]) is not None and store.loads == 5  # its recipe reloads it
    for k in range(4, 10):
        store.open(f"r{k}", _tiny)
    assert store.recipes() == 5 and store.get(keys[0]) is None  # its recipe was dropped by the count bound
    assert store.loaded_bytes() == 3 * store_module.OVERHEAD_BYTES
