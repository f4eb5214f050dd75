"""The collection index in the View tab: decide collection or single artifact, show the index, open rows.

One place decides what a source is (`CollectionView.is_collection`): a single artifact opens in the
token view as before; a folder, zip or Hub dataset holding more than one artifact, or a group, opens
the index, a `gr.HTML` component of its own (viewer/assets/collection_index.js + .css) showing one
`IndexPage` (viewer/index_contract.py) built on the server from artifact/query.py. The URL carries
the state: `?src=COLLECTION&<filters>&page=N` is the index, adding `&row=PATH` opens that row, so a
deep link restores either and the browser's Back returns from a row to the filtered index.

Collections are shared across requests and visitors (viewer/ui/collection_cache.py); opened rows go
to the same rollout store as single artifacts. On a public Space visitors may open Hub datasets
only; the owner's configured source may be a server path, because the owner chose it.
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

import gradio as gr
import msgspec

from artifact import ArtifactError, Problem, bundled_examples, load_artifact
from artifact.collection import Collection, Record
from artifact.query import apply, from_query, to_query
from artifact.sources import identify, parse_hub_id
from viewer import assets
from viewer.collection_cli import is_collection as local_is_collection
from viewer.contract import Failed, Initial, encode
from viewer.index_contract import IndexPage
from viewer.index_page import build_page
from viewer.render import index as render_index
from viewer.render import panels
from viewer.rollout import Rollout

from .collection_cache import CollectionCache, collection_identity

if TYPE_CHECKING:
    from .view_tab import ViewTab

MOUNT_JS = "CollectionIndex.mountInApp(element, props, server, watch, trigger);"
MAX_SRC_CHARS = 1000  # as viewer/ui/view_tab.py: longer is refused before any lookup
MAX_QUERY_CHARS = 4000
# The token view's value while the index shows: an "error" that is an empty hidden block, so the
# token view (which mounts whatever it is given) clears itself without a change to its JS.
CLEARED = encode(Failed("<div class='tv-cleared' hidden></div>")).decode()
_serial = itertools.count(1)


def _params(query: str) -> dict[str, str]:
    return dict(parse_qsl(str(query or "")[:MAX_QUERY_CHARS], keep_blank_values=False))


def _shown(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "…"


class CollectionView:
    """Owns the index component, the shared collections, and the events that open rows and come back."""

    def __init__(self, view: ViewTab, cache: CollectionCache | None = None):
        self.view = view
        self.cache = cache or CollectionCache()

    # -- what a source is ------------------------------------------------------------------------------

    def allow_local(self, source: str) -> bool:
        """Server paths: never for visitors of a public Space, except the source the owner configured."""
        return not self.view.public or source.strip() == (self.view.default_source or "").strip()

    def is_collection(self, source: str) -> bool:
        """The one decision: True when `source` holds more than one artifact, or a group (opens the index)."""
        text = (source or "").strip()
        if not text or len(text) > MAX_SRC_CHARS or text in bundled_examples():
            return False
        allow = self.allow_local(text)
        if allow and Path(text).expanduser().exists():
            try:
                return local_is_collection(text)
            except OSError:
                return False
        if parse_hub_id(text) is None:
            return False
        try:  # one listing tells (and is kept for the index); a dataset we cannot list keeps today's messages
            c = self.cache.get(text, allow)
        except Exception:
            return False
        return len(c.records) > 1 or any(r.kind == "group" for r in c.records)

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

    def index_page(self, src: str, params: Mapping[str, object]) -> IndexPage:
        try:
            c = self._collection(src)
        except ArtifactError as e:
            return IndexPage(serial=next(_serial), mode="index", src=src,
                             error_html=panels.problems(_shown(src), e.problems))
        except Exception as e:  # a message in the page, never a traceback
            return IndexPage(serial=next(_serial), mode="index", src=src,
                             error_html=panels.problems(_shown(src), [f"could not index it: {type(e).__name__}"]))
        return build_page(c, src, params, next(_serial))

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
            return Rollout.load(load_artifact(folder, source=f"{src}:{path}" if path else src))
        finally:
            if c.kind == "zip":  # the rollout is in memory now: remove what opening it unpacked
                shutil.rmtree(folder, ignore_errors=True)
                tmp = getattr(c.store, "_tmp", None)
                if isinstance(tmp, list) and folder in tmp:
                    tmp.remove(folder)

    def _open_artifact(self, c: Collection, src: str, path: str, initial: Initial) -> str:
        """The token view's value for one artifact row, through the shared rollout store."""
        allow = self.allow_local(src)
        label = _shown(f"{src}:{path}" if path else src)
        identity = None
        if c.kind == "folder" and c.source_of(path):
            try:  # the artifact's own identity: shared with opening it directly, and new when its files change
                identity = identify(c.source_of(path), allow_local=True)
            except ArtifactError as e:
                return self.view.error_value(label, e.problems)
        elif c.kind == "hub":
            identity = f"hub-row|{c.source_of(path)}"  # pinned to a commit: never changes
        if identity is None:
            identity = f"{collection_identity(src, allow)}|row|{path}"
        return self.view._open(label, identity, lambda: self._load_row(src, path), src, initial)

    def open_group(self, c: Collection, src: str, group: Record, initial: Initial) -> tuple[str, str, str]:
        """Hook for the group view: until it exists, a group opens its rollout 0 and the back bar says so.

        Returns (token view value, the row path opened, what the back bar adds)."""
        first = next((r for r in c.records if r.group == group.path and r.rollout == 0), None)
        if first is None:
            return (self.view.error_value(_shown(f"{src}:{group.path}"),
                                          [Problem(group.path or "(root)", "this group has no readable rollout 0")]),
                    group.path, "")
        return (self._open_artifact(c, src, first.path, initial), first.path,
                f" · showing its rollout 0 ({first.path}); the group view is not built yet")

    def open_row(self, src: str, path: str, params: Mapping[str, object],
                 initial: Initial) -> tuple[str, str, str]:
        """(token view value, loaded, index value) for one row of a collection, the filter state kept."""
        path = path.strip().strip("/")
        try:
            c = self._collection(src)
        except ArtifactError as e:
            return CLEARED, "", self.error_value(src, e.problems)
        rec = c.record(path)
        if rec is None:
            return CLEARED, "", self.error_value(src, [Problem(path or "(root)", "no such row in this collection")])
        extra, shown_path = "", path
        if rec.kind == "group":
            value, shown_path, extra = self.open_group(c, src, rec, initial)
        else:
            value = self._open_artifact(c, src, path, initial)
        filters, _ = from_query({k: v for k, v in params.items() if isinstance(v, (str, list))})
        query = to_query(filters)
        matched = len(apply(c.records, filters))
        page = IndexPage(serial=next(_serial), mode="row", src=src, query=query, sort=filters.sort, row=path,
                         total=len(c.records), matched=matched, kind=c.kind,
                         row_html=render_index.opened_row(rec, path, matched, query, note=extra))
        return value, c.source_of(shown_path) or f"{src}:{shown_path}", encode(page).decode()

    # -- events ------------------------------------------------------------------------------------

    def open_source(self, source: str) -> tuple[str, str, str]:
        """Load button and source picker: (token view value, loaded, index value)."""
        source = (source or "").strip()
        if self.is_collection(source):
            return CLEARED, "", self.index_value(source, {})
        value, loaded = self.view.source_value(source)
        return value, loaded, self.none_value()

    def on_page_load(self, request: gr.Request):
        """(token view, source box, loaded, index) from ?src= and either the filters or ?row=."""
        q = dict(request.query_params) if request is not None else {}
        src = str(q.get("src") or self.view.default_source or "").strip()
        if self.is_collection(src):
            if q.get("row") is not None:
                from .view_tab import initial_from_params

                value, loaded, index = self.open_row(src, str(q["row"])[:MAX_SRC_CHARS], q, initial_from_params(q))
                return value, src, loaded, index
            return CLEARED, src, "", self.index_value(src, q)
        value, shown, loaded = self.view.on_page_load(request)
        return value, shown, loaded, self.none_value()

    def on_upload(self, files):
        value, loaded = self.view.on_upload(files)
        return value, loaded, self.none_value()

    def on_action(self, evt: gr.EventData):
        """The index's events: {action: "open", src, row, query} and {action: "back", src, query}."""
        data = getattr(evt, "_data", None) or {}
        if not isinstance(data, dict):
            data = {}
        src = str(data.get("src") or "").strip()[:MAX_SRC_CHARS]
        params = _params(str(data.get("query") or ""))
        if data.get("action") == "open":
            return self.open_row(src, str(data.get("row") or "")[:MAX_SRC_CHARS], params, Initial())
        return CLEARED, "", self.index_value(src, params)

    # -- layout ------------------------------------------------------------------------------------

    def render(self) -> gr.HTML:
        """Create the index component (call where it should sit: above the token view)."""

        def index(req: dict) -> dict:  # a plain function: the page calls it by this name (server.index)
            return self.index(req)

        self.component = gr.HTML(value="", html_template="<div class='ci-mount'></div>",
                                 css_template=assets.read("collection_index.css"), apply_default_css=False,
                                 js_on_load=assets.read("collection_index.js") + MOUNT_JS,
                                 server_functions=[index], elem_id="collection-index", padding=False)
        return self.component

    def wire(self, outputs: list) -> None:
        """Wire the index's own events; `outputs` are [token view, loaded, index]."""
        self.component.click(self.on_action, None, outputs)
