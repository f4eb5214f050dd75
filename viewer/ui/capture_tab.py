"""The Capture tab: fill in a form, check the endpoint, run one rollout, watch it, open it in View.

The form is checked on the server before anything starts, and every message names a setting by its
label here. The capture runs in a background thread (capture.capture); the Capture button's
generator streams its progress. One capture runs at a time per server: a second visitor is told one
is running. Cancel stops the agent and the sandbox, and nothing is written. The visitor's HF token
is only passed to the Hub call that needs it: never echoed, logged or stored.

On a public server (`public=True`) the form has no field that names a server path and no local
backend, and every handler first asks the gate (capture_gate.py), then compares the dataset with the
owner's list (a plain string comparison: the answer never depends on what exists on the server's
disk), then `capture.check_public`: a visitor calling the API directly meets the same checks as one
using the page.
"""

from __future__ import annotations

import contextlib
import queue
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr

import crash_log
from capture import (
    BACKENDS,
    DEFAULT_DATASET,
    ENDPOINT_FIELDS,
    TASK_FIELDS,
    CaptureConfig,
    CaptureError,
    PolicyError,
    Progress,
    capture,
    check_endpoint,
    check_public,
    problems,
    push,
    task_for,
)
from capture.group import GroupResult, RolloutProgress, StageBoard, capture_group
from capture.live import LiveUpdate
from capture.policy import pinned_endpoint
from rollout_trace.artifact import Artifact
from rollout_trace.artifact.group import GROUP_FILE
from viewer.contract import Initial
from viewer.render import safe
from viewer.settings import settings
from viewer.untrusted import number, whole

from .capture_gate import Gate
from .capture_progress import Slot, Written, group_status, start, status_line, written
from .downloads import new_download_dir
from .live import live_source_name
from .parts import ViewParts
from .service import Service

MAX_LOG_LINES = 400
MAX_TIMEOUT_S = 7 * 24 * 3600.0  # a rollout never runs for a week; past this a number is a typo or a probe
DEFAULTS = CaptureConfig()  # the form's defaults are the library's

# What the form calls each CaptureConfig setting: messages about a setting use exactly these words.
LABELS = {"backend": "Backend", "model": "Model", "endpoint": "Endpoint URL", "sandbox_vllm_url": "Endpoint URL",
          "dataset": "Dataset", "example": "Training script", "tokenizer": "Tokenizer", "n_prompts": "Tasks (n_prompts)",
          "seed": "Dataset seed", "rollout_seed": "Rollout seed", "task_index": "Task index",
          "timeout_s": "Timeout (s)", "sandbox_image": "Sandbox image", "sandbox_flavor": "Sandbox flavor",
          "local_model": "Local model", "out_dir": "Output folder", "group_size": "Group size", "parallel": "Parallel"}
REQUIRED = ("model", "endpoint", "dataset", "sandbox_image", "sandbox_flavor")  # the sandbox pair: shown for hf-sandbox only
LOCAL_BACKEND_NOTE = ("**The local backend is not a sandbox.** The agent's commands (opencode's bash and file "
                      "writes) run on this machine, as the user running this app, in a temporary folder. Use it with "
                      "a model and tasks you trust.")
ENDPOINT_INFO = {"local": "the vLLM server as this machine reaches it, e.g. http://127.0.0.1:8000/v1",
                 "hf-sandbox": "a public URL of the vLLM server that the Hugging Face sandbox can reach"}


def label(name: str) -> str:
    """A setting's label as the form shows it: required ones marked with *."""
    return LABELS[name] + (" *" if name in REQUIRED else "")


def describe(error: CaptureError) -> str:
    """The error's message with its setting named by the form's label."""
    return error.naming(LABELS.get)


def public_datasets() -> list[str]:
    """The Hub datasets a visitor of a public server may capture from (the owner's list, or the default)."""
    return list(settings().capture_datasets) or [DEFAULT_DATASET]


def captures_root() -> Path:
    return settings().capture_dir or Path.cwd() / "captures"


def _error_html(testid: str, messages: list[str], title: str = "Check the form") -> str:
    items = "".join(f"<li>{safe.text(m)}</li>" for m in messages)
    return f"<div class='tv-error' data-testid='{testid}'><b>{safe.text(title)}</b><ul>{items}</ul></div>"


def _whole(value: Any, name: str, found: list[CaptureError], optional: bool = False) -> int | None:
    """A whole number from a form value (the API may send anything), or a problem naming the field."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if optional:
            return None
        found.append(CaptureError("is required: a whole number", name))
        return None
    number = whole(value, most=2**63 - 1, least=-(2**63))
    if number is None:
        found.append(CaptureError(f"must be a whole number, not {str(value)[:40]!r}", name))
    return number


class CaptureTab:
    """Owns the Capture tab's components (as attributes) and its event handlers.

    Handlers take the form as one dict {component: value} (Gradio's set inputs) and answer with dicts
    of the components they change, so adding a field touches one place.
    """

    parts: ViewParts  # the View tab's components a capture opens in (set by wire)

    def __init__(self, service: Service, enabled: bool, public: bool, gate: Gate | None = None):
        self.service, self.enabled, self.public = service, enabled, public
        self.gate = gate if gate is not None else Gate.from_env()
        self.slot = Slot()
        self.fields: dict[str, Any] = {}  # CaptureConfig name -> its component
        self.secret: gr.Textbox | None = None
        self.group_size: gr.Number | None = None  # K (1 = one rollout) and P: not CaptureConfig settings
        self.parallel: gr.Number | None = None
        self.capture_group = capture_group  # replaced by tests with a stand-in
        self.tabs: gr.Tabs | None = None  # the app's tabs, to switch to View after a capture (set by wire)

    # -- form -> config -----------------------------------------------------------------------------

    @property
    def form(self) -> set:
        """Every input a handler reads: the settings and, on a public server, the capture password."""
        extra = {c for c in (self.secret, self.group_size, self.parallel) if c is not None}
        return set(self.fields.values()) | extra

    def values(self, **by_name: Any) -> dict:
        """The form as a handler receives it: the defaults, with `by_name` (setting names) changed."""
        out = {c: c.value for c in self.form}
        for name, value in by_name.items():
            special = {"secret": self.secret, "group_size": self.group_size, "parallel": self.parallel}
            out[special[name] if name in special else self.fields[name]] = value
        return out

    def config(self, values: dict, out_dir: str = "") -> tuple[CaptureConfig, list[CaptureError]]:
        """The CaptureConfig a filled form asks for, and what is wrong with the values that are not numbers."""
        got = {name: values.get(comp) for name, comp in self.fields.items()}

        def text(name: str) -> str:
            return str(got.get(name) or "").strip()

        found: list[CaptureError] = []
        # On a public server the form offers no backend choice and no path fields: those settings are
        # not read from the request at all, whatever it carries.
        backend = (text("backend") or DEFAULTS.backend) if "backend" in self.fields else "hf-sandbox"
        url = text("endpoint") or None
        numbers = {name: _whole(got.get(name), name, found) for name in ("n_prompts", "seed", "task_index")}
        rollout_seed = _whole(got.get("rollout_seed"), "rollout_seed", found, optional=True)
        timeout_s = number(got.get("timeout_s"), MAX_TIMEOUT_S, -MAX_TIMEOUT_S)
        if timeout_s is None:
            found.append(CaptureError("must be a number of seconds", "timeout_s"))
            timeout_s = DEFAULTS.timeout_s
        cfg = CaptureConfig(
            model=text("model"), backend=backend, endpoint=url if backend == "local" else None,
            sandbox_vllm_url=url if backend != "local" else None, dataset=text("dataset"),
            example=text("example") or None, tokenizer=text("tokenizer") or None,
            n_prompts=numbers["n_prompts"] if numbers["n_prompts"] is not None else DEFAULTS.n_prompts,
            seed=numbers["seed"] if numbers["seed"] is not None else DEFAULTS.seed, rollout_seed=rollout_seed,
            task_index=numbers["task_index"] if numbers["task_index"] is not None else DEFAULTS.task_index,
            sandbox_image=text("sandbox_image"), sandbox_flavor=text("sandbox_flavor"),
            timeout_s=timeout_s, out_dir=out_dir, public=self.public)
        return cfg, found

    def _refusal(self, values: dict, profile: gr.OAuthProfile | None) -> str | None:
        """Why this visitor may not use the tab (capture off, or the public gate), or None."""
        if not self.enabled:
            return "Capture is off on this server."
        if self.public:
            return self.gate.refusal(values.get(self.secret) if self.secret else None, profile)
        return None

    def _vet(self, values: dict, profile: gr.OAuthProfile | None, only: tuple[str, ...] | None, testid: str,
             out_dir: str = "") -> tuple[CaptureConfig | None, str]:
        """The config to act on, or the message (HTML) that stops it: gate, public policy, then the form."""
        cfg, found = self.config(values, out_dir)
        stop = self._stop(values, profile, cfg, out_dir)
        if stop:
            return None, _error_html(testid, *stop)
        found = [p for p in found if only is None or p.field in only] + problems(cfg, only)
        return (None, _error_html(testid, [describe(p) for p in found])) if found else (cfg, "")

    def _stop(self, values: dict, profile: gr.OAuthProfile | None, cfg: CaptureConfig,
              out_dir: str = "") -> tuple[list[str], str] | None:
        """What stops this request (`cfg`, its settings as read) before its form's problems are said (the gate,
        then a public server's policy) and the message's title, or None. It comes first everywhere, so a refused
        visitor learns nothing about the form."""
        refused = self._refusal(values, profile)
        if refused:
            return [refused], "Not allowed"
        if not self.public:
            return None
        if cfg.dataset not in public_datasets():  # before check_public, which looks for it on disk
            return (["Dataset: must be one of the Hub datasets this server offers: " + ", ".join(public_datasets())],
                    "Not allowed on a public server")
        try:
            check_public(cfg, allowed_out_root=captures_root() if out_dir else None)
        except PolicyError as e:
            return [str(p) for p in e.problems], "Not allowed on a public server"
        return None

    def field_checks(self, values: dict, only: tuple[str, ...] | None) -> list[dict]:
        """Gradio's per-field validation: each malformed setting said beside its own field, before a handler runs.

        One `gr.validate` per input, in the order Gradio gives an event's set of inputs (by component id). A
        problem with no field of its own passes here, and the handler's summary (`_vet`) names it."""
        cfg, found = self.config(values)
        if self.public and self._stop(values, None, cfg):  # the handler says it (Gradio hands a validator no profile)
            return [gr.validate(True, "") for _ in self.form]
        found = [p for p in found if only is None or p.field in only] + problems(cfg, only)
        if only is None:  # the run's own two numbers
            found += self._group_numbers(values)[2]
        said: dict[Any, list[str]] = {}
        for p in found:
            comp = self._field_component(p.field)
            if comp is not None:
                said.setdefault(comp, []).append(describe(p))
        return [gr.validate(comp not in said, "; ".join(said.get(comp, []))) for comp in
                sorted(self.form, key=lambda c: c._id)]

    def _group_numbers(self, values: dict) -> tuple[int | None, int | None, list[CaptureError]]:
        """The run's group size K (at least 1) and Parallel P (0 = the backend's default), and what is wrong with them."""
        found: list[CaptureError] = []
        k = _whole(values.get(self.group_size), "group_size", found, optional=True) if self.group_size else None
        p = _whole(values.get(self.parallel), "parallel", found, optional=True) if self.parallel else None
        for name, n, least in (("group_size", k, 1), ("parallel", p, 0)):
            if n is not None and n < least:
                found.append(CaptureError(f"must be at least {least}, not {n}", name))
        return k, p, found

    def _field_component(self, name: str | None) -> Any:
        """The form component that holds setting `name` (both endpoint settings share one box), or None."""
        if name in ("endpoint", "sandbox_vllm_url"):
            return self.fields.get("endpoint")
        if name == "group_size":
            return self.group_size
        if name == "parallel":
            return self.parallel
        return self.fields.get(name) if name else None

    # -- events -------------------------------------------------------------------------------------

    def on_backend(self, backend: str) -> dict:
        """Show only the chosen backend's fields, and say plainly what the local backend is."""
        local = backend == "local"
        return {self.sandbox_row: gr.update(visible=not local), self.local_note: gr.update(visible=local),
                self.fields["endpoint"]: gr.update(info=ENDPOINT_INFO.get(backend, ""))}

    def preview(self, values: dict, profile: gr.OAuthProfile | None = None) -> str:
        cfg, stop = self._vet(values, profile, TASK_FIELDS, "task-preview")
        if cfg is None:
            return stop
        try:
            t = task_for(cfg)
        except CaptureError as e:
            return f"<div class='tv-error' data-testid='task-preview'>{safe.text(describe(e))}</div>"
        return (f"<div data-testid='task-preview'><b>task {t.index}</b> <span class='tv-dim'>{t.task_id[:12]} · "
                f"{len(t.held_out)} held-out tests (hidden from the agent)</span>"
                f"<div class='tv-md'>{safe.markdown(t.instruction)}</div></div>")

    def check(self, values: dict, profile: gr.OAuthProfile | None = None) -> str:
        cfg, stop = self._vet(values, profile, ENDPOINT_FIELDS, "endpoint-verdict")
        if cfg is None:
            return stop
        try:  # on a public app the probe connects to the addresses the policy checked (capture/policy.py)
            with pinned_endpoint(cfg.llm_url or "") if self.public else contextlib.nullcontext():
                v = check_endpoint(cfg.llm_url or "", cfg.model)  # none: the check says unreachable
        except PolicyError as e:
            return _error_html("endpoint-verdict", [str(p) for p in e.problems])
        model = "" if v.serves_model else f"<li>serves {safe.text(safe.short(cfg.model, 80))}: no</li>"
        rows = (f"<ul><li>reachable: {'yes' if v.reachable else 'no'}</li>{model}"
                f"<li>token ids: {'yes' if v.token_ids else 'no'}</li>"
                f"<li>logprobs: {'yes' if v.logprobs else 'no'}</li><li>tool calls: {safe.text(v.tool_calls or 'not checked')}</li></ul>")
        cls = "tv-boundary ok" if v.ok else "tv-error"
        return f"<div class='{cls}' data-testid='endpoint-verdict'><b>{'Ready' if v.ok else 'Not usable'}</b>: {safe.text(v.message)}{rows}</div>"

    def run(self, values: dict, profile: gr.OAuthProfile | None = None):
        """Generator of {component: value}: the status and log as it goes; the View tab on success."""
        out = captures_root() / time.strftime("%Y%m%d-%H%M%S")
        cfg, stop = self._vet(values, profile, None, "capture-status", out_dir=str(out))
        if cfg is None:
            yield {self.status: stop}
            return
        if not self.slot.lock.acquire(blocking=False):
            yield {self.status: status_line("busy", 0, 0, self.slot.describe())}
            return
        try:
            k, p, found = self._group_numbers(values)
            p = p or None  # 0 or empty: the backend's default (capture.group.default_parallel)
            if found:
                why = "Group size is a whole number, at least 1; Parallel a whole number (0 = the backend's default)"
                yield {self.status: _error_html("capture-status", [why])}
                return
            yield from self._run(cfg, k if k is not None and k > 1 else None, p)
        finally:
            self.slot.release()

    def _show_live(self, run: str, u: LiveUpdate, watched: dict[str, bool]) -> dict:
        """The Capture tab's part of a watched run: the view's first value, and the View tab brought to the
        front when the first turn lands. The page asks for everything after itself (viewer/ui/live.py)."""
        update: dict = {}
        if not watched.get("shown") and (value := self.service.live.value(run, u.rollout)) is not None:
            update[self.parts.view] = value
            # the source box names what the view shows; the finished capture's own name replaces it (open_capture)
            update[self.parts.src] = gr.update(value=live_source_name(u.artifact.summary.task_id))
            watched["shown"] = True
        if watched.get("shown") and not watched.get("switched") and u.artifact.turns:
            update[self.tabs] = gr.Tabs(selected="view")
            watched["switched"] = True
        return update

    def _finals(self, w: Written) -> dict[int | None, tuple[str, str | None, float | None]]:
        """Each written rollout as the live view's replacement: (store key, source, advantage)."""
        out: dict[int | None, tuple[str, str | None, float | None]] = {}
        for index, a, advantage in w.rollouts:
            try:
                out[index] = (*self.service.values.keep_capture(a), advantage)
            except Exception as e:  # its live view stays, marked as ended; a group's map still opens it
                crash_log.unexpected("analysing a capture")
                w.problem = f"the artifact is written, but could not be analysed: {type(e).__name__}: {str(e)[:300]}"
        return out

    def _run(self, cfg: CaptureConfig, k: int | None = None, parallel: int | None = None):
        """The one loop of a capture, watched as it runs: a rollout (`k` None) or a GRPO group of `k`, `parallel`
        at a time (its rollouts side by side, StageBoard). The View tab gets the live view once the task is
        known and comes to the front when the first turn lands; the page follows it from there (for a group,
        the rollout it picks: viewer/ui/live.py). At the end each written rollout replaces its live view, and
        the View tab opens what was written (`open_capture`)."""
        self.slot.cancel.clear()
        self.slot.started, self.slot.stage = time.monotonic(), "task"
        board = StageBoard(k) if k else None
        events: queue.Queue = queue.Queue()
        result: dict = {}
        live = self.service.live
        run = live.start(rollouts=k, cancel=self.slot.cancel.set)

        def progress(p: Progress | RolloutProgress) -> None:
            if board is not None and isinstance(p, RolloutProgress):
                board.update(p)
            events.put(p)

        def on_live(u: LiveUpdate) -> None:
            live.update(run, u)
            events.put(u)

        job: Callable[[], Artifact | GroupResult]
        if k is None:
            job = lambda: capture(cfg, progress=progress, cancel=self.slot.cancel, live=on_live)  # noqa: E731
        else:
            job = lambda: self.capture_group(cfg, k, parallel, progress=progress,  # noqa: E731
                                             cancel=self.slot.cancel, live=on_live)
        worker = self.slot.worker = start(job, result, "written", "capture", describe)
        lines: list[str] = []
        last: Progress | RolloutProgress = Progress("task", "starting", 0, 0.0)
        watched: dict[str, bool] = {}

        def status(stage: str, note: str = "", turns: int | None = None, side_by_side: bool = True) -> str:
            elapsed = time.monotonic() - self.slot.started
            if board is not None and side_by_side:
                return group_status(board, elapsed, note)
            return status_line(stage, last.turns if turns is None else turns, elapsed, note)

        while worker.is_alive() or not events.empty():
            try:
                p = events.get(timeout=0.5)
            except queue.Empty:
                yield {self.status: status(last.stage), self.log: "\n".join(lines)}
                continue
            if isinstance(p, LiveUpdate):
                if update := self._show_live(run, p, watched):
                    yield update
                continue
            rollout = p.rollout if isinstance(p, RolloutProgress) else None
            last, self.slot.stage = p, board.group.stage if board is not None else p.stage
            if board is None or rollout is not None:
                live.stage(run, p.stage, rollout)
            who = "" if board is None else ("group " if rollout is None else f"rollout {rollout} ")
            lines = (lines + [f"[{p.elapsed_s:6.1f}s {who}{p.stage}] {p.line}"])[-MAX_LOG_LINES:]
            yield {self.status: status(p.stage), self.log: "\n".join(lines)}
        log = "\n".join(lines)
        if "written" not in result:  # the live view keeps what it showed, marked cancelled or failed
            yield self._stopped(run, result, board is not None, bool(watched.get("shown")), status, log)
        else:
            yield self._finished(run, written(result["written"]), board is not None, bool(watched.get("shown")),
                                 status, log)

    def _stopped(self, run: str, result: dict, group: bool, shown: bool, status: Callable[..., str], log: str) -> dict:
        """The tab once a capture ended without writing: its live view marked cancelled or failed, and why."""
        live = self.service.live
        state = "cancelled" if result.get("cancelled") else "failed"
        why = result.get("error", "") if state == "failed" else \
            "every rollout was stopped; nothing was written" if group else \
            "the agent and sandbox were stopped; nothing was written"
        live.finish(run, state, why)
        update: dict = {self.status: status(state, why, turns=0 if group else None, side_by_side=False), self.log: log}
        if not group and shown and (value := live.value(run)) is not None:
            update[self.parts.view] = value
        return update

    def _finished(self, run: str, w: Written, group: bool, shown: bool, status: Callable[..., str], log: str) -> dict:
        """The tab once a capture wrote: its download, and the View tab opening what was written."""
        live = self.service.live
        finals = self._finals(w)
        if w.problem and not finals:
            live.finish(run, "failed", w.problem)
        else:
            live.finish(run, "done", finals=finals)
        zipped = shutil.make_archive(str(new_download_dir() / w.root.name), "zip", w.root.parent, w.root.name)
        update: dict = {self.status: status("done", w.note, turns=w.turns), self.log: log, self.download: zipped,
                  self.push_btn: gr.update(interactive=True), self.captured: str(w.root)}
        # a group's page asks for the rollout it follows (viewer/ui/live.py): no view value is pushed, which
        # would move a reader following another; a rollout's finished view replaces its live one in place
        if not group and (value := live.value(run)) is not None:
            update[self.parts.view] = value
        if opened := self.open_capture(w.root, following=shown):
            update.update(opened)
            update[self.tabs] = gr.Tabs(selected="view")
        return update

    def open_capture(self, root: Path, following: bool) -> dict:
        """The View tab's components opening what a capture just wrote at `root`.

        A rollout: its folder becomes the loaded source. A group: its map in the index, where paths may be
        named (a public visitor gets the zip instead: nothing opens). `following`: the page follows the
        capture's live view, finished in place, and keeps it (the group map's view is not pushed over it).
        """
        parts, src = self.parts, gr.update(value=str(root))
        if not (root / GROUP_FILE).is_file():
            if self.public:  # named as its view names it (keep_capture): the source box and the URL agree
                named = self.service.values.captured.get(str(root))
                return {parts.loaded: str(root)} | ({parts.src: gr.update(value=named)} if named else {})
            return {parts.loaded: str(root), parts.src: src}
        if self.public:
            return {}
        value, loaded, index = self.service.rows.open_row(str(root), "", {}, Initial())
        return {parts.loaded: loaded, parts.index: index, parts.src: src} | ({} if following else {parts.view: value})

    def cancel(self, values: dict, profile: gr.OAuthProfile | None = None) -> str:
        refused = self._refusal(values, profile)
        if refused:
            return _error_html("capture-status", [refused], "Not allowed")
        if not self.slot.lock.locked():
            return status_line("idle", 0, 0, "no capture is running")
        self.slot.cancel.set()
        return status_line("cancelling", 0, time.monotonic() - self.slot.started, "stopping the agent and the sandbox")

    def push(self, values: dict, profile: gr.OAuthProfile | None = None) -> str:
        refused = self._refusal(values, profile)
        if refused:
            return _error_html("push-status", [refused], "Not allowed")
        captured = values.get(self.captured)  # this visitor's own capture: a session's State, never another's
        root = Path(captured) if isinstance(captured, str) and captured else None
        if root is None or not root.is_dir():
            return "<div class='tv-error'>Capture a rollout first.</div>"
        repo = str(values.get(self.repo) or "").strip()
        if not repo:
            return "<div class='tv-error'>Push to Hub dataset is required: name the repo (org/name).</div>"
        token = str(values.get(self.token) or "").strip() or None
        try:
            url = push(root, repo, token, lambda line, **_: None)
        except CaptureError as e:
            return f"<div class='tv-error'>{safe.text(describe(e))}</div>"
        return f"<div class='tv-boundary ok'>pushed to {safe.text(url)}</div>"

    # -- layout -------------------------------------------------------------------------------------

    def render(self) -> None:
        """Create the tab's components (inside a `gr.Tab`); `wire` connects them once the View tab exists."""
        if not self.enabled:
            # Said to a visitor: why it is closed and what they can do instead (the owner's switch is in docs/capture.md).
            where, who = ("this public Space", "the Space's owner") if self.public else ("this server", "its operator")
            space = settings().space_id
            docs = f"[docs/capture.md](https://huggingface.co/spaces/{space}/blob/main/docs/capture.md)" if space \
                else "docs/capture.md"  # off a Space the app knows no address of its files
            gr.Markdown(f"**Capture is closed on {where}.** A capture runs a coding agent and a sandbox on "
                        f"this server for minutes, so only {who} can open it. Everything else works: the "
                        "View tab opens the bundled examples, a Hub dataset or an upload, and you can capture on your "
                        f"own machine with `python -m capture` (see the project's {docs}).",
                        elem_id="capture-disabled")
            return
        gr.Markdown("Run **one** rollout: the task goes to opencode in a sandbox, the capture proxy records every "
                    "model call with exact token ids and logprobs, the held-out tests give the reward, and the "
                    "artifact opens in the View tab. A group size K > 1 runs K rollouts of the same task (a GRPO "
                    "group) and opens its group map. Fields marked * are required.")
        if self.public:
            self._render_access()
        f = self.fields
        with gr.Row():
            if not self.public:  # a public server runs only hf-sandbox: no choice to offer
                f["backend"] = gr.Radio(list(BACKENDS), value=DEFAULTS.backend, label=label("backend"),
                                        info="local: opencode on this machine (no sandbox); "
                                             "hf-sandbox: a Hugging Face sandbox", elem_id="cap-backend")
            f["model"] = gr.Textbox(DEFAULTS.model, label=label("model"), info="served model name (and tokenizer id)",
                                    elem_id="cap-model")
            f["endpoint"] = gr.Textbox("", label=label("endpoint"), info=ENDPOINT_INFO[DEFAULTS.backend],
                                       placeholder="http://…/v1", elem_id="cap-endpoint")
        self.local_note = gr.Markdown(LOCAL_BACKEND_NOTE, visible=DEFAULTS.backend == "local" and not self.public,
                                      elem_id="cap-local-note")
        with gr.Row():
            if self.public:  # compared with the owner's list as a string: never a path on this server
                f["dataset"] = gr.Dropdown(public_datasets(), value=public_datasets()[0], label=label("dataset"),
                                           info="a Hub dataset this server allows", elem_id="cap-dataset")
            else:
                f["dataset"] = gr.Textbox(DEFAULTS.dataset, label=label("dataset"),
                                          info="Hub dataset id or a local .jsonl/.parquet task file", elem_id="cap-dataset")
                f["example"] = gr.Textbox("", label=LABELS["example"] + " (optional)",
                                          info="a .py defining build_dataset; decides the tasks (it is run)",
                                          elem_id="cap-example")
            f["tokenizer"] = gr.Textbox("", label=LABELS["tokenizer"] + " (optional)",
                                        info=("a Hub id, when it differs from the model" if self.public else
                                              "path or Hub id, when it differs from the model"), elem_id="cap-tokenizer")
        with gr.Row():
            f["n_prompts"] = gr.Number(DEFAULTS.n_prompts, precision=0, label=label("n_prompts"), info="as in training",
                                       elem_id="cap-n")
            f["seed"] = gr.Number(DEFAULTS.seed, precision=0, label=label("seed"), elem_id="cap-seed")
            f["rollout_seed"] = gr.Textbox("", label=label("rollout_seed"), info="empty = dataset seed",
                                           elem_id="cap-rseed")
            f["task_index"] = gr.Number(DEFAULTS.task_index, precision=0, label=label("task_index"), elem_id="cap-index")
            f["timeout_s"] = gr.Number(DEFAULTS.timeout_s, label=label("timeout_s"), elem_id="cap-timeout")
            self.group_size = gr.Number(1, precision=0, minimum=1, label="Group size",
                                        info="K rollouts of the same task (TRL's num_generations); 1 = one rollout",
                                        elem_id="cap-k")
            self.parallel = gr.Number(0, precision=0, minimum=0, label="Parallel",
                                      info="rollouts at once; 0 = the backend's default", elem_id="cap-parallel")
        with gr.Row(visible=DEFAULTS.backend != "local" or self.public, elem_id="cap-sandbox-row") as self.sandbox_row:
            f["sandbox_image"] = gr.Textbox(DEFAULTS.sandbox_image, label=label("sandbox_image"), elem_id="cap-image")
            f["sandbox_flavor"] = gr.Textbox(DEFAULTS.sandbox_flavor, label=label("sandbox_flavor"), elem_id="cap-flavor")
        with gr.Row():
            self.preview_btn = gr.Button("Preview task", elem_id="cap-preview")
            self.check_btn = gr.Button("Check endpoint", elem_id="cap-check")
            self.run_btn = gr.Button("Capture", variant="primary", elem_id="cap-run")
            # quiet beside Capture: it only matters while a capture runs (the live view has its own cancel too)
            self.cancel_btn = gr.Button("Cancel", variant="secondary", elem_id="cap-cancel")
        self.preview_box = gr.HTML(elem_id="cap-preview-box", padding=False)
        self.verdict = gr.HTML(elem_id="cap-verdict", padding=False)
        self.status = gr.HTML(elem_id="cap-status", padding=False)
        self.log = gr.Textbox(label="Log", lines=12, max_lines=12, autoscroll=True, interactive=False, elem_id="cap-log")
        with gr.Row():
            self.download = gr.File(label="Artifact (.zip)", interactive=False, elem_id="cap-download")
            with gr.Column():
                self.repo = gr.Textbox("", label="Push to Hub dataset", placeholder="org/name", elem_id="cap-repo")
                self.token = gr.Textbox("", label="HF token (write access; used once, never stored)", type="password",
                                        elem_id="cap-token")
                self.push_btn = gr.Button("Push", interactive=False, elem_id="cap-push")  # once a capture wrote one
                self.captured = gr.State(None)  # the folder this session's last capture wrote (what Push pushes)
                self.pushed = gr.HTML(elem_id="cap-pushed")

    def _render_access(self) -> None:
        """The password field and/or the Hugging Face sign-in a public server's owner asked for."""
        if not self.gate.configured:
            gr.Markdown(self.gate.refusal(None, None) or "", elem_id="cap-access")
            return
        gr.Markdown(self.gate.how(), elem_id="cap-access")
        with gr.Row():
            if self.gate.secret:
                self.secret = gr.Textbox("", label="Capture password", type="password", elem_id="cap-secret")
            if self.gate.users and settings().on_space:  # Gradio's sign-in needs a Space's OAuth
                gr.LoginButton(elem_id="cap-login")

    def wire(self, tabs: gr.Tabs, parts: ViewParts) -> None:
        """Wire the form's events; `parts`: the View tab's components a capture opens in."""
        if not self.enabled:
            return
        self.tabs, self.parts = tabs, parts
        form = self.form
        if "backend" in self.fields:
            self.fields["backend"].change(self.on_backend, self.fields["backend"],
                                          [self.sandbox_row, self.local_note, self.fields["endpoint"]], queue=False)
        # Each button validates only the fields it reads, beside those fields (Gradio's validator runs first).
        self.preview_btn.click(self.preview, form, self.preview_box,
                               validator=lambda values: self.field_checks(values, TASK_FIELDS))
        self.check_btn.click(self.check, form, self.verdict,
                             validator=lambda values: self.field_checks(values, ENDPOINT_FIELDS))
        # No progress overlay: the live token view is an output of this event, and the reader works in it.
        self.run_btn.click(self.run, self.form, [self.status, self.log, self.parts.view, self.parts.loaded, tabs,
                                                 self.download, self.parts.src, self.parts.index,
                                                 self.push_btn, self.captured],
                           show_progress="hidden", validator=lambda values: self.field_checks(values, None))
        self.cancel_btn.click(self.cancel, form, self.status, queue=False)
        self.push_btn.click(self.push, form | {self.repo, self.token, self.captured}, self.pushed)
