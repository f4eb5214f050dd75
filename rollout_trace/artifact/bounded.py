"""A thread-safe map that keeps at most `max_entries` keys, dropping the least recently used, and tells its owner
what it dropped (`on_evict(key, value)`: close a file, remove a folder, subtract a size).

Every cache the viewer keeps across requests (collections, text indexes, loaded rollouts, row facts, run numbers)
is one of these, so the bound is enforced on every insert in one tested place. `on_evict` runs after the map's
own lock is released: it may take its value's own lock, wait for a reader to finish, or touch the disk without
holding every other caller of the map.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Bounded(Generic[K, V]):
    def __init__(self, max_entries: int, on_evict: Callable[[K, V], None] | None = None):
        self.max_entries = max_entries
        self._on_evict = on_evict
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value of `key` (now the most recently used), or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def peek(self, key: K) -> V | None:
        """The value of `key` without making it recent."""
        with self._lock:
            return self._items.get(key)

    def put(self, key: K, value: V) -> None:
        """Keep `value` under `key` (replacing what was there, which is not evicted: the caller has it)."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            dropped = self._over()
        self._evicted(dropped)

    def setdefault(self, key: K, make: Callable[[], V]) -> V:
        """The value of `key`, made by `make` (under the map's lock: keep it cheap) when there is none."""
        with self._lock:
            value = self._items.get(key)
            if value is None:
                value = self._items[key] = make()
            self._items.move_to_end(key)
            dropped = self._over()
        self._evicted(dropped)
        return value

    def pop(self, key: K) -> V | None:
        """Remove `key` without evicting it (the caller has its value); None when absent."""
        with self._lock:
            return self._items.pop(key, None)

    def evict(self, keep: int | None = None) -> None:
        """Drop the least recently used until at most `keep` (default: max_entries) remain."""
        with self._lock:
            dropped = self._over(self.max_entries if keep is None else keep)
        self._evicted(dropped)

    def clear(self) -> None:
        self.evict(keep=0)

    def items(self) -> list[tuple[K, V]]:
        """A snapshot, least recently used first."""
        with self._lock:
            return list(self._items.items())

    def keys(self) -> list[K]:
        with self._lock:
            return list(self._items)

    def values(self) -> list[V]:
        with self._lock:
            return list(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def _over(self, keep: int | None = None) -> list[tuple[K, V]]:
        limit = self.max_entries if keep is None else keep
        dropped = []
        while len(self._items) > max(0, limit):
            dropped.append(self._items.popitem(last=False))
        return dropped

    def _evicted(self, dropped: list[tuple[K, V]]) -> None:
        if self._on_evict is not None:
            for key, value in dropped:
                self._on_evict(key, value)
