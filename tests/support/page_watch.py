"""What a browser test's page heard, and what the app's Gradio queue held, told when the test fails.

A browser test that fails on CI is mostly a timeout: a page waited for something that never came. Which side
dropped it decides the fix, and the screenshot stays on the CI machine, so a failure's report says:
- per page the test opened (still open, or closed while the test failed): its address, its errors, the requests
  that failed or were refused (a visitor's page event past its bound, viewer/ui/in_flight.py, is a 429), and the
  requests still waiting for their answer with their ages (a Gradio event's join that never
  got an answer, or its event stream, `queue/data`, open or not);
- per app the tests launched: each of those pages' Gradio sessions as the server's queue holds it: the events
  still pending (by function, and whether each has run), and how many messages wait for a stream to carry them.
  A finished event whose completion sits undelivered means the page's stream closed under it; an event still
  running means the server is slow or stuck.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any
from urllib.parse import parse_qs, urlparse

LOCAL = ("http://127.0.0.1", "http://localhost", "file://", "data:", "blob:")
CLOSED_KEPT = 6  # pages closed most recently whose record a failure's report still tells

_apps: list[Any] = []  # every app the tests launched in this process (`launched`), for `queue_state`
_closed: deque[dict] = deque(maxlen=CLOSED_KEPT)
_open: list[Any] = []  # the watched pages not yet closed through `closing`


def launched(demo: Any) -> Any:
    """Remember `demo` so a failure's report can tell its queue's state; `demo` itself."""
    _apps.append(demo)
    return demo


def watch(page: Any) -> Any:
    """Record what `page` hears from now on (the lists a test asserts on, and the requests in flight); `page`."""
    page.outside_requests, page.errors, page.console_errors, page.bad_responses, page.failed_requests = [], [], [], [], []
    page.in_flight = {}
    page.sessions = set()
    _open.append(page)

    def sent(r: Any) -> None:
        if not r.url.startswith(LOCAL):
            page.outside_requests.append(r.url)
        page.in_flight[id(r)] = (time.monotonic(), f"{r.method} {r.url[:160]}")
        at = urlparse(r.url)
        session = parse_qs(at.query).get("session_hash") or ([at.path.rsplit("/", 1)[1]]
                                                             if "/heartbeat/" in at.path else [])
        if session:
            page.sessions.add(session[0])

    def failed(r: Any) -> None:
        page.in_flight.pop(id(r), None)
        page.failed_requests.append(f"{r.method} {r.url[:200]}: {r.failure}")

    page.on("request", sent)
    page.on("requestfinished", lambda r: page.in_flight.pop(id(r), None))
    page.on("requestfailed", failed)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.console_errors.append(m.text[:300]) if m.type in ("error", "warning") else None)
    page.on("response", lambda r: page.bad_responses.append(f"{r.status} {r.request.method} {r.url[:200]}")
            if r.status >= 400 else None)
    page.on("close", lambda _: closing(page))  # however it is closed: by its test, its context, or a `with`
    return page


def record(page: Any) -> dict:
    """What `page` heard, as its failure's report tells it (taken before a page is closed: `closing`)."""
    now = time.monotonic()
    try:
        url = page.url
    except Exception:  # noqa: BLE001 - a page already gone still tells what it heard
        url = "(gone)"
    return {"url": url, "errors": list(getattr(page, "errors", []))[-10:],
            "console_errors": list(getattr(page, "console_errors", []))[-10:],
            "failed_requests": list(getattr(page, "failed_requests", []))[-10:],
            "bad_responses": list(getattr(page, "bad_responses", []))[-10:],  # a join refused (429) shows here
            "in_flight": [f"{now - t:.1f} s: {what}" for t, what in getattr(page, "in_flight", {}).values()],
            "sessions": sorted(getattr(page, "sessions", ()))}


def forget() -> None:
    """Forget the pages closed so far, and those closed without a word (a test starts: what earlier tests
    opened is not its own)."""
    _closed.clear()
    _open[:] = [p for p in _open if not _is_closed(p)]


def _is_closed(page: Any) -> bool:
    try:
        return bool(page.is_closed())
    except Exception:  # noqa: BLE001 - a page whose browser is gone is closed
        return True


def closing(page: Any) -> None:
    """Keep `page`'s record as it closes: a test that closed its pages (a `with` block, a `finally`) still has them
    told."""
    if page in _open:
        _open.remove(page)
        _closed.append(record(page))


def queue_state(sessions: set[str]) -> list[str]:
    """Of each launched app, what its Gradio queue holds for `sessions`: pending events by function, whether each
    is still held as running or waiting (not yet finished), and the messages no stream has carried yet."""
    lines = []
    for demo in _apps:
        queue = getattr(demo, "_queue", None)
        if queue is None:
            continue
        for s in sorted(sessions):
            ids = queue.pending_event_ids_session.get(s)
            waiting = queue.pending_messages_per_session.get(s) if s in queue.pending_messages_per_session else None
            if not ids and not (waiting and waiting.qsize()):
                continue
            events = []
            for i in sorted(ids or ()):
                event = queue.event_ids_to_events.get(i)
                # a finished event is no longer held: only its id is left
                events.append(f"{i[:8]} {event.fn.name} (not finished)" if event is not None else f"{i[:8]} (finished)")
            lines.append(f"app {getattr(demo, 'local_url', '?')} session {s}: pending {events or 'none'}; "
                         f"{waiting.qsize() if waiting is not None else 0} messages not yet carried by a stream")
    return lines


def told() -> str:
    """What the test's pages heard (those open, and those it closed) and the app's queue held for them."""
    records = [record(p) for p in _open if not _is_closed(p)] + list(_closed)
    sessions: set[str] = set()
    lines = []
    for r in records:
        lines.append(f"--- page {r['url']}")
        lines += [f"---   {name}: {r[name]}" for name in ("errors", "console_errors", "failed_requests", "bad_responses",
                                                             "in_flight")]
        sessions.update(r["sessions"])
    lines += [f"--- queue: {line}" for line in queue_state(sessions)]
    return "\n".join(lines)
