"""The run page in the View tab: a recorded TRL run's chart, health notes, versions → groups, and one task
followed across versions; a run still being recorded is followed without a reload.

Opening a run (the source box, `?src=RUN`) shows, above the run's collection index (its filters work on the
run's rows unchanged, viewer/ui/collection_view.py), a column of its own: a head (`RunHead`) and a body
(`RunBody`: four charts of the per-version numbers, the versions list and, when a task is followed, its pass
rate over versions). Both are `gr.HTML` components mounted by viewer/assets/src/run_page.js, which writes every
text from a record with textContent and draws the charts on canvas in the page (viewer/assets/src/run_charts.js,
reduced to the pixels on screen), so the server sends each version's numbers once. The per-version numbers
are computed once per run state (viewer/ui/follower.py), however many visitors and polls ask, from the run's
index read as Arrow columns (rollout_trace/artifact/run_table.py: only the rows a record shows become Python
objects). Handlers answer a
dict keyed by component: a component a handler leaves out keeps its value. A group opens in the
existing group map and a rollout in the existing token view, through the rows every part opens
(viewer/ui/rows.py, `open_row`); `?src=RUN&version=V&group=G&rollout=R&turn=T` deep-links there
(`Rows.link_params`), Back returns. The run's shared state (its collection, numbers, follower) is the app's
service's (viewer/ui/service.py).

Following: while a segment of the run has not ended, a `gr.Timer` asks every few seconds whether the run's
files grew (a listing of its folders); only then are the grown tails of its line files read and the page's
parts sent again; a Hub run is asked for its latest commit instead (viewer/ui/follower.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import gradio as gr
import msgspec

from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.run_table import RunTable
from viewer import assets, run_compare, run_stats
from viewer import server_api as api
from viewer.contract import Initial, encode_value
from viewer.group import compare as group_compare
from viewer.router import rollout_param, run_link_problem

from .parts import ViewParts
from .service import Service

MOUNT_JS = "RunPage.mountInApp(element, props, server, watch, trigger, '{part}');"
POLL_S = 2.0
MAX_PUBLIC_VERSIONS = 5000  # on a public Space a page holds at most this many versions (the last ones), said so
_serial = itertools.count(1)


class RunView:
    """Owns the run page's components and events."""

    def __init__(self, service: Service):
        self.service = service

    # -- values ----------------------------------------------------------------------------------------

    def head(self, src: str, t: RunTable, stats: list[run_stats.VersionStats] | None = None) -> run_stats.RunHead:
        stats = self.service.follower.stats(t) if stats is None else stats
        bound = [f"a public Space shows the last {MAX_PUBLIC_VERSIONS} of this run's {len(stats)} versions"] \
            if self._bounded(stats) else []
        files, m = t.run_files, t.run_files.manifest
        return run_stats.RunHead(
            serial=next(_serial), src=src, model=m.model if m else "?", trl=m.versions.get("trl", "?") if m else "?",
            started_at=m.started_at if m else "", live=files.live, followed=t.followed, versions=len(stats),
            groups=sum(s.groups for s in stats), rollouts=len(t),
            every_s=self._every_s(t) if t.followed else 0.0,
            notes=run_stats.recorder_notes(t) + bound + run_stats.health_notes(stats, files.live),
            problems=[str(p) for p in t.problems()[:20]] + files.notes[:5])

    def _every_s(self, t: RunTable) -> float:
        """How often the page sees the run read again, when that is less often than its timer asks (else 0)."""
        every = self.service.follower.every_s(t)
        return every if every > POLL_S else 0.0

    def _bounded(self, stats: list[run_stats.VersionStats]) -> bool:
        return self.service.public and len(stats) > MAX_PUBLIC_VERSIONS

    def body(self, src: str, run: RunTable, version: int | None, task: str | None, refresh: bool = False,
             stats: list[run_stats.VersionStats] | None = None, sort: str = "", smooth: float | None = None) -> run_stats.RunBody:
        stats = self.service.follower.stats(run) if stats is None else stats
        if self._bounded(stats):
            stats = stats[-MAX_PUBLIC_VERSIONS:]
        if version not in {s.version for s in stats}:
            version = None
        track = run_stats.task_track(run, task, near=version) if task else None  # its groups near the open version
        return run_stats.RunBody(serial=next(_serial), src=src, versions=stats, open_version=version,
                                groups=run_stats.group_rows(run, version) if version is not None else [],
                                tasks=run_stats.task_choices(run), task=track, refresh=refresh, sort=sort, smooth=smooth)

    def _hidden(self) -> dict:
        return {self.column: gr.update(visible=False), self.timer: gr.Timer(active=False), self.src_state: ("", None)}

    def show(self, src: str, params: Mapping[str, object]) -> dict:
        """Every output of the run page for `src`, by component (hidden when it is not a run)."""
        src = (src or "").strip()
        run = self.service.run_table(src)
        if run is None:
            return self._hidden()
        link = run_stats.run_request(params)
        try:
            stats = self.service.follower.stats(run)
            body = self.body(src, run, link.version, link.task, stats=stats, sort=link.sort, smooth=link.smooth)
            head = self.head(src, run, stats)
        except ArtifactError:  # a public visitor's bound crossed, or the visitor left: the index below says which
            return self._hidden()
        if (bad_link := run_link_problem(run, params)) is not None:  # said first, where the visitor looks
            head = msgspec.structs.replace(head, notes=[bad_link, *head.notes])
        return {self.column: gr.update(visible=True), self.head_html: encode_value(head),
                self.body_html: encode_value(body), self.timer: gr.Timer(active=run.followed),
                self.src_state: (src, run.state)}

    # -- events ----------------------------------------------------------------------------------------

    def hide(self) -> dict:
        return self._hidden()

    def on_source(self, source: str) -> dict:
        return self.show(source if isinstance(source, str) else "", {})

    def on_page_load(self, params: dict[str, str]) -> dict:
        """The run page of the page link's parameters (its source, version, group), or hidden."""
        return self.show(str(params.get("src") or self.service.default_source or ""), params)

    def on_action(self, evt: gr.EventData) -> dict:
        """The body's "open" events (a group, or a rollout of a task): the token view, loaded source and index."""
        data = getattr(evt, "_data", None)
        req = run_stats.run_request(data)
        if req.action != "open":
            return gr.skip()  # the body's other handler's event (both hear its clicks): every output as it is
        rollout = rollout_param(data.get("rollout")) if isinstance(data, dict) else None
        return self.parts.of(self.service.rows.open_row(req.src, req.row, {}, Initial(turn=req.turn), rollout))

    def on_task(self, evt: gr.EventData) -> dict:
        """The body's "task" events: the body with that task followed (its pass-rate chart is drawn from it)."""
        req = run_stats.run_request(getattr(evt, "_data", None))
        if req.action != "task":
            return gr.skip()  # the body's other handler's event
        t = self.service.run_table(req.src)
        if t is None:
            return gr.skip()
        try:
            return {self.body_html: encode_value(self.body(req.src, t, req.version, req.task))}
        except ArtifactError:  # a public visitor's bound crossed: the body stays as it was
            return gr.skip()

    def poll(self, seen: Any) -> dict:
        """The timer: the run's parts again when its files grew since this visitor's last value, else only the
        timer (on while the run is followed: live, and not a copy); reading only what grew since."""
        src, stamp = seen if isinstance(seen, tuple) and len(seen) == 2 else ("", None)
        run = self.service.follower.follow(src) if src and self.service.is_run(src) else None
        if run is None:
            return {self.timer: gr.Timer(active=False)}
        followed = run.followed
        if run.state == stamp:
            return {self.timer: gr.Timer(active=followed)}
        try:
            stats = self.service.follower.stats(run)
            head, body = self.head(src, run, stats), self.body(src, run, None, None, refresh=True, stats=stats)
        except ArtifactError:  # a public visitor's bound crossed: the page stays as it was
            return {self.timer: gr.Timer(active=False)}
        return {self.head_html: encode_value(head), self.body_html: encode_value(body),
                self.timer: gr.Timer(active=followed), self.src_state: (src, run.state)}

    # -- server functions (skip the queue) -------------------------------------------------------------

    def version(self, data: object) -> dict:
        """{src, version} -> {groups: [RunGroupRow]} of that version, or Refused."""
        req = api.read(data, api.RunVersionRequest)
        if req is None:
            return api.refused("a request is {src, version}")
        t = self.service.run_table((req.src or "").strip())
        if t is None or req.version is None:
            return api.refused("no such run or version")
        try:
            return api.answer(api.RunVersionAnswer(run_stats.group_rows(t, req.version)))
        except ArtifactError as e:  # a public visitor's bound crossed
            return api.refused(e.first("the run cannot be read"))

    def compare(self, data: object) -> dict:
        """{src, a, b (rollout paths, from different versions or groups), turn} -> {compare: Compare} (viewer/group.py),
        the sides headed by where each sits in the run, or Refused."""
        req = api.read(data, api.RunCompareRequest)
        if req is None:
            return api.refused("a request is {src, a, b, turn}")
        src, a, b = (req.src or "").strip(), req.a.strip(), req.b.strip()
        if not self.service.is_run(src):
            return api.refused("no such run")
        try:  # of a local run, each rollout's group only (read from the run's columns)
            ca, cb = self.service.row_collection(src, a), self.service.row_collection(src, b)
        except ArtifactError:
            return api.refused("no such run")
        if ca.run is None or cb.run is None:
            return api.refused("no such run")
        ra, rb = ca.record(a), cb.record(b)
        if ra is None or rb is None or ra.kind != "artifact" or rb.kind != "artifact" or a == b:
            return api.refused("pick two different rollouts that have an artifact")
        try:
            xa, xb = self.service.rollout(ca, src, a), self.service.rollout(cb, src, b)
            got = group_compare(xa, ra.rollout or 0, xb, rb.rollout or 0, req.turn)
        except ArtifactError as e:
            return api.refused(e.first("could not read the rollouts"))
        except ValueError as e:
            return api.refused(str(e))
        # each side headed by where it sits in the run: the two may come from different versions
        label = lambda r: f"v{r.policy_version} › group {r.group_id} › rollout {r.rollout}"  # noqa: E731
        got = msgspec.structs.replace(got, a=msgspec.structs.replace(got.a, label=label(ra)),
                                      b=msgspec.structs.replace(got.b, label=label(rb)))
        got = self.service.rows.with_fates(ca, src, got, (ra, xa), (rb, xb))  # and whether each turn was trained
        return api.answer(api.CompareAnswer(got))

    def _stats(self, src: str, run: Any) -> list[run_stats.VersionStats]:
        """The run's per-version numbers, through the follower's cache of its columns where it has them."""
        t = self.service.run_table(src)
        return self.service.follower.stats(t) if t is not None else run_stats.version_stats(run)

    def versus(self, data: object) -> dict:
        """{src, vs, task} -> {compare: RunCompare} of the run `src` beside the run `vs` (the visitor's pick, kept
        in the URL), with `task` (a task id of `src`) followed in both; or Refused. `vs` is opened as `src` is,
        with the same bounds (a public app opens bundled runs and Hub ids only, never a server path)."""
        req = api.read(data, api.RunVersusRequest)
        if req is None:
            return api.refused("a request is {src, vs, task}")
        src, other, task = req.src.strip(), req.vs.strip(), req.task.strip() or None
        a, _ = self.service.run_snapshot(src)
        b, why = self.service.run_snapshot(other) if other else (None, "no other run was named")
        if a is None:
            return api.refused("no such run")
        if b is None:
            return api.refused(f"the other run cannot be compared: {why}" +
                               (" (a public app opens bundled runs and Hub dataset ids)" if self.service.public
                                and why == "it is not a recorded run" else ""))
        try:
            sa, sb = self._stats(src, a), self._stats(other, b)
            if self._bounded(sa):
                sa = sa[-MAX_PUBLIC_VERSIONS:]
            if self._bounded(sb):
                sb = sb[-MAX_PUBLIC_VERSIONS:]
            got = run_compare.compare(src, a, sa, other, b, sb, task, serial=next(_serial))
        except ArtifactError as e:  # a public visitor's bound crossed
            return api.refused(f"the runs cannot be compared: {e.first('the run cannot be read')}")
        return api.answer(api.RunVersusAnswer(got))

    # -- layout ----------------------------------------------------------------------------------------

    def render(self) -> None:
        """Create the run page's components (call where it should sit: above the collection index)."""

        def run_version(req: dict) -> dict:  # server.run_version: a version's groups
            return self.version(req)

        def run_compare(req: dict) -> dict:  # server.run_compare: two rollouts of one task, any versions
            return self.compare(req)

        def run_versus(req: dict) -> dict:  # server.run_versus: this run beside another one
            return self.versus(req)

        css = assets.read("run_page.css")
        js = assets.read("run_page.js")  # the page's one compiled script (viewer/assets/src/run_page.js and its imports)
        with gr.Column(visible=False, elem_id="run-page", elem_classes="rp-column") as self.column:
            self.head_html = gr.HTML(value="", html_template="<div class='rp-mount'></div>", css_template=css,
                                     apply_default_css=False, js_on_load=js + MOUNT_JS.format(part="head"),
                                     elem_id="run-head", padding=False)
            # The charts are drawn in the body, on canvas, from the versions it holds (viewer/assets/src/run_charts.js)
            # by uPlot, vendored as the script it is published as: it defines the global `uPlot` the charts call,
            # so it runs first, in the body's scope (the head draws no chart).
            self.body_html = gr.HTML(value="", html_template="<div class='rp-mount'></div>", css_template=css +
                                     assets.read("vendor/uPlot.min.css") + assets.read("collection_index.css"),
                                     apply_default_css=False,
                                     js_on_load=assets.read("vendor/uPlot.iife.min.js") + "\n" + js + MOUNT_JS.format(part="body"),
                                     server_functions=[run_version, run_compare, run_versus], elem_id="run-body", padding=False)
        self.timer = gr.Timer(POLL_S, active=False)
        self.src_state = gr.State(("", None))

    def outputs(self) -> list:
        return [self.column, self.head_html, self.body_html, self.timer, self.src_state]

    def wire(self, parts: ViewParts) -> None:
        """The run page follows the View tab's source bar, and its groups and tasks open in the View tab's `parts`."""
        self.parts = parts
        for t in parts.triggers:
            t(self.on_source, parts.src, self.outputs())
        parts.upload.upload(self.hide, None, self.outputs())  # an upload is never a run: hides it
        self.body_html.click(self.on_action, None, parts.opened)
        self.body_html.click(self.on_task, None, [self.body_html])
        self.timer.tick(self.poll, self.src_state, [self.head_html, self.body_html, self.timer, self.src_state],
                        show_progress="hidden")

