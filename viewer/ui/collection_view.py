"""The collection index in the View tab: decide collection or single artifact, show the index, open rows.

rollout_trace/artifact/kinds.py decides what a source is: a single artifact opens in the
token view as before; a folder, zip or Hub dataset holding more than one artifact, or a group, opens
the index, a `gr.HTML` component of its own (viewer/assets/collection_index.js + .css) showing one
`IndexPage` (viewer/index/contract.py) built on the server from rollout_trace/artifact/filters.py. The URL carries
the state: `?src=COLLECTION&<filters>&page=N` is the index, adding `&row=PATH` opens that row, so a
deep link restores either and the browser's Back returns from a row to the filtered index.

Collections are shared across requests and visitors (viewer/index/cache.py); opened rows go
to the same rollout store as single artifacts. On a public Space visitors may open Hub datasets
only; the owner's configured source may be a server path, because the owner chose it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import gradio as gr
import msgspec

import crash_log
from rollout_trace.artifact import ArtifactError, Problem, load_artifact
from rollout_trace.artifact.collection import Collection, Record
from rollout_trace.artifact.filters import apply, from_query, to_query
from rollout_trace.artifact.kinds import Kind, classify
from rollout_trace.artifact.run_format import MANIFEST
from rollout_trace.artifact.run_table import RunTable, RunTableError, run_table
from rollout_trace.artifact.sources import EXAMPLES_DIR, bundled_examples, bundled_groups, bundled_runs, identify
from viewer import assets
from viewer.contract import Failed, Initial, Opened, RunContext, encode
from viewer.fate import fate_of, run_context
from viewer.group import RunPlace, group_row
from viewer.group import compare as group_compare
from viewer.group import group_map as build_group_map
from viewer.index import render as render_index
from viewer.index.contract import IndexPage
from viewer.index.facts import RowFacts
from viewer.index.page import build_page
from viewer.index.run_index import build_run_page
from viewer.render import group_map as render_group
from viewer.render import panels
from viewer.rollout import Rollout
from viewer.router import Route, rollout_param, route_link, route_source
from viewer.untrusted import whole_or

from ..index.cache import CollectionCache, collection_identity
from .live import LIVE_SOURCE

if TYPE_CHECKING:
    from .view_tab import ViewTab

MOUNT_JS = "CollectionIndex.mountInApp(element, props, server, watch, trigger);"
MAX_SRC_CHARS = 1000  # as viewer/ui/view_tab.py: longer is refused before any lookup
MAX_KINDS = 256  # sources whose kind is remembered (by identity, for the collection cache's age)
MAX_QUERY_CHARS = 4000
# The token view's value while the index shows: an "error" that is an empty hidden block, so the
# token view (which mounts whatever it is given) clears itself without a change to its JS.
CLEARED = encode(Failed("<div class='tv-cleared' hidden></div>")).decode()
_serial = itertools.count(1)


def _params(query: str) -> dict[str, str]:
    return dict(parse_qsl(str(query or "")[:MAX_QUERY_CHARS], keep_blank_values=False))


def _shown(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "…"


def _with_note(value: object, problems: list[str]) -> object:
    """The token view's value saying which link values it replaced (a visible note, not a silent default)."""
    if not problems or not isinstance(value, str) or '"outline"' not in value[:400]:
        return value
    try:
        opened = msgspec.json.decode(value, type=Opened)
    except msgspec.ValidationError:  # a message or an empty view: nothing to annotate
        return value
    note = "This link had values the view cannot use: " + "; ".join(problems[:6]) + "."
    return encode(msgspec.structs.replace(opened, note=note)).decode()


class CollectionView:
    """Owns the index component, the shared collections, and the events that open rows and come back."""

    def __init__(self, view: ViewTab, cache: CollectionCache | None = None):
        self.view = view
        self.cache = cache or CollectionCache()
        self.facts = RowFacts()  # tokens and drift of rows whose summary.json lacks them, by row identity
        self._kinds: dict[str, tuple[float, Kind]] = {}  # identity -> (when classified, kind)
        self._kinds_lock = threading.Lock()  # Gradio runs handlers on several threads at once

    # -- what a source is ------------------------------------------------------------------------------

    def allow_local(self, source: str) -> bool:
        """Server paths: never for visitors of a public Space, except the source the owner configured."""
        return not self.view.public or source.strip() == (self.view.default_source or "").strip()

    def is_collection(self, source: str) -> bool:
        """True when `source` opens the index (a collection, a group or a run)."""
        return self.kind(source) != "rollout"

    def kind(self, source: str) -> Kind:
        """What `source` is (rollout_trace/artifact/kinds.py decides; remembered by identity for the collection
        cache's age). A source that cannot be opened is a rollout here, whose reader gives the message."""
        text = (source or "").strip()
        if not text or len(text) > MAX_SRC_CHARS:
            return "rollout"
        allow = self.allow_local(text)
        key = collection_identity(text, allow)
        with self._kinds_lock:
            hit = self._kinds.get(key)
        if hit is None or time.monotonic() - hit[0] > self.cache.max_age_s:  # a Hub source costs requests
            try:  # outside the lock: classifying a Hub source waits on the network
                kind = classify(text, allow_local=allow)
            except Exception:  # noqa: BLE001 - any failure: the single reader names it to the visitor
                kind = "rollout"
            with self._kinds_lock:
                hit = self._kinds[key] = (time.monotonic(), kind)
                while len(self._kinds) > MAX_KINDS:  # the oldest go first (dicts keep insertion order)
                    del self._kinds[next(iter(self._kinds))]
        return hit[1]

    # -- values for the index ------------------------------------------------------------------------

    def none_value(self) -> str:
        return encode(IndexPage(serial=next(_serial), mode="none")).decode()

    def error_value(self, src: str, problems: list) -> str:
        return encode(IndexPage(serial=next(_serial), mode="index", src=src,
                                error_html=panels.problems(_shown(src), problems))).decode()

    def _collection(self, src: str) -> Collection:
        """The shared collection `src` names; raises ArtifactError (an empty name is not "." on the server)."""
        if not src.strip() or len(src) > MAX_SRC_CHARS:
            raise ArtifactError([Problem(_shown(src) or "(empty)", "name a collection: a folder, a .zip or a Hub "
                                                                    "dataset id")])
        return self.cache.get(src, self.allow_local(src))

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

    def run_table(self, src: str) -> RunTable | None:
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

    def index_page(self, src: str, params: Mapping[str, object]) -> IndexPage:
        t = self.run_table(src)
        if t is not None:  # a local run: its index from its columns, only the page's rows as records
            return build_run_page(t, src, params, next(_serial))
        try:
            c = self._collection(src)
        except ArtifactError as e:
            return IndexPage(serial=next(_serial), mode="index", src=src,
                             error_html=panels.problems(_shown(src), e.problems))
        except Exception as e:  # a message in the page, never a traceback
            crash_log.unexpected(f"could not index {_shown(src)}")
            return IndexPage(serial=next(_serial), mode="index", src=src,
                             error_html=panels.problems(_shown(src), [f"could not index it: {type(e).__name__}"]))
        return build_page(c, src, params, next(_serial),
                          fill=lambda rows: self.facts.fill(c, rows, lambda path: self._identity(c, src, path)))

    def index_value(self, src: str, params: Mapping[str, object]) -> str:
        return encode(self.index_page(src, params)).decode()

    def index(self, req) -> dict:
        """Server function: the page for {src, query} (sorting, filtering, paging skip the queue)."""
        if not isinstance(req, dict):
            return msgspec.to_builtins(IndexPage(serial=next(_serial), mode="index",
                                                 error_html=panels.problems("index", ["a request is {src, query}"])))
        src = str(req.get("src") or "").strip()[:MAX_SRC_CHARS]
        return msgspec.to_builtins(self.index_page(src, _params(str(req.get("query") or ""))))

    # -- opening rows --------------------------------------------------------------------------------

    def _load_row(self, src: str, path: str) -> Rollout:
        """Read one row fully (the collection is looked up again, so a reload after eviction works)."""
        c = self._collection(src)
        folder = c.folder(path)
        try:
            # a run's rollouts carry no tokenizer: the run's renders them (Collection.open)
            r = Rollout.load(c.open(path) if c.run is not None else
                             load_artifact(folder, source=f"{src}:{path}" if path else src))
            self.facts.learn(self._identity(c, src, path), r.artifact, r.training.trained_turns)  # for the index
            return r
        finally:
            c.release(folder)  # the rollout is in memory now: remove what opening it unpacked

    def _identity(self, c: Collection, src: str, path: str) -> str:
        """The rollout store's identity for one artifact row (raises ArtifactError for a bad folder)."""
        own = c.source_of(path) if c.kind == "folder" else None
        if own:  # the artifact's own identity: shared with opening it directly, and new when its files change
            return identify(own, allow_local=True)
        if c.kind == "hub":
            return f"hub-row|{c.source_of(path)}"  # pinned to a commit: never changes
        return f"{collection_identity(src, self.allow_local(src))}|row|{path}"

    def _open_artifact(self, c: Collection, src: str, path: str, initial: Initial,
                       advantage: float | None = None, run: RunContext | None = None) -> str:
        """The token view's value for one artifact row, through the shared rollout store."""
        label = _shown(f"{src}:{path}" if path else src)
        try:
            identity = self._identity(c, src, path)
        except ArtifactError as e:
            return self.view.error_value(label, e.problems)
        return self.view.open_value(label, identity, lambda: self._load_row(src, path), src, initial, advantage=advantage,
                                    run=run)

    def _rollout(self, c: Collection, src: str, path: str) -> Rollout:
        """One rollout of a group, loaded once through the shared store (the map and the token view share it)."""
        _, r = self.view.store.open(self._identity(c, src, path), lambda: self._load_row(src, path))
        return r

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
        return run_context(src, m, group.k or 0, row.trained_steps, row.fates)

    def group_page(self, c: Collection, src: str, group: Record, params: Mapping[str, object]) -> IndexPage:
        """The group map of `group`: each rollout read (for its turns), rows sorted by advantage."""
        members = self._members(c, group)
        run_rows = self._run_rows(c, group)
        rows = []
        for i, status in enumerate(group.statuses):
            m = members.get(i)
            rollout, problem = None, None
            if m is not None and m.valid:
                try:
                    rollout = self._rollout(c, src, m.path)
                except ArtifactError as e:
                    problem = str(e.problems[0]) if e.problems else "could not be read"
                except Exception as e:  # one unreadable sibling never hides the others
                    problem = f"could not be read: {type(e).__name__}"
            elif m is not None:
                problem = m.problem or "invalid"
            reward = group.rewards[i] if i < len(group.rewards) else None
            adv: float | None = group.advantages[i] if i < len(group.advantages) else 0.0
            fate = None
            rr = run_rows.get(i)
            if rr is not None:  # a recorded run: TRL's own status and advantage (none without a row), the fate
                status, adv, fate = rr.status, rr.advantage, fate_of(rr.trained_steps, rr.dropped, rr.fates)
            rows.append(group_row(i, status, reward, adv, m, rollout, problem, fate))
        place = None
        if run_rows and group.segment is not None:
            never: dict[str, int] = {}
            for rr in run_rows.values():
                if rr.dropped is not None:
                    never[rr.dropped] = never.get(rr.dropped, 0) + 1
            place = RunPlace(run=src, segment=group.segment, version=group.policy_version or 0,
                             group_id=group.group_id or 0,
                             steps=sorted({s for rr in run_rows.values() for s in rr.trained_steps}), never=never)
        filters, _ = from_query({k: v for k, v in params.items() if isinstance(v, (str, list))})
        return IndexPage(serial=next(_serial), mode="group", src=src, query=to_query(filters), sort=filters.sort,
                         row=group.path, total=len(c.records), kind=c.kind,
                         group_html=render_group.group_map(build_group_map(group, rows, place)))

    def open_group(self, c: Collection, src: str, group: Record, params: Mapping[str, object],
                   initial: Initial, rollout: int | None) -> tuple[str, str, str]:
        """(token view, loaded, index) for a group: its map, or with `rollout` that rollout at `initial`'s turn."""
        if rollout is None:
            return CLEARED, "", encode(self.group_page(c, src, group, params)).decode()
        m = self._members(c, group).get(rollout)
        if m is None:
            page = self.group_page(c, src, group, params)
            return CLEARED, "", encode(msgspec.structs.replace(page, error_html=panels.problems(
                _shown(f"{src}:{group.path}"), [Problem(group.path or "(root)", "this group has no readable rollout",
                                                        found=str(rollout))]))).decode()
        adv = group.advantages[rollout] if rollout < len(group.advantages) else None
        run = self.run_context(c, src, group, m)
        if run is not None:
            adv = run.advantage
        value = self._open_artifact(c, src, m.path, initial, advantage=adv, run=run)
        filters, _ = from_query({k: v for k, v in params.items() if isinstance(v, (str, list))})
        page = IndexPage(serial=next(_serial), mode="row", src=src, query=to_query(filters), sort=filters.sort,
                         row=group.path, rollout=rollout, total=len(c.records), matched=len(c.records), kind=c.kind,
                         row_html=render_group.opened_run_rollout(run) if run is not None else
                         render_group.opened_rollout(group.path or src, rollout, adv, group.k or 0))
        return value, c.source_of(m.path) or f"{src}:{m.path}", encode(page).decode()

    def open_row(self, src: str, path: str, params: Mapping[str, object],
                 initial: Initial, rollout: int | None = None) -> tuple[str, str, str]:
        """(token view value, loaded, index value) for one row of a collection, the filter state kept."""
        path = path.strip().strip("/")
        try:
            c = self._collection(src)
        except ArtifactError as e:
            return CLEARED, "", self.error_value(src, e.problems)
        rec = c.record(path)
        if rec is None:
            return CLEARED, "", self.error_value(src, [Problem(path or "(root)", "no such row in this collection")])
        if rec.kind == "group":
            return self.open_group(c, src, rec, params, initial, rollout)
        if rec.kind == "run":  # one row for a whole run: it opens as its own source, on the run page
            goto = c.source_of(path) if c.kind == "hub" or not self.view.public else None
            if goto is None:  # a public visitor never gets a server path; a zip's run has no source of its own
                return CLEARED, "", self.error_value(src, [Problem(path, "this run cannot be opened from the "
                                                                        "index here: open the run on its own")])
            return CLEARED, "", encode(IndexPage(serial=next(_serial), mode="index", src=src, goto=goto)).decode()
        value = self._open_artifact(c, src, path, initial)
        filters, _ = from_query({k: v for k, v in params.items() if isinstance(v, (str, list))})
        query = to_query(filters)
        # counted as the index counts them: a filter on a fact summary.json may lack (drift, trained turns)
        # sees the facts the index filled in (viewer/index/facts.py), so both say the same number
        by_facts = filters.drift is not None or filters.trained_min is not None or filters.trained_max is not None
        rows = self.facts.fill(c, c.records, lambda p: self._identity(c, src, p)) if by_facts else c.records
        matched = len(apply(rows, filters))
        page = IndexPage(serial=next(_serial), mode="row", src=src, query=query, sort=filters.sort, row=path,
                         total=len(c.records), matched=matched, kind=c.kind,
                         row_html=render_index.opened_row(rec, path, matched, query))
        return value, c.source_of(path) or f"{src}:{path}", encode(page).decode()

    def compare(self, req) -> dict:
        """Server function: {src, row (the group), a, b (rollout indices), turn} -> {html} or {error}."""
        if not isinstance(req, dict):
            return {"error": "a request is {src, row, a, b, turn}"}
        src = str(req.get("src") or "").strip()[:MAX_SRC_CHARS]
        try:
            c = self._collection(src)
            group = c.record(str(req.get("row") or "").strip("/")[:MAX_SRC_CHARS])
            if group is None or group.kind != "group":
                return {"error": "no such group in this collection"}
            members = self._members(c, group)
            a, b, turn = (whole_or(req.get(k), 0) for k in ("a", "b", "turn"))
            if a not in members or b not in members or a == b:
                return {"error": "pick two different rollouts that have an artifact"}
            got = group_compare(self._rollout(c, src, members[a].path), a, self._rollout(c, src, members[b].path), b, turn)
            runs = self._run_rows(c, group)
            if runs:  # a run's siblings: each side says whether the trainer took it
                def said(i: int) -> str:
                    r = runs.get(i)
                    return f"rollout {i}" + (f" · {fate_of(r.trained_steps, r.dropped, r.fates).label}" if r else "")
                got = msgspec.structs.replace(got, a=msgspec.structs.replace(got.a, label=said(a)),
                                              b=msgspec.structs.replace(got.b, label=said(b)))
        except ArtifactError as e:
            return {"error": str(e.problems[0]) if e.problems else "could not read the rollouts"}
        except ValueError as e:
            return {"error": str(e)}
        return {"html": render_group.compare(got)}

    def _root_group(self, src: str) -> Record | None:
        """The group a source is, when the source itself is one group (its map opens instead of the index)."""
        try:
            rec = self._collection(src).record("")
        except Exception:
            return None
        return rec if rec is not None and rec.kind == "group" else None

    # -- events ------------------------------------------------------------------------------------

    def _has_root_group(self, src: str) -> bool:
        return self._root_group(src) is not None

    def show(self, r: Route) -> tuple[object, object, str, str]:
        """(token view, source box, loaded, index) for a route (viewer/router.py)."""
        if r.kind == "row":
            value, loaded, index = self.open_row(r.src, r.row or "", r.params, r.initial, r.rollout)
            return _with_note(value, r.problems), r.src, loaded, index
        if r.kind == "index":
            return CLEARED, r.src, "", self.index_value(r.src, r.params)
        if r.kind == "default":
            return gr.update(), gr.update(), r.src, self.none_value()
        if r.kind == "refused":
            return self.view.error_value("this link", r.problems), gr.update(), "", self.none_value()
        value, loaded = self.view.source_value(r.src, r.initial)
        return _with_note(value, r.problems), r.src, loaded, self.none_value()

    def open_source(self, source: str) -> tuple[object, object, object]:
        """Load button and source picker: (token view value, loaded, index value)."""
        if isinstance(source, str) and source.startswith(LIVE_SOURCE):  # the watched capture's name: nothing to load
            return gr.update(), gr.update(), gr.update()
        value, _, loaded, index = self.show(route_source(source, kind_of=self.kind, root_group=self._has_root_group))
        return value, loaded, index

    def on_page_load(self, request: gr.Request):
        """(token view, source box, loaded, index) for the page link (viewer/router.py reads it)."""
        params = dict(request.query_params) if request is not None else {}
        params = self.view.runs.link_params(params)  # run page hook: ?version=&group= name a group of a run
        return self.show(route_link(params, default_source=self.view.default_source, public=self.view.public,
                                    examples=tuple(bundled_examples() + bundled_groups() + bundled_runs()),
                                    kind_of=self.kind, root_group=self._has_root_group))

    def on_upload(self, files) -> tuple[str, str, str, object]:
        """(token view, loaded, index, source box): the source box names the upload, as the URL does."""
        value, loaded, src = self.view.on_upload(files)
        return value, loaded, self.none_value(), src or gr.update()

    def on_action(self, evt: gr.EventData):
        """The index's events: {action: "open", src, row, query} and {action: "back", src, query}."""
        data = getattr(evt, "_data", None) or {}
        if not isinstance(data, dict):
            data = {}
        src = str(data.get("src") or "").strip()[:MAX_SRC_CHARS]
        params = _params(str(data.get("query") or ""))
        if data.get("action") == "open":
            rollout = rollout_param(data.get("rollout"))
            initial = Initial(turn=whole_or(data.get("turn"), 0)) if rollout is not None else Initial()
            return self.open_row(src, str(data.get("row") or "")[:MAX_SRC_CHARS], params, initial, rollout)
        return CLEARED, "", self.index_value(src, params)

    # -- layout ------------------------------------------------------------------------------------

    def render(self) -> gr.HTML:
        """Create the index component (call where it should sit: above the token view)."""

        def index(req: dict) -> dict:  # a plain function: the page calls it by this name (server.index)
            return self.index(req)

        def compare(req: dict) -> dict:  # server.compare: two siblings of a group map, one turn
            return self.compare(req)

        self.component = gr.HTML(value="", html_template="<div class='ci-mount'></div>",
                                 css_template=assets.read("collection_index.css"), apply_default_css=False,
                                 js_on_load=assets.read("collection_index.js") + MOUNT_JS,
                                 server_functions=[index, compare], elem_id="collection-index", padding=False)
        return self.component

    def wire(self, outputs: list) -> None:
        """Wire the index's own events; `outputs` are [token view, loaded, index]."""
        self.component.click(self.on_action, None, outputs)
