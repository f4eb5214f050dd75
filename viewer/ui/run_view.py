"""The run page in the View tab: a recorded TRL run's chart, health notes, versions → groups, and one task
followed across versions; a run still being recorded is followed without a reload.

Opening a run (the source box, `?src=RUN`) shows, above the run's collection index (its filters work on the
run's rows unchanged, viewer/ui/collection_view.py), a column of its own: a head (`RunHead`), four Gradio plots
of the per-version numbers (viewer/run_page.py makes their frames), the versions list (`RunBody`) and, when a
task is followed, its pass rate over versions. The head and the body are `gr.HTML` components mounted by
viewer/assets/run_page.js, which writes every text from a record with textContent. A group opens in the
existing group map and a rollout in the existing token view, through the collection view's own `open_row`;
`?src=RUN&version=V&group=G&rollout=R&turn=T` deep-links there (`link_params`), Back returns.

Following: while a segment of the run has not ended, a `gr.Timer` asks every few seconds whether the run's
files grew (one listing of four folders, `rollout_trace.artifact.run.follow`); only then are the grown tails
of its line files read, the shared collection replaced, and the page's parts sent again.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import gradio as gr
import msgspec

from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.collection import Collection, run_collection
from rollout_trace.artifact.run import Run, follow
from viewer import assets, run_page
from viewer.contract import Initial, encode
from viewer.group import compare as group_compare
from viewer.render import group_map as render_group
from viewer.router import rollout_param

if TYPE_CHECKING:
    from .view_tab import ViewTab

MOUNT_JS = "RunPage.mountInApp(element, props, server, watch, trigger, '{part}');"
POLL_S = 2.0
PLOT_HEIGHT = 230
_serial = itertools.count(1)


def _params(request: gr.Request | None) -> dict[str, str]:
    return dict(request.query_params) if request is not None else {}


class RunView:
    """Owns the run page's components, and follows the runs visitors have open."""

    def __init__(self, view: ViewTab):
        self.view = view
        self._follow_lock = threading.Lock()

    # -- what a source is ------------------------------------------------------------------------------

    @property
    def collections(self):
        return self.view.collections

    def is_run(self, source: str) -> bool:
        """A recorded run (rollout_trace/artifact/kinds.py decides, through the collection view)."""
        return self.collections.kind(source) == "run"

    def _collection(self, src: str) -> Collection | None:
        if not self.is_run(src):
            return None
        try:
            c = self.collections.cache.get(src.strip(), self.collections.allow_local(src))
        except ArtifactError:
            return None
        return c if c.run is not None else None

    # -- values ----------------------------------------------------------------------------------------

    def head(self, src: str, run: Run) -> run_page.RunHead:
        stats = run_page.version_stats(run)
        return run_page.RunHead(
            serial=next(_serial), src=src, model=run.manifest.model, trl=run.manifest.versions.get("trl", "?"),
            started_at=run.manifest.started_at, live=run.live, versions=len(stats), groups=len(run.groups),
            rollouts=len(run.rows), notes=run_page.health_notes(stats, run.rows, run.live),
            problems=[str(p) for p in run.problems[:20]] + run.notes[:5])

    def body(self, src: str, run: Run, version: int | None, task: str | None,
             refresh: bool = False) -> run_page.RunBody:
        stats = run_page.version_stats(run)
        versions = [s.version for s in stats]
        if version not in versions:
            version = None
        track = run_page.task_track(run, task) if task else None
        return run_page.RunBody(serial=next(_serial), src=src, versions=stats, open_version=version,
                                groups=run_page.group_rows(run, version) if version is not None else [],
                                tasks=run_page.task_choices(run), task=track, refresh=refresh)

    def _plots(self, run: Run) -> list:
        stats = run_page.version_stats(run)
        order = [str(s.version) for s in stats]  # versions named on the axis (one tick each), in their order
        lines = order if run_page.versions_named(stats) else None  # many versions: a numeric axis (run_page)
        return [gr.update(value=run_page.reward_frame(stats), sort=lines),
                gr.update(value=run_page.share_frame(stats), sort=lines),
                gr.update(value=run_page.tokens_frame(stats), sort=order),
                gr.update(value=run_page.dropped_frame(stats), sort=order)]

    def _task_plot(self, track: run_page.TaskTrack | None):
        if track is None:
            return gr.update(visible=False), gr.update(value=None)
        frame = run_page.task_frame(track)
        return gr.update(visible=True), gr.update(value=frame, sort=list(frame["version"]))

    def _hidden(self) -> list:
        return [gr.update(visible=False), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(),
                gr.update(visible=False), gr.skip(), gr.Timer(active=False), ("", None)]

    def show(self, src: str, params: Mapping[str, object]) -> list:
        """Every output of the run page for `src` (hidden when it is not a run)."""
        src = (src or "").strip()
        c = self._collection(src)
        if c is None:
            return self._hidden()
        run = c.run
        version = run_page._whole(params.get("version"))
        task = params.get("task")
        body = self.body(src, run, version, task if isinstance(task, str) else None)
        task_col, task_plot = self._task_plot(body.task)
        return [gr.update(visible=True), encode(self.head(src, run)).decode(), *self._plots(run),
                encode(body).decode(), task_col, task_plot, gr.Timer(active=run.live), (src, _stamp(run))]

    # -- events ----------------------------------------------------------------------------------------

    def hide(self) -> list:
        return self._hidden()

    def on_source(self, source: str) -> list:
        return self.show(source if isinstance(source, str) else "", {})

    def on_page_load(self, request: gr.Request) -> list:
        q = _params(request)
        return self.show(str(q.get("src") or self.view.default_source or ""), q)

    def link_params(self, params: dict) -> dict:
        """A page link's parameters with `version=&group=` resolved to the run's `row=` (the group's folder), so
        the collection view opens that group's map, or with `rollout=` that rollout (the hook in
        CollectionView.on_page_load)."""
        if "group" not in params or "row" in params:
            return params
        c = self._collection(str(params.get("src") or self.view.default_source or ""))
        if c is None:
            return params
        path, _problem = run_page.resolve_link(c.run, params)
        return {**params, "row": path} if path is not None else params

    def on_action(self, evt: gr.EventData) -> tuple:
        """The body's "open" events (a group, or a rollout of a task): (token view, loaded, index)."""
        data = getattr(evt, "_data", None) or {}
        if not isinstance(data, dict) or data.get("action") != "open":
            return gr.skip(), gr.skip(), gr.skip()
        src = str(data.get("src") or "").strip()[:1000]
        rollout = rollout_param(data.get("rollout"))
        initial = Initial(turn=max(0, run_page._whole(data.get("turn")) or 0))
        return self.collections.open_row(src, str(data.get("row") or "")[:1000], {}, initial, rollout)

    def on_task(self, evt: gr.EventData) -> tuple:
        """The body's "task" events: the body with that task followed, and its pass-rate plot."""
        data = getattr(evt, "_data", None) or {}
        if not isinstance(data, dict) or data.get("action") != "task":
            return gr.skip(), gr.skip(), gr.skip()
        src = str(data.get("src") or "").strip()[:1000]
        c = self._collection(src)
        if c is None:
            return gr.skip(), gr.skip(), gr.skip()
        task = str(data.get("task") or "")[:64] or None
        body = self.body(src, c.run, run_page._whole(data.get("version")), task)
        return (encode(body).decode(), *self._task_plot(body.task))

    def poll(self, seen: Any) -> list:
        """The timer: the run's parts again when its files grew since this visitor's last value, else nothing
        (gr.skip); reading only the grown tails of its line files."""
        src, stamp = seen if isinstance(seen, tuple) and len(seen) == 2 else ("", None)
        c = self._collection(src) if src else None
        if c is None:
            return [gr.skip()] * 6 + [gr.Timer(active=False), gr.skip()]
        with self._follow_lock:  # one follower per app: visitors of the same run share what it read
            current = self.collections.cache.get(src, self.collections.allow_local(src))
            grown = follow(current.run) if current.run is not None else None
            if grown is not None:
                newer = run_collection(grown)
                if self.collections.cache.replace(src, self.collections.allow_local(src), current, newer):
                    current = newer
        run = current.run
        if _stamp(run) == stamp:
            return [gr.skip()] * 6 + [gr.Timer(active=run.live), gr.skip()]  # head, 4 plots, body
        return [encode(self.head(src, run)).decode(), *self._plots(run),
                encode(self.body(src, run, None, None, refresh=True)).decode(), gr.Timer(active=run.live),
                (src, _stamp(run))]

    # -- server functions (skip the queue) -------------------------------------------------------------

    def version(self, req: Any) -> dict:
        """{src, version} -> {groups: [RunGroupRow]} of that version, or {error}."""
        if not isinstance(req, dict):
            return {"error": "a request is {src, version}"}
        c = self._collection(str(req.get("src") or "")[:1000])
        v = run_page._whole(req.get("version"))
        if c is None or v is None:
            return {"error": "no such run or version"}
        return {"groups": msgspec.to_builtins(run_page.group_rows(c.run, v))}

    def compare(self, req: Any) -> dict:
        """{src, a, b (rollout paths, from different versions or groups), turn} -> {html} of the existing
        compare view (viewer/render/group_map.py, escaped there), or {error}."""
        if not isinstance(req, dict):
            return {"error": "a request is {src, a, b, turn}"}
        src = str(req.get("src") or "").strip()[:1000]
        c = self._collection(src)
        a, b = str(req.get("a") or "")[:1000], str(req.get("b") or "")[:1000]
        if c is None:
            return {"error": "no such run"}
        ra, rb = c.record(a), c.record(b)
        if ra is None or rb is None or ra.kind != "artifact" or rb.kind != "artifact" or a == b:
            return {"error": "pick two different rollouts that have an artifact"}
        try:
            got = group_compare(self.collections._rollout(c, src, a), ra.rollout or 0,
                                self.collections._rollout(c, src, b), rb.rollout or 0,
                                max(0, run_page._whole(req.get("turn")) or 0))
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
            common: dict[str, Any] = {"x": "version", "height": PLOT_HEIGHT, "x_title": "policy version", "buttons": []}
            with gr.Row(elem_classes="rp-plots"):
                self.reward_plot = gr.LinePlot(y="reward", color="series", title="Reward per version (mean, ±sd, "
                                               "min, max)", elem_id="run-reward-plot", **common)
                self.share_plot = gr.LinePlot(y="share", color="series", y_lim=[0, 1], title="Shares of rollouts "
                                              "(groups for zero spread)", elem_id="run-share-plot", **common)
            with gr.Row(elem_classes="rp-plots"):
                self.tokens_plot = gr.BarPlot(y="trained tokens", title="Trained tokens per version",
                                              elem_id="run-tokens-plot", **common)
                self.dropped_plot = gr.BarPlot(y="rollouts", color="cause", title="Rollouts never trained, by cause",
                                               elem_id="run-dropped-plot", **common)
            self.body_html = gr.HTML(value="", html_template="<div class='rp-mount'></div>", css_template=css +
                                     assets.read("collection_index.css"), apply_default_css=False,
                                     js_on_load=js + MOUNT_JS.format(part="body"),
                                     server_functions=[run_version, run_compare], elem_id="run-body", padding=False)
            with gr.Column(visible=False, elem_id="run-task") as self.task_column:
                self.task_plot = gr.LinePlot(x="version", y="pass rate", y_lim=[0, 1], height=200,
                                             title="This task's pass rate per version", x_title="policy version",
                                             elem_id="run-task-plot", buttons=[])
        self.timer = gr.Timer(POLL_S, active=False)
        self.src_state = gr.State(("", None))

    def outputs(self) -> list:
        return [self.column, self.head_html, self.reward_plot, self.share_plot, self.tokens_plot, self.dropped_plot,
                self.body_html, self.task_column, self.task_plot, self.timer, self.src_state]

    def wire(self, triggers: list, source, opened: list) -> None:
        """`triggers`: the source box's events that open a source; `opened`: [token view, loaded, index]."""
        for t in triggers:
            t(self.on_source, source, self.outputs())
        self.body_html.click(self.on_action, None, opened)
        self.body_html.click(self.on_task, None, [self.body_html, self.task_column, self.task_plot])
        self.timer.tick(self.poll, self.src_state,
                        [self.head_html, self.reward_plot, self.share_plot, self.tokens_plot, self.dropped_plot,
                         self.body_html, self.timer, self.src_state], show_progress="hidden")


def _stamp(run: Run) -> tuple:
    """What a visitor's page was built from: it changes whenever the run grew."""
    return len(run.rows), len(run.consumed), len(run.segments), run.live

