"""A loopback stand-in for the few Hugging Face Hub endpoints huggingface_hub calls to list and download.

Serves dataset repos from local folders so the real `HfApi.dataset_info`, `HfApi.list_repo_tree`
(with Link-header pagination) and `hf_hub_download` (HEAD for metadata, then GET) run offline:

    GET  /api/datasets/{org}/{name}[/revision/{rev}]          {"id", "sha"}
    GET  /api/datasets/{org}/{name}/tree/{rev}[/{path}]?recursive=...   [{"type", "path", "size", "oid"}...]
    HEAD /datasets/{org}/{name}/resolve/{rev}/{path}          X-Repo-Commit, ETag, Content-Length
    GET  /datasets/{org}/{name}/resolve/{rev}/{path}          the bytes, or with `Range: bytes=A-B` those only (206),
                                                              as the Hub serves the range reads of HfFileSystem

and, for `HfApi.create_repo` / `create_commit` (what huggingface_hub's CommitScheduler calls), when built
with `uploads=` a folder: new repos are made there, and commits write their files into the repo's folder:

    POST /api/repos/create                                    {"url"}
    POST /api/datasets/{org}/{name}/preupload/{rev}           every file "regular" (inlined in the commit)
    POST /api/datasets/{org}/{name}/commit/{rev}              ndjson: header, then {"key": "file", ...} lines

Every request is logged in `requests` as (method, path) so tests can prove what was never fetched, and the bytes
of every file served are counted in `served` (path -> bytes), so they can prove a range read read little.
An unknown repo answers 404 with X-Error-Code RepoNotFound, an unknown revision RevisionNotFound,
as the Hub does, so huggingface_hub raises its own typed errors.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

SHA = "0123456789abcdef0123456789abcdef01234567"


class HubStandIn:
    """`with HubStandIn({"org/name": folder}) as hub:` serves those folders at `hub.url`."""

    def __init__(self, repos: dict[str, Path], page_size: int = 1000, revisions: tuple[str, ...] = ("main",),
                 uploads: Path | None = None, latency: float = 0.0):
        self.repos = {k: Path(v) for k, v in repos.items()}
        self.latency = latency  # seconds each GET or HEAD waits before it is answered (the Hub is not loopback)
        self.uploads = Path(uploads) if uploads is not None else None
        self.commits: list[tuple[str, list[str]]] = []  # (repo, paths written) per commit
        self.page_size = page_size
        self.revisions = set(revisions) | {SHA}
        self.sha = SHA  # the commit the revisions name now; `commit()` moves it (a push to the repo)
        self.requests: list[tuple[str, str]] = []
        self.served: dict[str, int] = {}  # file path -> bytes of it sent
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HubStandIn:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def patch(self, monkeypatch, cache: Path) -> None:
        """Point huggingface_hub at this stand-in (online, its own cache folder) for one test."""
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "ENDPOINT", self.url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", self.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")

    def commit(self) -> str:
        """A new head commit (the folders as they are now): what a push does, for tests that follow a repo."""
        with self._lock:
            self.sha = hashlib.sha1(f"{self.sha}+".encode()).hexdigest()
            self.revisions.add(self.sha)
            return self.sha

    def paths(self, method: str | None = None) -> list[str]:
        return [p for m, p in self.requests if method is None or m == method]

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_GET(self):
                hub._serve(self, head=False)

            def do_HEAD(self):
                hub._serve(self, head=True)

            def do_POST(self):
                hub._post(self)

        return Handler

    # -- routing -----------------------------------------------------------------------------------

    def _serve(self, h: BaseHTTPRequestHandler, head: bool) -> None:
        url = urlsplit(h.path)
        path = unquote(url.path)
        with self._lock:
            self.requests.append(("HEAD" if head else "GET", path))
        if self.latency:
            time.sleep(self.latency)
        parts = path.strip("/").split("/")
        if parts == ["api", "agent-harnesses"]:  # huggingface_hub 2.x asks once for its user-agent registry
            return self._json(h, {"standardEnvVars": [], "harnesses": {}})
        if parts[:2] == ["api", "datasets"] and len(parts) == 4:  # dataset_info without a revision
            parts = [*parts, "revision", "main"]
        if parts[:2] == ["api", "datasets"] and len(parts) >= 6 and parts[4] in ("tree", "revision"):
            repo, rev, rest = f"{parts[2]}/{parts[3]}", parts[5], "/".join(parts[6:])
            if not self._known(h, repo, rev):
                return
            if parts[4] == "revision":
                return self._json(h, {"id": repo, "sha": self._commit_of(rev), "private": False})
            return self._tree(h, repo, rev, rest, parse_qs(url.query))
        if parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
            repo, rev, rest = f"{parts[1]}/{parts[2]}", parts[4], "/".join(parts[5:])
            if not self._known(h, repo, rev):
                return
            return self._file(h, repo, rest, head, rev)
        self._error(h, 404, "EntryNotFound", f"no route for {path}")

    def _post(self, h: BaseHTTPRequestHandler) -> None:
        path = unquote(urlsplit(h.path).path)
        with self._lock:
            self.requests.append(("POST", path))
        body = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        parts = path.strip("/").split("/")
        if parts == ["api", "repos", "create"] and self.uploads is not None:
            info = json.loads(body)
            repo = f"{info.get('organization')}/{info['name']}"
            with self._lock:
                if repo not in self.repos:
                    self.repos[repo] = self.uploads / repo.replace("/", "--")
                    self.repos[repo].mkdir(parents=True, exist_ok=True)
            return self._json(h, {"url": f"{self.url}/datasets/{repo}", "name": repo})
        if parts == ["api", "validate-yaml"]:  # a README.md's YAML, checked before a commit holding it (as the Hub does)
            return self._validate_yaml(h, json.loads(body))
        if parts[:2] == ["api", "datasets"] and len(parts) >= 6 and parts[4] in ("preupload", "commit"):
            repo, rev = f"{parts[2]}/{parts[3]}", parts[5]
            if not self._known(h, repo, rev):
                return
            if parts[4] == "preupload":
                files = json.loads(body)["files"]
                return self._json(h, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                                for f in files]})
            return self._commit(h, repo, body)
        self._error(h, 404, "EntryNotFound", f"no route for POST {path}")

    def _commit(self, h, repo: str, body: bytes) -> None:
        import base64
        import os

        written = []
        for line in body.splitlines():
            item = json.loads(line)
            if item.get("key") != "file":
                continue
            value = item["value"]
            dest = self.repos[repo] / value["path"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.upload")
            tmp.write_bytes(base64.b64decode(value["content"]))
            os.replace(tmp, dest)
            written.append(value["path"])
        with self._lock:
            self.commits.append((repo, written))
        self._json(h, {"commitOid": SHA, "commitUrl": f"{self.url}/datasets/{repo}/commit/{SHA}"})

    def _validate_yaml(self, h, info: dict) -> None:
        """The card's front matter parses, and each of its `configs` names a config and its data files."""
        import yaml

        try:
            text = info.get("content") or ""
            front = text.split("---", 2)[1] if text.startswith("---") else ""
            meta = yaml.safe_load(front) or {}
            configs = meta.get("configs", [])
            assert isinstance(configs, list) and all(c.get("config_name") and c.get("data_files") for c in configs)
        except Exception as e:
            return self._error(h, 400, "BadRequest", f"invalid YAML in README.md: {e}")
        self._json(h, {"errors": [], "warnings": []})

    def _commit_of(self, rev: str) -> str:
        """The commit `rev` names: itself when it is one, else the head (every branch and tag points there)."""
        return rev if len(rev) == 40 and all(c in "0123456789abcdef" for c in rev) else self.sha

    def _known(self, h, repo: str, rev: str) -> bool:
        if repo not in self.repos:
            self._error(h, 404, "RepoNotFound", f"Repository {repo} not found")
            return False
        if rev not in self.revisions:
            self._error(h, 404, "RevisionNotFound", f"Invalid rev id: {rev}")
            return False
        return True

    def _tree(self, h, repo: str, rev: str, sub: str, query: dict) -> None:
        root = self.repos[repo]
        base = root / sub if sub else root
        if not base.is_dir():
            return self._error(h, 404, "EntryNotFound", f"{sub} does not exist on {rev}")
        recursive = query.get("recursive", ["false"])[0].lower() in ("true", "1")
        items = sorted(base.rglob("*") if recursive else base.iterdir())
        entries = []
        for p in items:
            rel = p.relative_to(root).as_posix()
            if p.is_dir():
                entries.append({"type": "directory", "oid": hashlib.sha1(rel.encode()).hexdigest(), "path": rel})
            else:
                entries.append({"type": "file", "oid": hashlib.sha1(p.read_bytes()).hexdigest(),
                                "size": p.stat().st_size, "path": rel})
        start = int(query.get("cursor", ["0"])[0])
        page = entries[start: start + self.page_size]
        headers = {}
        if start + self.page_size < len(entries):
            q = f"recursive={'true' if recursive else 'false'}&expand=false&cursor={start + self.page_size}"
            nxt = f"{self.url}/api/datasets/{repo}/tree/{rev}" + (f"/{quote(sub)}" if sub else "") + f"?{q}"
            headers["Link"] = f'<{nxt}>; rel="next"'
        self._json(h, page, headers)

    def _file(self, h, repo: str, rel: str, head: bool, rev: str = SHA) -> None:
        path = self.repos[repo] / rel
        if not path.is_file():
            return self._error(h, 404, "EntryNotFound", f"{rel} does not exist")
        data = path.read_bytes()
        etag = hashlib.sha1(data).hexdigest()
        ranged = h.headers.get("Range", "")
        if ranged.startswith("bytes=") and not head:
            a, _, b = ranged[len("bytes="):].partition("-")
            lo = int(a) if a else max(0, len(data) - int(b))
            hi = min(len(data) - 1, int(b)) if a and b else len(data) - 1
            part = data[lo:hi + 1]
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {lo}-{hi}/{len(data)}")
            data = part
        else:
            h.send_response(200)
        h.send_header("X-Repo-Commit", self._commit_of(rev))
        h.send_header("ETag", f'"{etag}"')
        h.send_header("Accept-Ranges", "bytes")
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Content-Type", "application/octet-stream")
        h.end_headers()
        if not head:
            with self._lock:
                self.served[rel] = self.served.get(rel, 0) + len(data)
            h.wfile.write(data)

    def _json(self, h, obj, headers: dict | None = None) -> None:
        body = json.dumps(obj).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def _error(self, h, status: int, code: str, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        h.send_response(status)
        h.send_header("X-Error-Code", code)
        h.send_header("X-Error-Message", message)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)
