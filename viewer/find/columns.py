"""Search and findings of a recorded run from its columns: every rollout, nothing opened, nothing built.

A run's rows hold each rollout's searchable text pieces and findings, computed when it was recorded
(rollout_trace/analysis/searchable.py), so a search reads the `text_*` columns shard by shard
(rollout_trace/artifact/run_table.py), in the run's order: Arrow's substring kernel finds the pieces holding the
pattern's plain part (case-insensitively), Arrow's RE2 kernel checks a regular expression on those pieces only
(or on every piece when it has no plain part), and only the hits listed are located among their
tokens (rollout_trace/analysis/texts.py `Piece`). The counts cover every rollout of the run, within the query's
time budget (the answer says when the budget cut it short). Findings come from the `findings` column.

`RunFind` answers what viewer/find/text_index.py's FindIndex answers, so the search panel, the findings chart, the
collection index's findings column, `viewer find` and the agent tools read a run and a collection alike. No Gradio.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rollout_trace.analysis.findings import RULES, Finding
from rollout_trace.artifact.run_columns import filled, list_lengths
from rollout_trace.artifact.run_table import Reduction, RunTable, Step, register

from .query import FIRST_S, Query
from .text_index import EXCERPT, Hit, Ruled, RuleRollouts, SearchResult

TEXT = ("text", "text_field", "text_turn", "text_start", "text_offsets")


# a row's rules as bits in the narrowest unsigned integer holding one bit per rule: a million rollouts' worth
RULE_BITS = np.min_scalar_type((1 << len(RULES)) - 1)


def _rule_bits(t: RunTable) -> tuple[Step, Callable[[], np.ndarray]]:
    """Per row of the run, the rules it has a finding of as bits (bit i: RULES' i-th), shard by shard (a
    reduction, `RunTable.reduced`): kept as bits only, a million rollouts' findings with their sentences are
    ~100 MB."""
    bits = np.zeros(len(t), RULE_BITS)
    rules = pa.array(list(RULES))

    def step(start: int, part: pa.Table) -> None:
        at = start
        for chunk in part["findings"].chunks:
            flat = pc.list_flatten(chunk)
            if len(flat):
                rule = pc.fill_null(pc.index_in(pc.struct_field(flat, "rule"), value_set=rules), -1).to_numpy(
                    zero_copy_only=False)
                rows = at + pc.list_parent_indices(chunk).to_numpy(zero_copy_only=False)
                ok = rule >= 0
                np.bitwise_or.at(bits, rows[ok], np.left_shift(1, rule[ok]).astype(RULE_BITS))
            at += len(chunk)

    return step, lambda: bits


register("find_bits", Reduction(("findings",), _rule_bits))


def rules_in(bits: int) -> list[str]:
    """The rules a row's (or several rows' OR-ed) bits name (`_rule_bits`), in RULES' order."""
    return [rule for i, rule in enumerate(RULES) if bits >> i & 1]


def _even(cols: pa.Table, file: str, positions: np.ndarray, uneven: list[str],
          gone: np.ndarray | None = None) -> tuple[pa.Table, np.ndarray]:
    """A shard's text columns with each rollout whose lists are not one value per piece (`text`) left without
    pieces (a hostile shard's: the lists are read side by side), and which rollouts those are (`gone`: left out
    already); the first few named in `uneven`."""
    pieces = list_lengths(cols["text"])
    bad = np.zeros(cols.num_rows, bool) if gone is None else gone.copy()
    for name in cols.column_names[1:]:
        got = list_lengths(cols[name])
        for i in np.flatnonzero((got != pieces) & ~bad)[:max(0, 3 - len(uneven))].tolist():
            uneven.append(f"{file} row {int(positions[i])}: {name} has {got[i]} values, text {pieces[i]}")
        bad |= got != pieces
    if not bad.any():
        return cols, bad
    left = pa.array(bad)
    return pa.table({c: pc.if_else(left, pa.scalar(None, cols[c].type), cols[c]) for c in cols.column_names}), bad


def _at(cols: pa.Table, positions: np.ndarray) -> pa.Table:
    """Rows `positions` of a shard's columns (increasing): the table itself when they are all of its rows."""
    return cols if len(positions) == cols.num_rows else cols.take(pa.array(positions))


class RunFind:
    """The search and findings of one run snapshot."""

    covers: str | None = None  # every rollout of the run is searched

    def __init__(self, t: RunTable):
        self.t = t

    def close(self) -> None:
        pass

    def __contains__(self, path: str) -> bool:
        return len(self._row_of(path)) > 0

    def _row_of(self, path: str) -> np.ndarray:
        """The row of the rollout at `path` (none: no such rollout, or one without an artifact), found by its
        group's number (`RunTable.named`): never a name made for every rollout of the run."""
        return self.t.named("path", path)[:1]

    def __len__(self) -> int:
        """The run's rollouts (its standing rows: counted without making a million paths)."""
        return len(self.t)

    # -- search -----------------------------------------------------------------------------------------

    def _allowed(self, q: Query) -> np.ndarray:
        """Which rows the query's versions and statuses keep (rollouts with an artifact: those have text)."""
        t = self.t
        keep = self.t.has_artifact()
        lo, hi = q.versions
        if lo is not None:
            keep = pc.and_(keep, pc.greater_equal(t.column("policy_version"), lo))
        if hi is not None:
            keep = pc.and_(keep, pc.less_equal(t.column("policy_version"), hi))
        if q.statuses:
            keep = pc.and_(keep, pc.is_in(pc.cast(t.column("status"), pa.string()), value_set=pa.array(list(q.statuses))))
        return pc.fill_null(keep, False).to_numpy(zero_copy_only=False).astype(bool)

    def search(self, q: Query, deadline: float | None = None) -> SearchResult:
        """The hits of `q` over every rollout from shard `q.start`; by `deadline` (time.monotonic(); default: the
        query's budget from now) the search stops between shards and answers with what it read, `partial`. A
        `q.first` search stops between shards once it has listed `q.limit` hits, or has a hit and has read for
        FIRST_S, and says where the rest begins (`resume`): the shards are disjoint, so the counts of a second
        search from there add to the first's."""
        t = self.t
        began = time.monotonic()
        deadline = began + q.budget_s if deadline is None else deadline
        allowed = self._allowed(q)
        version = t.column("policy_version").to_numpy()
        fields = pa.array(list(q.fields))
        hits: list[Hit] = []
        seen: dict[int, int] = {}  # row -> version of the rollouts with a match
        pieces, partial, resume, read = 0, False, None, 0
        uneven: list[str] = []  # rollouts whose text lists are not one value per piece: not searched, named
        unsearched = 0
        odd: list[str] = []  # pieces whose token offsets are not 32-bit numbers
        for k, rows in t.shard_rows():
            if k < q.start:
                continue
            if hits and q.first and (len(hits) >= q.limit or time.monotonic() - began >= FIRST_S):
                resume = k
                break
            if time.monotonic() > deadline:
                partial = True
                break
            read += len(rows)
            mine = rows[allowed[rows]]
            if not len(mine):
                continue
            at = t.positions(k)[allowed[rows]]
            file = f"rollouts/{t.shards[k].name}"
            # the pieces and their fields first; their turns and token places only in a shard where one matched
            cols, gone = _even(_at(t.shard_columns(k, TEXT[:2]), at), file, at, uneven)
            parent, flat, matched = _matches(cols, fields, q)
            if matched:
                rest = _at(t.shard_columns(k, TEXT[2:]), at)
                cols, now = _even(pa.table({**{c: cols[c] for c in TEXT[:2]}, **{c: rest[c] for c in TEXT[2:]}}),
                                  file, at, uneven, gone)
                if now.sum() > gone.sum():  # a matched rollout's other lists are uneven: it is left out too
                    parent, flat, matched = _matches(cols, fields, q)
                gone = now
            unsearched += int(gone.sum())
            pieces += len(matched)
            for i in matched:
                row = int(mine[parent[i]])
                seen[row] = int(version[row])
            if len(hits) < q.limit and matched:
                hits += self._locate(cols, mine, parent, flat, matched, q, deadline, odd)
            if partial:
                break
        per: dict[int, int] = defaultdict(int)
        for v in seen.values():
            per[v] += 1
        notes = [] if q.literal else \
            ["this pattern has no plain substring of 3+ characters: every piece was read"]
        if partial:
            notes.append(f"the search stopped after its time budget ({q.budget_s:g} s): counts are of what was read")
        if odd:
            notes.append(f"{len(odd)} hit piece(s) hold token offsets that cannot be read (not 32-bit numbers): their "
                         f"hits point at the piece's first token (first: {odd[0]})")
        if uneven:
            notes.append(f"{unsearched} rollout(s) not searched: their text pieces are lists of different lengths "
                         f"(first: {uneven[0]})")
        return SearchResult(hits[:q.limit], len(seen), pieces, dict(per), partial, notes, resume, read)

    def _locate(self, cols: pa.Table, mine: np.ndarray, parent: np.ndarray, flat: pa.Array, matched: list[int],
                q: Query, deadline: float, odd: list[str]) -> list[Hit]:
        """The listed hits of this shard: each match located among its piece's tokens (a piece whose token
        offsets cannot be read named in `odd`, its hits placed at its first token)."""
        from rollout_trace.analysis.texts import Piece

        t = self.t
        turns = pc.list_flatten(cols["text_turn"].combine_chunks())
        fields = pc.list_flatten(cols["text_field"].combine_chunks())
        starts = pc.list_flatten(cols["text_start"].combine_chunks())
        offsets = pc.list_flatten(cols["text_offsets"].combine_chunks())
        out: list[Hit] = []
        for i in matched:
            if len(out) >= q.limit:
                break
            row = int(mine[parent[i]])
            place = t.take(np.array([row]), ["path", "policy_version", "group", "group_id",
                                                   "rollout"]).to_pylist()[0]
            blob = offsets[i].as_py()
            text = flat[i].as_py()
            if blob and len(blob) % 4:  # a hostile shard's: not 32-bit offsets; the hit is at the piece's start
                odd.append(f"{place['path']} turn {turns[i].as_py()}")
                blob = None
            piece = Piece(fields[i].as_py(), turns[i].as_py(), text, starts[i].as_py(),
                          np.frombuffer(blob, dtype="<i4") if blob else None)
            for m in q.compiled.finditer(text):  # RE2: linear in the piece
                if m.end() == m.start():
                    continue
                if len(out) >= q.limit:
                    break
                a, b = piece.tokens_of(m.start(), m.end())
                lo, hi = max(0, m.start() - EXCERPT), min(len(text), m.end() + EXCERPT)
                out.append(Hit(place["path"], place["policy_version"], place["group"], place["rollout"],
                               piece.turn, piece.field, a, b, text[lo:hi], (m.start() - lo, m.end() - lo),
                               place["group_id"]))
            if time.monotonic() > deadline:
                break
        return out

    # -- findings ---------------------------------------------------------------------------------------

    def _findings(self) -> pa.Table:
        """Every finding of the run: (row, rule, turn, start, end, sentence)."""
        def make() -> pa.Table:
            col = self.t.column("findings").combine_chunks()
            flat = pc.list_flatten(col)
            return pa.table({"row": pc.list_parent_indices(col), "rule": pc.struct_field(flat, "rule"),
                             "turn": pc.struct_field(flat, "turn"), "start": pc.struct_field(flat, "start"),
                             "end": pc.struct_field(flat, "end"), "sentence": pc.struct_field(flat, "sentence")})
        return self.t.memo("find:findings", make)

    def row_bits(self) -> np.ndarray:
        """Per row of the run, the rules it has a finding of as bits (bit i: RULES' i-th), once per snapshot."""
        return self.t.reduced("find_bits")

    def present(self) -> list[str]:
        """The rules with a finding in the run, in RULES' order."""
        return rules_in(int(np.bitwise_or.reduce(self.row_bits())) if len(self.t) else 0)

    def rules_of(self, paths: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Each of `paths` (a group's rollouts) -> the rules it has a finding of, in RULES' order (() for none), from
        the rows' bits: a path that names no rollout of the run is left out."""
        bits = self.row_bits()
        out: dict[str, tuple[str, ...]] = {}
        for path in paths:
            rows = self._row_of(path)
            if len(rows):
                out[path] = tuple(rules_in(int(bits[int(rows[0])])))
        return out

    def findings_of(self, path: str) -> list[Finding]:
        rows = self._row_of(path)
        return self._found(rows).get(int(rows[0]), []) if len(rows) else []

    def _found(self, rows: np.ndarray, rule: str | None = None) -> dict[int, list[Finding]]:
        """The findings of rows `rows` (of `rule` alone, unless None), per row, in the order recorded: one filter
        of the run's findings for all of them."""
        f = self._findings()
        keep = pc.is_in(f["row"], value_set=pa.array(rows, f["row"].type))
        if rule is not None:
            keep = pc.and_(keep, pc.equal(f["rule"], rule))
        out: dict[int, list[Finding]] = defaultdict(list)
        for x in f.filter(keep).to_pylist():
            out[x["row"]].append(Finding(x["rule"], x["turn"], x["start"], x["end"], x["sentence"]))
        return out

    def all_findings(self) -> dict[str, list[Finding]]:
        paths = self.t.column("path").to_pylist()
        out: dict[str, list[Finding]] = defaultdict(list)
        for x in self._findings().to_pylist():
            out[paths[x["row"]]].append(Finding(x["rule"], x["turn"], x["start"], x["end"], x["sentence"]))
        return dict(out)

    def rules_by_path(self) -> dict[str, tuple[str, ...]]:
        """Every rollout's path -> the rules it has a finding of (in RULES' order; () for none)."""
        def make() -> dict[str, tuple[str, ...]]:
            f = self._findings()
            pairs = pa.table({"row": f["row"], "rule": f["rule"]}).group_by(["row", "rule"]).aggregate([])
            order = {rule: i for i, rule in enumerate(RULES)}
            got: dict[int, list[str]] = defaultdict(list)
            for row, rule in zip(pairs["row"].to_pylist(), pairs["rule"].to_pylist(), strict=True):
                got[row].append(rule)
            paths = self.t.column("path").to_pylist()
            out: dict[str, tuple[str, ...]] = {p: () for p in paths if p is not None}
            for row, rules in got.items():
                out[paths[row]] = tuple(sorted(rules, key=lambda r: order.get(r, len(order))))
            return out
        return self.t.memo("find:rules", make)

    def finding_counts(self) -> dict[int | None, dict[str, int]]:
        """Rollouts with each rule's finding, per version: counted from the rows' rule bits (`row_bits`, the
        reduction the index reads too), never the run's findings with their sentences (~100 MB at a million
        rollouts: the search panel asks for these counts on every page load)."""
        def make() -> dict[int | None, dict[str, int]]:
            bits = self.row_bits()
            if not len(bits) or not bits.any():
                return {}
            versions, at = np.unique(filled(self.t.column("policy_version"), -1), return_inverse=True)
            out: dict[int | None, dict[str, int]] = defaultdict(dict)
            for i, rule in enumerate(RULES):
                mine = np.bincount(at[(bits >> i) & 1 == 1], minlength=len(versions))
                for v, n in zip(versions[mine > 0].tolist(), mine[mine > 0].tolist(), strict=True):
                    out[v][rule] = n
            return dict(out)
        return self.t.memo("find:counts", make)  # once per snapshot: every page load's panel asks

    def rollouts_per_version(self) -> dict[int | None, int]:
        def make() -> dict[int | None, int]:
            t = self.t
            got = pa.table({"v": t.column("policy_version").filter(t.has_artifact())}).group_by("v").aggregate(
                [("v", "count")])
            return dict(zip(got["v"].to_pylist(), got["v_count"].to_pylist(), strict=True))
        return self.t.memo("find:per_version", make)

    def with_rule(self, rule: str, versions: tuple[int | None, int | None], paths: set[str] | None,
                  limit: int) -> RuleRollouts:
        """The rollouts with a finding of `rule` in `versions` (inclusive; None: open) and, unless None, among
        `paths`: counted from the columns, and only the first `limit` (by version, then in the run's order) named
        and read with their findings of it. A rule found in most of a million rollouts makes no name of them."""
        t = self.t
        f = self._findings()
        rows = np.unique(f["row"].filter(pc.equal(f["rule"], rule)).to_numpy())
        if paths is not None:
            rows = np.intersect1d(rows, np.concatenate([self._row_of(p) for p in paths] + [np.zeros(0, np.int64)]))
        version = t.column("policy_version").to_numpy()[rows]
        lo, hi = versions
        keep = self.t.has_artifact().to_numpy(zero_copy_only=False)[rows]  # a hostile shard's findings of no artifact
        if lo is not None:
            keep &= version >= lo
        if hi is not None:
            keep &= version <= hi
        rows, version = rows[keep], version[keep]
        order = np.argsort(version, kind="stable")[:limit]  # rows are in the run's order already
        first = rows[order]
        found = self._found(first, rule)
        place = t.take(first, ["path", "policy_version", "rollout", "group_id"]).to_pylist()
        vs, counts = np.unique(version, return_counts=True)
        return RuleRollouts(len(rows), dict(zip(vs.tolist(), counts.tolist(), strict=True)),
                            [Ruled(p["path"], p["policy_version"], p["rollout"], found[r], p["group_id"])
                             for r, p in zip(first.tolist(), place, strict=True)])


def _matches(cols: pa.Table, fields: pa.Array, q: Query) -> tuple[np.ndarray, pa.Array, list[int]]:
    """A shard's pieces (each one's row among `cols`, and the flat list of them) and which of them `q` matches in
    the fields it asks for."""
    text = cols["text"].combine_chunks()
    parent = pc.list_parent_indices(text).to_numpy()
    flat = pc.list_flatten(text)
    ok = pc.is_in(pc.list_flatten(cols["text_field"].combine_chunks()), value_set=fields)
    if q.literal:  # every match holds it: Arrow's substring kernel narrows the pieces first
        ok = pc.and_(ok, pc.match_substring(flat, q.literal, ignore_case=True))
    candidates = np.flatnonzero(pc.fill_null(ok, False).to_numpy(zero_copy_only=False))
    return parent, flat, _matching(flat, candidates, q) if q.is_regex or not q.literal else candidates.tolist()


def _matching(flat: pa.Array, candidates: np.ndarray, q: Query) -> list[int]:
    """Which candidate pieces `q`'s pattern matches: Arrow's RE2 kernel over them at once (the pattern was
    compiled by RE2 already, so it is linear in the text); the Python binding of RE2 one by one for a pattern
    Arrow's build refuses."""
    if not len(candidates):
        return []
    picked = flat.take(pa.array(candidates))
    try:
        hit = pc.match_substring_regex(picked, q.compiled.pattern)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return [int(i) for i, text in zip(candidates.tolist(), picked.to_pylist(), strict=True)
                if text is not None and q.compiled.search(text) is not None]
    return candidates[pc.fill_null(hit, False).to_numpy(zero_copy_only=False)].tolist()


def searched(t: RunTable) -> RunFind:
    """The run's search, once per snapshot."""
    return t.memo("find:run", lambda: RunFind(t))

