"""Files the app hands a visitor to download: zipped captures in one folder it owns, exports in Gradio's cache.

Gradio copies a file an event returns into its own cache (swept by `delete_cache`), so our copy of a
zipped capture is only needed for a moment; every new one prunes those older than `MAX_AGE_S`, and
the folder goes when the process ends. An export (viewer/ui/view_tab.py's server function) is written
straight into Gradio's cache instead, once: Gradio serves a file from there without copying it, and its
sweep removes it. Exports are also bounded together (`MAX_EXPORT_BYTES`): the oldest go first.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
import time
from pathlib import Path

MAX_AGE_S = 15 * 60
EXPORTS = "rollout-viewer-exports"  # our folder inside Gradio's cache
MAX_EXPORT_BYTES = 1 << 30  # every export on disk at once; one export is at most ~15 MB (viewer/export.py)

_lock = threading.Lock()
_root: Path | None = None


def _folder() -> Path:
    global _root
    with _lock:
        if _root is None or not _root.is_dir():
            _root = Path(tempfile.mkdtemp(prefix="rollout-viewer-downloads-"))
            atexit.register(shutil.rmtree, _root, True)
        return _root


def new_download_dir() -> Path:
    """A fresh sub-folder for one download; older ones are removed first."""
    root = _folder()
    cutoff = time.time() - MAX_AGE_S
    for old in root.iterdir():
        try:
            if old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass
    return Path(tempfile.mkdtemp(dir=root))


def _prune_exports(folder: Path) -> None:
    """Remove exports older than MAX_AGE_S, then the oldest while the rest exceed MAX_EXPORT_BYTES."""
    cutoff, kept = time.time() - MAX_AGE_S, []
    for d in folder.iterdir():
        try:
            files = [f for f in d.iterdir() if f.is_file()]
            age, size = d.stat().st_mtime, sum(f.stat().st_size for f in files)
        except OSError:
            continue
        if age < cutoff:
            shutil.rmtree(d, ignore_errors=True)
        else:
            kept.append((age, size, d))
    total = sum(size for _, size, _ in kept)
    for _, size, d in sorted(kept):
        if total <= MAX_EXPORT_BYTES:
            break
        shutil.rmtree(d, ignore_errors=True)
        total -= size


def export_path(cache: str, name: str) -> Path:
    """Where a new export named `name` goes: a fresh folder under Gradio's cache `cache` (older ones pruned)."""
    folder = Path(cache) / EXPORTS
    folder.mkdir(parents=True, exist_ok=True)
    with _lock:
        _prune_exports(folder)
    return Path(tempfile.mkdtemp(dir=folder)) / name
