"""The text index of one source state: every rollout's searchable pieces and its findings, in SQLite.

SQLite's FTS5 with its trigram tokenizer finds the pieces holding a substring (any three characters or more,
case-insensitively) without reading the others; a plain pattern's counts per version come from the index alone,
and only the hits listed are located in their text (rollout_trace/analysis/texts.py's `Piece` maps a character
back to its token). A regex is looked up by the longest plain substring every match must contain, then run on
those pieces only; one without such a substring reads every piece, within the query's time budget. The text is
kept once, in the pieces table; the trigram index is an external-content FTS5 table over it.

Findings (rollout_trace/analysis/findings.py) are kept beside the pieces, one row each, so counts per version and
the rollouts with a rule are one query. Thread-safe (one connection, one lock). A search keeps to its deadline
in total: the wait for the lock, SQLite's own work (its progress handler stops a query at the deadline) and the
regex over each piece (RE2: linear in the piece) all count. No Gradio here.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import re2

from rollout_trace.analysis.findings import RULES, Finding
from rollout_trace.analysis.texts import Piece, RolloutText

from .query import Query

EXCERPT = 60  # characters shown each side of a match

_SCHEMA = """
CREATE TABLE rollouts (id INTEGER PRIMARY KEY, path TEXT UNIQUE, version INTEGER, grp TEXT, rollout INTEGER,
                       status TEXT, title TEXT);
CREATE TABLE pieces (id INTEGER PRIMARY KEY, rid INTEGER, turn INTEGER, field TEXT, start INTEGER, offsets BLOB,
                     text TEXT);
CREATE VIRTUAL TABLE body USING fts5(text, content='pieces', content_rowid='id', tokenize='trigram');
CREATE TABLE findings (rid INTEGER, rule TEXT, turn INTEGER, start INTEGER, end INTEGER, sentence TEXT);
CREATE INDEX findings_rid ON findings(rid);
CREATE INDEX pieces_rid ON pieces(rid);
"""


@dataclass(frozen=True)
class RolloutRow:
    """Where a rollout is: its path in the source, and in a run its version, group and index."""

    path: str
    version: int | None = None
    group: str | None = None
    rollout: int | None = None
    status: str | None = None
    title: str = ""


@dataclass(frozen=True)
class Hit:
    path: str
    version: int | None
    group: str | None
    rollout: int | None
    turn: int
    field: str
    token: int  # where the match starts (the turn's full sequence: prompt + output)
    token_end: int  # one past its last token
    excerpt: str
    mark: tuple[int, int]  # the match's characters within the excerpt
    group_id: int | None = None  # a run's group number (the group's path is `group`)


@dataclass(frozen=True)
class Ruled:
    """A rollout with a finding of one rule, and its findings of that rule."""

    path: str
    version: int | None
    rollout: int | None
    findings: list[Finding]
    group_id: int | None = None  # a run's group number


@dataclass(frozen=True)
class RuleRollouts:
    """The rollouts with a finding of one rule, within the versions (and paths) asked: how many, how many per
    version, and the first `limit` of them (by version, then in the source's order) with their findings of it."""

    count: int
    per_version: dict[int, int]
    first: list[Ruled]


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    rollouts: int  # rollouts with at least one match
    pieces: int  # pieces (a turn's generated text, a tool call, a tool output) with at least one match
    per_version: dict[int, int]  # rollouts with a match, per version (runs only)
    partial: bool = False  # the time budget ran out: counts are of what was read
    notes: list[str] = field(default_factory=list)
    resume: int | None = None  # a first answer stopped early: its counts are of the shards before this one
    searched: int | None = None  # rollouts this search read, when it knows (a run's: the shards it read)


class Search(Protocol):
    """What a source's search answers: a collection's text index (FindIndex) and a run's columns
    (viewer/find/columns.py RunFind) alike."""

    covers: str | None

    def __len__(self) -> int: ...
    def __contains__(self, path: str) -> bool: ...
    def search(self, q: Query, deadline: float | None = None) -> SearchResult: ...
    def findings_of(self, path: str) -> list[Finding]: ...
    def all_findings(self) -> dict[str, list[Finding]]: ...
    def rules_by_path(self) -> dict[str, tuple[str, ...]]: ...
    def rules_of(self, paths: Sequence[str]) -> dict[str, tuple[str, ...]]: ...
    def finding_counts(self) -> dict[int | None, dict[str, int]]: ...
    def rollouts_per_version(self) -> dict[int | None, int]: ...
    def with_rule(self, rule: str, versions: tuple[int | None, int | None], paths: set[str] | None,
                  limit: int) -> RuleRollouts: ...
    def close(self) -> None: ...


def _stopped(q: Query) -> str:
    return f"the search stopped after its time budget ({q.budget_s:g} s): counts are of what was read"


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


class FindIndex:
    """An index in a SQLite file (or in memory with path None)."""

    def __init__(self, path: Path | None = None):
        self.path = path
        self._db = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False)
        self._db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + _SCHEMA)
        self._lock = threading.Lock()
        self._paths: dict[str, int] = {}
        self._rules: tuple[int, dict[str, tuple[str, ...]]] | None = None  # rules_by_path at a number of rollouts
        self.covers: str | None = None  # what part of its source the index reads, when not all of it

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __contains__(self, path: str) -> bool:
        return path in self._paths

    def __len__(self) -> int:
        return len(self._paths)

    def add(self, items: Iterable[tuple[RolloutRow, RolloutText | None, list[Finding]]]) -> int:
        """Index rollouts (their text, or None when it could not be read, and their findings); returns how many."""
        n = 0
        with self._lock:
            cur = self._db.cursor()
            cur.execute("BEGIN")
            for row, text, found in items:
                if row.path in self._paths:
                    continue
                cur.execute("INSERT INTO rollouts (path, version, grp, rollout, status, title) VALUES (?,?,?,?,?,?)",
                            (row.path, row.version, row.group, row.rollout, row.status, row.title))
                rid = int(cur.lastrowid or 0)
                self._paths[row.path] = rid
                for p in text.pieces() if text is not None else ():
                    offsets = b"" if p.offsets is None else np.asarray(p.offsets, dtype=np.int32).tobytes()
                    cur.execute("INSERT INTO pieces (rid, turn, field, start, offsets, text) VALUES (?,?,?,?,?,?)",
                                (rid, p.turn, p.field, p.start, offsets, p.text))
                    cur.execute("INSERT INTO body (rowid, text) VALUES (?, ?)", (cur.lastrowid, p.text))
                cur.executemany("INSERT INTO findings VALUES (?,?,?,?,?,?)",
                                [(rid, f.rule, f.turn, f.start, f.end, f.sentence) for f in found])
                n += 1
            cur.execute("COMMIT")
        return n

    # -- search -----------------------------------------------------------------------------------------

    def _where(self, q: Query) -> tuple[str, list[object]]:
        sql, args = [f"p.field IN ({','.join('?' * len(q.fields))})"], list[object](q.fields)
        lo, hi = q.versions
        if lo is not None:
            sql.append("r.version >= ?")
            args.append(lo)
        if hi is not None:
            sql.append("r.version <= ?")
            args.append(hi)
        if q.statuses:
            sql.append(f"r.status IN ({','.join('?' * len(q.statuses))})")
            args += list(q.statuses)
        return " AND ".join(sql), args

    def search(self, q: Query, deadline: float | None = None) -> SearchResult:
        """The hits of `q`; by `deadline` (time.monotonic(); default: the query's budget from now) the search
        stops and answers with what it read, `partial`."""
        deadline = time.monotonic() + q.budget_s if deadline is None else deadline
        where, args = self._where(q)
        indexed = q.literal is not None and len(q.literal) >= 3
        if indexed:  # the pieces holding the literal, from the trigram index
            base = "FROM body b JOIN pieces p ON p.id = b.rowid JOIN rollouts r ON r.id = p.rid WHERE body MATCH ? AND "
            args = [_phrase(q.literal or ""), *args]
        else:  # every piece, read from its own table
            base = "FROM pieces p JOIN rollouts r ON r.id = p.rid WHERE "
        base += where
        if not self._lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            return SearchResult([], 0, 0, {}, True, [f"other searches of this source took the whole time budget "
                                                     f"({q.budget_s:g} s): ask again"])
        try:
            # SQLite asks every N steps whether to go on: past the deadline it stops the query (OperationalError)
            self._db.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
            if indexed and not q.is_regex:  # the index's answer is the answer: count there, locate only what is listed
                return self._plain(q, base, args, deadline)
            return self._scan(q, base, args, indexed, deadline)
        finally:
            self._db.set_progress_handler(None, 0)
            self._lock.release()

    def _plain(self, q: Query, base: str, args: list, deadline: float) -> SearchResult:
        per: dict[int | None, int] = {}
        pieces = 0
        hits: list[Hit] = []
        try:
            for v, n_rollouts, n_pieces in self._db.execute(
                    f"SELECT r.version, count(DISTINCT r.id), count(*) {base} GROUP BY r.version", args):
                per[v] = n_rollouts
                pieces += n_pieces
            # FTS5 gives matches in rowid order, the order pieces were added (a run's rollouts in version order):
            # the first `limit` are found without sorting every match
            rows = self._db.execute(f"SELECT r.path, r.version, r.grp, r.rollout, p.turn, p.field, p.start, "
                                    f"p.offsets, p.text {base} ORDER BY b.rowid", args)
            for row in rows:
                hits += self._hits_in(row, q.compiled, q.limit - len(hits))
                if len(hits) >= q.limit or time.monotonic() > deadline:
                    break
        except sqlite3.OperationalError:  # stopped at the deadline by the progress handler
            return SearchResult(hits, sum(per.values()), pieces, {v: n for v, n in per.items() if v is not None},
                                True, [_stopped(q)])
        return SearchResult(hits, sum(per.values()), pieces, {v: n for v, n in per.items() if v is not None})

    def _scan(self, q: Query, base: str, args: list, indexed: bool, deadline: float) -> SearchResult:
        hits: list[Hit] = []
        seen: dict[str, int | None] = {}
        pieces, partial = 0, False
        rows = self._db.execute(f"SELECT p.text, p.id, r.path, r.version {base} ORDER BY p.id", args)
        while True:
            try:
                got = rows.fetchone()
            except sqlite3.OperationalError:  # stopped at the deadline by the progress handler
                partial = True
                break
            if got is None:
                break
            text, rowid, path, version = got
            if time.monotonic() > deadline:
                partial = True
                break
            if q.compiled.search(text) is None:  # RE2: linear in the piece
                continue
            pieces += 1
            seen[path] = version
            if len(hits) < q.limit:  # only a listed hit is located among its tokens
                row = self._db.execute("SELECT r.path, r.version, r.grp, r.rollout, p.turn, p.field, p.start, "
                                       "p.offsets, ? FROM pieces p JOIN rollouts r ON r.id = p.rid WHERE p.id = ?",
                                       (text, rowid)).fetchone()
                hits += self._hits_in(row, q.compiled, q.limit - len(hits))
        per = Counter(v for v in seen.values() if v is not None)
        notes = [] if indexed else ["this pattern has no plain substring of 3+ characters: every piece was read"]
        if partial:
            notes.append(_stopped(q))
        return SearchResult(hits, len(seen), pieces, dict(per), partial, notes)

    @staticmethod
    def _hits_in(row, compiled: re2._Regexp, room: int) -> list[Hit]:
        path, version, grp, rollout, turn, fld, start, blob, text = row
        piece = Piece(fld, turn, text, start, np.frombuffer(blob, dtype=np.int32) if blob else None)
        out: list[Hit] = []
        for m in compiled.finditer(text):
            if m.end() == m.start():
                continue
            if len(out) >= room:
                break
            a, b = piece.tokens_of(m.start(), m.end())
            lo, hi = max(0, m.start() - EXCERPT), min(len(text), m.end() + EXCERPT)
            out.append(Hit(path, version, grp, rollout, turn, fld, a, b, text[lo:hi], (m.start() - lo, m.end() - lo)))
        return out

    # -- findings ---------------------------------------------------------------------------------------

    def findings_of(self, path: str) -> list[Finding]:
        rid = self._paths.get(path)
        if rid is None:
            return []
        with self._lock:
            rows = self._db.execute("SELECT rule, turn, start, end, sentence FROM findings WHERE rid = ? "
                                    "ORDER BY rowid", (rid,)).fetchall()
        return [Finding(*r) for r in rows]

    def all_findings(self) -> dict[str, list[Finding]]:
        with self._lock:
            rows = self._db.execute("SELECT r.path, f.rule, f.turn, f.start, f.end, f.sentence FROM findings f "
                                    "JOIN rollouts r ON r.id = f.rid ORDER BY f.rowid").fetchall()
        out: dict[str, list[Finding]] = defaultdict(list)
        for path, *rest in rows:
            out[path].append(Finding(*rest))
        return dict(out)

    def rules_by_path(self) -> dict[str, tuple[str, ...]]:
        """Every indexed rollout's path -> the rules it has a finding of (in RULES' order; () for none). Kept until
        the index grows: every index page of the source asks for it (the collection index's findings column)."""
        with self._lock:
            kept = self._rules
            if kept is not None and kept[0] == len(self._paths):
                return kept[1]
            rows = self._db.execute("SELECT DISTINCT r.path, f.rule FROM findings f JOIN rollouts r ON r.id = f.rid").fetchall()
            paths = list(self._paths)
        order = {rule: i for i, rule in enumerate(RULES)}
        got: dict[str, list[str]] = defaultdict(list)
        for path, rule in rows:
            got[path].append(rule)
        out: dict[str, tuple[str, ...]] = dict.fromkeys(paths, ())
        for path, rules in got.items():
            out[path] = tuple(sorted(rules, key=lambda r: order.get(r, len(order))))
        with self._lock:
            self._rules = (len(paths), out)
        return out

    def rules_of(self, paths: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Each of `paths` that is indexed -> its rules, as `rules_by_path` has them."""
        every = self.rules_by_path()
        return {p: every[p] for p in paths if p in every}

    def finding_counts(self) -> dict[int | None, dict[str, int]]:
        """Rollouts with each rule's finding, per version (None: rollouts outside a run)."""
        with self._lock:
            rows = self._db.execute("SELECT r.version, f.rule, count(DISTINCT f.rid) FROM findings f "
                                    "JOIN rollouts r ON r.id = f.rid GROUP BY r.version, f.rule").fetchall()
        out: dict[int | None, dict[str, int]] = defaultdict(dict)
        for v, rule, n in rows:
            out[v][rule] = n
        return dict(out)

    def rollouts_per_version(self) -> dict[int | None, int]:
        with self._lock:
            return dict(self._db.execute("SELECT version, count(*) FROM rollouts GROUP BY version").fetchall())

    def with_rule(self, rule: str, versions: tuple[int | None, int | None], paths: set[str] | None,
                  limit: int) -> RuleRollouts:
        """The indexed rollouts with a finding of `rule` in `versions` (inclusive; None: open) and, unless None,
        among `paths`: counted, and the first `limit` by version and path with their findings of it."""
        lo, hi = versions
        with self._lock:
            got = self._db.execute(
                "SELECT id, path, version, rollout FROM rollouts WHERE id IN (SELECT rid FROM findings WHERE rule = ?) "
                "AND (? IS NULL OR version >= ?) AND (? IS NULL OR version <= ?) "
                "ORDER BY version IS NULL, version, path", (rule, lo, lo, hi, hi)).fetchall()
        if paths is not None:
            got = [g for g in got if g[1] in paths]
        first = got[:limit]
        found: dict[int, list[Finding]] = defaultdict(list)
        with self._lock:
            for k in range(0, len(first), 500):
                part = [g[0] for g in first[k:k + 500]]
                for rid, *rest in self._db.execute(
                        f"SELECT rid, rule, turn, start, end, sentence FROM findings WHERE rule = ? AND rid IN "
                        f"({','.join('?' * len(part))}) ORDER BY rowid", [rule, *part]):
                    found[rid].append(Finding(*rest))
        return RuleRollouts(len(got), dict(Counter(g[2] for g in got if g[2] is not None)),
                            [Ruled(path, v, r, found[rid]) for rid, path, v, r in first])
