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
is not enough are held bytes dropped too, and a reload then says to upload again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

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


class RolloutStore:
    def __init__(self, budget_bytes: int = BUDGET_BYTES):
        self._secret = secrets.token_bytes(32)
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._budget = budget_bytes
        self.loads = 0  # how many times a rollout was read from its source (tests and benchmarks read it)

    def key_for(self, identity: str) -> str:
        return hmac.new(self._secret, identity.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()[:32]

    def open(self, identity: str, reopen: Callable[[], Rollout], held: Held | None = None) -> tuple[str, Rollout]:
        """The shared rollout for `identity`, loading it with `reopen` only if no visitor has it loaded.

        `held`: the bytes `reopen` reads (an upload's), kept and counted with the entry."""
        key = self.key_for(identity)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry(reopen, held=held)
            elif held is not None and (entry.held is None or entry.held.files is None):
                entry.reopen, entry.held = reopen, held  # uploaded again: the new copy is what a reload reads
                while len(self._entries) > MAX_ENTRIES:
                    self._entries.popitem(last=False)
            self._entries.move_to_end(key)
        return key, self._materialise(entry)

    def put(self, identity: str, rollout: Rollout) -> str:
        """Keep `rollout` under `identity`, replacing what was there: a watched capture's newest snapshot.

        Pages holding the key see the new rollout on their next request; its outline is rebuilt once."""
        key = self.key_for(identity)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry(lambda: rollout)
            self._entries.move_to_end(key)
        with entry.lock:
            entry.reopen = lambda: rollout
            entry.rollout, entry.size = rollout, rollout_bytes(rollout)
            entry.outline_json, entry.with_advantage = None, {}
        self._evict(keep=entry)
        return key

    def get(self, key: str) -> Rollout | None:
        """The rollout a page holds the key of, reloaded if it was dropped; None for keys never issued.

        Raises what the reload raises (ArtifactError: the source is gone, an upload's bytes were dropped)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
        return self._materialise(entry)

    def outline_json(self, key: str, advantage: float | None = None, run: RunContext | None = None) -> bytes:
        """The encoded outline of a loaded rollout, built once and shared by every page load.

        With `advantage` (opened from its group): the same outline carrying it, also built once; with `run` (a
        recorded run's rollout opened from its group) its place in the run and the trainer's fate, and TRL's
        advantage (None for a failed rollout)."""
        entry = self._entries[key]
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
                self._evict(keep=entry)
            return r

    def _evict(self, keep: _Entry) -> None:
        """Drop least recently used rollouts until the budget holds; then, if needed, held upload bytes."""
        with self._lock:
            total = self._total()
            for e in list(self._entries.values()):
                if total <= self._budget:
                    return
                if e is keep or e.rollout is None:
                    continue
                total -= e.size
                e.rollout, e.outline_json, e.size = None, None, 0
                e.with_advantage = {}
            for e in list(self._entries.values()):
                if total <= self._budget:
                    return
                if e is keep or e.held is None or e.rollout is not None:
                    continue
                total -= e.held.nbytes
                e.held.drop()

    def _total(self) -> int:
        return sum((e.size if e.rollout is not None else 0) + (e.held.nbytes if e.held is not None else 0)
                   for e in self._entries.values())

    def loaded_bytes(self) -> int:
        """What the store holds: loaded rollouts and held upload bytes."""
        with self._lock:
            return self._total()

