"""Gradio's cache folder for this app: private to the process, swept by age and size, removed at exit.

Gradio keeps every upload, and a copy of every file it serves (exports, zipped captures), in its cache
folder (GRADIO_TEMP_DIR, else /tmp/gradio, which every Gradio app on the machine shares). Its own sweep
(`delete_cache`) knows only the files it registered: an upload a client abandons midway stays as a
partial `tmp*` file for good, so any visitor could fill the disk, and nothing of it was
removed when the app stopped. So the app gives Gradio a folder of its own (inside the configured
one), and a thread sweeps it: files untouched for MAX_AGE_S go, and while it holds more than MAX_BYTES
the least recently written go first. The folder is removed at exit (rollout_trace/artifact/unpack.py's registry;
SIGTERM ends the app as an exit, processes/__init__.py). An open page needs none of these files: the
rollout store holds what a reload needs (viewer/ui/store.py).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from rollout_trace.artifact.unpack import temporary_folder

SWEEP_EVERY_S = 60.0
MAX_AGE_S = 15 * 60.0  # as Gradio's own sweep (viewer/ui/app.py UPLOAD_CACHE_SWEEP)
MAX_BYTES = 2 * 1024**3  # ten uploads at the public limit (200 MB)
GRADIO_TEMP_DIR = "GRADIO_TEMP_DIR"

_lock = threading.Lock()
_folder: Path | None = None


def private_cache() -> Path:
    """This process's Gradio cache folder, made (and GRADIO_TEMP_DIR pointed at it) on first use.

    One per process, not per app: Gradio checks served files against the folder named when it asks."""
    global _folder
    with _lock:
        if _folder is None or not _folder.is_dir():
            base = os.environ.get(GRADIO_TEMP_DIR) if _folder is None else str(_folder.parent)
            if base:
                Path(base).mkdir(parents=True, exist_ok=True)
            _folder = temporary_folder("rollout-viewer-gradio-", dir=base or None)
            os.environ[GRADIO_TEMP_DIR] = str(_folder)
            threading.Thread(target=_sweep_forever, args=(_folder,), daemon=True, name="cache-sweep").start()
        return _folder


def sweep(folder: Path, max_age_s: float = MAX_AGE_S, max_bytes: int = MAX_BYTES,
          now: float | None = None) -> list[Path]:
    """Delete files untouched for `max_age_s`, then the oldest until at most `max_bytes` remain, then
    empty folders; returns what was deleted. A file vanishing meanwhile (Gradio's sweep) is skipped."""
    now = time.time() if now is None else now
    files: list[tuple[float, int, Path]] = []
    for dirpath, _, names in os.walk(folder):
        for name in names:
            p = Path(dirpath) / name
            try:
                st = p.lstat()
            except OSError:
                continue
            files.append((st.st_mtime, st.st_size, p))
    files.sort(key=lambda f: f[0])
    total = sum(size for _, size, _ in files)
    removed = []
    for mtime, size, p in files:
        if now - mtime <= max_age_s and total <= max_bytes:
            break  # sorted oldest first: everything after is newer and fits
        try:
            p.unlink()
        except OSError:
            continue
        total -= size
        removed.append(p)
    for dirpath, dirs, names in os.walk(folder, topdown=False):  # old empty folders only: Gradio makes
        d = Path(dirpath)  # one, then moves an upload into it
        try:
            if d != folder and not dirs and not names and now - d.lstat().st_mtime > max_age_s:
                d.rmdir()
        except OSError:
            pass
    return removed


def _sweep_forever(folder: Path) -> None:
    while folder.is_dir():
        time.sleep(SWEEP_EVERY_S)
        try:
            sweep(folder)
        except OSError:  # a sweep that fails now is retried at the next one
            pass
