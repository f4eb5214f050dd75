"""A recorded run as one immutable Arrow snapshot: its rollouts table, its consumption table, what was wrong.

Every page, tool and command reads a run through this one model (rollout_trace/artifact/run.py `open_run` wraps it
for code that wants Python rows): a local folder, a .zip or a Hub dataset alike, through its store's files
(rollout_trace/artifact/stores.py). A snapshot reads the run's small files and, of its shards
(rollout_trace/artifact/run_shards.py), only the columns a query names, each once per snapshot:

    t = run_table("runs/my-run")                 # cached per run state: a second open is a lookup
    t.per_version("reward")                      # one row per policy version: count, sum, min, max, mean
    t.page(pc.field("reward") > 0.5, sort=[("reward", "descending")], offset=0, limit=50)
    t.rollout_files(row)                         # one rollout's artifact files: only the row group holding it
    t.reduced("index_groups")                    # a registered reduction (`register`): all made in one shard pass
    later = t.follow()                           # a new snapshot when the recorder wrote more; None otherwise

A snapshot never changes: following a run makes a new one (sealed shards' columns are shared with it, they
never change) and the cache swaps the reference, so a handler that holds a snapshot reads one state of the run.

What is wrong is found once, when the snapshot is made, and every view counts the same rows: a rollout recorded
twice (the first one stands), a shard with a column of another type or a missing one (its rows left out), a
string that is not UTF-8 (replaced, and named), a tail whose last group was cut short (left out, with a note), a
segment without its start file, an unreadable small file.
"""

from __future__ import annotations

import contextvars
import functools
import posixpath
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from . import budget
from .bounded import Bounded
from .errors import RolloutTraceError
from .problems import Problem
from .run_columns import (
    DICTIONARY,
    MAX_ROLLOUT,
    NAME_PARTS,
    as_read,
    as_scanned,
    codes_in,
    fits,
    has_artifact,
    list_lengths,
    name_columns,
    narrowed,
    plain,
    segment_values,
    take_rows,
    uniform,
    utf8_fixed,
    utf8_valid,
)
from .run_fates import FateLookup, RowFate, ordinals_of, rollout_fates, unrecorded
from .run_files import RunFiles, read_files
from .run_format import (
    CONSUMED_DIR,
    FILES_DIR,
    MANIFEST,
    PLACE_NAME,
    RESCORED_DIR,
    ROLLOUTS_DIR,
    SEALED,
    SEGMENTS_DIR,
    shard_name,
)
from .run_schema import ARTIFACT_FILES, CONSUMED, FILE_KEYS, FILE_PLACE, FILES, INDEX_COLUMNS, ROLLOUTS, ROLLOUTS_TABLE
from .run_shards import Shard, read_columns, read_rows, schema_problems, shards
from .run_store import RunStore

AGGREGATES = ("count", "sum", "min", "max", "mean")
MAX_TABLES = 4  # run snapshots kept (each holds the columns its pages read)
# A followed run's snapshot stands at least (its rollouts / this) seconds before the run is read again: the pages
# watching it compute each snapshot again in full (~0.65 s of CPU at a million rollouts, against a poll every 2 s:
# a quarter of a core), so a large live run is read again every ~10 s at a million (0.07 of a core,
# bench/bench_follow.py), a run under 200,000 rollouts at every poll
FOLLOW_ROWS_S = 100_000
clock = time.monotonic
MAX_PROBLEMS = 20  # rows left out that are named one by one
# read first: which rows stand (a rollout's `group` and `path` are names its place gives, never read from a shard)
KEYS = ("segment", "policy_version", "group_id", "rollout", "agent_turns")
FATE_KEYS = ("segment", "ordinal", "fate", "step")  # the consumption table's columns the fates are joined on
# What the consumption table says of each rollout (joined): the first step a row of it was trained at, its
# trained rows' tokens, and why none of its rows was trained (None: one was)
FATE_COLUMNS: dict[str, pa.DataType] = {"trained_step": pa.int64(), "trainer_tokens": pa.int64(),
                                        "dropped": pa.dictionary(pa.int8(), pa.string())}
# A Hub run's shards read at once (in order, each in the request's context: its budget): each read waits on
# the network (a request to the Hub takes tens of milliseconds), not on a core. Sixteen rather than eight: at 60 ms
# a request a million-rollout page load took 4.6 s instead of 5.4, in as much memory (bench_run_table public)
FETCHES = 16
FILE_FOOTERS = 64  # files shards' footers kept per run (ShardCache.file_footers)
# groups (of a column) whose rollouts' names a snapshot keeps (`named`: a group map looks each of its rollouts up,
# twice), and the largest group whose names are made at once: at most ~4 MB of names a snapshot (a hostile group
# of a million rows makes no million names)
NAMED_GROUPS = 16
MAX_GROUP_NAMES = 1024
_FORMAT = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=list(DICTIONARY)))
_LOCAL_FS = pafs.LocalFileSystem()


Step = Callable[[int, pa.Table], None]  # (a shard's first row number, its standing rows of the columns named)
_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass(frozen=True)
class Reduction:
    """What a page reduces the whole run to, one shard at a time (`RunTable.reduced`): `begin(table)` gives a
    step, called with each shard's standing rows of `columns` in the run's order, and what the result is once
    every shard was stepped through. `alone`: made in a pass of its own, not in the pass that makes the others
    (its columns with theirs would be more than one computation of a public visitor may read). `keep`: of its
    columns, those its pass keeps whole for the snapshot (`column`), read by a later pass too (on the Hub, a
    column read again costs its bytes and whatever lies between it and the others a read asks for)."""

    columns: tuple[str, ...]
    begin: Callable[[RunTable], tuple[Step, Callable[[], Any]]]
    alone: bool = False
    keep: tuple[str, ...] = ()


# Every reduction the modules that read a run have registered (`register`): the first one a snapshot is asked
# for makes them all in one pass over its shards, so each shard is read once for all of them (a page's first
# visit asks for every one; on the Hub each read is a request).
REDUCTIONS: dict[str, Reduction] = {}


def register(name: str, reduction: Reduction) -> None:
    """Make `reduction` one of the run's reductions, asked for by `name` (`RunTable.reduced`): it reads columns of
    the rollouts table and the rollouts' fates (FATE_COLUMNS), those as its steps' columns: its `begin` never asks
    the table for fates (they may be made in the very pass that runs it)."""
    bad = [c for c in reduction.columns if (c not in ROLLOUTS_TABLE.names or c in ("group", "path"))
           and c not in FATE_COLUMNS]
    if bad:
        raise RunTableError(f"reduction {name!r} reads no column {bad[0]!r}")
    kept = [c for c in reduction.keep if c not in reduction.columns or c in FATE_COLUMNS]
    if kept:
        raise RunTableError(f"reduction {name!r} keeps {kept[0]!r}: expected one of the rollouts table's columns it "
                            "reads")
    REDUCTIONS[name] = reduction


class QueuedRow(msgspec.Struct, frozen=True, kw_only=True):
    """One training row TRL queued for a rollout, joined with what the trainer did with it. A fate belongs to a
    row, and a turn to the row that trains it (`turns`): viewer/fate.py reads a turn's fate from these."""

    ordinal: int  # its position in the queue within the segment (the consumption table's key)
    turns: tuple[int, ...] | None  # the agent turns whose generated tokens it trains; None: not recorded
    tokens: int
    trained_tokens: int  # in TRL's mask
    fate: RowFate
    step: int | None  # the global step it was trained at ("trained" only)


class RowOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What became of one training row: its fate and the step it was trained at ("trained" only)."""

    fate: RowFate
    step: int | None


class RunTableError(RolloutTraceError, ValueError):
    """A source that is not a run, or a column a query names that the table does not hold."""


# What a shard read found, held back while the read runs beside others (`in_order`, `held`) and said in the
# shards' order once its turn comes: a run's problems are named in one order however its reads interleave
_held: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar("held_said", default=None)


@dataclass
class Held:
    """What `held` ran: its result or what it raised, and the calls that say what it found (`say`)."""

    value: Any = None
    error: BaseException | None = None
    said: list[Callable[[], None]] = field(default_factory=list)

    def say(self) -> Any:
        """Say what was held back, in the order it was found (into the caller's own hold, when it holds), then the
        result, or raise what was raised."""
        for call in self.said:
            call()
        if self.error is not None:
            raise self.error
        return self.value


def held(fn: Callable[..., _R], *args: Any) -> Held:
    """`fn(*args)` with what it finds held back (`RunTable._said`), for its caller to say in its turn."""
    out = Held()
    token = _held.set(out.said)
    try:
        out.value = fn(*args)
    except BaseException as e:  # raised in its turn, by `say`, after what was found before it
        out.error = e
    finally:
        _held.reset(token)
    return out


def in_order(read: Callable[[_T], _R], items: Iterable[_T], at_once: int) -> Iterator[_R]:
    """`read(item)` of each item, in order, up to `at_once` of them running at a time on threads of their own, each
    in the caller's context (a request's budget counts every byte they read); what one raised is raised here, in its
    turn, and what one found is said here in its turn too (`held`), so problems come in the items' order whichever
    read ends first. The first is read on this thread before any other starts (it fills the caches the others
    share: a Hub client's of the commit and the folder's files, asked for once rather than by every thread at
    once)."""
    items = iter(items)
    if at_once <= 1:
        yield from map(read, items)
        return
    for item in items:
        yield read(item)
        break
    pool = ThreadPoolExecutor(at_once, thread_name_prefix="shard-read")
    ahead: deque[Future[Held]] = deque()
    try:
        for item in items:
            ahead.append(pool.submit(contextvars.copy_context().run, held, read, item))
            if len(ahead) >= at_once:
                yield ahead.popleft().result().say()
        while ahead:
            yield ahead.popleft().result().say()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# what a local shard read on the fast path (`_bulk`, `_local_part`) raises for a value that does not convert, or a
# file that cannot be read: the shard is then read on its own (`_read`), which names the problem
_NOT_READ = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError)


def _read_local(fragment: Any, want: pa.Schema) -> pa.Table:
    """The columns of `want` of a local sealed shard (its footer read already), every row group on this thread: a
    dataset scan of the same columns also decodes on Arrow's threads, for the same wall time here and about twice
    the CPU (a visitor's read takes one core; bench/bench_run_table.py `stats`)."""
    meta = fragment.metadata
    got = pq.ParquetFile(fragment.path, metadata=meta, read_dictionary=[n for n in want.names if n in DICTIONARY]
                         ).read_row_groups(range(meta.num_row_groups), columns=want.names, use_threads=False)
    return got if got.schema.equals(want) else got.cast(want)


def _parents(lists: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Each value of a list column's lists as the row its list is in, in 32 bits, chunk by chunk."""
    chunks = lists.chunks if isinstance(lists, pa.ChunkedArray) else [lists]
    parts, at = [], 0
    for chunk in chunks:
        got = pc.list_parent_indices(chunk).to_numpy().astype(np.int32)
        got += at
        parts.append(got)
        at += len(chunk)
    return np.concatenate(parts) if parts else np.zeros(0, np.int32)


def _nth(values: list | None, k: int) -> Any:
    """The k-th value of a rollout's list, None past its end (a hostile shard's list shorter than its rows')."""
    return values[k] if values is not None and k < len(values) else None


class ShardCache:
    """Columns of a run's sealed shards as read, one entry per (shard, column): a sealed shard never changes, so
    every snapshot of the run shares them; a tail is read afresh by each snapshot."""

    def __init__(self) -> None:
        self._got: dict[tuple, Any] = {}  # columns, and a shard's footer or fragment
        # the footers of the files shards rollouts were opened from: a run has hundreds, a visitor clicks through
        # the rollouts of a few (over the network, each footer read again is a request before the rollout's)
        self.file_footers: Bounded[tuple, Any] = Bounded(FILE_FOOTERS)
        self._lock = threading.Lock()
        self.reads = 0  # shard files read (tests and benchmarks count them)

    def peek(self, key: tuple) -> Any:
        with self._lock:
            return self._got.get(key)

    def put(self, key: tuple, value: Any) -> None:
        with self._lock:
            self._got[key] = value

    def read_files(self, count: int = 1) -> None:
        """Count shard files read (a Hub run's are read on several threads at once)."""
        with self._lock:
            self.reads += count


TRAINER_READS = ("row_ordinal", "row_trained_tokens", "status")  # what a rollout's fate is made from


class _TrainerPass:
    """The fates of a run's rollouts made shard by shard (`RunTable._reduce`): each shard's TRL rows looked up in
    the consumption table (`FateLookup`), never a column of every rollout's rows held (a million rollouts' rows
    are millions); what no rollout holds of the consumption table's trained rows found at the end."""

    def __init__(self, t: RunTable):
        self.t = t
        self.lookup, self.codes = t._fate_lookup(), t._segment_codes()
        self.logged = {s.segment for s in t.consumed_shards}
        self.parts: list[pa.Table] = []
        self.held_seg: list[np.ndarray] = []
        self.held: list[np.ndarray] = []
        self.named = 0

    def step(self, start: int, part: pa.Table) -> pa.Table:
        """The fates of the rollouts of one shard (rows `start`...)."""
        n = part.num_rows
        flat, tokens = part["row_ordinal"], part["row_trained_tokens"]
        uneven = self.t._uneven(flat, tokens, "row_trained_tokens", np.arange(start, start + n),
                                most=max(0, MAX_PROBLEMS - self.named))
        if uneven is not None:  # a hostile shard's: that rollout has no rows in any view
            self.named += int(pc.sum(uneven).as_py())
            flat = pc.if_else(uneven, pa.scalar(None, flat.type), flat.combine_chunks())
            tokens = pc.if_else(uneven, pa.scalar(None, tokens.type), tokens.combine_chunks())
        entry = _parents(flat)  # a rollout's number within the shard: its rows lie side by side
        o = pa.table({"entry": entry, "segment": self.codes[start + entry] if len(entry) else np.zeros(0, np.int32),
                      "ordinal": pc.list_flatten(flat), "trained_tokens": pc.list_flatten(tokens)})
        got = rollout_fates(n, o, self.lookup.rows(o, self.logged, self.t.run_files), part["status"])
        self.parts.append(got)
        self.held_seg.append(o["segment"].to_numpy())
        self.held.append(ordinals_of(o["ordinal"]))
        return got

    def finish(self) -> tuple[pa.Table, pa.Table]:
        """(every rollout's fates, the consumption table's trained rows no rollout holds)."""
        t = self.t
        fates = pa.concat_tables(self.parts) if self.parts else rollout_fates(
            0, pa.table({"entry": np.zeros(0, np.int32), "trained_tokens": np.zeros(0, np.int64)}),
            self.lookup.rows(pa.table({}), self.logged, t.run_files), t.column("status"))
        c = t.consumed
        took = codes_in(c["fate"], ["trained"]) == 0
        if took.any():
            took &= unrecorded(np.concatenate(self.held_seg) if self.held_seg else np.zeros(0, np.int32),
                               np.concatenate(self.held) if self.held else np.zeros(0, np.int64),
                               codes_in(c["segment"], t.segment_names()), ordinals_of(c["ordinal"]))
        return fates, c.filter(pa.array(took))


class RunTable:
    """One state of a recorded run (see the module docstring). Made by `open_table` or `follow`."""

    # The bounds of every whole-run computation (a memo's `make`, a read of whole columns), each under a budget of
    # its own: a public server sets them on a run a visitor opened (viewer/ui/visitor.py), so what a page reads of
    # a stranger's run after opening it is bounded as its opening is, and stops when its visitor leaves
    bounds: Callable[[], budget.Budget] | None = None

    def __init__(self, store: Any, label: str, kind: str, files: RunFiles, rollouts: list[Shard],
                 consumed_shards: list[Shard], cache: ShardCache, root: Path | None = None, changes: int = 0):
        self.store, self.label, self.kind, self.run_files = store, label, kind, files
        self.root = root  # the local folder (followed), None for a zip or a Hub run
        self.prefix = getattr(store, "prefix", "")
        self.shards, self.consumed_shards, self._cache = rollouts, consumed_shards, cache
        self._file_shards: dict[tuple[str, int], Shard] | None = None
        self._group_names: Bounded[tuple[str, int], dict[str, list[int]]] = Bounded(NAMED_GROUPS)
        self.changes = changes
        self.opened_at = clock()
        self._memo: dict[str, Any] = {}
        self._making: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self.read_problems: list[Problem] = []
        self.read_notes: list[str] = []
        self._keep: list[np.ndarray] = []  # per shard: the positions of its rows that stand
        self._lengths: list[int] = []  # per shard: how many rows it holds
        # an open tail's columns as this snapshot read them (its index columns when it was made): the recorder
        # goes on appending to the tail and removes it once sealed, and a snapshot reads one state
        self._tails: dict[tuple[str, str, str], pa.ChunkedArray] = {}
        self._starts = np.zeros(1, np.int64)
        self._reading = threading.Lock()  # one visitor reads a run's columns at a time: memory is spent once
        if self._at_once() == 1:
            self._stand()
            self.consumed = self._consumed()
            return
        # on the Hub each read waits on the network: the consumption table is read beside the rollouts' keys, and
        # what it finds is said after what they found, as it is when they are read one after the other
        with ThreadPoolExecutor(1, thread_name_prefix="consumed-read") as pool:
            consumed = pool.submit(contextvars.copy_context().run, held, self._consumed)
            try:
                self._stand()
            finally:
                got = consumed.result()
        self.consumed = got.say()

    # -- reading ------------------------------------------------------------------------------------

    def _path(self, folder: str, s: Shard) -> str:
        return f"{folder}/{s.name}"

    def _read(self, folder: str, s: Shard, schema: pa.Schema, columns: Sequence[str],
              check: pa.Schema | None = None, keep: bool = True) -> pa.Table:
        """Every row of shard `s` of `columns`, typed as `schema` says (a sealed shard's columns from the cache,
        the missing ones read in one pass per file, and cached unless `keep` is False); `check`: the schema the
        whole file must fit, or its rows are left out (`_stand`)."""
        out: dict[str, pa.ChunkedArray] = {}
        missing: dict[str, list[str]] = {}
        live = self._live(folder, s)  # a tail sealed since this snapshot was made: the shard of its number
        for name in columns:
            hit = self._cache.peek(self._key(folder, s, name)) if s.sealed else \
                self._tails.get((folder, s.name, name))
            if hit is not None:
                out[name] = hit
            else:
                missing.setdefault(self._path(folder, live), []).append(name)
        for path, names in missing.items():
            budget.check(s.name)  # the visitor left, or the request ran out of time: stop here
            meta_key = self._key(folder, live, "__footer")
            got = read_columns(self.store.open, path, live, schema, tuple(names), check,
                               metadata=self._cache.peek(meta_key) if live.sealed else None,
                               small=INDEX_COLUMNS if folder == ROLLOUTS_DIR else CONSUMED.names, dictionary=DICTIONARY)
            if got.metadata is not None and not got.problems:
                self._cache.put(meta_key, got.metadata)
            self._cache.read_files()
            problems = list(got.problems)
            table = utf8_fixed(got.table, path, problems)
            self._said(problems, got.notes)
            for name in names:  # held as every chunk of it is (a tail's text dictionary-encoded here)
                out[name] = pa.chunked_array([as_read(name, c) for c in table[name].chunks],
                                             as_scanned(schema.field(name)).type)
                if folder == CONSUMED_DIR:
                    out[name] = narrowed(out[name])
                if s.sealed and not problems and keep:  # a read that found something is not kept: each snapshot names it
                    self._cache.put(self._key(folder, s, name), out[name])
                elif not s.sealed and live is s:
                    self._tails[(folder, s.name, name)] = out[name]
        n = max((len(c) for c in out.values()), default=0)
        # each column as it was read (a DICTIONARY column from a scan stays dictionary-encoded: decoding a million
        # strings here only to encode them again costs seconds at a million rollouts)
        cols = {c: out[c] if len(out[c]) == n else pa.chunked_array([pa.nulls(n, as_scanned(schema.field(c)).type)])
                for c in columns}
        return pa.table(cols)

    def _key(self, folder: str, s: Shard, what: str) -> tuple:
        """Where the shard cache keeps a sealed shard's column `what` as read (every row of the shard), or its
        "__footer" or "__fragment": one read serves every later one, and every snapshot of the run."""
        return (self.label, self.prefix, folder, s.name, s.size, what)

    def _live(self, folder: str, s: Shard) -> Shard:
        """The file that holds shard `s`'s rows now: a local tail the recorder has sealed since (it writes the
        shard of the tail's number, then removes the tail) is read from that shard, which holds the tail's whole
        groups at the same positions, and more."""
        local = self._local()
        if s.sealed or local is None or (local / folder / s.name).exists():
            return s
        return Shard(shard_name(s.segment, s.number, SEALED), s.segment, s.number, True, 0)

    def _in_order(self, read: Callable[[_T], _R], items: Iterable[_T]) -> Iterator[_R]:
        """`read` of each shard in `items`, in order: a Hub run's FETCHES at once (each read waits on the network),
        a local folder's or a zip's one after another on this thread (a read there costs a core, not a wait)."""
        return in_order(read, items, self._at_once())

    def _at_once(self) -> int:
        """How many reads of this run run at a time: a Hub run's FETCHES, a local folder's or a zip's one."""
        return FETCHES if self.kind == "hub" else 1

    def _local(self) -> Path | None:
        """The run's folder on this machine (a bundled run, a local folder), None for a zip or a Hub run."""
        inner = getattr(self.store, "store", None)
        root = getattr(inner, "root", None)
        if getattr(inner, "kind", None) != "folder" or root is None or getattr(inner, "links_within", None):
            return None
        return Path(root) / self.prefix if self.prefix else Path(root)

    def _fragment(self, folder: str, s: Shard) -> Any:
        """A local sealed shard as a Parquet fragment with its footer read once (kept for every snapshot), or
        None when it is not a plain file (a symbolic link is never followed) or cannot be read (the per-file read
        then names why)."""
        key = self._key(folder, s, "__fragment")
        hit = self._cache.peek(key)
        if hit is not None:
            return hit
        local = self._local()
        assert local is not None
        path = local / folder / s.name
        try:
            if path.is_symlink() or not path.is_file():
                return None
            frag = _FORMAT.make_fragment(str(path), _LOCAL_FS)
            frag.ensure_complete_metadata()
        except (pa.ArrowInvalid, OSError):
            return None
        self._cache.put(key, frag)
        return frag

    def _local_part(self, s: Shard, names: Sequence[str]) -> pa.Table | None:
        """`names` of a local run's sealed rollouts shard `s`, read on this thread as `_bulk` reads them and not
        kept; None where its own read (`_read`) has to name a problem (a value that does not convert, text that
        is not UTF-8) or `s` is a tail."""
        f = self._fragment(ROLLOUTS_DIR, s) if s.sealed else None
        if f is None:
            return None
        budget.check(ROLLOUTS_DIR)
        try:
            part = _read_local(f, pa.schema([as_scanned(ROLLOUTS.field(n)) for n in names]))
        except _NOT_READ:
            return None
        self._cache.read_files()
        return part if utf8_valid(part) else None

    def _bulk(self, folder: str, shards: Sequence[Shard], schema: pa.Schema, names: Sequence[str],
              check: pa.Schema | None = None) -> None:
        """`names` of every sealed shard in `shards` not cached yet, read in one scan of a local run's Parquet files
        into the cache (one scan instead of one read per file: a page of a run of a million rollouts reads 500
        files), on one thread (a visitor's read takes one core). A shard whose schema does not fit `check` is left
        to the per-file read, which names it."""
        if self._local() is None:
            return
        todo = [s for s in shards if s.sealed and any(
            self._cache.peek(self._key(folder, s, n)) is None for n in names)]
        frags = []
        for s in todo:
            f = self._fragment(folder, s)
            if f is not None and (check is None or not schema_problems(f.physical_schema, check, s.name)):
                frags.append((s, f))
        if len(frags) < 2:
            return
        want = pa.schema([as_scanned(schema.field(n)) for n in names])
        budget.check(folder)
        try:
            table = pa.concat_tables([_read_local(f, want) for _, f in frags])
        except _NOT_READ:
            return  # a value that does not convert: each file read on its own names where
        self._cache.read_files(len(frags))
        whole_ok = utf8_valid(table)  # the usual case: one check of the scan, not one per shard
        at = 0
        for s, f in frags:
            n = f.metadata.num_rows
            part = table.slice(at, n)
            at += n
            if not whole_ok:
                problems: list[Problem] = []
                part = utf8_fixed(part, f"{folder}/{s.name}", problems)
                self._said(problems, [])
                if problems:  # not kept: each snapshot reads it again and names it (as `_read` keeps no such read)
                    continue
            for name in names:
                self._cache.put(self._key(folder, s, name), narrowed(part[name]) if folder == CONSUMED_DIR else
                                part[name])

    def _said(self, problems: Sequence[Problem], notes: Sequence[str]) -> None:
        """Problems and notes found reading a shard, each said once however often it is read (held back, when read
        beside other shards, until the shard's turn: `in_order`)."""
        hold = _held.get()
        if hold is not None:
            hold.append(functools.partial(self._said, list(problems), list(notes)))
            return
        with self._lock:
            self.read_problems += [p for p in problems if p not in self.read_problems]
            self.read_notes += [n for n in notes if n not in self.read_notes]

    def _stand(self) -> None:
        """Which rows stand: each shard's keys read (and its whole schema checked: a shard with a column of
        another type, or without one, is left out, named), rows whose place does not fit the format left out
        (named), and a rollout recorded twice kept once (the first)."""
        self._bulk(ROLLOUTS_DIR, self.shards, ROLLOUTS, KEYS, check=ROLLOUTS_TABLE)
        # a tail's index columns are read now, whole: what this snapshot counts of it
        tables = list(self._in_order(
            lambda s: uniform(self._read(ROLLOUTS_DIR, s, ROLLOUTS, KEYS, check=ROLLOUTS_TABLE) if s.sealed else
                              self._read(ROLLOUTS_DIR, s, ROLLOUTS, INDEX_COLUMNS, check=ROLLOUTS_TABLE).select(list(KEYS))),
            self.shards))
        self._lengths = [t.num_rows for t in tables]
        problems: list[Problem] = []
        keys = pa.concat_tables(tables) if tables else pa.table({k: pa.array([], ROLLOUTS.field(k).type) for k in KEYS})
        # a shard's number and a row's place in it in 32 bits: each is a million rollouts' worth, kept per shard
        shard_of = np.repeat(np.arange(len(tables), dtype=np.int32), self._lengths) if tables else np.zeros(0, np.int32)
        pos = np.concatenate([np.arange(n, dtype=np.int32) for n in self._lengths]) if tables else np.zeros(0, np.int32)
        names = segment_values(keys["segment"])
        seg = codes_in(keys["segment"], names)
        ok = fits(keys, seg, names)
        for i in np.flatnonzero(~ok)[:MAX_PROBLEMS]:
            x = keys.slice(int(i), 1).to_pylist()[0]
            problems.append(Problem(f"{ROLLOUTS_DIR}/{self.shards[int(shard_of[i])].name}", "a rollout's place in the "
                                    "run is not one the recorder writes; left out", field=f"row {int(pos[i])}",
                                    expected=f"a segment name, and a version, group and index from 0 (a version up to "
                                             f"2**53, an index below {MAX_ROLLOUT:,})",
                                    found=f"segment {str(x['segment'])[:40]!r}, version {x['policy_version']}, "
                                          f"group {x['group_id']}, rollout {x['rollout']}"))
        gid = pc.fill_null(keys["group_id"], 0).to_numpy(zero_copy_only=False)
        rollout = pc.fill_null(keys["rollout"], 0).to_numpy(zero_copy_only=False)
        # one integer per rollout (segment, group, index), -1 - row for a row left out: its own key (made in place:
        # each temporary is a million rollouts' worth)
        key = np.maximum(seg, 0).astype(np.int64)
        key <<= 50
        key |= gid.astype(np.int64, copy=False) << 16
        key |= rollout.astype(np.int64, copy=False)
        bad = np.flatnonzero(~ok)
        key[bad] = -1 - bad
        del gid, rollout
        if len(key) < 2 or bool(np.all(key[1:] > key[:-1])):
            # rows in key order, as the recorder writes them: each key once, found without a sort
            stands = key >= 0
            first = last = count = np.zeros(0, np.int64)
            dup = np.zeros(0, dtype=bool)
        else:
            order = np.argsort(key, kind="stable")  # equal keys in row order: the first copy first
            sorted_key = key[order]
            starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
            count = np.diff(np.r_[starts, len(key)])
            first = order[starts]
            last = order[starts + count - 1]
            del order, sorted_key
            stands = np.zeros(len(key), dtype=bool)
            stands[first[key[first] >= 0]] = True
            dup = (count > 1) & (key[first] >= 0)
        for i, j, c in zip(first[dup][:MAX_PROBLEMS].tolist(), last[dup][:MAX_PROBLEMS].tolist(),
                           count[dup][:MAX_PROBLEMS].tolist(), strict=True):  # named in the shard of its last copy
            x = keys.slice(i, 1).to_pylist()[0]
            problems.append(Problem(f"{ROLLOUTS_DIR}/{self.shards[int(shard_of[j])].name}",
                                    "a rollout is recorded once; the first one stands",
                                    field=f"segment {names[int(seg[i])]} group {x['group_id']} rollout {x['rollout']}",
                                    expected="once", found=f"{c} times"))
        twice = int(dup.sum())
        if twice > MAX_PROBLEMS:
            problems.append(Problem(f"{ROLLOUTS_DIR}/", f"{twice - MAX_PROBLEMS:,} more rollouts are recorded "
                                    "more than once (`viewer check` counts them)"))
        cuts: Any = np.cumsum(self._lengths)[:-1] if self._lengths else []
        self._keep = [p[st] for p, st in zip(np.split(pos, cuts), np.split(stands, cuts), strict=True)] \
            if self.shards else []
        self._starts = np.concatenate([[0], np.cumsum([len(x) for x in self._keep])]).astype(np.int64)
        budget.rows(f"{ROLLOUTS_DIR}/", int(self._starts[-1]))  # a public request's cost grows with the rows
        started = {x.start.segment for x in self.run_files.segments}
        standing = {names[k] for k in np.unique(seg[stands]).tolist()}  # a row left out is named already
        for name in sorted(standing - started):
            problems.append(Problem(f"{ROLLOUTS_DIR}/", "a segment without its start file", field=f"segment {name}",
                                    expected=f"{SEGMENTS_DIR}/{name}.json", found="none"))
        self._said(problems, [])

    def _consumed(self) -> pa.Table:
        """The consumption table's columns the fates are joined on (its fingerprints are read by `consumed_all`)."""
        self._bulk(CONSUMED_DIR, self.consumed_shards, CONSUMED, FATE_KEYS, check=CONSUMED)
        parts = list(self._in_order(lambda s: uniform(self._read(CONSUMED_DIR, s, CONSUMED, FATE_KEYS, check=CONSUMED)),
                                    self.consumed_shards))
        # its columns held narrow (`narrowed`): a shard's number too large for one is read as it is
        return pa.concat_tables(parts, promote_options="permissive") if parts else \
            pa.schema([as_scanned(CONSUMED.field(c)) for c in FATE_KEYS]).empty_table()

    def consumed_all(self) -> pa.Table:
        """Every column of the consumption table (`viewer check` compares fingerprints)."""
        parts = [uniform(self._read(CONSUMED_DIR, s, CONSUMED, CONSUMED.names)) for s in self.consumed_shards]
        return pa.concat_tables(parts, promote_options="permissive") if parts else \
            pa.schema([as_scanned(f) for f in CONSUMED]).empty_table()

    def __len__(self) -> int:
        return int(self._starts[-1])

    @property
    def state(self) -> tuple:
        return (self.changes, len(self), self.consumed.num_rows, len(self.run_files.segments), self.run_files.live)

    def problems(self) -> list[Problem]:
        """What is wrong with the run, found once for this snapshot."""
        return self.run_files.problems + self.read_problems

    @property
    def notes(self) -> list[str]:
        return self.run_files.notes + self.read_notes

    @property
    def live(self) -> bool:
        return self.run_files.live

    @property
    def followed(self) -> bool:
        """Reading the run again can show more: it is live, and its store can change (a folder, a Hub branch); a
        zip, or a Hub run pinned to a commit, is a copy of a live run that no later read changes."""
        return self.live and bool(getattr(getattr(self.store, "store", None), "moves", False))

    # -- columns -------------------------------------------------------------------------------------

    def column(self, name: str) -> pa.ChunkedArray:
        """One column of the rollouts table (or FATE_COLUMNS, `trained`), one value per standing rollout."""
        if name == "trained":
            return pa.chunked_array([pc.is_null(self.fates()["dropped"].combine_chunks())])
        if name in FATE_COLUMNS:
            return self.fates()[name]
        if name not in ROLLOUTS_TABLE.names:
            raise RunTableError(f"no column {name!r}: expected one of {', '.join(INDEX_COLUMNS)}, "
                                f"{', '.join(FATE_COLUMNS)}, trained (a rollout's files: `rollout_files`)")

        if name in ("group", "path"):
            return self._names()[name]
        return self.columns([name])[name]

    def columns(self, names: Sequence[str]) -> dict[str, pa.ChunkedArray]:
        """Several columns at once: each shard's file read once for all of those not read yet."""
        bad = [n for n in names if n not in ROLLOUTS_TABLE.names and n not in FATE_COLUMNS
               and n not in ("group", "path", "trained")]
        if bad:
            self.column(bad[0])  # names what it holds
        with self._lock:
            have = {n: self._memo[f"col:{n}"] for n in names if f"col:{n}" in self._memo}
        want = [n for n in names if n not in have and n not in FATE_COLUMNS and n not in ("group", "path", "trained")]
        if want:
            with self._reading, self._bounded():
                self._bulk(ROLLOUTS_DIR, [s for s, keep in zip(self.shards, self._keep, strict=True) if len(keep)],
                           ROLLOUTS, want)
                chunks: dict[str, list] = {c: [] for c in want}
                # a shard no row of which stands (left out) is not read, nor named, again
                standing = [k for k in range(len(self.shards)) if len(self._keep[k])]
                for got in self._in_order(lambda k: self._standing(k, want, keep=True), standing):
                    for c in want:
                        chunks[c].extend(got[c].chunks)
                for c in want:
                    have[c] = self._keep_column(c, pa.chunked_array(chunks[c], as_scanned(ROLLOUTS.field(c)).type))
        for c in names:
            if c not in have:
                have[c] = self.column(c)
        return have

    def _standing(self, k: int, names: Sequence[str], keep: bool, got: pa.Table | None = None) -> pa.Table:
        """Shard `k`'s standing rows of `names` (rollouts table columns) as every chunk of them is held (a tail
        as long as this snapshot counted it; a shard that could not be read, nulls); its sealed columns cached
        for later snapshots when `keep`. `got`: its rows read already (`_local_part`)."""
        s, stand, size = self.shards[k], self._keep[k], self._lengths[k]
        got = got if got is not None else self._read(ROLLOUTS_DIR, s, ROLLOUTS, names, keep=keep)
        out = {}
        for c in names:  # `_read` gives each column as it is held already
            if got.num_rows == size or (not s.sealed and got.num_rows > size):  # a tail grew since
                col = got[c].slice(0, size)
            else:
                col = pa.chunked_array([pa.nulls(size, as_scanned(ROLLOUTS.field(c)).type)])
            out[c] = col.take(pa.array(stand)) if len(stand) != size else col
        return pa.table(out)

    def shard_tables(self, names: Sequence[str]) -> Iterator[tuple[int, pa.Table]]:
        """(its first row's number, its standing rows of `names`) for each shard in the run's order: what a page
        reduces the whole run to (each group's numbers, the rules found, the tasks) without the snapshot keeping
        a column of every rollout. A column the snapshot holds is sliced from it; the others are read for this
        call, and kept in the shard cache only for a local run still being recorded (followed: its next snapshot
        reads only what the recorder wrote since), never for an ended run, a zip or a Hub run (which do not grow
        here: at a million rollouts ~235 MB held for no next snapshot)."""
        bad = [n for n in names if n not in ROLLOUTS_TABLE.names or n in ("group", "path")]
        if bad:
            raise RunTableError(f"no column {bad[0]!r} to read shard by shard: expected one of "
                                f"{', '.join(n for n in ROLLOUTS_TABLE.names if n not in ('group', 'path'))}")
        with self._lock:
            held = {n: self._memo[f"col:{n}"] for n in names if f"col:{n}" in self._memo}
        want = [n for n in names if n not in held]
        keep = self.root is not None and self.run_files.live
        if want and keep:  # a local run's sealed shards scanned at once into the cache (`_bulk`), then sliced
            with self._reading:
                self._bulk(ROLLOUTS_DIR, [s for s, k in zip(self.shards, self._keep, strict=True) if len(k)], ROLLOUTS,
                           want)
        local = bool(want) and not keep and self._local() is not None

        def read(k: int) -> pa.Table:
            if not want:
                return pa.table({})
            return self._standing(k, want, keep, self._local_part(self.shards[k], want) if local else None)

        standing = [k for k in range(len(self.shards)) if len(self._keep[k])]
        for k, got in zip(standing, self._in_order(read, standing), strict=True):
            start, n = int(self._starts[k]), len(self._keep[k])
            yield start, pa.table({c: held[c].slice(start, n) if c in held else got[c] for c in names})

    def reduced(self, name: str) -> Any:
        """The result of the registered reduction `name` (`register`) over the whole run, once per snapshot. The
        first one asked for makes every registered reduction in the same pass over the shards (`shard_tables`
        of all their columns; on a bounded snapshot, after the fates' pass: `_fated`); one registered after that
        pass, or `alone`, is made in a pass of its own."""
        if name not in REDUCTIONS:
            raise RunTableError(f"no reduction {name!r}: expected one of {', '.join(sorted(REDUCTIONS))}")
        if not REDUCTIONS[name].alone:
            with self._lock:
                fated = "__trainer" in self._memo or "__reduced" in self._memo
            if not fated and self.bounds is not None:
                self._fated()
            made = self.memo("__reduced", lambda: self._reduce({n: r for n, r in REDUCTIONS.items() if not r.alone}))
            if name in made:
                return made[name]
        return self.memo(f"__reduced:{name}", lambda: self._reduce({name: REDUCTIONS[name]})[name])

    def _fated(self) -> None:
        """Make the fates before the shared pass of a bounded snapshot (`bounds`), which never makes them: its
        columns and theirs would be more than one computation of a public visitor may read. The first `alone`
        reduction that reads them makes them in its pass (the per-version numbers, which the run page asks for
        first: its search panel may ask before it), else a pass of their own. Unbounded, the first pass makes
        them, whichever it is: each shard read once for all."""
        first = next((n for n, r in REDUCTIONS.items() if r.alone and set(r.columns) & set(FATE_COLUMNS)), None)
        if first is not None:
            self.reduced(first)
        else:
            self._trainer()

    def _reduce(self, todo: dict[str, Reduction]) -> dict[str, Any]:
        """One pass over the shards for the reductions `todo`, which makes the fates too when this snapshot has
        none yet (`_trainer`): each shard's rollouts' fates are made before its reductions' steps, which read them
        as the columns FATE_COLUMNS."""
        with self._lock:
            made = self._memo.get("__trainer")
        trainer = _TrainerPass(self) if made is None else None
        begun = {name: r.begin(self) for name, r in todo.items()}
        asked = list(dict.fromkeys(c for r in todo.values() for c in r.columns))
        names = [c for c in asked if c not in FATE_COLUMNS]
        if trainer is not None:
            names = list(dict.fromkeys([*names, *TRAINER_READS]))
        keep: dict[str, list[pa.Array]] = {c: [] for r in todo.values() for c in r.keep}
        for start, part in self.shard_tables(names):
            for c, chunks in keep.items():
                chunks.extend(part[c].chunks)
            if trainer is not None:
                fates = trainer.step(start, part)
            else:
                assert made is not None
                fates = made[0].slice(start, part.num_rows)
            for c in FATE_COLUMNS:
                if c in asked:
                    part = part.append_column(c, fates[c])
            for name, r in todo.items():
                begun[name][0](start, part.select(list(r.columns)))
        for c, chunks in keep.items():
            self._keep_column(c, pa.chunked_array(chunks, as_scanned(ROLLOUTS.field(c)).type))
        if trainer is not None:
            done = trainer.finish()
            with self._lock:
                self._memo.setdefault("__trainer", done)
        return {name: finish() for name, (_, finish) in begun.items()}

    def _keep_column(self, name: str, col: pa.ChunkedArray) -> pa.ChunkedArray:
        """A column read for this snapshot, kept for its later readers (the first one kept wins)."""
        with self._lock:
            return self._memo.setdefault(f"col:{name}", col)

    def _names(self) -> dict[str, pa.ChunkedArray]:
        """Each rollout's `group` and `path` (run_format.group_path, `<group>/rollout-NN`; no path without an
        artifact), made from its place: a name in a shard is never what a page or a link uses. A few rows' names
        are made for those rows alone (`take`): the whole run's cost ~100 MB at a million rollouts."""
        def make() -> dict[str, pa.ChunkedArray]:
            got = name_columns(self.columns(list(NAME_PARTS)))
            return {k: pa.chunked_array(v.chunks, pa.string()) if isinstance(v, pa.ChunkedArray)
                    else pa.chunked_array([v]) for k, v in got.items()}
        return self.memo("__names", make)

    @property
    def table(self) -> _Columns:
        """The rollouts table's columns, read as they are asked for (`t.table["reward"]`, `.select(names)`)."""
        return _Columns(self, fates=False)

    def view(self) -> _Columns:
        """As `table`, with FATE_COLUMNS and `trained`."""
        return _Columns(self, fates=True)

    def shard_rows(self) -> Iterator[tuple[int, np.ndarray]]:
        """(shard number, the standing rows it holds), in the run's order."""
        for k in range(len(self.shards)):
            yield k, np.arange(self._starts[k], self._starts[k + 1], dtype=np.int64)

    def positions(self, k: int) -> np.ndarray:
        """Where shard `k`'s standing rows sit in the shard."""
        return self._keep[k]

    def shard_columns(self, k: int, columns: Sequence[str]) -> pa.Table:
        """Every row of shard `k` (standing or not: `positions` picks) of `columns`, read for this call and not
        kept: what a search reads shard by shard (the text of a whole run is larger than memory should hold)."""
        s = self._live(ROLLOUTS_DIR, self.shards[k])
        got = read_columns(self.store.open, f"{ROLLOUTS_DIR}/{s.name}", s, ROLLOUTS, tuple(columns))
        return utf8_fixed(got.table, s.name, [])

    def locate(self, row: int) -> tuple[Shard, int]:
        """The shard and position in it of standing row `row`."""
        k = int(np.searchsorted(self._starts, row, side="right")) - 1
        return self.shards[k], int(self._keep[k][row - self._starts[k]])

    def rollout_files(self, row: int, columns: Sequence[str]) -> dict[str, Any]:
        """Standing row `row`'s `columns` (its artifact's files, its text), read from the row group holding it."""
        s, pos = self.locate(row)
        return self._rows_in(s, [pos], columns).to_pylist()[0]

    def _rows_in(self, s: Shard, positions: Sequence[int], columns: Sequence[str]) -> pa.Table:
        """Rows `positions` of rollouts shard `s`, of `columns`: the rollouts table's from the row group holding
        them, the artifact files from the files table's row groups their `files_shard` and `files_row` point at
        (checked: the files row must name the same rollout, or they are read as missing, named)."""
        s = self._live(ROLLOUTS_DIR, s)
        files = [c for c in columns if c in ARTIFACT_FILES]
        direct = [c for c in columns if c not in ARTIFACT_FILES]
        wanted = list(dict.fromkeys([*direct, *((*FILE_PLACE, *FILE_KEYS) if files else ())]))
        held = {c: self._cache.peek(self._key(ROLLOUTS_DIR, s, c)) for c in wanted} if s.sealed else {}
        if all(held.get(c) is not None for c in wanted):  # the shard's columns read already (its keys, at the open)
            at = pa.array(positions, pa.int64())
            got = pa.table({c: plain(held[c].take(at)) for c in wanted})
        else:
            budget.check(s.name)
            got = read_rows(self.store.open, self._path(ROLLOUTS_DIR, s), s, positions, wanted,
                            metadata=self._cache.peek(self._key(ROLLOUTS_DIR, s, "__footer")) if s.sealed else None)
        out = {c: got[c] for c in direct}
        if files:
            out |= self._files_of(s, got, files)
        return pa.table({c: out[c] for c in columns})

    @property
    def file_shards(self) -> dict[tuple[str, int], Shard]:
        """The files table's shards by (segment, number): where a rollout's `files_shard` points (listed when a
        rollout's files are first read: a page of numbers never lists them)."""
        with self._lock:
            if self._file_shards is None:
                self._file_shards = {(f.segment, f.number): f for f in shards(self.store.list_dir(FILES_DIR))[0]}
            return self._file_shards

    def _files_of(self, s: Shard, rows: pa.Table, columns: Sequence[str]) -> dict[str, pa.Array]:
        """The artifact files `columns` of `rows` (rollouts rows with their keys and FILE_PLACE), from the files
        table, one read per files shard; a row whose files cannot be found gets nulls and a named problem."""
        n = rows.num_rows
        found: dict[str, list[Any]] = {c: [None] * n for c in columns}
        where: dict[int, list[int]] = {}
        shard_col = rows["files_shard"].to_pylist()
        for i, k in enumerate(shard_col):
            if k is not None:
                where.setdefault(int(k), []).append(i)
        segments = rows["segment"].to_pylist()
        places = rows["files_row"].to_pylist()
        problems: list[Problem] = []
        for k, mine in where.items():
            fs = self.file_shards.get((str(segments[mine[0]]), k))
            if fs is None or any(places[i] is None or places[i] < 0 for i in mine):
                problems.append(Problem(f"{ROLLOUTS_DIR}/{s.name}", "a rollout's files are not in the run",
                                        field="files_shard", expected=f"a shard of {FILES_DIR}/", found=str(k)))
                continue
            fs = self._live(FILES_DIR, fs)
            try:
                budget.check(fs.name)
                footer = self._key(FILES_DIR, fs, "__footer") if fs.sealed else None  # a tail has none
                part = read_rows(self.store.open, self._path(FILES_DIR, fs), fs, [places[i] for i in mine],
                                 [*FILE_KEYS, *columns],
                                 metadata=self._cache.file_footers.get(footer) if footer else None,
                                 on_footer=functools.partial(self._cache.file_footers.put, footer) if footer else None)
            except (IndexError, pa.ArrowInvalid, OSError, EOFError, ValueError) as e:
                problems.append(Problem(f"{FILES_DIR}/{fs.name}", f"a rollout's files cannot be read: {e}",
                                        field="files_row"))
                continue
            keys = part.select(list(FILE_KEYS)).to_pylist()
            for j, i in enumerate(mine):
                want = {c: rows[c][i].as_py() for c in FILE_KEYS}
                if keys[j] != want:
                    problems.append(Problem(f"{FILES_DIR}/{fs.name}", "a rollout's files row names another rollout; "
                                            "read as missing", field=f"row {places[i]}", expected=str(want),
                                            found=str(keys[j])))
                    continue
                for c in columns:
                    found[c][i] = part[c][j].as_py()
        self._said(problems, [])
        return {c: pa.array(found[c], FILES.field(c).type) for c in columns}

    def rows_of(self, rows: np.ndarray, columns: Sequence[str]) -> pa.Table:
        """Standing rows `rows` of `columns` (any, text and files too), in that order, each shard read once."""
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return pa.Table.from_batches([], pa.schema([ROLLOUTS.field(c) for c in columns]))
        where = np.searchsorted(self._starts, rows, side="right") - 1
        parts, order = [], []
        for k in np.unique(where):
            mine = np.flatnonzero(where == k)
            s = self.shards[int(k)]
            pos = self._keep[int(k)][rows[mine] - self._starts[int(k)]]
            parts.append(self._rows_in(s, pos.tolist(), columns))
            order.extend(mine.tolist())
        got = pa.concat_tables(parts)
        return got.take(pa.array(np.argsort(np.array(order), kind="stable")))

    # -- the trainer's side ------------------------------------------------------------------------------

    def _trainer(self) -> tuple[pa.Table, pa.Table]:
        """What the consumption table says of the run: each rollout's fate (`fates`) and the consumption table's
        trained rows no rollout holds (`unrecorded_trained`), made in a pass over the shards' TRL rows: the pass of
        the first `alone` reduction that reads them (`_fated`: the per-version numbers', whose columns lie beside
        them), else a pass of its own."""
        with self._lock:
            got = self._memo.get("__trainer")
        if got is None:
            self.memo("__reduced:__trainer", lambda: self._reduce({}))
            with self._lock:
                got = self._memo["__trainer"]
        return got

    def _fate_lookup(self) -> FateLookup:
        return self.memo("__fate_lookup", lambda: FateLookup(self.consumed, self.segment_names()))

    def _uneven(self, ordinals: Any, other: Any, name: str, rows: Sequence[int] | np.ndarray,
                most: int = MAX_PROBLEMS) -> pa.Array | None:
        """Which rollouts' `name` list is not one value per training row (`row_ordinal`), each named (the first
        `most`, once however often it is read); None when every one is (as the recorder writes them). `rows`: the
        run's rows these are. A missing list of tokens or turns is one not recorded (read as missing); a missing
        list of trained tokens is uneven."""
        have, got = list_lengths(ordinals), list_lengths(other)
        bad = have != got
        if name != "row_trained_tokens":
            bad &= pc.is_valid(other).to_numpy(zero_copy_only=False)
        if not bad.any():
            return None
        problems = []
        for i in np.flatnonzero(bad)[:most].tolist():
            shard, pos = self.locate(int(rows[i]))
            problems.append(Problem(f"{ROLLOUTS_DIR}/{shard.name}", "a rollout's training-row lists differ in length"
                                    + ("; its rows are left out" if name == "row_trained_tokens" else
                                       "; a value it lacks is read as missing"), field=f"row {pos} {name}",
                                    expected=f"{have[i]} values (one per row_ordinal)", found=f"{got[i]}"))
        self._said(problems, [])
        return pa.array(bad)

    def unrecorded_trained(self) -> pa.Table:
        """The consumption table's rows trained at a step whose training row no rollout of the run holds (the
        recorder lost its group)."""
        return self._trainer()[1]

    def group_keys(self) -> np.ndarray:
        """Each rollout's group as one number (its segment's number in `segment_names()` and its group id): what
        aggregating by group keys on (the name `group` is made of the same two)."""
        def make() -> np.ndarray:
            gid = pc.fill_null(self.column("group_id"), 0).to_numpy(zero_copy_only=False).astype(np.int64)
            return self._segment_codes().astype(np.int64) * 2**40 + gid
        return self.memo("__group_keys", make)

    def named(self, column: str, name: str) -> np.ndarray:
        """The rows whose `column` ("group" or "path") is `name`, in order: looked for among the rows of the group
        the name gives (`group_keys`, in numbers), whose names are made once and kept (NAMED_GROUPS; a group map
        looks each of its rollouts up), or, in a group past MAX_GROUP_NAMES, among the rows of the rollout index a
        path gives; never a name for each of a million rollouts (~100 MB, ~1 s). The group's rows are found by a
        binary search when the keys are in order, as a recorder writes them (a group of a million-rollout run in
        microseconds), else by a scan."""
        m = PLACE_NAME.match(name)
        names = self.segment_names() if m is not None and len(self) else []
        if m is None or m["segment"] not in names:
            return np.zeros(0, np.int64)
        keys, key = self.group_keys(), names.index(m["segment"]) * 2**40 + int(m["group"])
        held = self._group_names.get((column, key))
        if held is not None:
            return np.array(held.get(name, ()), np.int64)
        if self.memo("__group_keys_sorted", lambda: bool(np.all(keys[1:] >= keys[:-1]))):
            rows = np.arange(np.searchsorted(keys, key, "left"), np.searchsorted(keys, key, "right"))
        else:
            rows = np.flatnonzero(keys == key)
        if 0 < len(rows) <= MAX_GROUP_NAMES:
            by_name: dict[str, list[int]] = {}
            for row, x in zip(rows.tolist(), self.take(rows, [column])[column].to_pylist(), strict=True):
                if x is not None:
                    by_name.setdefault(x, []).append(row)
            self._group_names.put((column, key), by_name)
            return np.array(by_name.get(name, ()), np.int64)
        if column == "path" and m["rollout"] is not None:  # the group's rollout of that index: one name made
            if len(m["rollout"]) > 9:
                return np.zeros(0, np.int64)
            index = self.take(rows, ["rollout"])["rollout"]
            rows = rows[pc.fill_null(pc.equal(index, int(m["rollout"])), False).to_numpy(zero_copy_only=False)]
        return rows[np.array([x == name for x in self.take(rows, [column])[column].to_pylist()], bool)]

    def has_artifact(self) -> pa.ChunkedArray:
        """Which rows are rollouts with an artifact (run_columns.has_artifact), without naming them."""
        return has_artifact({"agent_turns": self.column("agent_turns")})

    def index_rows(self) -> int:
        """How many rows the run's collection index has: its groups and its rollouts with an artifact."""
        def make() -> int:
            if not len(self):
                return 0
            return len(np.unique(self.group_keys())) + pc.sum(self.has_artifact()).as_py()
        return self.memo("__index_rows", make)

    def segment_names(self) -> list[str]:
        """The segments the rollouts name, in order: what a segment's number (`_segment_codes`) indexes."""
        def make() -> list[str]:
            return segment_values(self.column("segment"))
        return self.memo("__segment_names", make)

    def _segment_codes(self) -> np.ndarray:
        """Each rollout's segment as its number in `segment_names()`."""
        def make() -> np.ndarray:
            return codes_in(self.column("segment"), self.segment_names())
        return self.memo("__segment_codes", make)

    def fates(self) -> pa.Table:
        """Per rollout: the first step a row of it was trained at, its trained rows' tokens, and why none of its
        rows was trained (None: one was)."""
        return self._trainer()[0]

    def queued(self, rows: Sequence[int]) -> dict[int, list[QueuedRow]]:
        """The TRL rows of the rollouts at rows `rows`, with their fates (`QueuedRow`), by row number: their
        row columns read for these rows only, their fates looked up for these rows only (`FateLookup`)."""
        rows = sorted(set(int(r) for r in rows))
        if not rows:
            return {}
        got = self.take(np.array(rows), ["row_ordinal", "row_tokens", "row_trained_tokens", "row_turns"])
        for name in ("row_tokens", "row_turns"):  # named; a value it lacks is read as 0 tokens, turns not recorded
            self._uneven(got["row_ordinal"], got[name], name, rows)
        entry, fate, step = self._row_outcomes(rows, got)
        mine = got.to_pylist()
        out: dict[int, list[QueuedRow]] = {}
        for i, f, st in zip(entry.tolist(), fate, step, strict=True):
            row, x = rows[i], mine[i]
            held = out.setdefault(row, [])
            k = len(held)
            turns = _nth(x["row_turns"], k)
            held.append(QueuedRow(ordinal=x["row_ordinal"][k], turns=None if turns is None else tuple(turns),
                                  tokens=_nth(x["row_tokens"], k) or 0, trained_tokens=x["row_trained_tokens"][k],
                                  fate=f, step=st))
        return out

    def outcomes(self, rows: Sequence[int]) -> dict[int, list[RowOutcome]]:
        """What became of each TRL row of the rollouts at rows `rows` (its fate and step: `RowOutcome`), by row
        number, in queue order: `queued` without the rows' tokens and turns (a group's cell in the index reads
        only these, of its k rollouts' rows)."""
        rows = sorted(set(int(r) for r in rows))
        if not rows:
            return {}
        entry, fate, step = self._row_outcomes(rows, self.take(np.array(rows), ["row_ordinal", "row_trained_tokens"]))
        out: dict[int, list[RowOutcome]] = {}
        for i, f, st in zip(entry.tolist(), fate, step, strict=True):
            out.setdefault(rows[i], []).append(RowOutcome(fate=f, step=st))
        return out

    def _row_outcomes(self, rows: list[int], got: pa.Table) -> tuple[np.ndarray, list[Any], list[Any]]:
        """Of the rollouts at `rows` (their `row_ordinal` and `row_trained_tokens` in `got`): each TRL row's rollout
        (its position in `rows`), fate and step, in queue order. A rollout whose trained-token list is uneven has no
        rows in any view (named by the fates' pass, not here)."""
        flat = got["row_ordinal"]
        uneven = self._uneven(flat, got["row_trained_tokens"], "row_trained_tokens", rows, most=0)
        if uneven is not None:
            flat = pc.if_else(uneven, pa.scalar(None, flat.type), flat.combine_chunks())
        entry = _parents(flat)
        if not len(entry):
            return entry, [], []
        segment = self._segment_codes()[np.asarray(rows, np.int64)[entry]]
        fates = self._fate_lookup().rows(pa.table({"segment": segment, "ordinal": pc.list_flatten(flat)}),
                                         {s.segment for s in self.consumed_shards}, self.run_files)
        return entry, fates["fate"].to_pylist(), fates["step"].to_pylist()

    # -- queries ---------------------------------------------------------------------------------------

    def _bounded(self) -> Any:
        """The budget a whole-run computation runs under: a new one of `bounds`, also for one computation made
        inside another (each is shared by every later visitor, and is bounded alone), else the request's own
        (None: unbounded)."""
        return budget.bounded(self.bounds() if self.bounds is not None else budget.current())

    def memo(self, key: str, make: Callable[[], Any]) -> Any:
        """`make()` once per snapshot (what a page builds from the whole table: shared by every visitor; ten
        visitors asking at once wait for the one computing it, so its memory is spent once). Under `bounds`: a
        computation past them (or whose visitor left) raises, keeps nothing, and the next visitor asking makes it."""
        with self._lock:
            if key in self._memo:
                return self._memo[key]
            making = self._making.setdefault(key, threading.Lock())
        with making:
            with self._lock:
                if key in self._memo:
                    return self._memo[key]
            with self._bounded():
                got = make()
            with self._lock:
                self._memo[key] = got
                self._making.pop(key, None)
        return got

    def per_version(self, column: str, aggregates: Sequence[str] = AGGREGATES) -> pa.Table:
        """One row per policy version, in version order: `version` and `<column>_<aggregate>` for each of
        `aggregates` (count counts non-null values; NaN and ±inf are left out of every aggregate; a mean of
        finite values is finite, a sum past the float range is inf). Once per snapshot."""
        bad = [a for a in aggregates if a not in AGGREGATES]
        if bad:
            raise RunTableError(f"no aggregate {bad[0]!r}: expected one of {', '.join(AGGREGATES)}")
        return self.memo(f"__per_version:{column}:{','.join(aggregates)}",
                         lambda: self._aggregate(column, tuple(aggregates)))

    def _aggregate(self, column: str, aggregates: tuple[str, ...]) -> pa.Table:
        values = self.column(column)
        versions_col = self.column("policy_version")
        scale = 1.0
        if pa.types.is_floating(values.type):
            values = pc.if_else(pc.is_finite(values), values, pa.scalar(None, values.type))
            top = pc.max(pc.abs(values)).as_py()
            if top is not None and top > 2.0**1000:  # near the float limit: add scaled (exact, a power of two)
                scale = 2.0**64
        elif pa.types.is_boolean(values.type):
            values = pc.cast(values, pa.int64())
        scaled = pc.multiply(values, 1 / scale) if scale != 1.0 else values
        t = pa.table({"version": versions_col, "v": values, "s": scaled})
        out = t.group_by("version").aggregate([("s" if a in ("sum", "mean") else "v", a) for a in aggregates])
        cols = {"version": out["version"]}
        for a in aggregates:
            got = out[f"{'s' if a in ('sum', 'mean') else 'v'}_{a}"]
            if scale != 1.0 and a in ("sum", "mean"):
                got = pc.multiply(got, scale)  # a mean is at most the largest value: finite; a sum may be inf
            cols[f"{column}_{a}"] = got
        return pa.table(cols).sort_by("version")

    def _rows(self) -> pa.Array:
        return self.memo("__rows", lambda: pa.array(np.arange(len(self), dtype=np.int64)))

    def order(self, column: str, descending: bool = False) -> np.ndarray:
        """Every row's number sorted by `column` (nulls and NaN last, ties by row number: Arrow's sort is
        stable): once per snapshot and column, so a sorted page is a slice of it, not a sort."""
        def make() -> np.ndarray:
            values = self.column(column)
            if pa.types.is_dictionary(values.type):
                values = pc.cast(values, values.type.value_type)
            return pc.array_sort_indices(values, order="descending" if descending else "ascending").to_numpy().astype(np.int64)
        return self.memo(f"__order:{column}:{descending}", make)

    def page(self, where: pc.Expression | None = None, sort: Sequence[tuple[str, str]] = (), offset: int = 0,
             limit: int = 50, columns: Sequence[str] | None = None) -> tuple[int, list[dict]]:
        """(rows matching `where`, one page of them as dicts) sorted by `sort` [(column, "ascending" |
        "descending")]: the filter and the sort run in Arrow over the columns they name, and only the page's
        rows are taken from the whole table and become Python objects."""
        total, picked = self.select(where, sort, offset, limit)
        return total, self.take(picked.to_numpy(), columns).to_pylist()

    def take(self, rows: np.ndarray, columns: Sequence[str] | None = None) -> pa.Table:
        """The rows `rows` (row numbers, in that order) of `columns` (index and fate columns; default all of
        them)."""
        names = list(columns) if columns is not None else [*INDEX_COLUMNS, *FATE_COLUMNS]
        rows = np.asarray(rows, dtype=np.int64)
        named = {}
        if {"group", "path"} & set(names):
            with self._lock:
                whole = "__names" in self._memo
            if not whole:  # the names of these rows alone, from their place
                named = name_columns(self.take(rows, list(NAME_PARTS)))
        with self._lock:
            unread = [n for n in names if n in ROLLOUTS_TABLE.names and n not in ("group", "path")
                      and f"col:{n}" not in self._memo]
        if unread and len(rows) * 8 < len(self):  # a few rows (a group, a page): from the row groups holding them
            part = self.rows_of(rows, unread)
            return pa.table({n: named[n] if n in named else part[n] if n in unread else take_rows(self.column(n), rows)
                             for n in names})
        self.columns([n for n in names if n not in named])
        return pa.table({n: named[n] if n in named else take_rows(self.column(n), rows) for n in names})

    def select(self, where: pc.Expression | None = None, sort: Sequence[tuple[str, str]] = (), offset: int = 0,
               limit: int = 50) -> tuple[int, pa.Array]:
        """(rows matching `where`, the row numbers of one page of them sorted by `sort`)."""
        for name, _ in sort:
            self.column(name)
        offset, limit = max(0, int(offset)), max(0, int(limit))
        if len(sort) == 1:  # one sort key: the page is a slice of the precomputed order, filtered
            order = self.order(sort[0][0], sort[0][1] == "descending")
            if where is not None:
                mask = np.zeros(len(self), dtype=bool)
                mask[self._filtered(where)["__row"].to_numpy()] = True
                order = order[mask[order]]
            return len(order), pa.array(order[offset:offset + limit])
        t = self._filtered(where, [n for n, _ in sort])
        total = t.num_rows
        k = min(total, offset + limit)
        if sort and k:
            top = t.take(pc.select_k_unstable(t, k=k, sort_keys=list(sort)))
            rows = top.sort_by([*sort, ("__row", "ascending")])["__row"]
        else:
            rows = t["__row"]
        return total, rows.slice(offset, limit).combine_chunks()

    def _filtered(self, where: pc.Expression | None, names: Sequence[str] = ()) -> pa.Table:
        """The columns `where` and `names` name (found in the expression's text), each row's number, filtered."""
        text = str(where) if where is not None else ""
        keep = [c for c in [*INDEX_COLUMNS, *FATE_COLUMNS] if c in names or re.search(rf"\b{re.escape(c)}\b", text)]
        # the row numbers first: a table of no column has no rows to append them to
        t = pa.table({"__row": self._rows(), **{c: self.column(c) for c in keep}})
        if where is None:
            return t
        try:
            return t.filter(where)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            raise RunTableError(f"the filter cannot be applied: {e}") from e

    # -- following -------------------------------------------------------------------------------------

    def stands_s(self) -> float:
        """How long this snapshot stands before `follow` reads the run again: its rollouts / FOLLOW_ROWS_S seconds
        (reading a run again costs time in proportion to its size; a run being recorded is read at most this
        often, however often its pages ask)."""
        return len(self) / FOLLOW_ROWS_S

    def follow(self) -> RunTable | None:
        """A new snapshot when the recorder wrote more (a shard sealed, a tail grew, a small file changed); None
        when nothing changed, or this snapshot has stood less than its rollouts / FOLLOW_ROWS_S seconds (what was
        written meanwhile is read then). Sealed shards' columns are shared with it. A zip or a Hub run never
        changes here (a Hub run is read again at its next commit: viewer/ui/follower.py)."""
        if self.root is None or clock() - self.opened_at < self.stands_s():
            return None
        listing = _listing(self.store)
        if listing == self._listing_at:
            return None
        later = open_table(self.store, self.label, self.kind, cache=self._cache, root=self.root,
                           changes=self.changes + 1, listing=listing)
        later.bounds = self.bounds
        return later

    _listing_at: tuple = ()


class _Columns:
    """A snapshot's columns, read when they are asked for (a page names a few of the rollouts table's many)."""

    def __init__(self, t: RunTable, fates: bool):
        self.t, self.fates = t, fates

    @property
    def column_names(self) -> list[str]:
        return [*INDEX_COLUMNS, *(FATE_COLUMNS if self.fates else ())]

    @property
    def num_rows(self) -> int:
        return len(self.t)

    def __getitem__(self, name: str) -> pa.ChunkedArray:
        return self.t.column(name)

    def select(self, names: Sequence[str]) -> pa.Table:
        return pa.table({n: self.t.column(n) for n in names})


def _listing(store: Any) -> tuple:
    """What says the run changed: its table folders' and small files' names and sizes (and a local file's
    modification time, but a sealed shard's: it is written once, under its name, and never rewritten)."""
    out = []
    for folder in (ROLLOUTS_DIR, FILES_DIR, CONSUMED_DIR, SEGMENTS_DIR, RESCORED_DIR):
        listed = store.list_dir(folder)
        out += [(folder, n, size, () if n.endswith(SEALED) else store.stamp(f"{folder}/{n}", size))
                for n, size in sorted(listed.items())]
    top = store.list_dir("")
    if MANIFEST in top:
        out.append(("", MANIFEST, top[MANIFEST], store.stamp(MANIFEST, top[MANIFEST])))
    return tuple(out)


def open_table(store: Any, label: str, kind: str, cache: ShardCache | None = None, root: Path | None = None,
               changes: int = 0, listing: tuple | None = None) -> RunTable:
    """The run in `store` (a RunStore) as a snapshot; raises RunTableError when it has no run.json to read."""
    # what says a local run changed (a Hub run is followed by its commit, rollout_trace/artifact/run.py)
    listing = listing if listing is not None else _listing(store) if root is not None else ()
    rollouts, others = shards(store.list_dir(ROLLOUTS_DIR))
    consumed, _ = shards(store.list_dir(CONSUMED_DIR))
    budget.files(f"{label}: {ROLLOUTS_DIR}/ and {CONSUMED_DIR}/", len(rollouts) + len(consumed))
    files = read_files(store)
    if files.manifest is None:
        raise RunTableError(f"{label}: not a recorded run this tool can read: "
                            + ("; ".join(str(p) for p in files.problems) or "no run.json"))
    if others:
        files.notes.append(f"{ROLLOUTS_DIR}/ holds {len(others)} file(s) that are not shards of the run; left out "
                           f"({', '.join(posixpath.basename(o) for o in others[:3])}{', …' if len(others) > 3 else ''})")
    t = RunTable(store, label, kind, files, rollouts, consumed, cache or ShardCache(), root=root, changes=changes)
    t._listing_at = listing
    return t


_cache_lock = threading.Lock()  # guards _open_locks
_open_locks: dict[Path, threading.Lock] = {}


def _forget(root: Path, _table: RunTable) -> None:
    with _cache_lock:
        _open_locks.pop(root, None)


_cache: Bounded[Path, RunTable] = Bounded(MAX_TABLES, on_evict=_forget)


def run_table(folder: str | Path) -> RunTable:
    """The local run at `folder` as a snapshot, shared: a second call while its files are unchanged is a
    lookup; when the recorder wrote more, a new snapshot (sharing the sealed shards' columns) takes its place.
    One reader per run at a time."""
    from .stores import FolderStore

    root = Path(folder).expanduser().resolve()
    with _cache_lock:
        lock = _open_locks.setdefault(root, threading.Lock())
    with lock:
        hit = _cache.get(root)
        if hit is None:
            if not (root / MANIFEST).is_file():
                raise RunTableError(f"{root}: not a recorded run (no {MANIFEST})")
            hit = open_table(RunStore(FolderStore(root)), str(root), "folder", root=root)
        else:
            hit = hit.follow() or hit
        _cache.put(root, hit)
        return hit


def per_version(folder: str | Path, column: str, aggregates: Sequence[str] = AGGREGATES) -> list[dict]:
    """Any rollouts column's per-version aggregates of the run at `folder`, as plain rows
    [{"version": v, "<column>_<aggregate>": ...}] in version order (shared and cached: `run_table`)."""
    return run_table(folder).per_version(column, aggregates).to_pylist()
