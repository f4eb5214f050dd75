"""Where a collection's bytes come from: a local folder, a .zip, or a Hub dataset repo.

Each store answers two questions cheaply: which files are there (a `Listing`: path -> size, no
content), and what are the bytes of these few small files (`read`). The collection index
(rollout_trace/artifact/collection.py) never asks for more, so it never touches a turns.json or trace.json.
A store also hands back a local folder for one artifact or group when the user opens it.

Bounds: a listing stops after MAX_ENTRIES files (and says so); `read` refuses files larger than
MAX_SMALL_BYTES. On the Hub: one `resolve_revision` to pin the revision to a commit (so the listing and the
downloads agree, and cached files need no request next time), ONE recursive `list_repo_tree`, then
`hf_hub_download` of the small files in a small thread pool. With HF_HUB_OFFLINE=1 the listing
comes from the local cache (the small files fetched before) and a note says so.
"""

from __future__ import annotations

import contextvars
import errno
import os
import shutil
import time
import zipfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import pyarrow as pa

from . import budget
from .problems import ArtifactError, Problem
from .sources import (
    EMPTY_HINT,
    EXAMPLES_DIR,
    MAX_UNZIPPED_BYTES,
    NOT_FOUND,
    OFFLINE_NOT_FOUND,
    REVISION_HINT,
    HubRef,
    bundled_examples,
    bundled_groups,
    bundled_runs,
    commit_of,
    hub_errors,
    parse_hub_id,
)
from .unpack import expansion_problem, remove_folder, temporary_folder

MAX_ENTRIES = 200_000  # files listed before we stop walking or paging
MAX_SMALL_BYTES = 1024 * 1024  # a summary/task/group file is a few kB; anything past this is not one
HUB_WORKERS = 8  # parallel small-file downloads: enough to hide latency, polite to the Hub
HUB_BLOCK = 2**16  # the least a range read on the Hub asks for: a Parquet reader asks for each column chunk it needs
MARKERS = ("turns.json", "summary.json", "group.json")  # a folder holding one of these is a row
_SKIP_DIRS = ("node_modules", "__pycache__")


@dataclass
class Listing:
    """The files of a collection, relative posix paths -> size in bytes, and what the listing knows."""

    files: dict[str, int] = field(default_factory=dict)
    times: dict[str, str] = field(default_factory=dict)  # path -> ISO date, where the store has one
    complete: bool = True  # False: only some files are known (offline cache), absence proves nothing
    notes: list[str] = field(default_factory=list)


def _iso(ts: float) -> str:
    t = time.gmtime(ts)
    return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}Z"


class FolderStore:
    """A local folder. The walk does not descend into an artifact's own sub-folders (tokenizer/ ...)."""

    kind: Literal["folder"] = "folder"

    def __init__(self, root: Path, label: str | None = None, links_within: Path | None = None):
        """`links_within`: a folder whose own symlinks are part of its layout (a Hub cache's snapshot files link
        into the repo's blobs/): a link is followed only to a file inside it. Elsewhere no link is followed."""
        self.root = Path(root)
        self.label = label or str(root)
        self.links_within = links_within

    @property
    def moves(self) -> bool:
        """Reading it again can find more: a folder a recorder writes to can grow; a Hub cache's snapshot cannot."""
        return self.links_within is None

    def list(self, max_entries: int = MAX_ENTRIES) -> Listing:
        listing = Listing()
        stack = [(str(self.root), "")]  # plain strings: pathlib costs more than the walk itself here
        while stack:
            folder, rel = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError as e:
                listing.notes.append(f"{rel or '.'}: cannot be listed ({e.strerror or type(e).__name__}); skipped")
                continue
            names = {e.name for e in entries}
            is_artifact = "group.json" not in names and any(m in names for m in MARKERS)
            for entry in entries:
                path = f"{rel}{entry.name}"
                try:
                    is_dir, is_file = entry.is_dir(follow_symlinks=False), entry.is_file()
                except OSError as e:  # a symlink we may not follow (/proc/1/cwd), a file gone since the listing
                    listing.notes.append(f"{path}: cannot be read ({e.strerror or type(e).__name__}); skipped")
                    continue
                if is_dir:
                    # an artifact's sub-folders hold tokenizer files, never rows
                    if not is_artifact and not entry.name.startswith(".") and entry.name not in _SKIP_DIRS:
                        stack.append((entry.path, path + "/"))
                elif is_file:
                    if len(listing.files) >= max_entries:
                        listing.notes.append(f"stopped listing after {max_entries:,} files; the index shows "
                                             "the artifacts found so far")
                        return listing
                    if entry.name in MARKERS:  # sizes shown or bounded, dates shown; other files need no stat
                        try:
                            st = entry.stat()
                        except OSError as e:
                            listing.notes.append(f"{path}: cannot be read ({e.strerror or type(e).__name__}); skipped")
                            continue
                        listing.files[path] = st.st_size
                        if entry.name != "turns.json":
                            listing.times[path] = _iso(st.st_mtime)
                    else:
                        listing.files[path] = -1  # size unknown: read() bounds what it reads instead
        return listing

    def read(self, paths: Iterable[str], max_bytes: int = MAX_SMALL_BYTES) -> dict[str, bytes | str]:
        out: dict[str, bytes | str] = {}
        root = str(self.root)
        for p in paths:
            try:
                out[p] = got = _read_small(os.path.join(root, p), max_bytes, self.links_within)
            except OSError as e:
                why = "a symbolic link, not followed" if e.errno == errno.ELOOP else e.strerror or type(e).__name__
                out[p] = f"cannot be read ({why})"
                continue
            budget.read(p, len(got) if isinstance(got, bytes) else 0)  # a public request's bytes (budget.py)
        return out

    def list_dir(self, path: str) -> dict[str, int]:
        """The files directly in folder `path` (name -> size); {} when there is no such folder."""
        try:
            entries = list(os.scandir(self.folder(path)))
        except OSError:
            return {}
        out = {}
        for e in entries:
            try:
                if e.is_file():
                    out[e.name] = e.stat().st_size
            except OSError:  # gone since the listing, or a link we may not follow: the reader names what is missing
                continue
        return out

    def folder(self, path: str) -> Path:
        return self.root / path if path else self.root

    def source_of(self, path: str) -> str | None:
        return str(self.folder(path))

    def open(self, path: str) -> Any:
        """A large file read in place (a run's shard), memory-mapped; never through a symbolic link."""
        full = os.path.join(str(self.root), path)
        if self.links_within is not None:
            full = os.path.realpath(full)
            if not full.startswith(os.path.realpath(self.links_within) + os.sep):
                raise OSError(errno.ELOOP, "a symbolic link out of its folder", path)
        elif os.path.islink(full):
            raise OSError(errno.ELOOP, "a symbolic link, not followed", path)
        f = pa.memory_map(full)
        budget.read(path, f.size())
        return f


def _read_small(path: str, max_bytes: int = MAX_SMALL_BYTES, links_within: Path | None = None) -> bytes | str:
    """A small file's bytes, or why not. Reads in 64 kB steps: asking os.read for the whole bound would
    allocate a megabyte per file, which costs more than reading a few kB."""
    if links_within is not None:  # the link's target, when it stays inside the folder whose layout links
        real = os.path.realpath(path)
        if not real.startswith(os.path.realpath(links_within) + os.sep):
            raise OSError(errno.ELOOP, "a symbolic link out of its folder", path)
        path = real
    # not through a symlink: a folder's files are its own, never one it points at (/etc/passwd)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks) if size <= max_bytes else f"larger than {max_bytes:,} bytes"


def _zip_name_ok(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not name.startswith(("/", "\\")) and ".." not in parts and ":" not in parts[0]


class ZipStore:
    """A .zip read in place: the listing is its central directory; small members are read, nothing is unpacked."""

    kind: Literal["zip"] = "zip"
    moves = False  # a copy: what it holds never changes

    def __init__(self, path: Path, label: str | None = None):
        self.path = Path(path)
        self.label = label or str(path)
        try:
            self._zip = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, OSError) as e:
            raise ArtifactError([Problem(self.path.name, "not a readable zip file (truncated or another format)",
                                         found=type(e).__name__)]) from None
        self._tmp: list[Path] = []

    def list(self, max_entries: int = MAX_ENTRIES) -> Listing:
        listing = Listing()
        skipped = 0
        for info in self._zip.infolist():
            if info.is_dir():
                continue
            if not _zip_name_ok(info.filename):
                skipped += 1
                continue
            if len(listing.files) >= max_entries:
                listing.notes.append(f"stopped listing after {max_entries:,} members")
                break
            listing.files[info.filename] = info.file_size
            listing.times[info.filename] = "%04d-%02d-%02dT%02d:%02d:%02d" % info.date_time
        if skipped:
            listing.notes.append(f"{skipped} member(s) with a path outside the zip (absolute or '..') ignored")
        return listing

    def read(self, paths: Iterable[str], max_bytes: int = MAX_SMALL_BYTES) -> dict[str, bytes | str]:
        out: dict[str, bytes | str] = {}
        for p in paths:
            try:
                info = self._zip.getinfo(p)
                if info.file_size > max_bytes:
                    out[p] = f"larger than {max_bytes:,} bytes"
                    continue
                if (bomb := expansion_problem(info)) is not None:
                    out[p] = bomb
                    continue
                budget.expect(p, info.file_size)
                with self._zip.open(info) as f:
                    out[p] = got = f.read(max_bytes + 1)
                budget.read(p, len(got))
            except (KeyError, zipfile.BadZipFile, OSError, EOFError) as e:
                out[p] = f"cannot be read from the zip ({type(e).__name__})"
        return out

    def open(self, path: str) -> Any:
        """A member read whole into memory (a run's shard: Parquet reads seek, which a compressed member cannot
        do cheaply), within the zip's bounds."""
        try:
            info = self._zip.getinfo(path)
        except KeyError:
            raise OSError(errno.ENOENT, "no such member of the zip", path) from None
        if (bomb := expansion_problem(info)) is not None or info.file_size > MAX_UNZIPPED_BYTES:
            raise OSError(errno.EFBIG, bomb or f"larger than {MAX_UNZIPPED_BYTES:,} bytes", path)
        budget.expect(path, info.file_size)
        with self._zip.open(info) as f:
            data = f.read()
        budget.read(path, len(data))
        return pa.BufferReader(data)

    def top_folders(self) -> tuple[str, ...]:
        """The names of the zip's top-level folders (a zipped folder holds its files in one)."""
        return tuple(sorted({n.split("/", 1)[0] for n in self._zip.namelist() if "/" in n and _zip_name_ok(n)}))

    def list_dir(self, path: str) -> dict[str, int]:
        """The members directly in folder `path` of the zip (name -> size)."""
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        out = {}
        for info in self._zip.infolist():
            name = info.filename
            if not info.is_dir() and name.startswith(prefix) and "/" not in name[len(prefix):] and _zip_name_ok(name):
                out[name[len(prefix):]] = info.file_size
        return out

    def folder(self, path: str) -> Path:
        """Unpack only the members under `path` (safe names, bounded size) into a fresh temporary folder."""
        prefix = f"{path}/" if path else ""
        members = [i for i in self._zip.infolist()
                   if i.filename.startswith(prefix) and not i.is_dir() and _zip_name_ok(i.filename)]
        for i in members:
            if (bomb := expansion_problem(i)) is not None:
                raise ArtifactError([Problem(f"{self.path.name}:{i.filename}", bomb)])
        total = sum(i.file_size for i in members)
        if total > MAX_UNZIPPED_BYTES:
            raise ArtifactError([Problem(f"{self.path.name}:{path}", "too large to unpack",
                                         expected=f"at most {MAX_UNZIPPED_BYTES} bytes", found=f"{total} bytes")])
        target = temporary_folder("rollout-zip-")
        self._tmp.append(target)
        for info in members:
            dest = target / info.filename[len(prefix):]
            dest.parent.mkdir(parents=True, exist_ok=True)
            with self._zip.open(info) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out)
        return target

    def source_of(self, path: str) -> str | None:
        return None  # a member of a zip has no name the single-artifact reader understands

    def release(self, folder: Path) -> None:
        """Remove a folder `folder()` unpacked, once what it held has been read."""
        if folder in self._tmp:
            self._tmp.remove(folder)
        remove_folder(folder)

    def close(self) -> None:
        self._zip.close()
        for t in self._tmp:
            remove_folder(t)


def _hub_cache_folder(repo_id: str) -> Path:
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    return Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="dataset")


class HubStore:
    """A Hub dataset repo (optionally a revision and a sub-folder), pinned to one commit."""

    kind: Literal["hub"] = "hub"

    def __init__(self, ref: HubRef, token: str | None = None, label: str | None = None):
        self.ref = ref
        self.token = token
        self.where = ref.repo_id + (f"@{ref.revision}" if ref.revision else "")
        self.label = label or self.where + (f":{ref.subfolder}" if ref.subfolder else "")
        self.commit: str | None = None
        self._offline_root: Path | None = None
        # (commit, folder) -> its files and its folders' names (`list_dir`)
        self._folders: dict[tuple[str, str], tuple[dict[str, int], frozenset[str]]] = {}
        self._fs: Any = None  # the file system its large files are read through (`open`)

    @property
    def moves(self) -> bool:
        """Reading it again can find more: a branch or tag gets new commits; a revision that is a commit never does."""
        from huggingface_hub.file_download import REGEX_COMMIT_HASH

        return not (self.ref.revision and REGEX_COMMIT_HASH.fullmatch(self.ref.revision))

    def _full(self, path: str) -> str:
        return "/".join(p for p in (self.ref.subfolder, path) if p)

    def list(self, max_entries: int = MAX_ENTRIES) -> Listing:
        from huggingface_hub import HfApi, constants
        from huggingface_hub.hf_api import RepoFile

        if constants.is_offline_mode():
            return self._list_cached()
        api = HfApi(token=self.token)
        listing = Listing()
        sub = self.ref.subfolder
        # the commit first (resolve_revision also records revision -> commit in the cache's refs/, so
        # offline runs find it); every later request names the commit, never the revision as typed
        self.commit = commit_of(self.ref, self.token)
        with hub_errors(self.where, self.ref.revision):
            tree = api.list_repo_tree(self.ref.repo_id, path_in_repo=sub, repo_type="dataset",
                                      recursive=True, revision=self.commit)
            cut = len(sub) + 1 if sub else 0
            for entry in tree:  # a generator over pages: stopping early leaves the rest unrequested
                if not isinstance(entry, RepoFile):
                    continue
                if len(listing.files) >= max_entries:
                    listing.notes.append(f"stopped listing after {max_entries:,} files; the index shows the "
                                         "artifacts found so far")
                    break
                listing.files[entry.path[cut:]] = entry.size
        return listing

    def _list_cached(self) -> Listing:
        listing = self._cache_store(self._cached_root()).list()
        listing.complete = False
        listing.times.clear()  # cache file times are download times, not capture times
        listing.notes.append("offline (HF_HUB_OFFLINE): listed from the local cache, so only rollouts indexed "
                             "before are shown and missing files cannot be told apart from files not fetched")
        return listing

    def _cache_store(self, root: Path) -> FolderStore:
        """The local cache's snapshot folder as a store: its files are huggingface_hub's links into blobs/."""
        return FolderStore(root, links_within=_hub_cache_folder(self.ref.repo_id))

    def _cached_root(self) -> Path:
        """The local cache's snapshot folder of the revision (offline); raises when there is none."""
        commit = commit_of(self.ref, self.token)  # a checked revision, resolved by huggingface_hub's cache rules
        snap = _hub_cache_folder(self.ref.repo_id) / "snapshots" / commit
        root = snap / self.ref.subfolder if self.ref.subfolder else snap
        if not root.is_dir():
            raise ArtifactError([Problem(self.where, OFFLINE_NOT_FOUND)])
        self.commit, self._offline_root = commit, root
        return root

    def read(self, paths: Iterable[str], max_bytes: int = MAX_SMALL_BYTES) -> dict[str, bytes | str]:
        paths = list(paths)
        if self._offline_root is not None:
            return self._cache_store(self._offline_root).read(paths, max_bytes)
        # each download thread runs in a copy of this request's context: its bytes count in the request's budget
        context = contextvars.copy_context()
        with ThreadPoolExecutor(max_workers=HUB_WORKERS) as pool:
            got = pool.map(lambda p: context.copy().run(self._download, p, max_bytes), paths)
            return dict(zip(paths, got, strict=True))

    def list_dir(self, path: str) -> dict[str, int]:
        """The files directly in folder `path` of the repo (name -> size): one non-recursive tree request."""
        from huggingface_hub import HfApi, constants
        from huggingface_hub.errors import EntryNotFoundError
        from huggingface_hub.hf_api import RepoFile, RepoFolder

        if constants.is_offline_mode() or self._offline_root is not None:
            return self._cache_store(self._offline_root or self._cached_root()).list_dir(path)
        api = HfApi(token=self.token)
        full = self._full(path)
        with hub_errors(self.where, self.ref.revision):
            if self.commit is None:
                self.commit = commit_of(self.ref, self.token)
            # a folder at a commit never changes: listed once per store (opening a run lists a few folders twice),
            # and one its parent's listing does not hold is not asked for (a run without rescored/)
            key = (self.commit, full)
            if (known := self._folders.get(key)) is not None:
                return dict(known[0])
            parent, _, name = full.rpartition("/")
            if full and (above := self._folders.get((self.commit, parent))) is not None and name not in above[1]:
                return {}
            try:
                tree = list(api.list_repo_tree(self.ref.repo_id, path_in_repo=full or None, repo_type="dataset",
                                               recursive=False, revision=self.commit))
            except EntryNotFoundError:
                tree = []
        cut = len(full) + 1 if full else 0
        got = {e.path[cut:]: e.size for e in tree if isinstance(e, RepoFile)}
        self._folders[key] = (got, frozenset(e.path[cut:] for e in tree if isinstance(e, RepoFolder)))
        return dict(got)

    def _download(self, path: str, max_bytes: int = MAX_SMALL_BYTES) -> bytes | str:
        from huggingface_hub import hf_hub_download

        budget.check(path)  # a visitor who left starts no more downloads
        try:
            with hub_errors(self.where, self.ref.revision):
                local = hf_hub_download(self.ref.repo_id, self._full(path), repo_type="dataset",
                                        revision=self.commit, token=self.token)
            with open(local, "rb") as f:
                data = f.read(max_bytes + 1)
        except ArtifactError as e:
            return e.problems[0].message
        except OSError as e:
            return f"cannot be read ({e.strerror or type(e).__name__})"
        budget.read(path, len(data))  # past the request's bound: Refused, not a message in place of the file
        return data if len(data) <= max_bytes else f"larger than {max_bytes:,} bytes"

    def open(self, path: str) -> Any:
        """A large file read in place with HTTP range reads (a run's shard: a Parquet reader asks for its footer,
        then only the column chunks and row groups it needs); every byte counts in the request's budget."""
        from huggingface_hub import HfFileSystem, constants

        full = self._full(path)
        if constants.is_offline_mode() or self._offline_root is not None:
            return self._cache_store(self._offline_root or self._cached_root()).open(path)
        if self.commit is None:
            self.commit = commit_of(self.ref, self.token)
        budget.check(path)
        if self._fs is None:
            # one for every thread reading the store's files: huggingface_hub keeps an instance per thread (a new
            # one starting from the main thread's), each listing a file's folder before its first read, and the app
            # reads on request threads: a run's shards read sixteen at once listed their folder sixteen times more.
            # Shared, the first read (run_table.in_order reads it alone) lists it for all
            self._fs = HfFileSystem(token=self.token, skip_instance_cache=True)
        fs = self._fs
        with hub_errors(self.where, self.ref.revision):
            # no read-ahead: a shard's reader asks for the byte ranges it needs (its footer, then its column
            # chunks, joined where the gaps are small: run_shards.fetched_first), and every byte read counts in a
            # visitor's budget
            f = fs.open(f"datasets/{self.ref.repo_id}@{self.commit}/{full}", "rb", block_size=HUB_BLOCK, cache_type="none")
        return pa.PythonFile(_Counted(f, path), mode="r")

    def folder(self, path: str) -> Path:
        """Download (or reuse from cache) every file under `path`: what opening one artifact or group needs."""
        from huggingface_hub import snapshot_download

        full = self._full(path)
        patterns = [f"{full}/*", f"{full}/**"] if full else None
        with hub_errors(self.where, self.ref.revision):
            local = Path(snapshot_download(self.ref.repo_id, repo_type="dataset", token=self.token,
                                           revision=self.commit or self.ref.revision, allow_patterns=patterns))
        return local / full if full else local

    def source_of(self, path: str) -> str | None:
        rev = self.commit or self.ref.revision
        full = self._full(path)
        return self.ref.repo_id + (f"@{rev}" if rev else "") + (f":{full}" if full else "")


class _Counted:
    """A file whose reads count in the budget of the request that opened it (a public visitor reads a bounded
    number of bytes). The budget is taken when the file is opened: a Parquet reader reads on Arrow's I/O threads,
    which do not carry the request's context."""

    def __init__(self, f: Any, name: str):
        self.f, self.name, self.budget = f, name, budget.current()

    def read(self, n: int = -1) -> bytes:
        got = self.f.read(n)
        if self.budget is not None:
            self.budget.read(self.name, len(got))
        return got

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.f, attr)


Store = FolderStore | ZipStore | HubStore


def store_for(source: str, token: str | None = None, allow_local: bool = True) -> Store:
    """The store a source names: a bundled example, a local folder or .zip (when allowed), a Hub dataset id."""
    text = source.strip()
    if not text:  # Path("") is the working folder: an empty name must not list it
        raise ArtifactError([Problem("(empty)", "no source named", expected=EMPTY_HINT, found="an empty name")])
    if text in bundled_examples() or text in bundled_groups() or text in bundled_runs():
        return FolderStore(EXAMPLES_DIR / text, label=text)
    if allow_local:
        path = Path(text).expanduser()
        try:
            is_dir, is_file = path.is_dir(), path.is_file()
        except OSError as e:  # a name too long, a loop of symlinks, a folder we may not enter
            raise ArtifactError([Problem(text[:200], f"cannot use this path: {e.strerror or type(e).__name__}")]) from None
        if is_dir:
            return FolderStore(path, label=text)
        if is_file:
            return ZipStore(path, label=text)
    ref = parse_hub_id(text)
    if ref is None:
        hint = ("a folder, a .zip or a Hub dataset id (org/name[@revision][:sub/folder])" if allow_local
                else "a Hub dataset id (org/name[@revision][:sub/folder])")
        raise ArtifactError([Problem(text or "(empty)", f"{NOT_FOUND}: cannot find this collection",
                                     expected=hint + REVISION_HINT, found="none of these")])
    return HubStore(ref, token=token, label=text)
