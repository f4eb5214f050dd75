"""Files the app hands a visitor to download: zipped captures, in one folder it owns.

Gradio copies a file an event returns into its own cache (swept by `delete_cache`), so our copy of a
zipped capture is only needed for a moment; every new one prunes those older than `MAX_AGE_S`, and
the folder goes when the process ends. An export is no file at all: viewer/ui/view_tab.py's server
function answers the page itself and the browser saves it.
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
