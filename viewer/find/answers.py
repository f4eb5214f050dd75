"""What the search panel and the MCP tools answer, as typed records, from one source's text index.

`summary` is the findings chart's data (rollouts with each rule's finding, per version in a run); `search` a
search's hits or, with a rule, the rollouts with that finding, each a `HitRow` the page turns into a link to its
tokens. Requests come from a page or an agent: every value is checked here and a bad one answers `error`.
No Gradio here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Annotated

import msgspec

from rollout_trace.analysis.findings import RULES
from viewer.requests import read

from .query import BUDGET_S, BUDGET_S_PUBLIC, QueryError, parse_query
from .text_index import Search

MAX_FINDING_ROWS = 200


class HitRow(msgspec.Struct, frozen=True):
    path: str
    version: int | None
    rollout: int | None
    turn: int
    field: str  # generated | tool-call | tool-output, or "finding: <rule>"
    token: int
    token_end: int
    excerpt: str
    mark: tuple[int, int]  # the match within the excerpt (0, 0 for a finding)
    group: int | None = None  # a run's group number (a version's groups each have a rollout 0)


class SearchAnswer(msgspec.Struct, frozen=True):
    hits: list[HitRow] = []
    rollouts: int = 0
    per_version: dict[str, int] = {}
    partial: bool = False
    notes: list[str] = []
    error: str | None = None
    # a first answer (request `first`) stopped early: ask again with `after` = this for the rest's hits and counts
    resume: int | None = None
    # what this answer covers: `searched` of the source's `of` rollouts (None: unknown, a search stopped by its
    # time budget inside a collection's index); a first answer and its rest add up to `of`
    searched: int | None = None
    of: int = 0


class RuleCount(msgspec.Struct, frozen=True):
    rule: str
    total: int  # rollouts with this finding
    per_version: dict[str, int]


class FindSummary(msgspec.Struct, frozen=True):
    rollouts: int
    versions: list[int]  # a run's versions holding indexed rollouts; empty outside a run
    rules: list[RuleCount]  # every rule, in RULES' order, found or not
    error: str | None = None
    covers: str | None = None  # what part of the source was read, when not all of it
    unsearchable: int = 0  # the source's rollouts with no recorded text (a run's failed before their artifact)


def budget_s(public: bool) -> float:
    """How long one search may take in all, from when it was asked."""
    return BUDGET_S_PUBLIC if public else BUDGET_S


def summary(index: Search) -> FindSummary:
    counts = index.finding_counts()
    per = index.rollouts_per_version()
    versions = sorted(v for v in per if v is not None)
    by: dict[str, dict[str, int]] = {rule: {} for rule in RULES}
    totals = dict.fromkeys(RULES, 0)
    for v, n in counts.items():  # once over the versions (a run may have 100,000), each with the rules it has
        for rule, c in n.items():
            totals[rule] = totals.get(rule, 0) + c
            if v is not None and rule in by:
                by[rule][str(v)] = c
    rules = [RuleCount(rule, totals[rule], by[rule]) for rule in RULES]
    rollouts = sum(per.values())
    return FindSummary(rollouts=rollouts, versions=versions, rules=rules, covers=index.covers,
                       unsearchable=max(0, len(index) - rollouts))


Word = Annotated[str, msgspec.Meta(max_length=40)]


class FindRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A search, as the panel (server.find_search) and the MCP tool ask it; `search` checks every value."""

    src: Annotated[str, msgspec.Meta(max_length=1000)] = ""
    pattern: Annotated[str, msgspec.Meta(max_length=2000)] = ""
    fields: Annotated[list[Word], msgspec.Meta(max_length=3)] = []
    versions: Word = ""
    statuses: Annotated[list[Annotated[str, msgspec.Meta(max_length=20)]], msgspec.Meta(max_length=8)] = []
    rule: Word = ""
    limit: int | None = None  # None: 100 (parse_query names a limit out of its bounds)
    first: bool = False  # a run answers its first hits at once, with `resume` when there is more to count
    after: Annotated[int, msgspec.Meta(ge=0)] = 0  # the rest of a first answer: its `resume`


def search(index: Search, asked: FindRequest | Mapping, public: bool, deadline: float | None = None) -> SearchAnswer:
    """{pattern, fields, versions, statuses, rule, limit, first, after} -> the hits, or the rollouts with finding
    `rule`; the search stops at `deadline` (time.monotonic(); default: the query's budget from now). With
    `first` a run's search answers its first hits at once and `resume`; {..., after: resume} answers the rest."""
    req = asked if isinstance(asked, FindRequest) else read(asked, FindRequest) or FindRequest()
    rule, versions, fields, statuses, pattern = req.rule, req.versions or None, req.fields, req.statuses, req.pattern
    limit = 100 if req.limit is None else req.limit
    if rule:
        if rule not in RULES:
            return SearchAnswer(error=f"no finding rule {rule!r}: the rules are {', '.join(RULES)}")
        return _with_rule(index, rule, versions, pattern, deadline)
    try:
        q = parse_query(pattern, fields, versions, statuses, public=public, limit=limit)
    except QueryError as e:
        return SearchAnswer(error=str(e))
    r = index.search(dataclasses.replace(q, first=req.first, start=req.after), deadline)
    return SearchAnswer(hits=[HitRow(h.path, h.version, h.rollout, h.turn, h.field, h.token, h.token_end, h.excerpt,
                                     h.mark, h.group_id) for h in r.hits], rollouts=r.rollouts,
                        per_version={str(v): n for v, n in sorted(r.per_version.items())}, partial=r.partial,
                        notes=r.notes + ([index.covers] if index.covers else []), resume=r.resume,
                        **_coverage(index, r.searched, r.partial))


def _coverage(index: Search, searched: int | None, partial: bool) -> dict:
    of = len(index)
    return {"searched": searched if searched is not None else None if partial else of, "of": of}


def _with_rule(index: Search, rule: str, versions: str | None, pattern: str, deadline: float | None) -> SearchAnswer:
    from .query import parse_versions

    try:
        lo, hi = parse_versions(versions)
    except QueryError as e:
        return SearchAnswer(error=str(e))
    paths = None
    if pattern.strip():  # a rule and a pattern: the rollouts with both
        try:
            paths = {h.path for h in index.search(parse_query(pattern, limit=200), deadline).hits}
        except QueryError as e:
            return SearchAnswer(error=str(e))
    # each rollout listed has at least one finding of the rule: the first MAX_FINDING_ROWS rollouts fill the rows
    got = index.with_rule(rule, (lo, hi), paths, MAX_FINDING_ROWS)
    rows = [HitRow(r.path, r.version, r.rollout, f.turn, f"finding: {rule}", f.start, f.end, f.sentence, (0, 0),
                   r.group_id) for r in got.first for f in r.findings][:MAX_FINDING_ROWS]
    return SearchAnswer(hits=rows, rollouts=got.count, per_version={str(v): n for v, n in got.per_version.items()},
                        notes=[index.covers] if index.covers else [], **_coverage(index, None, False))
