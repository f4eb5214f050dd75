"""Can this machine reach the Hugging Face Hub right now? Asked once, answered in about a second.

Offline, `datasets` and `transformers` each retry the Hub for 20-50 s before giving up. A capture or a
task preview asks here first and, when the Hub is out of reach, says so at once and uses only what is
on disk. The answer is remembered for a short while so a burst of clicks makes a single probe.
"""

from __future__ import annotations

import threading
import time

PROBE_TIMEOUT_S = 3.0
REMEMBER_S = 30.0

_lock = threading.Lock()
_last: tuple[float, str | None] | None = None


def offline_mode() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set: the libraries read their cache and never retry."""
    from huggingface_hub import constants

    return constants.is_offline_mode()


def _probe() -> str | None:
    import httpx
    from huggingface_hub import constants

    if offline_mode():
        return "HF_HUB_OFFLINE is set"
    try:
        # Any HTTP answer, even an error status, means the Hub is reachable; only no answer is offline.
        httpx.head(constants.ENDPOINT, timeout=PROBE_TIMEOUT_S, follow_redirects=False)
    except httpx.HTTPError as e:
        reason = str(e).strip() or type(e).__name__
        return f"{constants.ENDPOINT} does not answer ({reason[:120]})"
    return None


def unreachable() -> str | None:
    """Why the Hub cannot be used right now (a short phrase), or None when it answers."""
    global _last
    with _lock:
        now = time.monotonic()
        if _last is None or now - _last[0] > REMEMBER_S:
            _last = (now, _probe())
        return _last[1]


def forget() -> None:
    """Drop the remembered answer (tests, or after the network comes back)."""
    global _last
    with _lock:
        _last = None
