"""What the collection index shows and what its rows open, for every part that opens one: the index's own
events (viewer/ui/collection_view.py), the Load button and a page link (viewer/ui/view_tab.py), the run page's
groups and tasks (viewer/ui/run_view.py), the search panel's hits (viewer/ui/find_panel.py) and a finished
capture (viewer/ui/capture_tab.py).

An index value is one `IndexPage` (viewer/index/contract.py) built on the server from
viewer/index/filters.py; a group's value is its map (viewer/group.py), sorted by advantage, each
rollout read once through the shared store; a row opens in the token view through viewer/ui/token_values.py.
What one event shows is a `Shown` (the token view's value, the loaded source, the index's value) or, for a link,
a `Linked` (the source box's too), None where the event leaves a part as it is. No component lives here.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

import msgspec

import crash_log
from rollout_trace.artifact import ArtifactError, Problem
from rollout_trace.artifact.collection import Collection, Record
from rollout_trace.artifact.run_table import RunTable
from rollout_trace.artifact.sources import bundled_examples, bundled_groups, bundled_runs
from viewer import run_stats
from viewer import server_api as api
from viewer.contract import Failed, Fate, Initial, Opened, Problems, RunContext, encode_value
from viewer.fate import run_context
from viewer.find.columns import searched
from viewer.find.text_index import Search
from viewer.group import Compare, RunPlace, group_row
from viewer.group import compare as group_compare
from viewer.group import group_map as build_group_map
from viewer.index import render as render_index
from viewer.index.contract import IndexPage
from viewer.index.facts import RowFacts
from viewer.index.filters import apply, from_query, to_query
from viewer.index.page import build_page
from viewer.index.run_index import build_run_page
from viewer.render.outline import complete_run
from viewer.render.safe import source_label
from viewer.rollout import Rollout
from viewer.router import Route, route_link, route_source, run_link_problem
from viewer.source_kinds import Kind

from .live import LIVE_SOURCE
from .token_values import TokenValues

# The token view's value while the index shows: a `Failed` with no problems, so the token view (which
# mounts whatever it is given) clears itself and hides.
CLEARED = encode_value(Failed(None))
_serial = itertools.count(1)


def next_serial() -> int:
    """A new index value's serial: the page re-renders on every new value, even an equal one."""
    return next(_serial)


class Shown(NamedTuple):
    """What opening something shows: each part's new value, None where the part keeps its own."""

    view: object  # the token view's value (an `Opened` or a `Failed`, as JSON)
    loaded: str | None  # the source the token view shows
    page: str | None  # the collection index's value (an `IndexPage`, as JSON)


class Linked(NamedTuple):
    """What a link or the source box shows: as `Shown`, and the source box naming the source (None: kept)."""

    view: object
    src: str | None
    loaded: str | None
    page: str | None


def problems_of(src: str, items: list[Problem] | list[str]) -> Problems:
    """Why `src` (a source, or a row of one) cannot be shown, as the page draws it (dom.js `problemsBox`)."""
    return Problems(source_label(src), [str(p) for p in items])


def _total(c: Collection) -> int:
    """How many rows the index the row was opened from has (a part of a run's: the whole run's)."""
    return c.part_of if c.part_of is not None else len(c.records)


def _with_note(value: object, problems: list[str]) -> object:
    """The token view's value saying which link values it replaced (a visible note, not a silent default)."""
    if not problems or not isinstance(value, str) or '"outline"' not in value[:400]:
        return value
    try:
        opened = msgspec.json.decode(value, type=Opened)
    except msgspec.ValidationError:  # a message or an empty view: nothing to annotate
        return value
    note = "This link had values the view cannot use: " + "; ".join(problems[:6]) + "."
    return encode_value(msgspec.structs.replace(opened, note=note))


class RowSources(Protocol):
    """What the index's rows are read through: the app's shared collections, runs and rollouts, the facts the
    index counts itself and the token view's values. The app's service (viewer/ui/service.py) is the one there
    is; naming only these keeps the rows from importing the service that holds them."""

    public: bool
    default_source: str
    facts: RowFacts
    values: TokenValues

    def kind(self, source: str) -> Kind: ...
    def is_run(self, source: str) -> bool: ...
    def collection(self, src: str) -> Collection: ...
    def row_collection(self, src: str, path: str) -> Collection: ...
    def run_table(self, src: str) -> RunTable | None: ...
    def findings_ready(self, src: str) -> Search | None: ...
    def identity(self, c: Collection, src: str, path: str) -> str: ...
    def load_row(self, src: str, path: str) -> Rollout: ...
    def rollout(self, c: Collection, src: str, path: str) -> Rollout: ...
    def loaded(self, c: Collection, src: str, path: str) -> bool: ...


class Rows:
    """The index's values and the rows it opens, through the app's shared collections and rollouts."""

    def __init__(self, service: RowSources):
        self.service = service

    def none_value(self) -> str:
        return encode_value(IndexPage(serial=next(_serial), mode="none"))

    def error_value(self, src: str, problems: list) -> str:
        return encode_value(IndexPage(serial=next(_serial), mode="index", src=src,
                                problems=problems_of(src, problems)))


    def index_page(self, src: str, params: Mapping[str, object]) -> IndexPage:
        t = self.service.run_table(src)
        if t is not None:  # a run (local, zip or Hub): its index from its columns (its findings a column), the page's rows only
            try:
                return build_run_page(t, src, params, next(_serial), find=searched(t))
            except ArtifactError as e:  # a public visitor's bound crossed, or the visitor left
                return IndexPage(serial=next(_serial), mode="index", src=src, problems=problems_of(src, e.problems))
        index = self.service.findings_ready(src)  # a collection's, once its text index is built
        findings = index.rules_by_path() if index is not None else None
        try:
            c = self.service.collection(src)
        except ArtifactError as e:
            return IndexPage(serial=next(_serial), mode="index", src=src, problems=problems_of(src, e.problems))
        except Exception as e:  # a message in the page, never a traceback
            crash_log.unexpected(f"could not index {source_label(src)}")
            return IndexPage(serial=next(_serial), mode="index", src=src,
                             problems=problems_of(src, [f"could not index it: {type(e).__name__}"]))
        return build_page(c, src, params, next(_serial),
                          fill=lambda rows: self.service.facts.fill(c, rows, lambda path: self.service.identity(c, src, path)),
                          findings=findings)

    def index_value(self, src: str, params: Mapping[str, object]) -> str:
        return encode_value(self.index_page(src, params))

    def _open_artifact(self, c: Collection, src: str, path: str, initial: Initial,
                       advantage: float | None = None, run: RunContext | None = None) -> str:
        """The token view's value for one artifact row, through the shared rollout store."""
        label = source_label(f"{src}:{path}" if path else src)
        try:
            identity = self.service.identity(c, src, path)
        except ArtifactError as e:
            return self.service.values.error_value(label, e.problems)
        return self.service.values.open_value(label, identity, lambda: self.service.load_row(src, path), src, initial, advantage=advantage,
                                    run=run)


    def _members(self, c: Collection, group: Record) -> dict[int, Record]:
        return {r.rollout: r for r in c.records if r.group == group.path and r.rollout is not None}

    @staticmethod
    def _run_rows(c: Collection, group: Record) -> dict[int, Any]:
        """A recorded run's reader rows of `group` by rollout (failed ones too, which have no collection row)."""
        if c.run is None or group.segment is None:
            return {}
        return {r.rollout: r for r in c.run.rows if r.segment == group.segment and r.group_id == group.group_id
                and r.policy_version == group.policy_version}

    def run_context(self, c: Collection, src: str, group: Record, m: Record) -> RunContext | None:
        """Where a run's rollout sits and whether the trainer took it; None outside a recorded run."""
        row = self._run_rows(c, group).get(m.rollout) if m.rollout is not None else None
        if row is None:
            return None
        return run_context(src, row, group.k or 0)

    def rollout_run(self, c: Collection, src: str, rec: Record, rollout: Any = None) -> RunContext | None:
        """A run's rollout row `rec`: where it sits and its fates, each turn's too when its read `rollout` (a
        viewer/rollout.py Rollout) is given; None outside a recorded run."""
        group = c.record(rec.group) if rec.group else None
        if group is None or group.kind != "group":
            return None
        run = self.run_context(c, src, group, rec)
        return complete_run(rollout, run) if run is not None and rollout is not None else run

    def with_fates(self, c: Collection, src: str, got: Compare, a: tuple[Record, Any], b: tuple[Record, Any]) -> Compare:
        """Two compared rollouts (`a`, `b`: each its row and read rollout), each side saying whether the trainer
        trained its row of that turn, when they are a run's."""
        def said(rec: Record, rollout: Any, side: Any) -> str:
            run = self.rollout_run(c, src, rec, rollout)
            if run is None:
                return ""
            pos = next((k for k, t in enumerate(rollout.artifact.turns) if t.index == side.turn), None)
            return (run.turns[pos] if pos is not None and pos < len(run.turns) else run.fate).label
        return msgspec.structs.replace(got, a=msgspec.structs.replace(got.a, fate=said(*a, got.a)),
                                       b=msgspec.structs.replace(got.b, fate=said(*b, got.b)))

    def _rules_of(self, src: str, paths: list[str]) -> dict[str, tuple[str, ...]] | None:
        """The findings' rules of the rollouts at `paths`: a run's from its findings column, a collection's once the
        search panel has built its index; None while they are not known, or when a public visitor's bound stopped
        the run's pass that makes them (the map is drawn without them)."""
        try:
            t = self.service.run_table(src)
            search: Search | None = searched(t) if t is not None else self.service.findings_ready(src)
            return search.rules_of(paths) if search is not None else None
        except ArtifactError:
            return None

    def group_page(self, c: Collection, src: str, group: Record, params: Mapping[str, object]) -> IndexPage:
        """The group map of `group`: each rollout read (for its turns), rows sorted by advantage."""
        members = self._members(c, group)
        run_rows = self._run_rows(c, group)
        found = self._rules_of(src, [m.path for m in members.values() if m.path])
        rows = []
        fates: list[Fate] = []
        # its rollouts' files read at once, let go of at the end however the loop ends
        ahead = [m.path for m in members.values() if m.valid and not self.service.loaded(c, src, m.path)]
        with c.read_ahead(ahead):
            for i, status in enumerate(group.statuses):
                m = members.get(i)
                rollout, problem = None, None
                if m is not None and m.valid:
                    try:
                        rollout = self.service.rollout(c, src, m.path)
                    except ArtifactError as e:
                        problem = e.first("could not be read")
                    except Exception as e:  # one unreadable sibling never hides the others
                        problem = f"could not be read: {type(e).__name__}"
                elif m is not None:
                    problem = m.problem or "invalid"
                reward = group.rewards[i] if i < len(group.rewards) else None
                adv: float | None = group.advantages[i] if i < len(group.advantages) else 0.0
                fate, turn_fates = None, None
                rr = run_rows.get(i)
                if rr is not None:  # a recorded run: TRL's own status and advantage (none without a row), the fates
                    ctx = run_context(src, rr, group.k or 0)
                    if rollout is not None:
                        ctx = complete_run(rollout, ctx)
                    status, adv, fate, turn_fates = rr.status, rr.advantage, ctx.fate, ctx.turns or None
                    fates.append(fate)
                rules = found.get(m.path) if found is not None and m is not None else None
                rows.append(group_row(i, status, reward, adv, m, rollout, problem, fate, turn_fates, rules))
        place = None
        if run_rows and group.segment is not None:
            never: dict[str, int] = {}
            for f in fates:
                if not f.trained and not f.partly and f.cause is not None:
                    never[f.cause] = never.get(f.cause, 0) + 1
            place = RunPlace(run=src, segment=group.segment, version=group.policy_version or 0,
                             group_id=group.group_id or 0,
                             steps=sorted({s for rr in run_rows.values() for s in rr.trained_steps}), never=never,
                             partly=sum(f.partly for f in fates))
        filters, _ = from_query({k: v for k, v in params.items() if isinstance(v, (str, list))})
        return IndexPage(serial=next(_serial), mode="group", src=src, query=to_query(filters), sort=filters.sort,
                         row=group.path, total=_total(c), kind=c.kind,
                         group=build_group_map(group, rows, place, findings_known=found is not None))

    def open_group(self, c: Collection, src: str, group: Record, params: Mapping[str, object],
                   initial: Initial, rollout: int | None) -> Shown:
        """A group: its map, or with `rollout` that rollout at `initial`'s turn."""
        if rollout is None:
            return Shown(CLEARED, "", encode_value(self.group_page(c, src, group, params)))
        m = self._members(c, group).get(rollout)
        if m is None:
            page = self.group_page(c, src, group, params)
            return Shown(CLEARED, "", encode_value(msgspec.structs.replace(page, problems=problems_of(
                f"{src}:{group.path}", [Problem(group.path or "(root)", "this group has no readable rollout",
                                                found=str(rollout))]))))
        adv = group.advantages[rollout] if rollout < len(group.advantages) else None
        run = self.run_context(c, src, group, m)
        if run is not None:
            adv = run.advantage
        value = self._open_artifact(c, src, m.path, initial, advantage=adv, run=run)
        if run is not None:  # the back bar words the fate by turns, as the token view does
            try:
                run = complete_run(self.service.rollout(c, src, m.path), run)
            except ArtifactError:
                pass  # the token view says why it cannot be read; the bar keeps the rows' words
        filters, _ = from_query({k: v for k, v in params.items() if isinstance(v, (str, list))})
        page = IndexPage(serial=next(_serial), mode="row", src=src, query=to_query(filters), sort=filters.sort,
                         row=group.path, rollout=rollout, total=_total(c), matched=_total(c), kind=c.kind,
                         back=render_index.opened_run_rollout(run) if run is not None else
                         render_index.opened_rollout(group.path or src, rollout, adv, group.k or 0))
        return Shown(value, c.source_of(m.path) or f"{src}:{m.path}", encode_value(page))

    def open_row(self, src: str, path: str, params: Mapping[str, object],
                 initial: Initial, rollout: int | None = None) -> Shown:
        """One row of a collection (a group's map or rollout with `rollout`), the filter state kept."""
        path = path.strip().strip("/")
        try:
            c = self.service.row_collection(src, path)  # of a local run: the row's group only
        except ArtifactError as e:
            return Shown(CLEARED, "", self.error_value(src, e.problems))
        rec = c.record(path)
        if rec is None:
            return Shown(CLEARED, "", self.error_value(src, [Problem(path or "(root)", "no such row in this collection")]))
        if rec.kind == "group":
            return self.open_group(c, src, rec, params, initial, rollout)
        group = c.record(rec.group) if c.run is not None and rec.group and rec.rollout is not None else None
        if group is not None and group.kind == "group":  # a run's rollout (a search hit): opened in its group, so
            return self.open_group(c, src, group, params, initial, rec.rollout)  # it says where it sits and its fate
        if rec.kind == "run":  # one row for a whole run: it opens as its own source, on the run page
            goto = c.source_of(path) if c.kind == "hub" or not self.service.public else None
            if goto is None:  # a public visitor never gets a server path; a zip's run has no source of its own
                return Shown(CLEARED, "", self.error_value(src, [Problem(path, "this run cannot be opened from the "
                                                                              "index here: open the run on its own")]))
            return Shown(CLEARED, "", encode_value(IndexPage(serial=next(_serial), mode="index", src=src, goto=goto)))
        value = self._open_artifact(c, src, path, initial)
        filters, _ = from_query({k: v for k, v in params.items() if isinstance(v, (str, list))})
        query = to_query(filters)
        # counted as the index counts them: a filter on a fact summary.json may lack (drift, trained turns)
        # sees the facts the index filled in (viewer/index/facts.py), so both say the same number
        by_facts = filters.drift is not None or filters.trained_min is not None or filters.trained_max is not None
        if c.part_of is not None:  # one group of a local run: the run's index counts (its columns), not the group's
            matched = self.index_page(src, params).matched if query else c.part_of
        else:
            rows = self.service.facts.fill(c, c.records, lambda p: self.service.identity(c, src, p)) if by_facts \
                else c.records
            matched = len(apply(rows, filters))
        page = IndexPage(serial=next(_serial), mode="row", src=src, query=query, sort=filters.sort, row=path,
                         total=_total(c), matched=matched, kind=c.kind,
                         back=render_index.opened_row(rec, path, matched, query))
        return Shown(value, c.source_of(path) or f"{src}:{path}", encode_value(page))

    def compare(self, data: object) -> dict:
        """Server function: {src, row (the group), a, b (rollout indices), turn} -> {compare: Compare} or Refused."""
        req = api.read(data, api.GroupCompareRequest)
        if req is None:
            return api.refused("a request is {src, row, a, b, turn}")
        src, a, b = req.src.strip(), req.a, req.b
        try:
            row = (req.row or "").strip("/")
            c = self.service.row_collection(src, row)
            group = c.record(row)
            if group is None or group.kind != "group":
                return api.refused("no such group in this collection")
            members = self._members(c, group)
            if a not in members or b not in members or a == b:
                return api.refused("pick two different rollouts that have an artifact")
            ra, rb = self.service.rollout(c, src, members[a].path), self.service.rollout(c, src, members[b].path)
            got = self.with_fates(c, src, group_compare(ra, a, rb, b, req.turn), (members[a], ra), (members[b], rb))
        except ArtifactError as e:
            return api.refused(e.first("could not read the rollouts"))
        except ValueError as e:
            return api.refused(str(e))
        return api.answer(api.CompareAnswer(got))

    def _root_group(self, src: str) -> Record | None:
        """The group a source is, when the source itself is one group (its map opens instead of the index)."""
        if self.service.is_run(src):  # a run's rows are its groups, never the run itself: nothing to read
            return None
        try:
            rec = self.service.collection(src).record("")
        except Exception:
            return None
        return rec if rec is not None and rec.kind == "group" else None

    # -- events ------------------------------------------------------------------------------------

    def _has_root_group(self, src: str) -> bool:
        return self._root_group(src) is not None

    def show(self, r: Route) -> Linked:
        """What a route shows (viewer/router.py): the source box names the route's source."""
        if r.kind == "row":
            value, loaded, page = self.open_row(r.src, r.row or "", r.params, r.initial, r.rollout)
            return Linked(_with_note(value, r.problems), r.src, loaded, page)
        if r.kind == "index":
            return Linked(CLEARED, r.src, "", self.index_value(r.src, r.params))
        if r.kind == "default":  # the token view and the source box keep the default built into the page
            return Linked(None, None, r.src, self.none_value())
        if r.kind == "refused":
            return Linked(self.service.values.error_value("this link", r.problems), None, "", self.none_value())
        value, loaded = self.service.values.source_value(r.src, r.initial)
        return Linked(_with_note(value, r.problems), r.src, loaded, self.none_value())

    def open_source(self, source: str) -> Shown:
        """What the Load button and the source picker open (the source box keeps what the visitor typed)."""
        if isinstance(source, str) and source.startswith(LIVE_SOURCE):  # the watched capture's name: nothing to load
            return Shown(None, None, None)
        value, _, loaded, page = self.show(route_source(source, kind_of=self.service.kind,
                                                        root_group=self._has_root_group))
        return Shown(value, loaded, page)

    def page_link(self, params: dict[str, str]) -> Linked:
        """What a page link opens (viewer/router.py reads it)."""
        params = self.link_params(params)
        return self.show(route_link(params, default_source=self.service.default_source, public=self.service.public,
                                    examples=tuple(bundled_examples() + bundled_groups() + bundled_runs()),
                                    kind_of=self.service.kind, root_group=self._has_root_group))

    def link_params(self, params: dict) -> dict:
        """A page link's parameters with a run's `version=&group=` resolved to its `row=` (the group's folder), so
        the link opens that group's map, or with `rollout=` that rollout."""
        if "group" not in params or "row" in params:
            return params
        t = self.service.run_table(str(params.get("src") or self.service.default_source or ""))
        if t is None or run_link_problem(t, params) is not None:  # a bad link opens no group (the run page says why)
            return params
        path, _problem = run_stats.resolve_link(t, params)
        return {**params, "row": path} if path is not None else params

