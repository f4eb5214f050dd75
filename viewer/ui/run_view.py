"""The run page in the View tab: a recorded TRL run's chart, health notes, versions → groups, and one task
followed across versions; a run still being recorded is followed without a reload.

Opening a run (the source box, `?src=RUN`) shows, above the run's collection index (its filters work on the
run's rows unchanged, viewer/ui/collection_view.py), a column of its own: a head (`RunHead`) and a body
(`RunBody`: four charts of the per-version numbers, the versions list and, when a task is followed, its pass
rate over versions). Both are `gr.HTML` components mounted by viewer/assets/run_page.js, which writes every
text from a record with textContent and draws the charts on canvas in the page (viewer/assets/run_charts.js,
reduced to the pixels on screen), so the server sends each version's numbers once. The per-version numbers
are computed once per run state (`RunView.stats`), however many visitors and polls ask. Handlers answer a
dict keyed by component: a component a handler leaves out keeps its value. A group opens in the
existing group map and a rollout in the existing token view, through the collection view's own `open_row`;
`?src=RUN&version=V&group=G&rollout=R&turn=T` deep-links there (`link_params`), Back returns.

Following: while a segment of the run has not ended, a `gr.Timer` asks every few seconds whether the run's
files grew (one listing of four folders, `rollout_trace.artifact.run.follow`); only then are the grown tails
of its line files read, the shared collection replaced, and the page's parts sent again. A Hub run is asked
for its latest commit instead, at most once per HUB_CHECK_S per run however many visitors follow it, and
read again at a new commit.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import gradio as gr
import msgspec

from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.collection import Collection, run_collection
from rollout_trace.artifact.run import Run, follow
from rollout_trace.artifact.run_table import RunTable
from rollout_trace.artifact.sources import commit_of
from viewer import assets, run_page
from viewer.contract import Initial, encode
from viewer.group import compare as group_compare
from viewer.index import open_index
from viewer.render import group_map as render_group
from viewer.router import rollout_param, run_link_problem

if TYPE_CHECKING:
    from .view_tab import ViewTab

MOUNT_JS = "RunPage.mountInApp(element, props, server, watch, trigger, '{part}');"
POLL_S = 2.0
HUB_CHECK_S = 10.0  # a Hub run is asked for its latest commit at most this often, however many visitors follow it
MAX_PUBLIC_VERSIONS = 5000  # on a public Space a page holds at most this many versions (the last ones), said so
MAX_STATS = 16  # run states whose per-version numbers are kept (one per run a visitor has open, and a few more)
_serial = itertools.count(1)


def _params(request: gr.Request | None) -> dict[str, str]:
    return dict(request.query_params) if request is not None else {}


class RunView:
    """Owns the run page's components, and follows the runs visitors have open."""

    def __init__(self, view: ViewTab):
        self.view = view
        self._follow_locks: dict[str, threading.Lock] = {}  # one follower per run, shared by its visitors
        self._locks_lock = threading.Lock()
        self._hub_checked: dict[str, float] = {}  # src -> when its latest commit was last asked for
        self.clock = time.monotonic
        self._stats_lock = threading.Lock()
        # the per-version numbers last seen of each run (they are kept per run state by its RunTable)
        self._stats: OrderedDict[int, list[run_page.VersionStats]] = OrderedDict()
        self.stats_computed = 0  # how many run states' numbers were computed (tests read it)

    # -- what a source is ------------------------------------------------------------------------------

    @property
    def collections(self):
        return self.view.collections

    def is_run(self, source: str) -> bool:
        """A recorded run (rollout_trace/artifact/kinds.py decides, through the collection view)."""
        return self.collections.kind(source) == "run"

    def table(self, src: str) -> RunTable | None:
        """The run `src` names as columns, shared by every visitor and poll: a local run through `run_table`
        (cached per run state, its grown tails read on each call), a zip or Hub run through the shared
        collection's reader. None when `src` is not a run."""
        if not self.is_run(src):
            return None
        if self.collections.local_run(src) is not None:
            return self.collections.run_table(src)
        c = self._collection(src)
        return run_page.table_of(c.run) if c is not None else None

    def _collection(self, src: str) -> Collection | None:
        if not self.is_run(src):
            return None
        try:
            c = self.collections.cache.get(src.strip(), self.collections.allow_local(src))
        except ArtifactError:
            return None
        return c if c.run is not None else None

    def stats(self, t: RunTable) -> list[run_page.VersionStats]:
        """The run's per-version numbers, once per run state (RunTable.memo: a run that grew is a new state)."""
        stats = run_page.version_stats(t)
        with self._stats_lock:
            if self._stats.get(id(t)) is not stats:
                self.stats_computed += 1
                self._stats[id(t)] = stats
            self._stats.move_to_end(id(t))
            while len(self._stats) > MAX_STATS:
                self._stats.popitem(last=False)
        return stats

    # -- values ----------------------------------------------------------------------------------------

    def head(self, src: str, t: RunTable, stats: list[run_page.VersionStats] | None = None) -> run_page.RunHead:
        stats = self.stats(t) if stats is None else stats
        bound = [f"a public Space shows the last {MAX_PUBLIC_VERSIONS} of this run's {len(stats)} versions"] \
            if self._bounded(stats) else []
        files, m = t.run_files, t.run_files.manifest
        return run_page.RunHead(
            serial=next(_serial), src=src, model=m.model if m else "?", trl=m.versions.get("trl", "?") if m else "?",
            started_at=m.started_at if m else "", live=files.live, versions=len(stats),
            groups=sum(s.groups for s in stats), rollouts=len(t),
            notes=run_page.recorder_notes(t) + bound + run_page.health_notes(stats, files.live),
            problems=[str(p) for p in t.problems()[:20]] + files.notes[:5])

    def _bounded(self, stats: list[run_page.VersionStats]) -> bool:
        return bool(getattr(self.view, "public", False)) and len(stats) > MAX_PUBLIC_VERSIONS

    def body(self, src: str, run: RunTable, version: int | None, task: str | None,
             refresh: bool = False, stats: list[run_page.VersionStats] | None = None) -> run_page.RunBody:
        stats = self.stats(run) if stats is None else stats
        if self._bounded(stats):
            stats = stats[-MAX_PUBLIC_VERSIONS:]
        if version not in {s.version for s in stats}:
            version = None
        track = run_page.task_track(run, task) if task else None
        return run_page.RunBody(serial=next(_serial), src=src, versions=stats, open_version=version,
                                groups=run_page.group_rows(run, version) if version is not None else [],
                                tasks=run_page.task_choices(run), task=track, refresh=refresh)

    def _hidden(self) -> dict:
        return {self.column: gr.update(visible=False), self.timer: gr.Timer(active=False), self.src_state: ("", None)}

    def show(self, src: str, params: Mapping[str, object]) -> dict:
        """Every output of the run page for `src`, by component (hidden when it is not a run)."""
        src = (src or "").strip()
        run = self.table(src)
        if run is None:
            return self._hidden()
        stats = self.stats(run)
        link = run_page.run_request(params)
        body = self.body(src, run, link.version, link.task, stats=stats)
        head = self.head(src, run, stats)
        if (bad_link := run_link_problem(run, params)) is not None:  # said first, where the visitor looks
            head = msgspec.structs.replace(head, notes=[bad_link, *head.notes])
        return {self.column: gr.update(visible=True), self.head_html: encode(head).decode(),
                self.body_html: encode(body).decode(), self.timer: gr.Timer(active=run.run_files.live),
                self.src_state: (src, run.state)}

    # -- events ----------------------------------------------------------------------------------------

    def hide(self) -> dict:
        return self._hidden()

    def on_source(self, source: str) -> dict:
        return self.show(source if isinstance(source, str) else "", {})

    def on_page_load(self, request: gr.Request) -> dict:
        q = _params(request)
        return self.show(str(q.get("src") or self.view.default_source or ""), q)

    def link_params(self, params: dict) -> dict:
        """A page link's parameters with `version=&group=` resolved to the run's `row=` (the group's folder), so
        the collection view opens that group's map, or with `rollout=` that rollout (the hook in
        CollectionView.on_page_load)."""
        if "group" not in params or "row" in params:
            return params
        t = self.table(str(params.get("src") or self.view.default_source or ""))
        if t is None or run_link_problem(t, params) is not None:  # a bad link opens no group (show() says why)
            return params
        path, _problem = run_page.resolve_link(t, params)
        return {**params, "row": path} if path is not None else params

    def on_action(self, evt: gr.EventData) -> tuple:
        """The body's "open" events (a group, or a rollout of a task): (token view, loaded, index)."""
        data = getattr(evt, "_data", None)
        req = run_page.run_request(data)
        if req.action != "open":
            return gr.skip(), gr.skip(), gr.skip()
        rollout = rollout_param(data.get("rollout")) if isinstance(data, dict) else None
        return self.collections.open_row(req.src, req.row, {}, Initial(turn=req.turn), rollout)

    def on_task(self, evt: gr.EventData) -> dict:
        """The body's "task" events: the body with that task followed (its pass-rate chart is drawn from it)."""
        req = run_page.run_request(getattr(evt, "_data", None))
        if req.action != "task":
            return {}
        t = self.table(req.src)
        if t is None:
            return {}
        return {self.body_html: encode(self.body(req.src, t, req.version, req.task)).decode()}

    def poll(self, seen: Any) -> dict:
        """The timer: the run's parts again when its files grew since this visitor's last value, else only the
        timer (on while the run is live); reading only the grown tails of its line files."""
        src, stamp = seen if isinstance(seen, tuple) and len(seen) == 2 else ("", None)
        if not src or not self.is_run(src):
            return {self.timer: gr.Timer(active=False)}
        with self._locks_lock:
            lock = self._follow_locks.setdefault(src, threading.Lock())
            while len(self._follow_locks) > 4 * MAX_STATS:  # forget the locks of runs nobody follows
                old = next(iter(self._follow_locks))
                if old == src:
                    break
                self._follow_locks.pop(old)
        with lock:  # one follower per run: its visitors share what it read; other runs' polls do not wait
            run = self._follow(src)
        if run is None:
            return {self.timer: gr.Timer(active=False)}
        live = run.run_files.live
        if run.state == stamp:
            return {self.timer: gr.Timer(active=live)}
        stats = self.stats(run)
        return {self.head_html: encode(self.head(src, run, stats)).decode(),
                self.body_html: encode(self.body(src, run, None, None, refresh=True, stats=stats)).decode(),
                self.timer: gr.Timer(active=live), self.src_state: (src, run.state)}

    def _follow(self, src: str) -> RunTable | None:
        """The run with what its recorder wrote since: a local run's grown tails (run_table), and the shared
        collection's rows too when a visitor opened its index (its groups open from them); a Hub run at its
        latest commit."""
        allow = self.collections.allow_local(src)
        local = self.collections.local_run(src)
        current = self.collections.cache.peek(src, allow) if local is not None else None
        if local is None:
            try:
                current = self.collections.cache.get(src, allow)
            except ArtifactError:
                return None
        if current is not None and current.run is not None:
            newer = None
            if current.run.kind == "hub":
                newer = self._hub_newer(src, current.run, allow)
            else:
                grown = follow(current.run)
                newer = run_collection(grown) if grown is not None else None
            if newer is not None and self.collections.cache.replace(src, allow, current, newer):
                current = newer
        if local is not None:
            return self.table(src)
        return run_page.table_of(current.run) if current is not None and current.run is not None else None

    def _hub_newer(self, src: str, run: Run, allow: bool) -> Collection | None:
        """A Hub run at its latest commit when that is not the one it was read at, else None. One request (the
        revision's commit) per HUB_CHECK_S per run, under the run's lock, so ten followers cost what one does;
        a store pinned to a commit never moves, and a run that ended is not polled (its timer stops)."""
        now = self.clock()
        if now - self._hub_checked.get(src, -HUB_CHECK_S) < HUB_CHECK_S:
            return None
        self._hub_checked[src] = now
        store = run.store.store if run.store is not None else None
        ref, seen = getattr(store, "ref", None), getattr(store, "commit", None)
        if ref is None or seen is None:
            return None
        try:
            latest = commit_of(ref, getattr(store, "token", None))
            if latest == seen:
                return None
            return open_index(src, allow_local=allow)  # read whole at the new commit (a Hub file cannot be seeked)
        except ArtifactError:
            return None

    # -- server functions (skip the queue) -------------------------------------------------------------

    def version(self, req: Any) -> dict:
        """{src, version} -> {groups: [RunGroupRow]} of that version, or {error}."""
        if not isinstance(req, dict):
            return {"error": "a request is {src, version}"}
        asked = run_page.run_request(req)
        t = self.table(asked.src)
        if t is None or asked.version is None:
            return {"error": "no such run or version"}
        return {"groups": msgspec.to_builtins(run_page.group_rows(t, asked.version))}

    def compare(self, req: Any) -> dict:
        """{src, a, b (rollout paths, from different versions or groups), turn} -> {html} of the existing
        compare view (viewer/render/group_map.py, escaped there), or {error}."""
        if not isinstance(req, dict):
            return {"error": "a request is {src, a, b, turn}"}
        asked = run_page.run_request(req)
        src, a, b = asked.src, asked.a, asked.b
        c = self._collection(src)
        if c is None:
            return {"error": "no such run"}
        ra, rb = c.record(a), c.record(b)
        if ra is None or rb is None or ra.kind != "artifact" or rb.kind != "artifact" or a == b:
            return {"error": "pick two different rollouts that have an artifact"}
        try:
            got = group_compare(self.collections._rollout(c, src, a), ra.rollout or 0,
                                self.collections._rollout(c, src, b), rb.rollout or 0,
                                asked.turn)
        except ArtifactError as e:
            return {"error": str(e.problems[0]) if e.problems else "could not read the rollouts"}
        except ValueError as e:
            return {"error": str(e)}
        # each side headed by where it sits in the run: the two may come from different versions
        label = lambda r: f"v{r.policy_version} › group {r.group_id} › rollout {r.rollout}"  # noqa: E731
        got = msgspec.structs.replace(got, a=msgspec.structs.replace(got.a, label=label(ra)),
                                      b=msgspec.structs.replace(got.b, label=label(rb)))
        return {"html": render_group.compare(got), "a": label(ra), "b": label(rb)}

    # -- layout ----------------------------------------------------------------------------------------

    def render(self) -> None:
        """Create the run page's components (call where it should sit: above the collection index)."""

        def run_version(req: dict) -> dict:  # server.run_version: a version's groups
            return self.version(req)

        def run_compare(req: dict) -> dict:  # server.run_compare: two rollouts of one task, any versions
            return self.compare(req)

        css = assets.read("run_page.css")
        js = assets.read("run_page.js")
        with gr.Column(visible=False, elem_id="run-page", elem_classes="rp-column") as self.column:
            self.head_html = gr.HTML(value="", html_template="<div class='rp-mount'></div>", css_template=css,
                                     apply_default_css=False, js_on_load=js + MOUNT_JS.format(part="head"),
                                     elem_id="run-head", padding=False)
            # The charts are drawn in the body, on canvas, from the versions it holds (viewer/assets/run_charts.js).
            self.body_html = gr.HTML(value="", html_template="<div class='rp-mount'></div>", css_template=css +
                                     assets.read("vendor/uPlot.min.css") + assets.read("collection_index.css"),
                                     apply_default_css=False,
                                     js_on_load=assets.read("vendor/uPlot.iife.min.js") + "\n" +
                                     assets.read("run_charts.js") + js + MOUNT_JS.format(part="body"),
                                     server_functions=[run_version, run_compare], elem_id="run-body", padding=False)
        self.timer = gr.Timer(POLL_S, active=False)
        self.src_state = gr.State(("", None))

    def outputs(self) -> list:
        return [self.column, self.head_html, self.body_html, self.timer, self.src_state]

    def wire(self, triggers: list, source, opened: list) -> None:
        """`triggers`: the source box's events that open a source; `opened`: [token view, loaded, index]."""
        for t in triggers:
            t(self.on_source, source, self.outputs())
        self.body_html.click(self.on_action, None, opened)
        self.body_html.click(self.on_task, None, [self.body_html])
        self.timer.tick(self.poll, self.src_state, [self.head_html, self.body_html, self.timer, self.src_state],
                        show_progress="hidden")

