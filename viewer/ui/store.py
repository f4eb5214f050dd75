"""Loaded rollouts shared by every visitor of the same source, bounded by bytes, reloaded when needed.

A rollout is keyed by its source's identity (a folder's path and file stamps, a zip's stamp, a Hub
snapshot's commit folder, an upload's digest), so a crowd opening one artifact costs one load and
one copy in memory, and a page load after the first re-uses the analysis and the encoded outline.
The key the page holds is an HMAC of that identity under a per-process secret: a visitor can reach
only rollouts that were opened through the source rules, never guess one. When the byte budget is
exceeded the least recently used rollout is dropped, but its entry keeps the recipe that opened it,
so a page still showing it gets it back on its next request (reloaded on the server) instead of an
error. An upload's recipe needs the uploaded bytes (Gradio sweeps its own copy after 15 minutes), so
the entry holds them (`Held`), counted in the same budget; only when dropping every other rollout
is not enough are held bytes dropped too, and a reload then says to upload again. At most MAX_ENTRIES
recipes are kept (rollout_trace/artifact/bounded.py drops the least recently used on every insert), and the
bytes held are counted as they change, never summed over every entry.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from rollout_trace.artifact.bounded import Bounded
from viewer.contract import Outline, RunContext, encode
from viewer.render.outline import outline, with_run
from viewer.rollout import Rollout

BUDGET_BYTES = 3 * 1024**3  # rollouts kept in memory across all visitors
MAX_ENTRIES = 10_000  # recipes remembered (small); beyond this the oldest key stops working
OVERHEAD_BYTES = 4 * 1024**2  # per rollout: analysis objects, the outline, Python overhead


def rollout_bytes(r: Rollout) -> int:
    """What keeping `r` costs, estimated from its arrays (the analysis roughly doubles the token arrays),
    plus its display vocabulary (each rollout builds its own) and the tokenizer file it keeps."""
    arrays = sum(t.prompt_ids.nbytes + t.output_ids.nbytes + t.logprobs.nbytes + t.mask.nbytes for t in r.artifact.turns)
    vocab = r.vocab.nbytes if r.vocab is not None else 0
    return 2 * arrays + vocab + len(r.artifact.tokenizer_json or b"") + OVERHEAD_BYTES


class Held:
    """Bytes a reload needs (an upload's files by name), kept in memory until the store drops them."""

    def __init__(self, files: dict[str, bytes]):
        self.files: dict[str, bytes] | None = files

    @property
    def nbytes(self) -> int:
        return sum(len(b) for b in self.files.values()) if self.files is not None else 0

    def drop(self) -> None:
        self.files = None


@dataclass
class _Entry:
    reopen: Callable[[], Rollout]
    rollout: Rollout | None = None
    outline_json: bytes | None = None
    # the outline as opened from a group: by its advantage, or (a run's rollout) its encoded run context
    with_advantage: dict[float | bytes, bytes] = field(default_factory=dict)
    size: int = 0
    held: Held | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    counted: int = 0  # what this entry adds to the store's byte count


class RolloutStore:
    def __init__(self, budget_bytes: int = BUDGET_BYTES, max_entries: int = MAX_ENTRIES):
        self._secret = secrets.token_bytes(32)
        self._entries: Bounded[str, _Entry] = Bounded(max_entries, on_evict=lambda _key, e: self._recount(e, gone=True))
        self._lock = threading.Lock()  # the byte count
        self._bytes = 0
        self._budget = budget_bytes
        self.loads = 0  # how many times a rollout was read from its source (tests and benchmarks read it)

    def _recount(self, e: _Entry, gone: bool = False) -> None:
        """Bring the byte count up to date with what `e` holds now (nothing, once it left the store)."""
        now = 0 if gone else (e.size if e.rollout is not None else 0) + (e.held.nbytes if e.held is not None else 0)
        with self._lock:
            self._bytes += now - e.counted
            e.counted = now

    def key_for(self, identity: str) -> str:
        return hmac.new(self._secret, identity.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]

    def open(self, identity: str, reopen: Callable[[], Rollout], held: Held | None = None) -> tuple[str, Rollout]:
        """The shared rollout for `identity`, loading it with `reopen` only if no visitor has it loaded.

        `held`: the bytes `reopen` reads (an upload's), kept and counted with the entry."""
        key = self.key_for(identity)
        made: list[_Entry] = []

        def make() -> _Entry:
            made.append(_Entry(reopen, held=held))
            return made[-1]

        entry = self._entries.setdefault(key, make)
        if not made and held is not None and (entry.held is None or entry.held.files is None):
            entry.reopen, entry.held = reopen, held  # uploaded again: the new copy is what a reload reads
        self._recount(entry)
        return key, self._materialise(entry)

    def loaded(self, identity: str) -> bool:
        """Whether the rollout of `identity` is held now (opening it reads nothing)."""
        entry = self._entries.peek(self.key_for(identity))
        return entry is not None and entry.rollout is not None

    def put(self, identity: str, rollout: Rollout) -> str:
        """Keep `rollout` under `identity`, replacing what was there: a watched capture's newest snapshot.

        Pages holding the key see the new rollout on their next request; its outline is rebuilt once."""
        key = self.key_for(identity)
        entry = self._entries.setdefault(key, lambda: _Entry(lambda: rollout))
        with entry.lock:
            entry.reopen = lambda: rollout
            entry.rollout, entry.size = rollout, rollout_bytes(rollout)
            entry.outline_json, entry.with_advantage = None, {}
        self._recount(entry)
        self._evict(keep=entry)
        return key

    def get(self, key: str) -> Rollout | None:
        """The rollout a page holds the key of, reloaded if it was dropped; None for keys never issued.

        Raises what the reload raises (ArtifactError: the source is gone, an upload's bytes were dropped)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        return self._materialise(entry)

    def outline_json(self, key: str, advantage: float | None = None, run: RunContext | None = None) -> bytes:
        """The encoded outline of a loaded rollout, built once and shared by every page load.

        With `advantage` (opened from its group): the same outline carrying it, also built once; with `run` (a
        recorded run's rollout opened from its group) its place in the run and the trainer's fate, and TRL's
        advantage (None for a failed rollout)."""
        entry = self._entries.peek(key)
        if entry is None:
            raise KeyError(key)
        r = self._materialise(entry)
        built = entry.outline_json
        if built is None:
            built = encode(outline(r))
            with entry.lock:
                if entry.rollout is r:  # not if a watched capture replaced it meanwhile (put): that one gets its own
                    entry.outline_json, entry.with_advantage = built, {}
        if advantage is None and run is None:
            return built
        at: float | bytes = advantage if run is None else encode(run)  # type: ignore[assignment]
        if at not in entry.with_advantage:
            o = msgspec.json.decode(built, type=Outline)
            entry.with_advantage[at] = encode(with_run(o, r, run) if run is not None else
                                              msgspec.structs.replace(o, advantage=advantage))
        return entry.with_advantage[at]

    def _materialise(self, entry: _Entry) -> Rollout:
        with entry.lock:  # one load per source, however many visitors ask at once
            r = entry.rollout
            if r is None:
                r = entry.reopen()
                self.loads += 1
                entry.rollout, entry.size = r, rollout_bytes(r)
                self._recount(entry)
                self._evict(keep=entry)
            return r

    def _evict(self, keep: _Entry) -> None:
        """Drop least recently used rollouts until the budget holds; then, if needed, held upload bytes."""
        if self._bytes <= self._budget:
            return
        entries = self._entries.values()  # least recently used first
        for e in entries:
            if self._bytes <= self._budget:
                return
            if e is keep or e.rollout is None:
                continue
            e.rollout, e.outline_json, e.size = None, None, 0
            e.with_advantage = {}
            self._recount(e)
        for e in entries:
            if self._bytes <= self._budget:
                return
            if e is keep or e.held is None or e.rollout is not None:
                continue
            e.held.drop()
            self._recount(e)

    def loaded_bytes(self) -> int:
        """What the store holds: loaded rollouts and held upload bytes."""
        with self._lock:
            return self._bytes

    def recipes(self) -> int:
        """Rollouts the store can give back by key, loaded or not (at most MAX_ENTRIES)."""
        return len(self._entries)
