"""Capture one real opencode rollout and write it as an artifact (`python -m capture`, or `capture()`)."""

from .run import CaptureConfig, CaptureError, capture

__all__ = ["CaptureConfig", "CaptureError", "capture"]
