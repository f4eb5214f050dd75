"""What one visitor may have running at once, on every way into the app: page events, the page's server
functions, the API and the MCP tools.

Without this, one visitor looping searches starved every other: the panel's server functions and the MCP tools
skip Gradio's queue (each call takes one of the server's 40 worker threads at once), and a page's events wait in
the queue behind whatever is there. Here every request that does work is counted against its visitor
(`visitor_of`: the address the Space's proxy saw, else the socket's peer): at most RUNNING run at once, a few
more wait their turn (without a thread: `InFlight.wait` is a coroutine), and past that a request is refused with
429 and a sentence saying why, after REFUSE_AFTER_S (a client looping refused requests must not keep the server
busy saying no). A visitor's requests also keep to a rate (RATE a second, BURST at once; `InFlight.pace`): what a
request costs the server's one event loop before any handler runs is paid per request, not per running one. A page's queued events are counted twice over: at `/queue/join` (at most
QUEUED of one visitor's events waiting or running in Gradio's queue, so one visitor cannot fill the queue that
every other waits in) and around the handler itself (the RUNNING bound, shared with the requests above).

The Space's proxy appends the address it saw to X-Forwarded-For, so on a Space (SPACE_ID) the visitor is that
list's last address: a client can write the header's start, never its end. Elsewhere the header is the client's
own and is ignored.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rollout_trace.artifact.bounded import Bounded

RUNNING = 2  # one visitor's requests and events running at once (with the GIL, 3 cost another visitor 3.7x)
WAITING = 8  # one visitor's requests waiting for a running one to end; past this, refused
QUEUED = 6  # one visitor's page events in Gradio's queue, waiting or running (a Load sends about five); under
# Gradio's 8 of a kind at once (viewer/ui/app.py), so another visitor's event always finds a slot
WAIT_S = 60.0  # the longest a request waits for its visitor's turn
# A refusal is answered this late (the connection held by the event loop, no thread): a client looping from many
# connections is refused a few times a second per connection, not as fast as the server can say no (500 refusals
# a second cost another visitor's page 7x in the fairness benchmark).
REFUSE_AFTER_S = 2.0
# And at most RATE requests a second (BURST at once after a pause): every request that reaches Gradio costs its
# event loop something before any handler runs (a new session's state is about 10-30 ms of it: each MCP call
# makes one), so running requests alone do not bound what a visitor costs everyone else.
RATE = 5.0
BURST = 20
MAX_RATE_WAIT_S = 10.0  # a request that would wait longer for its visitor's rate is refused
MAX_VISITORS = 10_000  # visitors whose rate is remembered
# Requests that do work outside Gradio's queue: the page's server functions, API calls, the MCP tools.
WORK_PATHS = ("/gradio_api/component_server", "/gradio_api/run/", "/gradio_api/api/", "/gradio_api/mcp")
JOIN_PATH = "/gradio_api/queue/join"


def visitor_of(headers: Mapping[str, str] | Iterable[tuple[bytes, bytes]] | None, peer: str | None,
               on_space: bool) -> str:
    """Who a request is from: on a Space, the last X-Forwarded-For address (the one the Space's proxy added);
    elsewhere, the socket's peer."""
    if on_space and headers is not None:
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        for k, v in pairs:
            key = k.decode("latin-1") if isinstance(k, bytes) else str(k)
            if key.lower() == "x-forwarded-for":
                value = v.decode("latin-1") if isinstance(v, bytes) else str(v)
                last = value.rsplit(",", 1)[-1].strip()
                if last:
                    return last[:64]
    return (peer or "unknown")[:64]


def visitor_of_request(request: object, on_space: bool) -> str:
    """`visitor_of` for a gr.Request or a Starlette request (what Gradio hands a handler)."""
    client = getattr(request, "client", None)
    return visitor_of(getattr(request, "headers", None), getattr(client, "host", None), on_space)


@dataclass
class _Waiter:
    wake: Callable[[], None]
    granted: bool = False


class InFlight:
    """Per-visitor running counts, shared by the request threads and the server's event loop. A slot freed goes
    straight to the visitor's oldest waiter, so a waiting request is not overtaken by a new one."""

    def __init__(self, running: int = RUNNING, waiting: int = WAITING, rate: float = RATE, burst: int = BURST,
                 clock: Callable[[], float] = time.monotonic):
        self.running, self.waiting = running, waiting
        self.rate, self.burst, self._clock = rate, burst, clock
        self._due: Bounded[str, float] = Bounded(MAX_VISITORS)  # when each visitor's rate is next free (GCRA)
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}
        self._waiters: dict[str, deque[_Waiter]] = {}
        self.refused = 0  # requests refused (tests and the benchmark read it)

    def pace(self, who: str, max_wait_s: float = MAX_RATE_WAIT_S) -> float | None:
        """How long `who`'s next request waits to keep to the rate (0: now); None when that is over `max_wait_s`
        (refused: its place is not taken)."""
        interval = 1.0 / self.rate
        with self._lock:
            now = self._clock()
            due = max(self._due.peek(who) or now, now) + interval
            wait = due - now - self.burst * interval
            if wait > max_wait_s:
                self.refused += 1
                return None
            self._due.put(who, due)
            return wait if wait > 1e-9 else 0.0  # (float error of the sum of intervals: none)

    def _enter_or_queue(self, who: str, waiter: _Waiter) -> bool | None:
        """True: a slot is taken; None: `waiter` waits for one; False: too many wait already."""
        with self._lock:
            if self._count.get(who, 0) < self.running:
                self._count[who] = self._count.get(who, 0) + 1
                return True
            line = self._waiters.setdefault(who, deque())
            if len(line) >= self.waiting:
                self.refused += 1
                return False
            line.append(waiter)
            return None

    def _give_up(self, who: str, waiter: _Waiter) -> bool:
        """A waiter that timed out: True if the slot was handed to it meanwhile (then it holds it)."""
        with self._lock:
            if waiter.granted:
                return True
            line = self._waiters.get(who)
            if line is not None and waiter in line:
                line.remove(waiter)
                if not line:
                    del self._waiters[who]
            self.refused += 1
            return False

    def acquire(self, who: str, timeout: float = WAIT_S) -> bool:
        """Take one of `who`'s slots on this thread, waiting at most `timeout`; False when refused."""
        event = threading.Event()
        waiter = _Waiter(event.set)
        got = self._enter_or_queue(who, waiter)
        if got is not None:
            return got
        return event.wait(timeout) or self._give_up(who, waiter)

    async def wait(self, who: str, timeout: float = WAIT_S) -> bool:
        """`acquire` for the event loop: waits without a thread."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()

        def grant() -> None:
            if not future.done():
                future.set_result(True)

        def wake() -> None:
            loop.call_soon_threadsafe(grant)

        waiter = _Waiter(wake)
        got = self._enter_or_queue(who, waiter)
        if got is not None:
            return got
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
            return True
        except asyncio.TimeoutError:
            return self._give_up(who, waiter)
        except asyncio.CancelledError:  # the client hung up while it waited: a slot handed to it goes on
            if self._give_up(who, waiter):
                self.release(who)
            raise

    def release(self, who: str) -> None:
        with self._lock:
            line = self._waiters.get(who)
            if line:
                waiter = line.popleft()
                if not line:
                    del self._waiters[who]
                waiter.granted = True  # the slot passes on: the count stays
                wake = waiter.wake
            else:
                n = self._count.get(who, 0) - 1
                if n > 0:
                    self._count[who] = n
                else:
                    self._count.pop(who, None)
                return
        wake()

    def running_of(self, who: str) -> int:
        with self._lock:
            return self._count.get(who, 0)


BUSY = ("too many of your requests are running at once on this app (at most {running}, and {waiting} waiting): "
        "wait for them to finish, then ask again")


def busy_message(in_flight: InFlight) -> str:
    return BUSY.format(running=in_flight.running, waiting=in_flight.waiting)


class VisitorLimit:
    """ASGI middleware: a request doing work outside Gradio's queue takes its visitor's slot (waiting its turn,
    without a thread), and a visitor's page events are refused at `/queue/join` past QUEUED. `queued(who)` counts
    `who`'s events in Gradio's queue (`queued_in`)."""

    def __init__(self, app, in_flight: InFlight, on_space: bool, queued: Callable[[object, str], int],
                 refuse_after_s: float = REFUSE_AFTER_S):
        self.app, self.in_flight, self.on_space, self.queued = app, in_flight, on_space, queued
        self.refuse_after_s = refuse_after_s

    async def __call__(self, scope, receive, send) -> None:
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        if not path or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        who = visitor_of(scope.get("headers") or [], client[0] if client else None, self.on_space)
        if path.startswith((JOIN_PATH, *WORK_PATHS)):
            wait = self.in_flight.pace(who)
            if wait is None:
                await asyncio.sleep(self.refuse_after_s)
                await _refuse(send, f"too many of your requests in a row on this app (at most {self.in_flight.rate:g} "
                                    "a second): wait a little, then ask again")
                return
            if wait:
                await asyncio.sleep(wait)
        if path.startswith(JOIN_PATH):
            if self.queued(scope.get("app"), who) >= QUEUED:
                await asyncio.sleep(self.refuse_after_s)
                await _refuse(send, f"too many of your page events are waiting on this app (at most {QUEUED}): "
                                    "wait for them to finish, then ask again")
                return
            await self.app(scope, receive, send)
            return
        if not path.startswith(WORK_PATHS):
            await self.app(scope, receive, send)
            return
        if not await self.in_flight.wait(who):
            await asyncio.sleep(self.refuse_after_s)
            await _refuse(send, busy_message(self.in_flight))
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight.release(who)


async def _refuse(send, message: str) -> None:
    body = json.dumps({"error": message, "detail": message}).encode()
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", b"2")]})
    await send({"type": "http.response.body", "body": body})


def queued_in(app: object, who: str, on_space: bool) -> int:
    """`who`'s events waiting or running in the Gradio queue of `app` (Gradio's App; 0 when it has none)."""
    get_blocks = getattr(app, "get_blocks", None)
    queue = getattr(get_blocks(), "_queue", None) if callable(get_blocks) else None
    events = getattr(queue, "event_ids_to_events", None)
    if not events:
        return 0
    return sum(visitor_of_request(e.request, on_space) == who for e in list(events.values()))


def limit_handlers(fns: Iterable, in_flight: InFlight, on_space: bool, refused: Callable[[str], Exception]) -> int:
    """Wrap every queued event handler among Gradio's BlockFunctions `fns` so that it runs in its visitor's slot
    (waiting its turn on its worker thread; `refused(message)` is raised past WAIT_S). A generator (a capture's
    run, which has its own one-at-a-time slot) is left as it is. Returns how many were wrapped."""
    from gradio.context import LocalContext

    wrapped = 0
    for block_fn in fns:
        fn = getattr(block_fn, "fn", None)
        if (fn is None or not getattr(block_fn, "queue", False) or getattr(fn, "_in_flight", False)
                or inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)
                or inspect.iscoroutinefunction(fn)):
            continue

        def limited(*args, __fn=fn, **kwargs):
            request = LocalContext.request.get(None)
            if request is None:  # not from a visitor (a test calling the handler)
                return __fn(*args, **kwargs)
            who = visitor_of_request(request, on_space)
            if not in_flight.acquire(who):
                raise refused(busy_message(in_flight))
            try:
                return __fn(*args, **kwargs)
            finally:
                in_flight.release(who)

        functools.update_wrapper(limited, fn)
        limited._in_flight = True  # type: ignore[attr-defined]
        block_fn.fn = limited
        wrapped += 1
    return wrapped
