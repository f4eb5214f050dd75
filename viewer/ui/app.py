"""The Gradio app: the Capture tab (run one rollout) and the View tab (click through it).

On a public Space (`public=True`) capture is off unless the owner sets ROLLOUT_VIEWER_ENABLE_CAPTURE=1,
and visitors cannot name server paths; the View tab works for everyone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import parse_qsl

import gradio as gr
from fastapi.responses import JSONResponse, Response
from gradio.route_utils import FnIndexInferError
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect

from rollout_trace.analysis.training import import_trl
from viewer import assets
from viewer.memory_pool import use_returning_pool
from viewer.settings import settings

from .cache_folder import private_cache
from .capture_tab import CaptureTab
from .collection_view import CollectionView
from .deferred_tab import defer_until_opened
from .find_panel import FindPanel
from .gradio_pins import idle_quietly
from .in_flight import InFlight, VisitorLimit, limit_handlers, queued_in
from .mcp_tools import McpTools, only_tools_public
from .parts import ViewParts
from .run_view import RunView
from .service import Service
from .view_tab import ViewTab

UPLOAD_LIMIT = "200mb"
VISITORS_AT_ONCE = 8  # events of one kind run at once (each public opening costs at most ~100 MB, visitor.py)
DEFAULT_EXAMPLE = "scripted-smollm2"  # three turns, a drifting boundary, a turn TRL trains without a tool call
# Gradio keeps every upload in its cache; sweep files older than 15 minutes every 5 minutes.
UPLOAD_CACHE_SWEEP = (300, 900)
log = logging.getLogger("rollout_viewer")


# The page's query as it was opened, kept before Gradio or the token view runs (the view rewrites the URL as the
# reader moves); the page load's first event sends it (ViewPage.load).
OPENED_LINK = "<script>window.__openedLink = window.location.search;</script>"
OPENED_LINK_JS = "() => (window.__openedLink ?? window.location.search)"
MAX_LINK_CHARS = 16_000  # a page link's query: longer is no link of ours


def link_params(search: str) -> dict[str, str]:
    """A page link's query string (`?src=...&turn=2`) as parameters, the last value of a repeated one kept."""
    text = search if isinstance(search, str) else ""
    return dict(parse_qsl(text[:MAX_LINK_CHARS].removeprefix("?"), keep_blank_values=True))


def configured_source(cli_source: str | None = None) -> str:
    """What the app opens on: the command line's SOURCE, else ROLLOUT_VIEWER_SOURCE, else the bundled example."""
    return (cli_source or "").strip() or settings().source or DEFAULT_EXAMPLE


class ViewPage:
    """The View tab's parts, made from one service: the source bar and token view, and between them the run page,
    the search panel and the collection index, each a part of its own that meets the others in the service."""

    def __init__(self, service: Service):
        self.service = service
        self.tab = ViewTab(service)
        self.runs = RunView(service)  # a recorded TRL run's page, above its collection index (viewer/ui/run_view.py)
        self.find = FindPanel(service)  # search and findings over a collection's or a run's rollouts
        self.index = CollectionView(service)  # the collection index, above the token view

    def render(self) -> None:
        """Create the components (call inside a `gr.Tab`)."""
        self.tab.render(above=[self.runs.render, self.find.render, self.index.render])

    def wire(self) -> ViewParts:
        """Wire every part's events (after `render`); returns the components others write to (a capture)."""
        t = self.tab
        self.parts = ViewParts(view=t.view, loaded=t.loaded, index=self.index.component, src=t.src, load=t.load,
                               upload=t.upload)
        for part in (t, self.index, self.runs, self.find):  # the source bar's own event first: it opens what it names
            part.wire(self.parts)
        return self.parts

    def load(self, demo: gr.Blocks) -> None:
        """What the page load shows. The run page's parts first (viewer/ui/run_view.py), the collection index below
        it after: on a big run the index is most of the bytes, and the run page is what the visitor came for."""
        parts = self.parts
        # The link as the page was opened (OPENED_LINK, before anything ran), not the page's URL when the load's
        # events are sent: the token view writes the reader's place there, and the load, answering that place
        # later, would open the view there again and undo the keys the reader pressed meanwhile.
        opened = gr.Textbox(visible=False)
        link = gr.State({})

        # One chain of events, the search panel's value in its first: not two loads side by side. Gradio's page
        # client (6.31) closes its event stream when the server says the session has nothing pending, and opens a
        # new one only for an event it joins while no stream is open: an event it joined while that word was on its
        # way waits until the visitor does something else. Side by side, one load's end can be that word while the
        # other's next event is being joined.
        def run_page_first(search: str) -> dict:
            params = link_params(search)
            src = str(params.get("src") or self.service.default_source or "")
            return {**self.runs.on_page_load(params), link: params, self.find.html: self.find.value(src)}

        demo.load(run_page_first, opened, [*self.runs.outputs(), link, self.find.html], js=OPENED_LINK_JS).then(
            self.index.on_page_load, link, [parts.view, parts.src, parts.loaded, parts.index])


def build_app(default_source: str | None = None, public: bool = False,
              capture_enabled: bool | None = None, mcp: bool | None = None) -> gr.Blocks:
    """The app. `mcp`: serve the read-only agent tools (viewer/ui/mcp_tools.py) through Gradio's MCP server;
    None follows Gradio's own switch, the GRADIO_MCP_SERVER environment variable, which `launch` reads too."""
    use_returning_pool()
    default_source = configured_source(default_source)
    if mcp is None:
        mcp = settings().mcp_server
    if capture_enabled is None:
        capture_enabled = not public or settings().enable_capture
    service = Service(default_source, public)  # the stores and caches every tab shares (viewer/ui/service.py)
    view = ViewPage(service)
    capture = CaptureTab(service, enabled=capture_enabled, public=public)
    # Every rollout's outline asks TRL what it trains. The import takes seconds and transformers' lazy
    # modules are not safe to import first from several request threads at once: do it here, once.
    import_trl()
    private_cache()  # before the Blocks: Gradio reads its cache folder's name when they are made
    with gr.Blocks(title="Rollout trace viewer", delete_cache=UPLOAD_CACHE_SWEEP) as demo:
        with gr.Tabs(selected="view", elem_classes="tv-chrome-tabs") as tabs:
            pages: list[tuple[str, Callable[[], None]]] = [("Capture", capture.render), ("View", view.render)]
            for name, render in pages if capture_enabled else pages[::-1]:  # without capture, View comes first
                with gr.Tab(name, id=name.lower(), elem_id=f"{name.lower()}-tab") as tab:
                    render()
                if name == "Capture":  # the page opens on View: the form's code is fetched when it is opened
                    defer_until_opened(tab)
        capture.wire(tabs, view.wire())
        view.load(demo)
        if mcp:
            McpTools(service).register()
    if mcp:
        only_tools_public(demo)
    # Gradio runs each event for one visitor at a time unless told otherwise: one visitor opening a big run
    # held every other visitor's Load behind it. Each opening is bounded on a public Space (viewer/ui/visitor.py),
    # so several run at once; one capture at a time is the Capture tab's own slot.
    demo.queue(default_concurrency_limit=VISITORS_AT_ONCE)
    idle_quietly(demo)
    if public:  # what one visitor may have running at once, on every way in (viewer/ui/in_flight.py)
        demo.in_flight = InFlight()
        limit_handlers(demo.fns.values(), demo.in_flight, settings().on_space, gr.Error)
    return demo


def launch_options(public: bool, demo: gr.Blocks | None = None) -> dict:
    """Arguments for `demo.launch`: a theme that fetches no web fonts, upload limits and, for a public `demo`, the
    middleware that bounds what one visitor has running (viewer/ui/in_flight.py).

    The token view's CSS is scoped to its component (viewer/ui/view_tab.py); the only global CSS is the
    chrome's (viewer/assets/app_chrome.css: which blocks take room when)."""
    font = gr.themes.Font
    theme = gr.themes.Default(font=[font("system-ui"), font("Segoe UI"), font("sans-serif")],
                              font_mono=[font("ui-monospace"), font("Menlo"), font("monospace")])
    # Gradio's subdued text (the intro's hint, every field's info line) is neutral-400 on white in the light scheme:
    # 1.9:1, unreadable on a projector; neutral-500 is 4.8:1 and still reads as secondary. Dark keeps its own.
    theme.set(body_text_color_subdued="*neutral_500", body_text_color_subdued_dark="*neutral_400")
    # Its primary buttons (Load, Capture) are white on orange-500: 2.8:1. Orange-700 is 5.2:1 in either scheme.
    theme.set(button_primary_background_fill="*primary_700", button_primary_background_fill_dark="*primary_700",
              button_primary_background_fill_hover="*primary_800", button_primary_background_fill_hover_dark="*primary_800",
              button_primary_border_color="*primary_700", button_primary_border_color_dark="*primary_700",
              button_primary_border_color_hover="*primary_800", button_primary_border_color_hover_dark="*primary_800")
    # In public mode Gradio's own error texts (which can name server paths) become a generic message;
    # our handlers answer in the page and through gr.Error, which is always shown.
    opts: dict = {"theme": theme, "show_error": not public, "head": OPENED_LINK, "css": assets.read("app_chrome.css") + assets.read("run_chrome.css"),
                  "app_kwargs": {"exception_handlers": {KeyError: _not_found, FnIndexInferError: _not_found,
                                                        ClientDisconnect: _hung_up}}}
    if public:
        opts["max_file_size"] = UPLOAD_LIMIT
    in_flight = getattr(demo, "in_flight", None)
    if in_flight is not None:
        on_space = settings().on_space
        opts["app_kwargs"]["middleware"] = [Middleware(VisitorLimit, in_flight=in_flight, on_space=on_space,
                                                       queued=lambda app, who: queued_in(app, who, on_space))]
    return opts


async def _not_found(request, exc: Exception) -> JSONResponse:
    """A request naming an API, event or component this app does not have: 404 and a message.

    Gradio's routes look these up by the name or number a client sends and let the KeyError (or its own
    FnIndexInferError) escape: a 500, and a traceback in the log for every junk request."""
    log.warning("refused %s %s: it names no API, event or component of this app (%s)", request.method,
                request.url.path, type(exc).__name__)
    return JSONResponse({"detail": "not found: this app has no such API name, event or component"}, status_code=404)


async def _hung_up(request, exc: Exception) -> Response:
    """A client that hung up mid-request (an abandoned upload): one log line, not a traceback. Its partial
    file is swept with Gradio's cache (viewer/ui/cache_folder.py)."""
    log.warning("client hung up during %s %s", request.method, request.url.path)
    return Response(status_code=400)
