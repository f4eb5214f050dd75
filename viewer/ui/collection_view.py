"""The collection index in the View tab: decide collection or single artifact, show the index, open rows.

viewer/source_kinds.py decides what a source is: a single artifact opens in the
token view as before; a folder, zip or Hub dataset holding more than one artifact, or a group, opens
the index, a `gr.HTML` component of its own (viewer/assets/src/collection_index.js + .css) showing one
`IndexPage` (viewer/index/contract.py) built on the server from viewer/index/filters.py. The URL carries
the state: `?src=COLLECTION&<filters>&page=N` is the index, adding `&row=PATH` opens that row, so a
deep link restores either and the browser's Back returns from a row to the filtered index.

What the index shows and what its rows open is made in viewer/ui/rows.py, which the run page, the search panel
and the View tab's source bar open rows through too; this module owns the component and its events, answered
by component (viewer/ui/parts.py). Collections are shared across requests and visitors (viewer/index/cache.py,
held by the app's service, viewer/ui/service.py); opened rows go to the same rollout store as single
artifacts. On a public Space visitors may open Hub datasets
only; the owner's configured source may be a server path, because the owner chose it.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

import gradio as gr

from viewer import assets
from viewer import server_api as api
from viewer.contract import Initial
from viewer.index.contract import IndexPage
from viewer.page_link import MAX_SRC_CHARS
from viewer.router import rollout_param
from viewer.untrusted import whole_or

from .parts import ViewParts
from .rows import CLEARED, Shown, next_serial, problems_of
from .service import Service

MOUNT_JS = "CollectionIndex.mountInApp(element, props, server, watch, trigger);"
MAX_QUERY_CHARS = 4000


def _params(query: str) -> dict[str, str]:
    return dict(parse_qsl(str(query or "")[:MAX_QUERY_CHARS], keep_blank_values=False))


class CollectionView:
    """Owns the index component and the events that open rows and come back."""

    def __init__(self, service: Service):
        self.service = service
        self.rows = service.rows

    def index(self, data: object) -> dict:
        """Server function: the page for {src, query} (sorting, filtering, paging skip the queue)."""
        req = api.read(data, api.IndexRequest)
        if req is None:
            return api.answer(IndexPage(serial=next_serial(), mode="index",
                                        problems=problems_of("index", ["a request is {src, query}"])))
        return api.answer(self.rows.index_page(req.src.strip(), _params(req.query)))

    # -- events ------------------------------------------------------------------------------------

    def on_page_load(self, params: dict[str, str]) -> dict:
        """The token view, source box, loaded source and index for the page link's parameters (viewer/router.py
        reads them), as the page was opened."""
        return self.parts.of(self.rows.page_link(dict(params) if isinstance(params, dict) else {}))

    def on_action(self, evt: gr.EventData) -> dict:
        """The index's events: {action: "open", src, row, query} and {action: "back", src, query}."""
        data = getattr(evt, "_data", None) or {}
        if not isinstance(data, dict):
            data = {}
        src = str(data.get("src") or "").strip()[:MAX_SRC_CHARS]
        params = _params(str(data.get("query") or ""))
        if data.get("action") == "open":
            rollout = rollout_param(data.get("rollout"))
            initial = Initial(turn=whole_or(data.get("turn"), 0)) if rollout is not None else Initial()
            return self.parts.of(self.rows.open_row(src, str(data.get("row") or "")[:MAX_SRC_CHARS], params, initial,
                                                    rollout))
        return self.parts.of(Shown(CLEARED, "", self.rows.index_value(src, params)))

    # -- layout ------------------------------------------------------------------------------------

    def render(self) -> gr.HTML:
        """Create the index component (call where it should sit: above the token view)."""

        def index(req: dict) -> dict:  # a plain function: the page calls it by this name (server.index)
            return self.index(req)

        def compare(req: dict) -> dict:  # server.compare: two siblings of a group map, one turn
            return self.rows.compare(req)

        self.component = gr.HTML(value="", html_template="<div class='ci-mount'></div>",
                                 css_template=assets.read("collection_index.css"), apply_default_css=False,
                                 js_on_load=assets.read("collection_index.js") + MOUNT_JS,
                                 server_functions=[index, compare], elem_id="collection-index", padding=False)
        return self.component

    def wire(self, parts: ViewParts) -> None:
        """Wire the index's own events, which open rows in the View tab's `parts`."""
        self.parts = parts
        self.component.click(self.on_action, None, parts.opened)
