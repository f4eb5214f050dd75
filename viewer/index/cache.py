"""Opened collections kept across requests, bounded by count and age, closed when dropped.

Opening a collection costs a listing and a read of every small file (on the Hub: requests), and
every sort, filter, page and row open of every visitor needs its index, so collections are shared
by source identity: a local folder by its resolved path, a zip by its path, size and modification
time, a Hub dataset by the id as named (a revision in it pins it; otherwise the age bound is how
new pushes show up). An entry older than `max_age_s` is reopened on its next use; past
`max_entries` the least recently used is dropped. A dropped zip collection is closed, which removes
the row folders it unpacked. No Gradio here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rollout_trace.artifact import bundled_examples
from rollout_trace.artifact.bounded import Bounded
from rollout_trace.artifact.collection import Collection
from rollout_trace.artifact.sources import bundled_groups, bundled_runs

from . import open_index

MAX_COLLECTIONS = 8
MAX_AGE_S = 300.0


def collection_identity(source: str, allow_local: bool) -> str:
    """Who else's collection this is: the same string for every visitor of the same collection version."""
    text = source.strip()
    if text in bundled_groups() or text in bundled_runs():
        return f"example|{text}"
    if allow_local and text not in bundled_examples():
        path = Path(text).expanduser()
        if path.is_dir():
            return f"folder|{path.resolve()}"
        if path.is_file():
            st = path.stat()
            return f"zip|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    return f"hub|{text}"


@dataclass
class _Entry:
    opened_at: float = 0.0
    collection: Collection | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class CollectionCache:
    def __init__(self, max_entries: int = MAX_COLLECTIONS, max_age_s: float = MAX_AGE_S,
                 opener: Callable[..., Collection] = open_index, clock: Callable[[], float] = time.monotonic):
        self._entries: Bounded[str, _Entry] = Bounded(max_entries, on_evict=lambda _key, e: _close(e))
        self.max_age_s = max_age_s
        self._opener, self._clock = opener, clock
        self.opens = 0  # how many times a collection was listed and indexed (tests read it)

    def get(self, source: str, allow_local: bool) -> Collection:
        """The shared collection `source` names, opened at most once per identity and age; raises ArtifactError."""
        entry = self._entries.setdefault(collection_identity(source, allow_local), _Entry)
        with entry.lock:  # one listing per collection, however many visitors ask at once
            stale = entry.collection is not None and self._clock() - entry.opened_at > self.max_age_s
            if entry.collection is None or stale:
                old, entry.collection = entry.collection, None
                if old is not None:
                    old.close()
                entry.collection = self._opener(source.strip(), allow_local=allow_local)
                entry.opened_at = self._clock()
                self.opens += 1
            return entry.collection

    def peek(self, source: str, allow_local: bool) -> Collection | None:
        """The shared collection `source` names when one is open, never opening it."""
        entry = self._entries.peek(collection_identity(source, allow_local))
        return entry.collection if entry is not None else None

    def open(self, source: str, allow_local: bool) -> Collection:
        """`source` opened afresh, as the cache opens it (its opener: under a public visitor's budget in the app),
        not kept: a followed run read again at a new commit, put in with `replace`."""
        return self._opener(source.strip(), allow_local=allow_local)

    def replace(self, source: str, allow_local: bool, old: Collection, new: Collection) -> bool:
        """Put `new` where `old` is (a followed run that grew: viewer/ui/run_view.py), keeping its age; False
        when the entry holds another collection by now (reopened, or dropped)."""
        entry = self._entries.peek(collection_identity(source, allow_local))
        if entry is None:
            return False
        with entry.lock:
            if entry.collection is not old:
                return False
            entry.collection = new  # the old one shares the new one's store: nothing to close
        return True

    def close(self) -> None:
        self._entries.clear()

    @property
    def max_entries(self) -> int:
        return self._entries.max_entries

    def __len__(self) -> int:
        return len(self._entries)


def _close(e: _Entry) -> None:
    """A dropped entry's collection closed (a zip's removes the row folders it unpacked)."""
    if e.collection is not None:
        e.collection.close()
