"""Where an operator finds the traceback behind "unexpected error": the log at the UI and CLI boundaries.

Users get a one-line message (never a traceback); the traceback goes to the `rollout_viewer` logger. The app
logs to stderr, which is what a Space's log shows (`to_stderr`, called by app.py); a command line logs to a
file in the temp folder instead (`to_file`), because its stderr is the user's screen, and its message
names that file. Shared by capture, rescore and the viewer, so it sits below all three.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from pathlib import Path

log = logging.getLogger("rollout_viewer")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def to_stderr() -> None:
    """The app: warnings and tracebacks on stderr (the Space's log)."""
    if not any(getattr(h, "_rollout_viewer", False) for h in log.handlers):
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter(FORMAT))
        h._rollout_viewer = True  # type: ignore[attr-defined]
        log.addHandler(h)
    log.setLevel(logging.INFO)


def log_file() -> Path:
    return Path(tempfile.gettempdir()) / f"rollout-viewer-{os.getuid()}.log"


def unexpected(what: str) -> str:
    """Log the exception being handled with its traceback; returns what to add to the user's message.

    Call inside an `except` block. Without a configured handler (a command line), the traceback is appended
    to log_file() (owner-only) and the returned text names it."""
    if log.handlers:
        log.exception("%s", what)
        return ""
    path = log_file()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a") as f:
            h = logging.StreamHandler(f)
            h.setFormatter(logging.Formatter(FORMAT))
            log.addHandler(h)
            try:
                log.exception("%s", what)
            finally:
                log.removeHandler(h)
    except OSError:
        return ""
    return f" (details in {path})"
