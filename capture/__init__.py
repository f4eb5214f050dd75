"""Capture one real opencode rollout and write it as an artifact (`python -m capture`, or `capture()`)."""

from . import processes  # noqa: F401  (first, from the main thread: installs the SIGTERM/atexit cleanup)
from .run import CaptureConfig, CaptureError, capture

__all__ = ["CaptureConfig", "CaptureError", "capture"]
