"""The search panel of the View tab: above a collection's index or a run's page, a search box over every rollout's
generated text, tool calls and tool outputs, a findings chart (rollouts with each finding, per version in a run)
and the hits, each opening the token view on its turn with the matched tokens marked.

A `gr.HTML` mounted by viewer/assets/src/find_panel.js; its value is `{src, serial}` (which source it is about). The
page asks two server functions: `find_summary` (builds the source's text index once, viewer/find/cache.py) and
`find_search`; a hit sends a "click" event {action: "open", row, turn, found} that opens the row through the
rows every part opens (viewer/ui/rows.py, `open_row`). In public mode the index reads at most MAX_ROLLOUTS_PUBLIC rollouts of a
source, regexes get the smaller time budget, and a source is one the visitor could open anyway.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import gradio as gr

from rollout_trace.artifact import ArtifactError
from viewer import assets
from viewer import server_api as api
from viewer.contract import Initial, encode_value
from viewer.find import answers
from viewer.find.cache import Building
from viewer.find.text_index import Search
from viewer.page_link import MAX_SRC_CHARS, MAX_TURN
from viewer.router import rollout_param
from viewer.untrusted import span, whole

from .parts import ViewParts
from .service import Service

MOUNT_JS = "FindPanel.mountInApp(element, props, server, watch, trigger);"
_serial = itertools.count(1)


class FindPanel:
    def __init__(self, service: Service):
        self.service = service
        self.cache = service.find

    def index_of(self, src: str) -> Search | None:
        """The text index of the collection or run `src` names (None when it is neither, or cannot be read);
        raises Building when another request builds a collection's index for longer than a search's budget."""
        return self.service.find_index(src, wait_s=answers.budget_s(self.service.public))

    def _pending(self, src: str) -> int | None:
        """How many rollouts a Hub source would download to be indexed, when its index is not built yet."""
        got = self.service.find_source(src)
        if got is None:
            return None
        src, c, allow = got
        if c.kind != "hub" or self.cache.peek(src, allow) is not None:
            return None
        return min(sum(r.kind == "artifact" for r in c.records), self.cache.limit)

    # -- server functions ------------------------------------------------------------------------------

    def summary(self, data: object) -> dict:
        """The findings chart's data. A Hub source is indexed only when the visitor asks (`build`): indexing
        downloads every rollout, which merely opening the page should not cost."""
        req = api.read(data, api.FindSummaryRequest) or api.FindSummaryRequest()
        pending = self._pending(req.src)
        if pending is not None and not req.build:
            return api.answer(api.FindPending(rollouts=pending))
        try:
            index = self.index_of(req.src)
            if index is None:
                return api.refused("this source is not a collection or a run")
            return api.answer(answers.summary(index))
        except Building as e:
            return api.refused(str(e))
        except ArtifactError as e:  # a public visitor's bound crossed, or the visitor left
            return api.refused(e.first("it cannot be read"))

    def search(self, data: object) -> dict:
        """A search's answer, within its time budget counted from now (building the index, or waiting for another
        request's build or search, included)."""
        deadline = time.monotonic() + answers.budget_s(self.service.public)
        req = api.read(data, answers.FindRequest)
        if req is None:
            return api.refused("a request is {src, pattern, fields, versions, rule}")
        try:
            index = self.index_of(req.src)
            if index is None:
                return api.refused("this source is not a collection or a run")
            return api.answer(answers.search(index, req, self.service.public, deadline))
        except Building as e:
            return api.answer(answers.SearchAnswer(partial=True, notes=[str(e)]))
        except ArtifactError as e:  # a public visitor's bound crossed, or the visitor left
            return api.refused(e.first("it cannot be read"))

    # -- events ----------------------------------------------------------------------------------------

    def value(self, src: str) -> str:
        src = (src or "").strip()
        shown = bool(src) and len(src) <= MAX_SRC_CHARS and self.service.is_collection(src)
        return encode_value({"src": src if shown else "", "serial": next(_serial)})

    def on_source(self, source: Any) -> str:
        return self.value(source if isinstance(source, str) else "")

    def on_open(self, evt: gr.EventData) -> dict:
        """A hit's "open" event: the token view on its turn, the hit's tokens marked."""
        data = getattr(evt, "_data", None) or {}
        if not isinstance(data, dict) or data.get("action") != "open-hit":
            return gr.skip()  # every output as it is
        src = str(data.get("src") or "").strip()[:MAX_SRC_CHARS]
        initial = Initial(turn=whole(data.get("turn"), MAX_TURN) or 0, scope="full", found=span(data.get("found"), MAX_TURN))
        return self.parts.of(self.service.rows.open_row(src, str(data.get("row") or "")[:MAX_SRC_CHARS], {}, initial,
                                                        rollout_param(data.get("rollout"))))

    # -- layout ----------------------------------------------------------------------------------------

    def render(self) -> None:
        def find_summary(req: dict) -> dict:  # server.find_summary: the findings chart's data
            return self.summary(req)

        def find_search(req: dict) -> dict:  # server.find_search: hits, or rollouts with a finding
            return self.search(req)

        self.html = gr.HTML(value=self.value(""), html_template="<div class='fp-mount'></div>",
                            css_template=assets.read("find_panel.css"), apply_default_css=False,
                            js_on_load=assets.read("find_panel.js") + MOUNT_JS,
                            server_functions=[find_summary, find_search], elem_id="find-panel", padding=False)

    def wire(self, parts: ViewParts) -> None:
        """The panel follows the View tab's source bar; a hit opens in the View tab's `parts`."""
        self.parts = parts
        for t in parts.triggers:
            t(self.on_source, parts.src, self.html)
        parts.upload.upload(lambda: self.value(""), None, self.html)  # an upload is never searched: hides the panel
        self.html.click(self.on_open, None, parts.opened)
