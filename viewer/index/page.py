"""One page of a collection's index: filtered and sorted on the server, bounded, as an `IndexPage`.

Pure: a `Collection`, the filter state from the URL and a page number in, a typed record out. The
filtering and sorting are viewer/index/filters.py's, the same the command line uses. Rows whose summary.json
does not record their tokens or drift get them from `fill` (viewer/index/facts.py): the rows shown, or
every row when the page filters or sorts by them. A row's findings (the rules it trips) come from the source's
search index once it is built (viewer/find/text_index.py `rules_by_path`): the findings column, and the `finding=` filter
(a rule, "any" or "none"), which a page without them keeps in its query and applies once they are known.

The model filter offers each model once: a name recorded without its organisation
("SmolLM2-135M-Instruct") is the same model as the one "org/name" with that last part, so the two are one
choice, the bare name, which the filter (a case-insensitive "contains") matches in both spellings; two
organisations' models of the same name stay two choices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from urllib.parse import urlencode

import msgspec

from rollout_trace.analysis.findings import RULES
from rollout_trace.artifact.collection import Collection, Record
from rollout_trace.artifact.run_table import QueuedRow

from . import render
from .contract import FINDING_KEY, IndexPage, IndexRow
from .filters import QUERY_KEYS, Filters, apply, from_query, to_query

_RULE_ORDER = {rule: i for i, rule in enumerate(RULES)}
PAGE_SIZE = 200  # rows in one page of the table
MAX_CHOICES = 200  # models and tools offered as filter choices


def page_number(params: Mapping[str, object]) -> int:
    """The 0-based page from `?page=` (1-based in the URL, as people count); 0 when unreadable."""
    raw = params.get("page")
    if isinstance(raw, (list, tuple)):
        raw = raw[-1] if raw else None
    try:
        return max(0, int(str(raw)[:9]) - 1)
    except (TypeError, ValueError):
        return 0


def filter_values(f: Filters) -> dict[str, str]:
    """The filter state key by key, as the form shows it (only the keys that are set)."""
    from urllib.parse import parse_qsl

    return dict(parse_qsl(to_query(f)))


def model_choices(models: Iterable[str]) -> list[str]:
    """Each model once (see the module docstring): a bare name merges with the one org/name ending in it."""
    names = set(models)
    orgs: dict[str, set[str]] = {}
    for n in names:
        if "/" in n:
            orgs.setdefault(n.rsplit("/", 1)[1], set()).add(n)
    return sorted({base if base in names and len(orgs.get(base, ())) <= 1 else n
                   for n in names for base in [n.rsplit("/", 1)[-1]]}, key=str.casefold)


Fill = Callable[[Iterable[Record]], list[Record]]
Findings = Mapping[str, Sequence[str]]  # an indexed rollout's path -> the rules it has findings of


def row_findings(c: Collection, findings: Findings) -> dict[str, Sequence[str]]:
    """Every row's rules: a rollout's own (when it is indexed), a group's the union of its rollouts' (when they all
    are), in the order the rules are listed; rows not known are left out."""
    out: dict[str, Sequence[str]] = dict(findings)
    members: dict[str, list[str]] = {}
    for r in c.records:
        if r.group is not None and r.kind == "artifact":
            members.setdefault(r.group, []).append(r.path)
    for g in c.records:
        paths = members.get(g.path)
        if g.kind == "group" and paths and all(p in findings for p in paths):
            seen: dict[str, None] = {}
            for p in paths:
                seen.update(dict.fromkeys(findings[p]))
            out[g.path] = list(seen)
    return out


def finding_filter(value: object, known: dict[str, Sequence[str]] | None, rules: Sequence[str]) -> tuple[str, str | None]:
    """(the finding filter's value, a note) from `?finding=`: a rule of this source, "any" or "none"."""
    v = value[-1] if isinstance(value, (list, tuple)) and value else value
    if not isinstance(v, str) or not v.strip():
        return "", None
    v = v.strip()[:40]
    if known is None:  # kept in the query (a shared link keeps it) and applied once the findings are known
        return v, "the finding filter waits for this source's findings (the search panel computes them); showing every row"
    if v not in ("any", "none", *rules):
        return "", f"no rollout here has a finding {v!r}: the finding filter is off"
    return v, None


def passes(path: str, want: str, known: dict[str, Sequence[str]]) -> bool:
    rules = known.get(path)
    if rules is None:
        return False  # not known: a filter on findings cannot say it passes
    return not rules if want == "none" else bool(rules) if want == "any" else want in rules


def finding_rules(findings: Findings | None) -> list[str]:
    """The rules with a finding in the source, in RULES' order: the finding filter's choices."""
    if findings is None:
        return []
    return sorted({x for rs in findings.values() for x in rs}, key=lambda x: _RULE_ORDER.get(x, len(_RULE_ORDER)))


FACT_SORTS = ("tokens", "drift", "drifting_boundaries", "trained_turns")


def build_page(c: Collection, src: str, params: Mapping[str, object], serial: int,
               page_size: int = PAGE_SIZE, fill: Fill | None = None, findings: Findings | None = None) -> IndexPage:
    """The rows of `c` passing the filters in `params` (URL query keys), sorted, one page of them. `findings`: the
    source's findings by rollout path (its search index, viewer/find/text_index.py), or None while they are not computed."""
    filters, notes = from_query({k: v for k, v in params.items() if k in QUERY_KEYS})  # type: ignore[misc]
    every = fill is not None and (filters.drift is not None or filters.trained_min is not None
                                  or filters.trained_max is not None or filters.sort.lstrip("-") in FACT_SORTS)
    rows = apply(fill(c.records) if fill is not None and every else c.records, filters)
    known = row_findings(c, findings) if findings is not None else None
    rules = finding_rules(findings)
    want, note = finding_filter(params.get(FINDING_KEY), known, rules)
    if note:
        notes = [*notes, note]
    if want and known is not None:
        rows = [r for r in rows if passes(r.path, want, known)]
    pages = max(1, -(-len(rows) // page_size))
    page = min(page_number(params), pages - 1)
    shown = rows[page * page_size:(page + 1) * page_size]
    if fill is not None and not every:
        shown = fill(shown)
    models = model_choices(r.model for r in c.records if r.model)[:MAX_CHOICES]
    tools = sorted({t for r in c.records for t in r.tools})[:MAX_CHOICES]
    queued = _run_queued(c) if c.run is not None else None
    return IndexPage(
        serial=serial, mode="index", src=src, query=with_finding_query(to_query(filters), want),
        filters={**filter_values(filters), **({FINDING_KEY: want} if want else {})},
        sort=filters.sort, page=page, pages=pages, page_size=page_size, total=len(c.records), matched=len(rows),
        matched_groups=sum(r.kind == "group" for r in rows),
        first=page * page_size + 1 if shown else 0, shown=len(shown), invalid=sum(not r.valid for r in c.records),
        unlisted=sum(r.path is None for r in c.run.rows) if c.run is not None else 0,
        kind=c.kind, models=models, tools=tools,
        table=render.table([with_findings(render.index_row(r, queued.get(_place(r)) if queued is not None else None),
                                          known) for r in shown], run=queued is not None),
        notes=render.notes(c.notes + notes),
        findings_known=known is not None, finding_rules=rules,
    )


def _place(r: Record) -> tuple:
    return (r.kind == "group", r.segment, r.group_id, None if r.kind == "group" else r.rollout)


def _run_queued(c: Collection) -> dict[tuple, list[QueuedRow]]:
    """A recorded run's TRL rows with their fates, by index row place (a group: its rollouts', in order)."""
    assert c.run is not None
    out: dict[tuple, list[QueuedRow]] = {}
    for r in c.run.rows:
        out[(False, r.segment, r.group_id, r.rollout)] = list(r.queued)
        out.setdefault((True, r.segment, r.group_id, None), []).extend(r.queued)
    return out


def with_findings(row: IndexRow, known: dict[str, Sequence[str]] | None) -> IndexRow:
    return row if known is None or row.path not in known else msgspec.structs.replace(row, findings=list(known[row.path]))


def with_finding_query(query: str, finding: str) -> str:
    return "&".join(x for x in (query, urlencode({FINDING_KEY: finding}) if finding else "") if x)
