"""The Gradio app: pick a source, and the View tab renders it.

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

from artifact import ArtifactError, Problem, bundled_examples, load_artifact, open_artifact
from artifact.sources import artifact_root, unzip
from viewer import assets
from viewer.export import export_html
from viewer.render import panels
from viewer.rollout import MODES, SCOPES, Rollout

from .store import RolloutStore

UPLOAD_LIMIT = "200mb"
ARTIFACT_NAMES = {"trace.json", "turns.json", "task.json", "visible_tests.txt", "held_out_tests.json", "summary.json",
                  "test_results.json", "solution.py"}

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


def build_app(default_source: str = "scripted-smollm2", public: bool = False) -> gr.Blocks:
    store = RolloutStore()

    def view_value(rollout: Rollout | None, src: str | None, initial: dict, error: str | None = None) -> str:
        if rollout is None:
            return json.dumps({"error_html": error})
        outline = rollout.outline()
        outline.update(key=store.put(rollout), src=src, initial=initial)
        return json.dumps(outline)

    def open_source(source: str, initial: dict | None = None) -> tuple[str, str]:
        source = (source or "").strip()
        try:
            a = open_artifact(source, allow_local=not public)
        except ArtifactError as e:
            return view_value(None, None, {}, panels.problems(source, e.problems)), ""
        except Exception as e:  # a message in the page, never a traceback
            return view_value(None, None, {}, panels.problems(source, [f"unexpected {type(e).__name__}: {e}"])), ""
        return _safe_view(lambda: view_value(Rollout.load(a), source, initial or {}), source), source

    def on_page_load(request: gr.Request):
        q = dict(request.query_params) if request is not None else {}
        initial = {"turn": _int(q.get("turn")), "mode": q.get("mode") if q.get("mode") in MODES else "mask",
                   "scope": q.get("scope") if q.get("scope") in SCOPES else "new"}
        src = q.get("src") or default_source
        value, loaded = open_source(src, initial)
        return value, src, loaded

    def on_load_click(source: str):
        value, loaded = open_source(source, {})
        return value, loaded

    def on_upload(files):
        paths = [Path(f if isinstance(f, str) else f.name) for f in (files or [])]
        if not paths:
            return view_value(None, None, {}, panels.problems("upload", ["no file was uploaded"])), ""
        try:
            if len(paths) == 1 and paths[0].suffix.lower() == ".zip":
                root = unzip(paths[0])
            else:
                root = Path(tempfile.mkdtemp(prefix="rollout-upload-"))
                for p in paths:
                    if p.name not in ARTIFACT_NAMES:
                        raise ArtifactError([Problem(p.name, "not an artifact file",
                                                     expected="a .zip or the six artifact files", found=p.name)])
                    shutil.copy(p, root / p.name)
                root = artifact_root(root)
            a = load_artifact(root, source="upload")
        except ArtifactError as e:
            return view_value(None, None, {}, panels.problems("the upload", e.problems)), ""
        return _safe_view(lambda: view_value(Rollout.load(a), None, {}), "the upload"), "upload"

    def _safe_view(make, source: str) -> str:
        try:
            return make()
        except Exception as e:  # analysis of a valid artifact failed: say so in the page, no traceback
            return view_value(None, None, {}, panels.problems(source, [f"could not analyse it: {type(e).__name__}: {e}"]))

    def chunk(req: dict) -> dict:
        r = store.get(str(req.get("key", "")))
        if r is None:
            return {"error": "this rollout is no longer loaded on the server: load it again"}
        try:
            return r.chunk(_int(req.get("turn")), str(req.get("scope")), _int(req.get("index")), _int(req.get("row")))
        except (ValueError, IndexError) as e:
            return {"error": str(e)}

    def training(req: dict) -> dict:
        r = store.get(str(req.get("key", "")))
        if r is None:
            return {"html": "<div class='tv-error'>this rollout is no longer loaded: load it again</div>", "rows": []}
        return r.training_outline()

    def on_export(loaded: str, value: str, turn):
        try:
            key = json.loads(value or "{}").get("key")
        except json.JSONDecodeError:
            key = None
        r = store.get(key) if key else None
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

    hint = ("a bundled example or a Hub dataset id (org/name[@revision][:sub/folder])" if public else
            "a bundled example, a Hub dataset id (org/name[@revision][:sub/folder]), a folder or a .zip path")
    with gr.Blocks(title="Rollout trace viewer") as demo:
        with gr.Tab("View"):
            with gr.Row(elem_classes="tv-chrome"):
                src = gr.Dropdown(bundled_examples(), value=default_source, allow_custom_value=True, label="Source",
                                  info=hint, scale=4, elem_id="source")
                load = gr.Button("Load", variant="primary", scale=1, elem_id="load")
                upload = gr.File(label="…or upload a .zip or the artifact files", file_count="multiple",
                                 file_types=[".zip", ".json", ".txt", ".py"], scale=3, height=110,
                                 elem_id="upload")
            loaded = gr.State("")
            view = gr.HTML(value="", html_template="<div class='tv-mount'></div>",
                           js_on_load=assets.read("trace_view.js") + MOUNT_JS,
                           server_functions=[chunk, training], elem_id="trace-view", padding=False)
            with gr.Accordion("Export a self-contained HTML file", open=False, elem_classes="tv-chrome"):
                with gr.Row():
                    export_turn = gr.Textbox(label="Only this turn (empty = the whole rollout)", elem_id="export-turn")
                    export_btn = gr.Button("Export HTML", elem_id="export")
                export_file = gr.File(label="HTML file", interactive=False, elem_id="export-file")
        demo.load(on_page_load, None, [view, src, loaded])
        load.click(on_load_click, src, [view, loaded])
        src.select(on_load_click, src, [view, loaded])
        upload.upload(on_upload, upload, [view, loaded])
        export_btn.click(on_export, [loaded, view, export_turn], export_file)
    return demo


def launch_options(public: bool) -> dict:
    """Arguments for `demo.launch`: global CSS, a theme that fetches no web fonts, upload limits."""
    font = gr.themes.Font
    theme = gr.themes.Default(font=[font("system-ui"), font("Segoe UI"), font("sans-serif")],
                              font_mono=[font("ui-monospace"), font("Menlo"), font("monospace")])
    opts: dict = {"css": assets.read("trace_view.css"), "theme": theme, "show_error": True}
    if public:
        opts["max_file_size"] = UPLOAD_LIMIT
    return opts
