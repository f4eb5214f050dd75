"""The View tab: pick a source (example, Hub id, path, upload) and the token view renders it.

Gradio supplies the source controls, uploads, downloads and page load (what a link shows is decided by
viewer/router.py); the token view itself is one custom `gr.HTML` component (viewer/assets/src/trace_view/, compiled
to one script by viewer/assets/build.py, its CSS scoped to the component) that gets
an `Opened` record (viewer/contract.py) as a JSON string and fetches token chunks through
`server_functions`, which skip the queue. Loaded rollouts are shared by every visitor of the same
source (viewer/ui/store.py); the values it shows are made in viewer/ui/token_values.py, for every part that
opens something in it. The app's shared service (viewer/ui/service.py) is handed to the tab; the
run page, search panel and collection index it holds between its source bar and its token view are parts of
their own, placed by the app (viewer/ui/app.py). On a public Space (`public=True`) visitors can open bundled examples,
Hub datasets and uploads, never server paths, and messages name what the visitor gave, never a
server path.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Sequence

import gradio as gr

from rollout_trace.analysis.trainer_view import EPS_CHOICES
from rollout_trace.artifact import ArtifactError, bundled_examples
from rollout_trace.artifact.sources import bundled_groups, bundled_runs
from viewer import assets
from viewer import server_api as api
from viewer.contract import Exported
from viewer.export import ADVANTAGE_CHOICES, TrainerChoice, size_label, write_export
from viewer.render import panels
from viewer.render.outline import training
from viewer.rollout import Rollout
from viewer.router import initial_from_params
from viewer.trainer_records import BadRequest, parse_request, trainer_summary, trainer_turn
from viewer.untrusted import number

from .parts import ViewParts
from .rows import Linked
from .service import Service

MOUNT_JS = "TraceView.mountInApp(element, props, server, watch);"
MAX_ADVANTAGE = 1e3

def _trainer_choice(r: Rollout, asked: api.ExportTrainer | None, group: float | None) -> TrainerChoice | None:
    """The trainer panel's settings an export request names, each checked (a bad one falls back)."""
    if not r.artifact.rescores:
        return None
    v = asked or api.ExportTrainer()
    adv = v.adv if v.adv in ADVANTAGE_CHOICES and not (v.adv == "group" and group is None) else "+1"
    return TrainerChoice(v.part if v.part in r.artifact.rescores else next(iter(r.artifact.rescores)),
                         v.eps if 0 <= v.eps < len(EPS_CHOICES) else 0, adv)


def _advantage(value: float | None) -> float | None:
    """The group's advantage the page was given, when it is a sensible number (it only labels the visitor's file)."""
    return number(value, MAX_ADVANTAGE, -MAX_ADVANTAGE)


def source_choices() -> list[tuple[str, str]]:
    """The bundled sources as (label, name): each with one line saying what it is and what opens."""
    return ([(f"{n} · one rollout, token by token", n) for n in bundled_examples()]
            + [(f"{n} · a GRPO group: its rollouts side by side (group map)", n) for n in bundled_groups()]
            + [(f"{n} · a recorded TRL training run (run page: reward and training per policy version)", n)
               for n in bundled_runs()])


PAGE_WHAT = {  # the title line's sentence per page (app_chrome.css picks one by what the page shows)
    "rollout": "see a coding agent's rollout token by token, exactly as RL training (TRL's GRPO) sees it: what the "
               "model generated, what is trained, where the context drifts.",
    "run": "the run page of a recorded TRL training run: reward and training per policy version, then each version's "
           "groups, their rollouts and their tokens.",
    "group": "a GRPO group: its rollouts side by side with their rewards and advantages; open one for its tokens.",
    "index": "a collection of rollouts, one row each (reward, turns, tokens, drift); filter, sort, open one for its "
             "tokens.",
}


def intro_html(public: bool) -> str:
    """The title line: one sentence saying what this is, and the bundled sources worth a first click."""
    hint = ("an example or a Hub dataset (org/name[@revision][:sub/folder])" if public else
            "an example, a Hub dataset (org/name[@revision][:sub/folder]), a folder or a .zip")
    tries = []
    if DEFAULT_TRY in bundled_examples():
        tries.append(f"<a href='?src={DEFAULT_TRY}&turn=1&mode=drift' data-testid='try-drift'>a turn whose prompt "
                     "rewrites the model's tokens</a>")
    tries += [f"<a href='?src={html.escape(n)}' data-testid='try-group'>a GRPO group</a>" for n in bundled_groups()[:1]]
    tries += [f"<a href='?src={html.escape(n)}' data-testid='try-run'>the run page of a TRL training run</a>"
              for n in bundled_runs()[:1]]
    # What the page below is, one sentence each; app_chrome.css shows the one for the page on screen
    what = "".join(f"<span class='tv-what' data-page='{k}' data-testid='page-what'>{v}</span>" for k, v in PAGE_WHAT.items())
    return ("<div class='tv-title'><b>Rollout trace viewer</b> · " + what
            + (f" Try {', '.join(tries)}." if tries else "")
            + f" <span>Open {html.escape(hint)}.</span></div>")


DEFAULT_TRY = "scripted-smollm2"  # the bundled rollout whose second turn drifts



class ViewTab:
    """Owns the View tab's source bar and token view, and the token view's server functions."""

    def __init__(self, service: Service):
        self.service = service

    def _rollout(self, key: str | None) -> Rollout | str:
        """The rollout a request's key names, or the message to answer with (never opened here; gone)."""
        try:
            r = self.service.store.get(key or "")
        except ArtifactError as e:  # dropped and its source is gone (an upload swept, a folder deleted)
            return "; ".join(str(p) for p in e.problems) or "this rollout can no longer be read: open it again"
        return r if r is not None else "this rollout was never opened here: open it again"

    def chunk(self, data: object) -> dict:
        req = api.read(data, api.ChunkRequest)
        if req is None:
            return api.refused("a chunk request is an object with key, turn, scope and index")
        r = self._rollout(req.key)
        if isinstance(r, str):
            return api.refused(r)
        try:
            return api.answer(r.chunk(req.turn, req.scope, req.index, req.row))
        except (ValueError, IndexError) as e:
            return api.refused(str(e))

    def training(self, data: object) -> dict:
        req = api.read(data, api.TrainingRequest) or api.TrainingRequest()
        r = self._rollout(req.key)
        if isinstance(r, str):
            return api.answer(panels.no_rows(unavailable=r))
        # a run's rollout: the rows' fates, from the run context the page was given with the rollout
        return api.answer(training(r, req.run))

    def trainer(self, data: object) -> dict:
        """One turn's trainer numbers ({key, turn, part, eps, advantage}), or with `summary: true` the
        rollout's and every turn's statistics; Refused for anything the rollout cannot answer."""
        unread: list[str] = []
        req = api.read(data, api.TrainerRequest, unread)
        if req is None:
            return api.refused("a trainer request is an object with key, turn, part, eps and advantage")
        r = self._rollout(req.key)
        if isinstance(r, str):
            return api.refused(r)
        try:
            part, lo, hi, adv = parse_request(r, req, unread)
            if req.summary:
                return api.answer(trainer_summary(r, part, lo, hi, adv))
            return api.answer(trainer_turn(r, -1 if req.turn is None else req.turn, part, lo, hi, adv))
        except (BadRequest, IndexError, KeyError) as e:
            return api.refused(str(e))

    def export(self, data: object) -> dict:
        """Server function: {key, what: "rollout" | "turn", turn, mode, scope, trainer, advantage} -> {html, name,
        size, note} with the page itself, which the browser saves: nothing is written on the server (no path in
        the reply, no disk a visitor's exports fill), or Refused."""
        req = api.read(data, api.ExportRequest)
        if req is None:
            return api.refused("an export request is an object with key, what, turn, mode and scope")
        r = self.service.store.get(req.key or "")
        if r is None:
            return api.refused("this rollout was never opened here: open it again")
        # the request's place as a link's: an unknown mode or scope falls back to the default, as a link's does
        initial = initial_from_params({k: v for k, v in (("turn", str(req.turn)), ("mode", req.mode), ("scope", req.scope))
                                       if v})
        turn = initial.turn if req.what == "turn" else None
        advantage = _advantage(req.advantage)
        run = req.run
        if run is not None:
            advantage = run.advantage
        base = (f"run-v{run.version}-g{run.group_id}-r{run.rollout}" if run is not None
                else f"rollout-{r.artifact.summary.task_id[:8]}")
        name = base + (f"-turn{turn}" if turn is not None else "") + ".html"
        page = io.StringIO()
        try:
            got = write_export(r, page, turn=turn, mode=initial.mode, scope=initial.scope, at_turn=initial.turn,
                              trainer=_trainer_choice(r, req.trainer, advantage), advantage=advantage, run=run)
        except ValueError as e:  # no such turn, or too large to export whole (ExportRefused): the message says
            return api.refused(str(e))
        return api.answer(Exported(page.getvalue(), name, size_label(got.bytes), got.note))


    # -- layout -------------------------------------------------------------------------------------

    def render(self, above: Sequence[Callable[[], object]] = ()) -> None:
        """Create the tab's components (call inside a `gr.Tab`); `above` renders the parts that sit between the
        source bar and the token view (the run page, the search panel, the collection index)."""
        # One title line and one compact bar: what this is and what to try first (plain links, the URL is the
        # view), then the source, Load and the upload as a button, so the first screen is the rollout's.
        public, default = self.service.public, self.service.default_source
        gr.HTML(intro_html(public), apply_default_css=False, elem_id="intro", elem_classes="tv-chrome", padding=False)
        with gr.Row(elem_classes="tv-chrome tv-sourcebar"):
            self.src = gr.Dropdown(source_choices(), value=default, allow_custom_value=True,
                                   label="Source", show_label=False, container=False, scale=4, min_width=220,
                                   elem_id="source")
            self.load = gr.Button("Load", variant="primary", scale=0, min_width=90, elem_id="load")
            self.upload = gr.UploadButton("Upload…", file_count="multiple", file_types=[".zip", ".json", ".txt", ".py"],
                                          scale=0, min_width=110, elem_id="upload")
        self.loaded = gr.State("")

        # Plain functions, not bound methods: Gradio marks server functions with an attribute, and
        # the page calls them by these names (server.chunk, server.training).
        def chunk(req: dict) -> dict:
            return self.chunk(req)

        def training(req: dict) -> dict:
            return self.training(req)

        def trainer(req: dict) -> dict:
            return self.trainer(req)

        def live(req: dict) -> dict:
            return self.service.live.answer(req)

        def live_cancel(req: dict) -> dict:
            return self.service.live.stop(req)

        def export(req: dict) -> dict:
            return self.export(req)

        for part in above:
            part()
        # The default rollout is in the page from the start, so a visitor without a deep link sees tokens
        # without waiting for the page-load round trip (a default collection opens through the page load).
        self.built_value = "" if self.service.is_collection(default) else \
            self.service.values.source_value(default, built=True)[0]
        self.view = gr.HTML(value=self.built_value, html_template="<div class='tv-mount'></div>",
                            css_template=assets.read("trace_view.css"), apply_default_css=False,
                            js_on_load=assets.read("trace_view.js") + MOUNT_JS,
                            server_functions=[chunk, training, trainer, live, live_cancel, export], elem_id="trace-view",
                            padding=False)
        # Export lives in the token view's toolbar (server.export), so it is offered only where a rollout is.

    def wire(self, parts: ViewParts) -> None:
        """The source bar opens what it names, through the rows every part opens (viewer/ui/rows.py)."""
        self.parts = parts
        for t in parts.triggers:
            t(self.on_source, parts.src, parts.opened)
        parts.upload.upload(self.on_upload, parts.upload, [*parts.opened, parts.src])

    # -- events -------------------------------------------------------------------------------------

    def on_source(self, source: str) -> dict:
        """Load button and source picker: the token view, loaded source and index."""
        return self.parts.of(self.service.rows.open_source(source))

    def on_upload(self, files) -> dict:
        """The token view, loaded source, index and source box: the source box names the upload, as the URL does."""
        value, loaded, src = self.service.values.open_upload(files)
        return self.parts.of(Linked(value, src or None, loaded, self.service.rows.none_value()))
