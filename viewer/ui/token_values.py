"""The token view's values: a rollout opened (`Opened`, viewer/contract.py) or what went wrong (`Failed`), made
from the shared rollout store for every part that opens something in the token view: the View tab's source box
and upload, a collection's, group's or run's row (viewer/ui/rows.py), a capture that just ended.

Loaded rollouts are shared by every visitor of the same source (viewer/ui/store.py). On a public Space
(`public=True`) visitors open bundled examples, Hub datasets and uploads, never server paths, and messages name
what the visitor gave, never a server path. No component lives here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import msgspec

import crash_log
from rollout_trace.artifact import Artifact, ArtifactError, Problem, open_artifact, open_upload
from rollout_trace.artifact.sources import identify
from rollout_trace.artifact.unpack import scratch
from viewer.contract import Failed, Initial, Live, Opened, Problems, RunContext, encode_value
from viewer.page_link import MAX_SRC_CHARS, UPLOAD_SRC
from viewer.render.safe import source_label
from viewer.rollout import Rollout

from .store import Held, RolloutStore

UPLOAD_GONE = "this upload is no longer loaded on this server: upload the file again"

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


class TokenValues:
    """Values for the token view, opened through the shared rollout store."""

    def __init__(self, store: RolloutStore, public: bool):
        self.store, self.public = store, public
        self.captured: dict[str, str] = {}  # a public capture's folder -> the upload-like source naming it (keep_capture)

    def error_value(self, source: str, problems: list) -> str:
        return encode_value(Failed(Problems(source, [str(p) for p in problems])))

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
        return encode_value(Opened(key, src, outline, initial, first, built, live))

    def open_value(self, label: str, identity: str, reopen: Callable[[], Rollout], src: str | None, initial: Initial,
                   built: bool = False, advantage: float | None = None, held: Held | None = None, run: RunContext | None = None) -> str:
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

    def source_value(self, source: str, initial: Initial | None = None, built: bool = False) -> tuple[str, str]:
        source = (source or "").strip()
        shown = source_label(source)
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

    def open_upload(self, files) -> tuple[str, str, str]:
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

