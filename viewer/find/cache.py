"""Text indexes kept across requests: one per source, built once and grown as a followed run grows.

A source is named as viewer/index/cache.py names collections (`collection_identity`). Its index holds every
rollout read so far; asking again with the same collection reads nothing, and with a collection that holds more
rows (a run that grew, the collection cache's `replace`) reads only the new rollouts: a written rollout does not
change. A collection reopened after the collection cache's age bound is compared by its rows the same way. At most
`max_entries` indexes are kept (least recently used dropped, its file removed). One build runs per source, however
many visitors ask (the others wait for it, at most `wait_s`, then hear `Building`: how far it got), and builds of
different sources do not wait for each other. Index files live in a private temporary folder removed at exit.
No Gradio here.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from rollout_trace.artifact.bounded import Bounded
from rollout_trace.artifact.collection import Collection
from rollout_trace.artifact.errors import RolloutTraceError
from rollout_trace.artifact.unpack import remove_folder, temporary_folder

from ..index.cache import collection_identity
from .build import MAX_ROLLOUTS, index_collection
from .text_index import FindIndex

MAX_INDEXES = 4
MAX_ROLLOUTS_PUBLIC = 5_000  # what one public visitor's search may make the server read from one source


class Building(RolloutTraceError, RuntimeError):
    """The source's index is being built by another request: `read` of `total` rollouts so far."""

    def __init__(self, read: int, total: int):
        super().__init__(f"this source's text index is being built ({read:,} of {total:,} rollouts read so far): "
                         "ask again in a moment")
        self.read, self.total = read, total


@dataclass
class _Entry:
    index: FindIndex | None = None
    folder: Path | None = None
    rows: int = 0  # rollouts of the collection the index was last brought up to
    building: int = 0  # rollouts the build running now will have read (0: none runs)
    lock: threading.Lock = field(default_factory=threading.Lock)


class FindCache:
    def __init__(self, max_entries: int = MAX_INDEXES, public: bool = False):
        self._entries: Bounded[str, _Entry] = Bounded(max_entries, on_evict=lambda _key, e: _drop(e))
        self._lock = threading.Lock()  # the build count
        self.limit = MAX_ROLLOUTS_PUBLIC if public else MAX_ROLLOUTS
        self.builds = 0  # rollouts read into an index (tests count them)

    def get(self, source: str, c: Collection, allow_local: bool, wait_s: float | None = None) -> FindIndex:
        """The index of `c` (named `source`), with every rollout it holds up to the limit. While another request
        builds it, waits at most `wait_s` (None: until it is built), then raises Building."""
        entry = self._entries.setdefault(collection_identity(source, allow_local), _Entry)
        if not entry.lock.acquire(timeout=-1 if wait_s is None else max(0.0, wait_s)):
            index = entry.index
            raise Building(len(index) if index is not None else 0, entry.building)
        try:
            if entry.index is None:
                entry.folder = temporary_folder(prefix="find-")
                entry.index = FindIndex(entry.folder / "index.sqlite")
            rows = sum(r.kind == "artifact" for r in c.records)
            if rows != entry.rows:
                before = len(entry.index)
                entry.building = min(rows, self.limit)
                try:
                    index_collection(c, entry.index, self.limit)
                finally:
                    entry.building = 0
                with self._lock:
                    self.builds += len(entry.index) - before
                entry.rows = rows
            # a large run's first rows only (viewer/run_part.py): every answer says so
            entry.index.covers = None if c.part_of is None else \
                f"searched the run's first {len(c.records):,} index rows of {c.part_of:,}"
            index = entry.index
        finally:
            entry.lock.release()
        return index

    def peek(self, source: str, allow_local: bool) -> FindIndex | None:
        """The index already built for `source`, without building one."""
        entry = self._entries.peek(collection_identity(source, allow_local))
        return entry.index if entry is not None else None

    def ready(self, source: str, allow_local: bool) -> FindIndex | None:
        """The index of `source` when one has been built and no build of it runs now (never waits, never builds):
        the collection index shows its findings only from a finished index."""
        entry = self._entries.peek(collection_identity(source, allow_local))
        if entry is None or entry.index is None or not entry.rows or not entry.lock.acquire(blocking=False):
            return None
        try:
            return entry.index
        finally:
            entry.lock.release()

    def close(self) -> None:
        self._entries.clear()


def _drop(e: _Entry) -> None:
    """A dropped index closed and its file removed, once no request uses it."""
    with e.lock:
        if e.index is not None:
            e.index.close()
        if e.folder is not None:
            remove_folder(e.folder)
