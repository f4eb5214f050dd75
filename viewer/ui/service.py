"""What every part of the app shares: the loaded rollouts, the collections, the text indexes, the captures being
watched and the follower of recorded runs, made once per app (viewer/ui/app.py) and handed to each tab.

The tabs (viewer/ui/view_tab.py, collection_view.py, run_view.py, find_panel.py, capture_tab.py, mcp_tools.py)
each own their components and events and reach one another's data only through this service, never through
each other (tests/test_layers.py holds them apart). Here sit the stores and what reads through them: what a
source is (`kind`), the shared collection or run it names, one row's rollout loaded once into the rollout
store, a source's text index; `values` makes the token view's values (viewer/ui/token_values.py) and `rows` the
index's, opening a row of a collection, a group or a run (viewer/ui/rows.py). A row of a local run opens from its
group's rows alone (`row_collection`), read from the run's columns: a run of 10^6 rollouts is never read whole
into Python rows to open one group of it. No component lives here.

On a public Space (`public=True`) visitors never name a server path, except the source the owner configured.
"""

from __future__ import annotations

import time
from pathlib import Path

from rollout_trace.artifact import ArtifactError, Problem, bundled_examples, load_artifact
from rollout_trace.artifact.bounded import Bounded
from rollout_trace.artifact.collection import Collection
from rollout_trace.artifact.run import Run
from rollout_trace.artifact.run_format import MANIFEST
from rollout_trace.artifact.run_table import RunTable, RunTableError, run_table
from rollout_trace.artifact.sources import EXAMPLES_DIR, bundled_runs, identify, parse_hub_id
from viewer import run_part, run_stats
from viewer.find.cache import FindCache
from viewer.find.columns import searched
from viewer.find.text_index import Search
from viewer.index.cache import CollectionCache, collection_identity
from viewer.index.facts import RowFacts
from viewer.page_link import MAX_SRC_CHARS
from viewer.render.safe import source_label
from viewer.rollout import Rollout
from viewer.source_kinds import Kind, classify

from .follower import RunFollower
from .live import LiveRuns
from .rows import Rows
from .store import RolloutStore
from .token_values import TokenValues
from .visitor import open_bounded

MAX_PARTS = 32  # groups of local runs kept (a visitor goes back and forth between a few)
MAX_KINDS = 256  # sources whose kind is remembered (by identity, for the collection cache's age)


class Service:
    """The app's shared stores and caches, and the reads every tab makes through them."""

    def __init__(self, default_source: str, public: bool, store: RolloutStore | None = None):
        self.default_source, self.public = default_source, public
        self.store = store or RolloutStore()  # rollouts, shared by every visitor of the same source (viewer/ui/store.py)
        # collections and runs (viewer/index/cache.py); a public visitor's open under that visitor's budget, stopped
        # when they leave (viewer/ui/visitor.py)
        self.collections = CollectionCache(opener=lambda src, allow_local: open_bounded(src, allow_local, self.public))
        self.facts = RowFacts()  # tokens and drift of rows whose summary.json lacks them, by row identity
        self.find = FindCache(public=public)  # text indexes of collections and runs (viewer/find/cache.py)
        self.follower = RunFollower(self.collections, self.allow_local, self.local_run, self.local_table)  # runs still being recorded
        self.values = TokenValues(self.store, public)
        self.live = LiveRuns(self.store, lambda key, src, initial, live, advantage:
                             self.values.opened_value(key, src, initial, advantage=advantage, live=live))
        self.rows = Rows(self)
        # identity -> (when classified, kind, why it names nothing that opens: None when it does)
        self._kinds: Bounded[str, tuple[float, Kind, str | None]] = Bounded(MAX_KINDS)
        self._parts: Bounded[tuple, Collection] = Bounded(MAX_PARTS)  # groups of local runs opened lately

    # -- what a source is ------------------------------------------------------------------------------

    def allow_local(self, source: str) -> bool:
        """Server paths: never for visitors of a public Space, except the source the owner configured."""
        return not self.public or source.strip() == (self.default_source or "").strip()

    def is_collection(self, source: str) -> bool:
        """True when `source` opens the index (a collection, a group or a run)."""
        return self.kind(source) != "rollout"

    def is_run(self, source: str) -> bool:
        return self.kind(source) == "run"

    def kind(self, source: str) -> Kind:
        """What `source` is (viewer/source_kinds.py decides; remembered by identity for the collection
        cache's age). A source that cannot be opened is a rollout here, whose reader gives the message."""
        return self._classified(source)[0]

    def _classified(self, source: str) -> tuple[Kind, str | None]:
        """(`kind(source)`, why it names nothing that opens: the classifier's first problem; None when it does)."""
        text = (source or "").strip()
        if not text or len(text) > MAX_SRC_CHARS:
            return "rollout", None
        allow = self.allow_local(text)
        key = collection_identity(text, allow)
        hit = self._kinds.get(key)
        if hit is None or time.monotonic() - hit[0] > self.collections.max_age_s:  # a Hub source costs requests
            why: str | None = None
            try:  # outside the lock: classifying a Hub source waits on the network
                kind = classify(text, allow_local=allow)
            except ArtifactError as e:
                # a public app opens Hub ids and bundled names: of any other name it says only that (the refusal
                # that follows), never what a reader found of it on the server's disk
                kind, why = "rollout", e.first("it cannot be opened") if allow or parse_hub_id(text) else None
            except Exception:  # noqa: BLE001 - any other failure: the single reader names it to the visitor
                kind, why = "rollout", "it cannot be opened"
            hit = (time.monotonic(), kind, why)
            self._kinds.put(key, hit)
        return hit[1], hit[2]

    # -- the shared collections ------------------------------------------------------------------------

    def collection(self, src: str) -> Collection:
        """The shared collection `src` names; raises ArtifactError (an empty name is not "." on the server)."""
        if not src.strip() or len(src) > MAX_SRC_CHARS:
            raise ArtifactError([Problem(source_label(src) or "(empty)", "name a collection: a folder, a .zip or a Hub "
                                                                    "dataset id")])
        return self.collections.get(src, self.allow_local(src))

    def local_run(self, src: str) -> Path | None:
        """The run folder `src` names on this machine (a bundled run, or a folder this visitor may open), whose
        index is read as Arrow columns (rollout_trace/artifact/run_table.py); None for anything else (a zip or
        a Hub run is read by `open_run`)."""
        text = (src or "").strip()
        if not text or len(text) > MAX_SRC_CHARS:
            return None
        if text in bundled_runs():
            return EXAMPLES_DIR / text
        if text in bundled_examples() or not self.allow_local(text):
            return None
        path = Path(text).expanduser()
        return path if (path / MANIFEST).is_file() else None

    def local_table(self, src: str) -> RunTable | None:
        """The local run `src` names as columns, shared by every visitor (`run_table`: a lookup per run state,
        its grown tails read on each call), or None."""
        local = self.local_run(src)
        if local is None:
            return None
        try:
            t = run_table(local)
        except RunTableError:
            return None
        return t if t.run_files.manifest is not None else None

    def run_table(self, src: str) -> RunTable | None:
        """The recorded run `src` names as columns (what the run page reads): a local run through `run_table`,
        a zip or Hub run through its shared collection's reader; None when it is not a run or cannot be read."""
        if not self.is_run(src):
            return None
        if self.local_run(src) is not None:
            return self.local_table(src)
        c = self.run(src)
        return run_stats.table_of(c.run) if c is not None else None

    def row_collection(self, src: str, path: str) -> Collection:
        """What opening the row `path` of `src` reads: of a run (local, zip or Hub), only the group the row is in
        (or is), from the run's columns (viewer/run_part.py: one group's rows, never the whole
        run's); of anything else, its shared collection. Raises ArtifactError as `collection` does."""
        t = self.run_table(src)
        if t is None:
            return self.collection(src)
        group = run_part.group_of(path)
        key = (t.label, t.prefix, t.state, group)
        hit = self._parts.get(key)
        if hit is not None:
            return hit
        c = run_part.group_part(t, group)
        c.part_of = t.memo("whole_rows", lambda: run_part.whole_rows(t))
        self._parts.put(key, c)
        return c

    def run_snapshot(self, src: str) -> tuple[Run | None, str | None]:
        """The recorded run `src` names as a Run over its shared snapshot (what comparing runs reads: columns, never
        a Python row per rollout), or None and why it cannot be had."""
        if self.local_run(src) is None:
            c, why = self.run_or_why(src)
            return (c.run if c is not None else None), why
        t = self.local_table(src)
        return (Run(t), None) if t is not None else (None, "it cannot be read as a recorded run")

    def run(self, src: str) -> Collection | None:
        """The shared collection of the recorded run `src` names; None when it is not a run or cannot be read."""
        return self.run_or_why(src)[0]

    def run_or_why(self, src: str) -> tuple[Collection | None, str | None]:
        """`run(src)`, or None and why: the reader's first problem (a bound it crossed, a file it could not read,
        nothing found under the name), else that it is not a recorded run."""
        kind, why = self._classified(src)
        if kind != "run":
            return None, why or "it is not a recorded run"
        try:
            c = self.collections.get(src.strip(), self.allow_local(src))
        except ArtifactError as e:
            return None, e.first("it cannot be read")
        return (c, None) if c.run is not None else (None, "it is not a recorded run")

    # -- one row's rollout ----------------------------------------------------------------------------

    def identity(self, c: Collection, src: str, path: str) -> str:
        """The rollout store's identity for one artifact row (raises ArtifactError for a bad folder)."""
        own = c.source_of(path) if c.kind == "folder" else None
        if own:  # the artifact's own identity: shared with opening it directly, and new when its files change
            return identify(own, allow_local=True)
        if c.kind == "hub":
            return f"hub-row|{c.source_of(path)}"  # pinned to a commit: never changes
        return f"{collection_identity(src, self.allow_local(src))}|row|{path}"

    def load_row(self, src: str, path: str, c: Collection | None = None) -> Rollout:
        """Read one row fully, from `c` when it is the part of a run the row is in (a group map opens each of its
        rollouts from the part it was made of: not a look at the run's files per rollout), else from the
        collection looked up again (so a reload after eviction works)."""
        if c is None or c.run is None or c.part_of is None or c.record(path) is None:
            c = self.row_collection(src, path)
        if c.run is not None:  # a run's rollout: read from its row, with the run's tokenizer (Collection.open)
            return Rollout.load(c.open(path))
        folder = c.folder(path)
        try:
            r = Rollout.load(load_artifact(folder, source=f"{src}:{path}" if path else src))
            self.facts.learn(self.identity(c, src, path), r.artifact, r.training.trained_turns)  # for the index
            return r
        finally:
            c.release(folder)  # the rollout is in memory now: remove what opening it unpacked

    def loaded(self, c: Collection, src: str, path: str) -> bool:
        """Whether the shared store holds the rollout of `path` now (`rollout` reads nothing)."""
        return self.store.loaded(self.identity(c, src, path))

    def rollout(self, c: Collection, src: str, path: str) -> Rollout:
        """One row's rollout, loaded once through the shared store (a group map, a compare and the token view
        share it). Raises ArtifactError."""
        _, r = self.store.open(self.identity(c, src, path), lambda: self.load_row(src, path, c))
        return r

    # -- text indexes ---------------------------------------------------------------------------------

    def find_source(self, src: str) -> tuple[str, Collection, bool] | None:
        """The collection `src` names (not a run: its search reads its columns), as (name, collection, local reads
        allowed); None when it is neither, or cannot be read."""
        src = (src or "").strip()
        if not src or len(src) > MAX_SRC_CHARS or not self.is_collection(src) or self.is_run(src):
            return None
        allow = self.allow_local(src)
        try:
            return src, self.collections.get(src, allow), allow
        except ArtifactError:
            return None

    def find_index(self, src: str, wait_s: float | None = None) -> Search | None:
        """The search of the collection or run `src` names (None when it is neither, or cannot be read): a run's
        from its columns, every rollout of it (viewer/find/columns.py), a collection's its text index. While
        another request builds a collection's index, waits at most `wait_s`, then raises viewer.find.cache.Building."""
        t = self.run_table((src or "").strip()) if src and len(src) <= MAX_SRC_CHARS else None
        if t is not None:
            return searched(t)
        got = self.find_source(src)
        return self.find.get(*got, wait_s=wait_s) if got is not None else None

    def findings_ready(self, src: str) -> Search | None:
        """A source's findings when they are known without building anything: a run's always (a column), a
        collection's once its text index was built."""
        t = self.local_table(src)
        if t is not None:
            return searched(t)
        return self.find.ready(src, self.allow_local(src))
