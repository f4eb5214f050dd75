"""Unpack a zip someone handed us into a folder we own, and delete that folder when we are done.

A zip's headers can lie about sizes, and its member names can be anything: absolute, `..`, a
symbolic link, a name longer than the file system allows, a file that a later member uses as a
folder. So members are checked one by one before anything is written, and each is copied in
chunks with a running count of the bytes actually produced: the cap holds whatever the headers say.
Every refusal is an `ArtifactError` naming the zip (as the user named it, never a server path) and
the member.

`scratch()` is the only way this package makes a temporary folder: a context manager that removes
it on exit, however the block ends, so a caller cannot forget. Every such folder, and every other
one made with `temporary_folder` (a sandbox, an app's cache), is also remembered until removed and
removed at interpreter exit: a block abandoned in a daemon thread when the process is stopped
(SIGTERM in the app, processes/__init__.py) leaves nothing behind either.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from .problems import ArtifactError, Problem

# The CLI reads artifacts its user chose; a public app reads what strangers upload (at most 200 MB,
# viewer/ui/app.py UPLOAD_LIMIT), so its cap is a few times that, not gigabytes.
MAX_UNZIPPED_BYTES = 2 * 1024**3
UPLOAD_MAX_UNZIPPED_BYTES = 600 * 1024**2
MAX_MEMBERS = 1000  # an artifact is ~10 files plus a tokenizer folder
MAX_NAME_BYTES = 255  # one path component (NAME_MAX on Linux and macOS)
MAX_MEMBER_CHARS = 1024  # a whole member name
CHUNK = 1 << 20
# Deflate packs the files of an artifact or a run (JSON of numbers, JSON lines, safetensors) 2 to 30 times; a
# member that claims far more is a zip bomb (a 2.8 MB zip of a 600 MB index of blank lines): refused unread.
MAX_EXPANSION = 100
EXPANSION_FLOOR = 1 << 20  # below a megabyte any ratio is harmless


_live_lock = threading.Lock()
_live: set[Path] = set()


def _started(pid: int) -> int:
    """When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22), or 0 when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


# Each folder's name says which process made it ("rollout-zip-<pid>.<start>-<random>"), so a later process can
# tell a folder whose owner was killed (SIGKILL runs no exit handler) from one still in use: the pid alone could
# have been reused, the pid with its start time cannot.
_owners: dict[int, str] = {}


def _owner() -> str:
    pid = os.getpid()  # asked each time: a forked child makes folders of its own
    if pid not in _owners:
        _owners[pid] = f"{pid}.{_started(pid)}-"
    return _owners[pid]


_OWNED = re.compile(r"rollout-(?:[a-z]+-)*(\d+)\.(\d+)-[A-Za-z0-9_]+")


def _alive(pid: int, start: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: not ours to judge
        return True
    now = _started(pid)
    return not (start and now and now != start)


def reclaim_dead(base: str | Path | None = None) -> list[Path]:
    """Remove the temporary folders in `base` (the temp folder by default) that a process of ours made and that
    outlived it: named by `temporary_folder`, owned by this user, a real folder (never a link), and whose
    process is gone. Returns what was removed; anything else there is left alone."""
    base = Path(base or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        m = _OWNED.fullmatch(entry.name)
        if m is None or int(m[1]) == os.getpid():
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or _alive(int(m[1]), int(m[2])):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


def temporary_folder(prefix: str = "rollout-", dir: str | Path | None = None) -> Path:
    """A fresh private temporary folder, removed by `remove_folder` or, at the latest, at exit (or, when this
    process is killed, by the next one's `reclaim_dead`)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix + _owner(), dir=dir))
    with _live_lock:
        _live.add(folder)
    return folder


def remove_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    with _live_lock:
        _live.discard(Path(folder))


def remove_all_folders() -> None:
    """Remove every temporary folder still alive (at exit, or when the app is stopped)."""
    with _live_lock:
        folders = list(_live)
    for f in folders:
        remove_folder(f)


atexit.register(remove_all_folders)


@contextmanager
def scratch(prefix: str = "rollout-") -> Iterator[Path]:
    """A fresh private temporary folder, removed with everything in it when the block ends."""
    folder = temporary_folder(prefix)
    try:
        yield folder
    finally:
        remove_folder(folder)


def _short(name: str) -> str:
    return name if len(name) <= 80 else f"{name[:60]}… ({len(name)} characters)"


def _member_parts(label: str, info: zipfile.ZipInfo) -> tuple[str, ...]:
    """The member's path components, or an ArtifactError saying why it cannot be unpacked safely."""
    name = info.filename

    def refuse(message: str, expected: str | None = None) -> ArtifactError:
        return ArtifactError([Problem(label, message, field=_short(name), expected=expected,
                                      found=None if expected is None else _short(name))])

    if stat.S_ISLNK(info.external_attr >> 16):
        raise refuse("a member is a symbolic link; an artifact holds only files and folders")
    if len(name) > MAX_MEMBER_CHARS:
        raise refuse("a member name is too long", expected=f"at most {MAX_MEMBER_CHARS} characters")
    if "\\" in name or "\x00" in name:
        raise refuse("a member name holds a backslash or NUL; zips use / between folders")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise refuse("a member would unpack outside its folder")
    parts = tuple(p for p in path.parts if p not in ("", "."))
    if not parts:
        raise refuse("a member has an empty name")
    for part in parts:
        if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
            raise refuse("a member name has a part too long for a file name",
                         expected=f"at most {MAX_NAME_BYTES} bytes per folder or file name")
    return parts


def expansion_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a member may not be read (it expands past MAX_EXPANSION times its packed size), or None."""
    if info.file_size <= EXPANSION_FLOOR or info.file_size <= MAX_EXPANSION * max(info.compress_size, 1):
        return None
    return (f"expands {info.file_size / max(info.compress_size, 1):,.0f} times its packed size "
            f"({info.file_size:,} bytes from {info.compress_size:,}; at most {MAX_EXPANSION} times): a zip bomb, not read")


def extract_zip(path: Path, into: Path, label: str | None = None,
                max_bytes: int = MAX_UNZIPPED_BYTES) -> None:
    """Unpack `path` into the (empty) folder `into`, refusing anything unsafe or over `max_bytes`."""
    label = label or path.name
    total = 0
    files: set[tuple[str, ...]] = set()
    folders: set[tuple[str, ...]] = set()

    def too_large() -> ArtifactError:
        return ArtifactError([Problem(label, "too large to unpack", expected=f"at most {max_bytes:,} bytes unpacked",
                                      found=f"more than {max_bytes:,} bytes")])

    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise ArtifactError([Problem(label, "too many members", expected=f"at most {MAX_MEMBERS}",
                                             found=str(len(infos)))])
            for info in infos:
                parts = _member_parts(label, info)
                if total + info.file_size > max_bytes:  # what the header claims; what it yields is counted below
                    raise too_large()
                if (bomb := expansion_problem(info)) is not None:
                    raise ArtifactError([Problem(label, bomb, field=_short(info.filename))])
                # a name used both as a file and as a folder (how a symlink-then-child zip looks once
                # symlinks are refused) or twice: refuse rather than let the second write fail or win
                prefixes = {parts[:k] for k in range(1, len(parts))}
                if prefixes & files or parts in files or (not info.is_dir() and parts in folders):
                    raise ArtifactError([Problem(label, "a member name is used twice, or both as a file and as a folder",
                                                 field=_short(info.filename))])
                folders |= prefixes
                dest = into.joinpath(*parts)
                if info.is_dir():
                    folders.add(parts)
                    dest.mkdir(parents=True, exist_ok=True)
                    continue
                files.add(parts)
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(dest, "xb") as out:
                    while chunk := src.read(CHUNK):
                        total += len(chunk)  # what was produced, not what the header claims
                        if total > max_bytes:
                            raise too_large()
                        out.write(chunk)
    except ArtifactError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError):
        raise ArtifactError([Problem(label, "not a readable zip file (truncated, corrupt or another format)")]) from None
    except (NotImplementedError, RuntimeError) as e:  # unsupported compression, or encrypted
        raise ArtifactError([Problem(label, f"cannot unpack this zip: {e}")]) from None
    except OSError as e:  # disk full, permission denied...: say what, never where on the server
        raise ArtifactError([Problem(label, f"could not unpack it: {e.strerror or type(e).__name__}")]) from None
