"""The follower of recorded runs: each run's per-version numbers computed once per run state, and a run still
being recorded read again when it grew, once per run however many visitors follow it.

A local run's index is Arrow columns (rollout_trace/artifact/run_table.py): asking for it lists its folders,
reads only the grown tails of its line files, and keeps what was computed per run state; the shared collection
(the rows a group opens from) is followed too when a visitor opened it (`rollout_trace.artifact.run.follow`).
A Hub run is asked for its latest commit instead, at most once per HUB_CHECK_S per run, and read again at a new
commit. No Gradio here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.bounded import Bounded
from rollout_trace.artifact.collection import Collection, run_collection
from rollout_trace.artifact.run import Run, follow
from rollout_trace.artifact.run_table import RunTable
from rollout_trace.artifact.sources import commit_of
from viewer import run_stats
from viewer.index.cache import CollectionCache

HUB_CHECK_S = 10.0  # a Hub run is asked for its latest commit at most this often, however many visitors follow it
MAX_STATS = 16  # run states whose per-version numbers are kept (one per run a visitor has open, and a few more)


class RunFollower:
    """Follows runs through the app's shared collections; a local run (`local_run` names its folder) through its
    shared snapshot (`local_table`), the app's service's own reads, so the follower and the pages read one state."""

    def __init__(self, collections: CollectionCache, allow_local: Callable[[str], bool],
                 local_run: Callable[[str], Path | None], local_table: Callable[[str], RunTable | None]):
        self._collections, self._allow_local = collections, allow_local
        self._local_run, self._local_table = local_run, local_table
        self._follow_locks: dict[str, threading.Lock] = {}  # one follower per run, shared by its visitors
        self._locks_lock = threading.Lock()
        self._hub_checked: dict[str, float] = {}  # src -> when its latest commit was last asked for
        self.clock = time.monotonic
        self._stats_lock = threading.Lock()
        # the per-version numbers last seen of each run (they are kept per run state by its RunTable)
        self._stats: Bounded[int, list[run_stats.VersionStats]] = Bounded(MAX_STATS)
        self.stats_computed = 0  # how many run states' numbers were computed (tests read it)

    def stats(self, t: RunTable) -> list[run_stats.VersionStats]:
        """The run's per-version numbers, once per run state (RunTable.memo: a run that grew is a new state)."""
        stats = run_stats.version_stats(t)
        with self._stats_lock:  # the count: one per run state however many visitors ask at once
            if self._stats.get(id(t)) is not stats:
                self.stats_computed += 1
                self._stats.put(id(t), stats)
        return stats

    def every_s(self, t: RunTable) -> float:
        """The least seconds between two reads of the run of `t` while it is recorded, however often its pages ask:
        a Hub run's latest commit is asked for every HUB_CHECK_S, a local run's snapshot stands `RunTable.stands_s`."""
        return HUB_CHECK_S if t.kind == "hub" else t.stands_s()

    def follow(self, src: str) -> RunTable | None:
        """The run `src` names with what its recorder wrote since: a local run's grown tails (and its shared
        collection's, when one is open), a Hub run at its latest commit; None when it cannot be read."""
        with self._locks_lock:
            lock = self._follow_locks.setdefault(src, threading.Lock())
            while len(self._follow_locks) > 4 * MAX_STATS:  # forget the locks of runs nobody follows
                old = next(iter(self._follow_locks))
                if old == src:
                    break
                self._follow_locks.pop(old)
        with lock:  # one follower per run: its visitors share what it read; other runs' polls do not wait
            allow = self._allow_local(src)
            local = self._local_run(src) is not None
            current = self._collections.peek(src, allow) if local else None
            if not local:
                try:
                    current = self._collections.get(src, allow)
                except ArtifactError:
                    return None
            newer = None
            if current is not None and current.run is not None and current.run.kind == "hub":
                newer = self._hub_newer(src, current.run, allow)
            elif current is not None and current.run is not None:
                grown = follow(current.run)
                newer = run_collection(grown) if grown is not None else None
            if current is not None and newer is not None and self._collections.replace(src, allow, current, newer):
                current = newer
        if local:
            return self._local_table(src)
        return run_stats.table_of(current.run) if current is not None and current.run is not None else None

    def _hub_newer(self, src: str, run: Run, allow: bool) -> Collection | None:
        """A Hub run at its latest commit when that is not the one it was read at, else None. One request (the
        revision's commit) per HUB_CHECK_S per run, under the run's lock, so ten followers cost what one does;
        a store pinned to a commit never moves, and a run that ended is not polled (its timer stops)."""
        now = self.clock()
        if now - self._hub_checked.get(src, -HUB_CHECK_S) < HUB_CHECK_S:
            return None
        self._hub_checked[src] = now
        store = run.store.store if run.store is not None else None
        ref, seen = getattr(store, "ref", None), getattr(store, "commit", None)
        if ref is None or seen is None or not getattr(store, "moves", False):  # a commit: a copy, never newer
            return None
        try:
            latest = commit_of(ref, getattr(store, "token", None))
            if latest == seen:
                return None
            # read whole at the new commit (a Hub file cannot be seeked), as the cache opens it (a visitor's budget)
            return self._collections.open(src, allow)
        except ArtifactError:
            return None
