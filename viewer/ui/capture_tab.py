"""The Capture tab: fill in a form, check the endpoint, run one rollout, watch it, open it in View.

The capture runs in a background thread (capture.run.capture); the Capture button's generator
streams its progress. One capture runs at a time per server: a second visitor is told one is
running. Cancel stops the agent and the sandbox, and nothing is written. The visitor's HF token is
only passed to the Hub call that needs it: never echoed, logged or stored.
"""

from __future__ import annotations

import os
import queue
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import gradio as gr

from artifact import Artifact
from capture.agent import Cancelled
from capture.preflight import check_endpoint
from capture.progress import Progress
from capture.run import DEFAULT_FLAVOR, DEFAULT_IMAGE, CaptureConfig, CaptureError, capture, push
from capture.tasks import DEFAULT_DATASET, TaskError, build_tasks, load_rows, select_task, tasks_from_example
from viewer.render import safe

CAPTURE_DIR_ENV = "ROLLOUT_VIEWER_CAPTURE_DIR"
MAX_LOG_LINES = 400


@dataclass
class Slot:
    """The one capture this server may run at a time."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    cancel: threading.Event = field(default_factory=threading.Event)
    started: float = 0.0
    stage: str = ""

    def describe(self) -> str:
        return f"a capture is already running (stage: {self.stage or 'starting'}, {time.monotonic() - self.started:.0f} s)"


def captures_root() -> Path:
    return Path(os.environ.get(CAPTURE_DIR_ENV) or Path.cwd() / "captures")


def _status(stage: str, turns: int, elapsed: float, note: str = "") -> str:
    return (f"<div class='tv-capture-status' data-testid='capture-status'><b>{safe.text(stage)}</b> · "
            f"{turns} agent turn(s) so far · {elapsed:.0f} s{(' · ' + safe.text(note)) if note else ''}</div>")


class CaptureTab:
    def __init__(self, view, enabled: bool, public: bool):
        self.view, self.enabled, self.public = view, enabled, public
        self.slot = Slot()
        self.last_artifact: Path | None = None

    # -- form -> config -----------------------------------------------------------------------------

    @staticmethod
    def config(backend, model, endpoint, dataset, example, tokenizer, n_prompts, seed, rollout_seed, task_index,
               image, flavor, timeout_s, out_dir="") -> CaptureConfig:
        url = (endpoint or "").strip() or None
        return CaptureConfig(
            model=(model or "").strip(), backend=backend, endpoint=url if backend == "local" else None,
            sandbox_vllm_url=url if backend == "hf-sandbox" else None,
            dataset=(dataset or DEFAULT_DATASET).strip(), example=(example or "").strip() or None,
            tokenizer=(tokenizer or "").strip() or None, n_prompts=int(n_prompts), seed=int(seed),
            rollout_seed=None if rollout_seed in (None, "") else int(rollout_seed), task_index=int(task_index),
            sandbox_image=(image or DEFAULT_IMAGE).strip(), sandbox_flavor=(flavor or DEFAULT_FLAVOR).strip(),
            timeout_s=float(timeout_s), out_dir=out_dir)

    # -- events -------------------------------------------------------------------------------------

    def preview(self, *form) -> str:
        cfg = self.config(*form)
        try:
            tasks = (tasks_from_example(Path(cfg.example), cfg.n_prompts, cfg.seed) if cfg.example
                     else build_tasks(load_rows(cfg.dataset), cfg.n_prompts, cfg.seed))
            t = select_task(tasks, cfg.task_index)
        except TaskError as e:
            return f"<div class='tv-error' data-testid='task-preview'>{safe.text(e)}</div>"
        return (f"<div data-testid='task-preview'><b>task {t.index}</b> <span class='tv-dim'>{t.task_id[:12]} · "
                f"{len(t.held_out)} held-out tests (hidden from the agent)</span>"
                f"<div class='tv-md'>{safe.markdown(t.instruction)}</div></div>")

    def check(self, *form) -> str:
        cfg = self.config(*form)
        if not cfg.llm_url:
            return "<div class='tv-error' data-testid='endpoint-verdict'>Give the endpoint URL first.</div>"
        v = check_endpoint(cfg.llm_url, cfg.model)
        rows = (f"<ul><li>reachable: {'yes' if v.reachable else 'no'}</li><li>token ids: {'yes' if v.token_ids else 'no'}</li>"
                f"<li>logprobs: {'yes' if v.logprobs else 'no'}</li><li>tool calls: {safe.text(v.tool_calls or 'not checked')}</li></ul>")
        cls = "tv-boundary ok" if v.ok else "tv-error"
        return f"<div class='{cls}' data-testid='endpoint-verdict'><b>{'Ready' if v.ok else 'Not usable'}</b>: {safe.text(v.message)}{rows}</div>"

    def run(self, *form):
        """Generator: (status html, log text, view value, loaded, selected tab, download, view source)."""
        no = gr.update()
        keep = (no,) * 5  # leave the view, loaded, tab, download and source as they are
        if not self.enabled:
            yield _status("disabled", 0, 0, "capture is off on this server"), "", *keep
            return
        if not self.slot.lock.acquire(blocking=False):
            yield _status("busy", 0, 0, self.slot.describe()), "", *keep
            return
        try:
            self.slot.cancel.clear()
            self.slot.started, self.slot.stage = time.monotonic(), "task"
            out = captures_root() / time.strftime("%Y%m%d-%H%M%S")
            try:
                cfg = self.config(*form, out_dir=str(out))
            except (TypeError, ValueError) as e:
                yield _status("failed", 0, 0, f"the form has a bad value: {e}"), "", *keep
                return
            events: queue.Queue = queue.Queue()
            result: dict = {}

            def work() -> None:
                try:
                    result["artifact"] = capture(cfg, progress=events.put, cancel=self.slot.cancel)
                except Cancelled:
                    result["cancelled"] = True
                except CaptureError as e:
                    result["error"] = str(e)
                except Exception as e:  # a message for the page, never a traceback
                    result["error"] = f"unexpected {type(e).__name__}: {e}"

            worker = threading.Thread(target=work, daemon=True, name="capture")
            worker.start()
            lines: list[str] = []
            last = Progress("task", "starting", 0, 0.0)
            while worker.is_alive() or not events.empty():
                try:
                    p = events.get(timeout=0.5)
                except queue.Empty:
                    yield (_status(last.stage, last.turns, time.monotonic() - self.slot.started), "\n".join(lines),
                           *keep)
                    continue
                last, self.slot.stage = p, p.stage
                lines = (lines + [f"[{p.elapsed_s:6.1f}s {p.stage}] {p.line}"])[-MAX_LOG_LINES:]
                yield _status(p.stage, p.turns, p.elapsed_s), "\n".join(lines), *keep
            elapsed = time.monotonic() - self.slot.started
            if "artifact" in result:
                a: Artifact = result["artifact"]
                self.last_artifact = a.root
                zipped = shutil.make_archive(str(Path(tempfile.mkdtemp(prefix="capture-zip-")) / a.root.name), "zip",
                                             a.root.parent, a.root.name)
                note = f"reward {a.summary.reward_after_penalties}; opened in the View tab"
                src = None if self.public else str(a.root)  # a deep link to it works where paths are allowed
                value = self.view.artifact_value(a, src)
                yield (_status("done", len(a.turns), elapsed, note), "\n".join(lines), value,
                       str(a.root), gr.Tabs(selected="view"), zipped, gr.update(value=src) if src else no)
            elif result.get("cancelled"):
                yield (_status("cancelled", last.turns, elapsed, "the agent and sandbox were stopped; nothing was written"),
                       "\n".join(lines), *keep)
            else:
                yield (_status("failed", last.turns, elapsed, result.get("error", "")), "\n".join(lines),
                       *keep)
        finally:
            self.slot.lock.release()

    def cancel(self) -> str:
        if not self.slot.lock.locked():
            return _status("idle", 0, 0, "no capture is running")
        self.slot.cancel.set()
        return _status("cancelling", 0, time.monotonic() - self.slot.started, "stopping the agent and the sandbox")

    def push(self, repo: str, token: str) -> str:
        if self.last_artifact is None or not self.last_artifact.is_dir():
            return "<div class='tv-error'>Capture a rollout first.</div>"
        repo = (repo or "").strip()
        if not repo:
            return "<div class='tv-error'>Name the Hub dataset repo (org/name).</div>"
        lines: list[str] = []
        try:
            url = push(self.last_artifact, repo, (token or "").strip() or None, lambda line, **_: lines.append(line))
        except CaptureError as e:
            return f"<div class='tv-error'>{safe.text(e)}</div>"
        return f"<div class='tv-boundary ok'>pushed to {safe.text(url)}</div>"

    # -- layout -------------------------------------------------------------------------------------

    def render(self) -> None:
        """Create the tab's components (inside a `gr.Tab`); `wire` connects them once the View tab exists."""
        self._wiring = None
        if not self.enabled:
            gr.Markdown("**Capture is off on this server.** It runs an agent and a sandbox, so a public Space keeps it "
                        "off unless its owner sets `ROLLOUT_VIEWER_ENABLE_CAPTURE=1`. "
                        "The View tab works for everyone.", elem_id="capture-disabled")
            return
        gr.Markdown("Run **one** rollout: the task goes to opencode in a sandbox, the capture proxy records every "
                    "model call with exact token ids and logprobs, the held-out tests give the reward, and the "
                    "artifact opens in the View tab.")
        with gr.Row():
            backend = gr.Radio(["local", "hf-sandbox"], value="local", label="Backend",
                               info="local: opencode on this machine; hf-sandbox: a Hugging Face sandbox", elem_id="cap-backend")
            model = gr.Textbox("Qwen/Qwen3-8B", label="Model", info="served model name (and tokenizer id)", elem_id="cap-model")
            endpoint = gr.Textbox("", label="Endpoint URL", info="local: the vLLM server; hf-sandbox: a URL the sandbox can reach",
                                  elem_id="cap-endpoint")
        with gr.Row():
            dataset = gr.Textbox(DEFAULT_DATASET, label="Dataset", info="Hub dataset id or a local .jsonl/.parquet task file",
                                 elem_id="cap-dataset")
            example = gr.Textbox("", label="Training script (optional)", info="defines build_dataset; decides the tasks",
                                 visible=not self.public, elem_id="cap-example")
            tokenizer = gr.Textbox("", label="Tokenizer (optional)", info="path or id, when it differs from the model",
                                   elem_id="cap-tokenizer")
        with gr.Row():
            n_prompts = gr.Number(64, precision=0, label="Tasks (n_prompts)", info="as in training", elem_id="cap-n")
            seed = gr.Number(0, precision=0, label="Dataset seed", elem_id="cap-seed")
            rollout_seed = gr.Textbox("", label="Rollout seed", info="empty = dataset seed", elem_id="cap-rseed")
            task_index = gr.Number(0, precision=0, label="Task index", elem_id="cap-index")
            timeout_s = gr.Number(900, label="Timeout (s)", elem_id="cap-timeout")
        with gr.Row():
            image = gr.Textbox(DEFAULT_IMAGE, label="Sandbox image", elem_id="cap-image")
            flavor = gr.Textbox(DEFAULT_FLAVOR, label="Sandbox flavor", elem_id="cap-flavor")
        form = [backend, model, endpoint, dataset, example, tokenizer, n_prompts, seed, rollout_seed, task_index,
                image, flavor, timeout_s]
        with gr.Row():
            preview_btn = gr.Button("Preview task", elem_id="cap-preview")
            check_btn = gr.Button("Check endpoint", elem_id="cap-check")
            run_btn = gr.Button("Capture", variant="primary", elem_id="cap-run")
            cancel_btn = gr.Button("Cancel", variant="stop", elem_id="cap-cancel")
        preview = gr.HTML(elem_id="cap-preview-box")
        verdict = gr.HTML(elem_id="cap-verdict")
        status = gr.HTML(elem_id="cap-status")
        log = gr.Textbox(label="Log", lines=12, max_lines=12, autoscroll=True, interactive=False, elem_id="cap-log")
        with gr.Row():
            download = gr.File(label="Artifact (.zip)", interactive=False, elem_id="cap-download")
            with gr.Column():
                repo = gr.Textbox("", label="Push to Hub dataset", placeholder="org/name", elem_id="cap-repo")
                token = gr.Textbox("", label="HF token (write access; used once, never stored)", type="password",
                                   elem_id="cap-token")
                push_btn = gr.Button("Push", elem_id="cap-push")
                pushed = gr.HTML(elem_id="cap-pushed")
        self._wiring = (form, preview_btn, preview, check_btn, verdict, run_btn, status, log, download, cancel_btn,
                        push_btn, repo, token, pushed)

    def wire(self, tabs: gr.Tabs) -> None:
        if self._wiring is None:
            return
        (form, preview_btn, preview, check_btn, verdict, run_btn, status, log, download, cancel_btn,
         push_btn, repo, token, pushed) = self._wiring
        preview_btn.click(self.preview, form, preview)
        check_btn.click(self.check, form, verdict)
        run_btn.click(self.run, form, [status, log, self.view.view, self.view.loaded, tabs, download, self.view.src])
        cancel_btn.click(self.cancel, None, status, queue=False)
        push_btn.click(self.push, [repo, token], pushed)
