"""Files the app hands a visitor to download (exports, zipped captures), kept in one folder it owns.

Gradio copies a returned file into its own cache (swept by `delete_cache`), so our copy is only needed
for a moment; every new file prunes the ones older than `MAX_AGE_S`, and the folder goes when the
process ends. Without this each export and each captured zip stayed in /tmp forever.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
import time
from pathlib import Path

MAX_AGE_S = 15 * 60

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
