"""The View tab: pick a source (example, Hub id, path, upload) and the token view renders it.

Gradio supplies the source controls, uploads, downloads and page load (what a link shows is decided by
viewer/router.py); the token view itself is one custom `gr.HTML` component (viewer/assets/trace_view/, joined
by viewer/assets `read`, its CSS scoped to the component) that gets
an `Opened` record (viewer/contract.py) as a JSON string and fetches token chunks through
`server_functions`, which skip the queue. Loaded rollouts are shared by every visitor of the same
source (viewer/ui/store.py). On a public Space (`public=True`) visitors can open bundled examples,
Hub datasets and uploads, never server paths, and messages name what the visitor gave, never a
server path.
"""

from __future__ import annotations

import hashlib
import html
import io
from pathlib import Path

import gradio as gr
import msgspec

import crash_log
from rollout_trace.analysis.trainer_view import EPS_CHOICES
from rollout_trace.artifact import Artifact, ArtifactError, Problem, bundled_examples, open_artifact, open_upload
from rollout_trace.artifact.group import GROUP_FILE
from rollout_trace.artifact.sources import bundled_groups, bundled_runs, identify
from rollout_trace.artifact.unpack import scratch
from viewer import assets
from viewer.contract import Exported, Failed, Initial, Live, Opened, RunContext, encode
from viewer.export import ADVANTAGE_CHOICES, TrainerChoice, size_label, write_export
from viewer.page_link import MAX_SRC_CHARS, UPLOAD_SRC
from viewer.render import panels, safe
from viewer.render.outline import training
from viewer.rollout import Rollout
from viewer.router import initial_from_params
from viewer.trainer_records import BadRequest, parse_request, trainer_summary, trainer_turn
from viewer.untrusted import number, whole_or

from .collection_view import CollectionView
from .find_panel import FindPanel
from .live import LiveRuns
from .run_view import RunView
from .store import Held, RolloutStore

MOUNT_JS = "TraceView.mountInApp(element, props, server, watch);"
UPLOAD_GONE = "this upload is no longer loaded on this server: upload the file again"
MAX_ADVANTAGE = 1e3
MAX_RUN_CONTEXT_BYTES = 4096  # a run context the page sends back with an export request (it labels the file)


def _scrub(p: Problem, path: str, name: str) -> Problem:
    """The same problem with a server folder replaced by the name the visitor knows."""
    fix = lambda v: v.replace(path, name) if isinstance(v, str) else v  # noqa: E731
    return Problem(fix(p.file), fix(p.message), p.turn, fix(p.field), fix(p.expected), fix(p.found))


def _digest(files: dict[str, bytes]) -> str:
    """What names an upload (its files' names and bytes): 128 bits of their SHA-256."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode())
        h.update(files[name])
    return h.hexdigest()[:32]


def _trainer_choice(r: Rollout, value: object, group: float | None) -> TrainerChoice | None:
    """The trainer panel's settings an export request names, each checked (a bad one falls back)."""
    if not r.artifact.rescores:
        return None
    v = value if isinstance(value, dict) else {}
    part = str(v.get("part", ""))
    eps = whole_or(v.get("eps"), 0)
    adv = str(v.get("adv", "+1"))
    if adv not in ADVANTAGE_CHOICES or (adv == "group" and group is None):
        adv = "+1"
    return TrainerChoice(part if part in r.artifact.rescores else next(iter(r.artifact.rescores)),
                         eps if 0 <= eps < len(EPS_CHOICES) else 0, adv)


def _advantage(value: object) -> float | None:
    """The group's advantage the page was given, when it is a sensible number (it only labels the visitor's file)."""
    return number(value, MAX_ADVANTAGE, -MAX_ADVANTAGE) if not isinstance(value, str) else None


def _run_context(value: object) -> RunContext | None:
    """The run context the page was given, sent back with an export (it only labels the visitor's file)."""
    if not isinstance(value, dict):
        return None
    try:
        if len(msgspec.json.encode(value)) > MAX_RUN_CONTEXT_BYTES:
            return None
        return msgspec.convert(value, RunContext)
    except (msgspec.ValidationError, TypeError, ValueError):
        return None


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
    """Owns the loaded rollouts and the components of the View tab."""

    def __init__(self, default_source: str, public: bool):
        self.default_source, self.public = default_source, public
        self.store = RolloutStore()
        self.captured: dict[str, str] = {}  # a public capture's folder -> the upload-like source naming it (keep_capture)
        self.collections = CollectionView(self)  # decides collection or single artifact; owns the index
        self.runs = RunView(self)  # a recorded TRL run's page, above its collection index (viewer/ui/run_view.py)
        self.find = FindPanel(self)  # search and findings over a collection's or a run's rollouts
        self.live = LiveRuns(self.store, lambda key, src, initial, live, advantage:
                             self.opened_value(key, src, initial, advantage=advantage, live=live))

    # -- values for the token view ------------------------------------------------------------------

    def error_value(self, source: str, problems: list) -> str:
        return encode(Failed(panels.problems(source, problems))).decode()

    def opened_value(self, key: str, src: str | None, initial: Initial, built: bool = False,
                     advantage: float | None = None, live: Live | None = None, run: RunContext | None = None) -> str:
        """The view's value: the shared outline, this visitor's place, and the chunk that place shows first."""
        r = self.store.get(key)
        assert r is not None
        turn = min(initial.turn, max(0, len(r.artifact.turns) - 1))
        initial = Initial(turn, initial.mode, initial.scope, initial.found if turn == initial.turn else None)
        first = None
        if r.artifact.turns and initial.scope != "row":
            first = r.chunk(turn, initial.scope, r.story_chunk(turn, initial.scope))
        outline = msgspec.Raw(self.store.outline_json(key, advantage, run))
        return encode(Opened(key, src, outline, initial, first, built, live)).decode()

    def open_value(self, label: str, identity: str, reopen, src: str | None, initial: Initial, built: bool = False,
              advantage: float | None = None, held: Held | None = None, run: RunContext | None = None) -> str:
        try:
            key, _ = self.store.open(identity, reopen, held)
            return self.opened_value(key, src, initial, built, advantage, run=run)
        except ArtifactError as e:
            return self.error_value(label, e.problems)
        except Exception as e:  # analysis of a valid artifact failed: say so in the page, no traceback
            crash_log.unexpected(f"could not analyse {label[:200]}")  # the traceback, for the operator's log
            return self.error_value(label, [f"could not analyse it: {type(e).__name__}: {str(e)[:300]}"])

    def keep_artifact(self, a: Artifact) -> str:
        """Load an artifact already read (a capture just wrote it) into the shared store; returns its key.
        Raises what its analysis raises."""
        identity = identify(str(a.root), allow_local=True) if a.root is not None else f"capture|{id(a)}"
        return self.store.open(identity, lambda: Rollout.load(a))[0]

    def keep_capture(self, a: Artifact) -> tuple[str, str | None]:
        """(store key, page source) of a rollout a capture just wrote. A public visitor cannot name a server
        folder, so there the capture is named as an upload is (`upload:<digest>` of its files): a reload or a
        shared link reopens it while this server keeps it."""
        if not self.public or a.root is None:
            return self.keep_artifact(a), None if self.public else (str(a.root) if a.root is not None else None)
        root = a.root
        digest = _digest({f.relative_to(root).as_posix(): f.read_bytes() for f in sorted(root.rglob("*"))
                          if f.is_file() and f.name in ("summary.json", "trace.json", "turns.json")})
        first = [a]

        def reopen() -> Rollout:  # the artifact in memory first, then its folder (a capture's own, on this server)
            return Rollout.load(first.pop() if first else open_artifact(root, allow_local=True))

        key = self.store.open("upload|" + digest, reopen)[0]
        if len(self.captured) > 1000:  # bounded: the newest captures keep their names
            self.captured.pop(next(iter(self.captured)))
        self.captured[str(root)] = f"upload:{digest}"
        return key, f"upload:{digest}"

    def open_capture(self, root: Path, following: bool) -> dict:
        """This tab's components opening what a capture just wrote at `root` (the Capture tab's one way in).

        A rollout: its folder becomes the loaded source. A group: its map in the index, where paths may be
        named (a public visitor gets the zip instead: nothing opens). `following`: the page follows the
        capture's live view, finished in place, and keeps it (the group map's view is not pushed over it).
        """
        src = gr.update(value=str(root))
        if not (root / GROUP_FILE).is_file():
            if self.public:  # named as its view names it (keep_capture): the source box and the URL agree
                return {self.loaded: str(root)} | ({self.src: gr.update(value=named)} if (named := self.captured.get(str(root))) else {})
            return {self.loaded: str(root), self.src: src}
        if self.public:
            return {}
        value, loaded, index = self.collections.open_row(str(root), "", {}, Initial())
        return {self.loaded: loaded, self.collections.component: index, self.src: src} | (
            {} if following else {self.view: value})

    def source_value(self, source: str, initial: Initial | None = None, built: bool = False) -> tuple[str, str]:
        source = (source or "").strip()
        shown = source if len(source) <= 80 else source[:77] + "…"
        if len(source) > MAX_SRC_CHARS:
            return self.error_value(shown, [Problem("source", "too long to be a source", expected=f"at most "
                                                    f"{MAX_SRC_CHARS} characters", found=f"{len(source):,}")]), ""
        allow_local = not self.public
        upload = UPLOAD_SRC.fullmatch(source)
        if upload:  # never read from a name: it opens while the store holds it (or can reload it from the upload)
            key = self.store.key_for("upload|" + upload.group(1))
            try:
                if self.store.get(key) is None:
                    return self.error_value("the upload", [Problem("upload", UPLOAD_GONE)]), source
                return self.opened_value(key, source, initial or Initial(), built), source
            except ArtifactError:  # its files were swept from Gradio's cache since
                return self.error_value("the upload", [Problem("upload", UPLOAD_GONE)]), source
        try:
            identity = identify(source, allow_local=allow_local)
        except ArtifactError as e:
            return self.error_value(shown, e.problems), ""
        except Exception as e:  # a message in the page, never a traceback
            crash_log.unexpected(f"could not resolve {shown}")
            return self.error_value(shown, [f"unexpected {type(e).__name__}"]), ""
        value = self.open_value(shown, identity, lambda: Rollout.load(open_artifact(source, allow_local=allow_local)),
                           source, initial or Initial(), built)
        return value, source

    def on_upload(self, files) -> tuple[str, str, str]:
        """(token view value, loaded, the source that names it: `upload:<digest>`) for uploaded files."""
        paths = [Path(f if isinstance(f, str) else f.name) for f in (files or [])]
        if not paths:
            return self.error_value("upload", ["no file was uploaded"]), "", ""
        name = paths[0].name if len(paths) == 1 else f"{len(paths)} uploaded files"
        try:  # the bytes, read once: Gradio sweeps its copy, and a reload after an eviction reads ours
            held = Held({p.name: p.read_bytes() for p in paths})
        except OSError:
            return self.error_value(name, ["the upload could not be read: upload it again"]), "", ""

        def reopen() -> Rollout:
            files = held.files
            if files is None:
                raise ArtifactError([Problem(name, "this upload is no longer kept on the server (many other rollouts "
                                                   "were opened since): upload it again")])
            with scratch("rollout-reupload-") as folder:
                for file_name, data in files.items():
                    (folder / file_name).write_bytes(data)
                try:  # open_upload deletes what it unpacked, accepted or refused
                    return Rollout.load(open_upload([folder / n for n in files], label=name))
                except ArtifactError as e:  # name the upload, never a server folder
                    raise ArtifactError([_scrub(p, str(folder), name) for p in e.problems]) from None

        digest = _digest(held.files or {})
        src = f"upload:{digest}"  # the Source field and the page link name it; it reopens while the store holds it
        return self.open_value(name, "upload|" + digest, reopen, src, Initial(), held=held), "upload", src

    def _rollout(self, req) -> Rollout | str:
        """The rollout a request's key names, or the message to answer with (never opened here; gone)."""
        try:
            r = self.store.get(str(req.get("key", ""))[:64]) if isinstance(req, dict) else None
        except ArtifactError as e:  # dropped and its source is gone (an upload swept, a folder deleted)
            return "; ".join(str(p) for p in e.problems) or "this rollout can no longer be read: open it again"
        return r if r is not None else "this rollout was never opened here: open it again"

    def chunk(self, req) -> dict:
        if not isinstance(req, dict):
            return {"error": "a chunk request is an object with key, turn, scope and index"}
        r = self._rollout(req)
        if isinstance(r, str):
            return {"error": r}
        try:
            c = r.chunk(whole_or(req.get("turn"), 0), str(req.get("scope")), whole_or(req.get("index"), 0),
                        whole_or(req.get("row"), 0))
        except (ValueError, IndexError) as e:
            return {"error": str(e)}
        return msgspec.to_builtins(c)

    def training(self, req) -> dict:
        r = self._rollout(req)
        if isinstance(r, str):
            return {"html": f"<div class='tv-error'>{safe.text(r)}</div>", "rows": []}
        return msgspec.to_builtins(training(r))

    def trainer(self, req) -> dict:
        """One turn's trainer numbers ({key, turn, part, eps, advantage}), or with `summary: true` the
        rollout's and every turn's statistics; {"error": ...} for anything the rollout cannot answer."""
        if not isinstance(req, dict):
            return {"error": "a trainer request is an object with key, turn, part, eps and advantage"}
        r = self._rollout(req)
        if isinstance(r, str):
            return {"error": r}
        try:
            part, lo, hi, adv = parse_request(r, req)
            if req.get("summary"):
                return msgspec.to_builtins(trainer_summary(r, part, lo, hi, adv))
            return msgspec.to_builtins(trainer_turn(r, whole_or(req.get("turn"), -1), part, lo, hi, adv))
        except (BadRequest, IndexError, KeyError) as e:
            return {"error": str(e)}

    def export(self, req) -> dict:
        """Server function: {key, what: "rollout" | "turn", turn, mode, scope, trainer, advantage} -> {html, name,
        size, note} with the page itself, which the browser saves: nothing is written on the server (no path in
        the reply, no disk a visitor's exports fill), or {error}."""
        if not isinstance(req, dict):
            return {"error": "an export request is an object with key, what, turn, mode and scope"}
        r = self.store.get(str(req.get("key", ""))[:64])
        if r is None:
            return {"error": "this rollout was never opened here: open it again"}
        initial = initial_from_params({k: str(req[k]) for k in ("turn", "mode", "scope") if k in req})
        turn = initial.turn if req.get("what") == "turn" else None
        advantage = _advantage(req.get("advantage"))
        run = _run_context(req.get("run"))
        if run is not None:
            advantage = run.advantage
        base = (f"run-v{run.version}-g{run.group_id}-r{run.rollout}" if run is not None
                else f"rollout-{r.artifact.summary.task_id[:8]}")
        name = base + (f"-turn{turn}" if turn is not None else "") + ".html"
        page = io.StringIO()
        try:
            got = write_export(r, page, turn=turn, mode=initial.mode, scope=initial.scope, at_turn=initial.turn,
                              trainer=_trainer_choice(r, req.get("trainer"), advantage), advantage=advantage, run=run)
        except ValueError as e:  # no such turn, or too large to export whole (ExportRefused): the message says
            return {"error": str(e)}
        return msgspec.to_builtins(Exported(page.getvalue(), name, size_label(got.bytes), got.note))

    # -- layout -------------------------------------------------------------------------------------

    def render(self) -> None:
        """Create the tab's components and wire them (call inside a `gr.Tab`)."""
        # One title line and one compact bar: what this is and what to try first (plain links, the URL is the
        # view), then the source, Load and the upload as a button, so the first screen is the rollout's.
        gr.HTML(intro_html(self.public), apply_default_css=False, elem_id="intro", elem_classes="tv-chrome", padding=False)
        with gr.Row(elem_classes="tv-chrome tv-sourcebar"):
            self.src = gr.Dropdown(source_choices(), value=self.default_source, allow_custom_value=True,
                                   label="Source", show_label=False, container=False, scale=4, min_width=220,
                                   elem_id="source")
            load = gr.Button("Load", variant="primary", scale=0, min_width=90, elem_id="load")
            upload = gr.UploadButton("Upload…", file_count="multiple", file_types=[".zip", ".json", ".txt", ".py"],
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
            return self.live.answer(req)

        def live_cancel(req: dict) -> dict:
            return self.live.stop(req)

        def export(req: dict) -> dict:
            return self.export(req)

        self.runs.render()  # -- run page hook: its column sits above the index (viewer/ui/run_view.py)
        self.find.render()  # -- search panel hook: above the index (viewer/ui/find_panel.py)
        index = self.collections.render()  # the collection index, above the token view
        # The default rollout is in the page from the start, so a visitor without a deep link sees tokens
        # without waiting for the page-load round trip (a default collection opens through the page load).
        self.built_value = "" if self.collections.is_collection(self.default_source) else \
            self.source_value(self.default_source, built=True)[0]
        self.view = gr.HTML(value=self.built_value, html_template="<div class='tv-mount'></div>",
                            css_template=assets.read("trace_view.css"), apply_default_css=False,
                            js_on_load=assets.read("trace_view.js") + MOUNT_JS,
                            server_functions=[chunk, training, trainer, live, live_cancel, export], elem_id="trace-view",
                            padding=False)
        # Export lives in the token view's toolbar (server.export), so it is offered only where a rollout is.
        opened = [self.view, self.loaded, index]
        load.click(self.collections.open_source, self.src, opened)
        self.src.select(self.collections.open_source, self.src, opened)
        upload.upload(self.collections.on_upload, upload, [*opened, self.src])
        self.collections.wire(opened)
        self.runs.wire([load.click, self.src.select], self.src, opened)  # -- run page hook
        self.find.wire([load.click, self.src.select], self.src, opened)  # -- search panel hook
        upload.upload(self.runs.hide, None, self.runs.outputs())  # an upload is never a run: hides it
        upload.upload(lambda: self.find.value(""), None, self.find.html)  # nor searched: hides the search panel
