"""Atomic writes: a file or a folder appears at its path whole, or not at all, and survives a power cut.

Everything is built beside its destination (a hidden sibling, so the rename stays on one file system),
flushed to disk (`fsync` of each file and of the folder that holds it, without which a crash can leave
a renamed name pointing at empty data) and renamed into place; a failure or an interrupt removes the
partial copy. Only a regular file, a folder or a path that does not exist yet is ever replaced: a FIFO,
a device or a symlink at the destination is refused (`NotReplaceable`), since renaming over one would
destroy it instead of writing to it (the command line writes through those as a shell redirection does).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Literal, overload

from .errors import RolloutTraceError


class NotReplaceable(RolloutTraceError, OSError):
    """The destination exists and is not a regular file or folder (a FIFO, a device, a symlink, a socket)."""


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) if path.is_dir() else os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:  # some file systems (and Windows, for folders) cannot sync a folder: the data still is
        pass
    finally:
        os.close(fd)


def sync_tree(root: Path) -> None:
    """Every file and folder under `root` (and `root`) flushed to disk, deepest first."""
    root = Path(root)
    for here, dirs, files in os.walk(root, topdown=False):
        for name in files:
            p = Path(here) / name
            if p.is_file() and not p.is_symlink():
                _sync(p)
        for name in dirs:
            _sync(Path(here) / name)
    _sync(root)


def _check_replaceable(dest: Path, folder: bool) -> None:
    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        return
    if not (stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)):
        raise NotReplaceable(f"{dest} is not a regular {'folder' if folder else 'file'}: it is not replaced")


@overload
def replacing(path: Path | str, mode: Literal["wb"] = "wb") -> contextlib.AbstractContextManager[IO[bytes]]: ...
@overload
def replacing(path: Path | str, mode: Literal["w"]) -> contextlib.AbstractContextManager[IO[str]]: ...
def replacing(path: Path | str, mode: str = "wb") -> contextlib.AbstractContextManager[IO]:
    """`with replacing(path) as f:` writes `f`; at the block's end the file is synced and renamed over `path`.

    An exception in the block (or an interrupt) removes the partial file and leaves `path` as it was.
    Raises NotReplaceable when `path` is a FIFO, a device, a symlink or a folder."""
    return _replacing(Path(path), mode)


@contextlib.contextmanager
def _replacing(path: Path, mode: str) -> Iterator[IO]:
    _check_replaceable(path, folder=False)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.part"
    try:
        with open(tmp, mode.replace("w", "x"), encoding=None if "b" in mode else "utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        _check_replaceable(path, folder=False)  # something may have appeared there while we wrote
        os.replace(tmp, path)
        _sync(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: Path | str, data: bytes) -> None:
    """`data` at `path`, atomically (see `replacing`)."""
    with replacing(path) as f:
        f.write(data)


def staging_folder(dest: Path, kind: str) -> Path:
    """A hidden, private, empty sibling of `dest` to build it in (`publish_folder` moves it into place)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{dest.name}.{kind}-", dir=dest.parent))


def publish_folder(built: Path, dest: Path, *, replace: bool = False, mode: int = 0o755) -> None:
    """The finished folder `built` (a sibling of `dest`) synced and renamed to `dest`.

    Without `replace` an existing `dest` must be an empty folder (it is removed); with `replace` an older
    `dest` is moved aside first and deleted only after the rename, so a failure puts it back. On failure
    `built` is left to the caller (who removes it). Raises NotReplaceable for a `dest` that is not a folder."""
    built, dest = Path(built), Path(dest)
    _check_replaceable(dest, folder=True)
    built.chmod(mode)  # mkdtemp makes it private; what we publish is meant to be shared
    sync_tree(built)
    old = None
    if dest.exists():
        if replace:
            old = dest.with_name(f".{dest.name}.old-{secrets.token_hex(6)}")
            dest.rename(old)
        else:
            dest.rmdir()  # raises OSError for a folder that is not empty
    try:
        built.rename(dest)
    except BaseException:
        if old is not None:
            old.rename(dest)
        raise
    _sync(dest.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
