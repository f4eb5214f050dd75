"""The View tab: pick a source (example, Hub id, path, upload) and the token view renders it.

Gradio supplies the source controls, uploads, downloads and page load; the token view itself is one
custom `gr.HTML` component (viewer/assets/trace_view.js) that gets a small outline as a JSON string
and fetches token chunks through `server_functions`, which skip the queue. On a public Space
(`public=True`) visitors can open bundled examples, Hub datasets and uploads, never server paths.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import gradio as gr

from artifact import Artifact, ArtifactError, Problem, bundled_examples, load_artifact, open_artifact
from artifact.schema import FILES
from artifact.sources import artifact_root, unzip
from viewer import assets
from viewer.export import export_html
from viewer.render import panels
from viewer.rollout import MODES, SCOPES, Rollout

from .store import RolloutStore


MOUNT_JS = """
const api = {
  chunk: (q) => server.chunk({...q, key: element.__tvKey}),
  training: () => server.training({key: element.__tvKey}),
  onState: (s) => {
    const u = new URL(window.location.href);
    if (element.__tvSrc) u.searchParams.set("src", element.__tvSrc); else u.searchParams.delete("src");
    u.searchParams.set("turn", s.turn); u.searchParams.set("mode", s.mode); u.searchParams.set("scope", s.scope);
    window.history.replaceState(null, "", u.toString());
  },
};
function start() {
  const box = element.querySelector(".tv-mount");
  if (!box || !props.value) return;
  const O = JSON.parse(props.value);
  if (O.error_html) { box.innerHTML = O.error_html; return; }
  element.__tvKey = O.key; element.__tvSrc = O.src;
  window.__traceView = TraceView.mount(box, O, api, O.initial || {});
}
start();
watch("value", start);
"""


def _int(value, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class ViewTab:
    """Owns the loaded rollouts and the components of the View tab."""

    def __init__(self, default_source: str, public: bool):
        self.default_source, self.public = default_source, public
        self.store = RolloutStore()

    # -- values for the token view ------------------------------------------------------------------

    def error_value(self, source: str, problems: list) -> str:
        return json.dumps({"error_html": panels.problems(source, problems)})

    def artifact_value(self, artifact: Artifact, src: str | None, initial: dict | None = None) -> str:
        """The view's value for a validated artifact (analysis failures become a message)."""
        try:
            rollout = Rollout.load(artifact)
            outline = rollout.outline()
        except Exception as e:  # analysis of a valid artifact failed: say so in the page, no traceback
            return self.error_value(src or artifact.source, [f"could not analyse it: {type(e).__name__}: {e}"])
        outline.update(key=self.store.put(rollout), src=src, initial=initial or {})
        return json.dumps(outline)

    def source_value(self, source: str, initial: dict | None = None) -> tuple[str, str]:
        source = (source or "").strip()
        try:
            a = open_artifact(source, allow_local=not self.public)
        except ArtifactError as e:
            return self.error_value(source, e.problems), ""
        except Exception as e:  # a message in the page, never a traceback
            return self.error_value(source, [f"unexpected {type(e).__name__}: {e}"]), ""
        return self.artifact_value(a, source, initial), source

    # -- events -------------------------------------------------------------------------------------

    def on_page_load(self, request: gr.Request):
        q = dict(request.query_params) if request is not None else {}
        initial = {"turn": _int(q.get("turn")), "mode": q.get("mode") if q.get("mode") in MODES else "mask",
                   "scope": q.get("scope") if q.get("scope") in SCOPES else "new"}
        src = q.get("src") or self.default_source
        value, loaded = self.source_value(src, initial)
        return value, src, loaded

    def on_upload(self, files):
        paths = [Path(f if isinstance(f, str) else f.name) for f in (files or [])]
        if not paths:
            return self.error_value("upload", ["no file was uploaded"]), ""
        try:
            if len(paths) == 1 and paths[0].suffix.lower() == ".zip":
                root = unzip(paths[0])
            else:
                root = Path(tempfile.mkdtemp(prefix="rollout-upload-"))
                for p in paths:
                    if p.name not in FILES:
                        raise ArtifactError([Problem(p.name, "not an artifact file",
                                                     expected="a .zip or the six artifact files", found=p.name)])
                    shutil.copy(p, root / p.name)
                root = artifact_root(root)
            a = load_artifact(root, source="upload")
        except ArtifactError as e:
            return self.error_value("the upload", e.problems), ""
        return self.artifact_value(a, None), "upload"

    def chunk(self, req: dict) -> dict:
        r = self.store.get(str(req.get("key", "")))
        if r is None:
            return {"error": "this rollout is no longer loaded on the server: load it again"}
        try:
            return r.chunk(_int(req.get("turn")), str(req.get("scope")), _int(req.get("index")), _int(req.get("row")))
        except (ValueError, IndexError) as e:
            return {"error": str(e)}

    def training(self, req: dict) -> dict:
        r = self.store.get(str(req.get("key", "")))
        if r is None:
            return {"html": "<div class='tv-error'>this rollout is no longer loaded: load it again</div>", "rows": []}
        return r.training_outline()

    def on_export(self, value: str, turn):
        try:
            key = json.loads(value or "{}").get("key")
        except json.JSONDecodeError:
            key = None
        r = self.store.get(key) if key else None
        if r is None:
            raise gr.Error("Load a rollout first.")
        t = None if turn in (None, "") else _int(turn, -1)
        try:
            page = export_html(r, t)
        except ValueError as e:
            raise gr.Error(str(e)) from None
        name = f"rollout-{r.artifact.summary.task_id[:8]}" + (f"-turn{t}" if t is not None else "") + ".html"
        out = Path(tempfile.mkdtemp(prefix="rollout-export-")) / name
        out.write_text(page, encoding="utf-8")
        return str(out)

    # -- layout -------------------------------------------------------------------------------------

    def render(self) -> None:
        """Create the tab's components and wire them (call inside a `gr.Tab`)."""
        hint = ("a bundled example or a Hub dataset id (org/name[@revision][:sub/folder])" if self.public else
                "a bundled example, a Hub dataset id (org/name[@revision][:sub/folder]), a folder or a .zip path")
        with gr.Row(elem_classes="tv-chrome"):
            self.src = gr.Dropdown(bundled_examples(), value=self.default_source, allow_custom_value=True,
                                   label="Source", info=hint, scale=4, elem_id="source")
            load = gr.Button("Load", variant="primary", scale=1, elem_id="load")
            upload = gr.File(label="…or upload a .zip or the artifact files", file_count="multiple",
                             file_types=[".zip", ".json", ".txt", ".py"], scale=3, height=110, elem_id="upload")
        self.loaded = gr.State("")

        # Plain functions, not bound methods: Gradio marks server functions with an attribute, and
        # the page calls them by these names (server.chunk, server.training).
        def chunk(req: dict) -> dict:
            return self.chunk(req)

        def training(req: dict) -> dict:
            return self.training(req)

        self.view = gr.HTML(value="", html_template="<div class='tv-mount'></div>",
                            js_on_load=assets.read("trace_view.js") + MOUNT_JS,
                            server_functions=[chunk, training], elem_id="trace-view", padding=False)
        with gr.Accordion("Export a self-contained HTML file", open=False, elem_classes="tv-chrome"):
            with gr.Row():
                export_turn = gr.Textbox(label="Only this turn (empty = the whole rollout)", elem_id="export-turn")
                export_btn = gr.Button("Export HTML", elem_id="export")
            export_file = gr.File(label="HTML file", interactive=False, elem_id="export-file")
        load.click(self.source_value, self.src, [self.view, self.loaded])
        self.src.select(self.source_value, self.src, [self.view, self.loaded])
        upload.upload(self.on_upload, upload, [self.view, self.loaded])
        export_btn.click(self.on_export, [self.view, export_turn], export_file)
