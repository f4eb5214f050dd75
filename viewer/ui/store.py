"""Loaded rollouts kept on the server between page requests, under unguessable keys.

The page holds only a key; token chunks are served for keys this process issued, so a visitor can
reach only rollouts that were loaded through the source rules (never an arbitrary path). The store
is bounded: the least recently used rollout is dropped first.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

from viewer.rollout import Rollout

MAX_ROLLOUTS = 6


class RolloutStore:
    def __init__(self, capacity: int = MAX_ROLLOUTS):
        self._items: OrderedDict[str, Rollout] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity

    def put(self, rollout: Rollout) -> str:
        key = secrets.token_urlsafe(16)
        with self._lock:
            self._items[key] = rollout
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
        return key

    def get(self, key: str) -> Rollout | None:
        with self._lock:
            r = self._items.get(key)
            if r is not None:
                self._items.move_to_end(key)
            return r
