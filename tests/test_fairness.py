"""One visitor cannot starve the others (viewer/ui/in_flight.py): what one visitor has running at once is bounded
on every way in (the page's server functions, the API and MCP, the page's queued events), a visitor past the
bound is refused at once with a sentence, and another visitor is served meanwhile. Everything waits on events
(a stand-in handler that holds until the test lets it go), never on time."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from viewer.ui import in_flight as F
from viewer.ui.in_flight import InFlight, visitor_of

A, B = "203.0.113.7", "198.51.100.9"  # documentation addresses: header text only, never contacted


def test_the_visitor_is_the_address_the_spaces_proxy_added():
    headers = {"X-Forwarded-For": "1.2.3.4, " + A}  # a client wrote the start; the proxy appended its end
    assert visitor_of(headers, "10.0.0.1", on_space=True) == A
    assert visitor_of([(b"x-forwarded-for", b"9.9.9.9," + B.encode())], "10.0.0.1", on_space=True) == B
    assert visitor_of(headers, "127.0.0.1", on_space=False) == "127.0.0.1"  # off a Space the header is the client's
    assert visitor_of(None, None, on_space=True) == "unknown"


def test_a_slot_goes_to_the_oldest_waiter_and_past_the_waiting_bound_a_request_is_refused():
    f = InFlight(running=1, waiting=1)
    assert f.acquire(A)
    got: list[bool] = []
    waiting = threading.Thread(target=lambda: got.append(f.acquire(A, timeout=600)))
    waiting.start()
    while not f._waiters.get(A):  # the waiter has queued (a signal the test reads, not a delay)
        threading.Event().wait(0.001)
    assert not f.acquire(A, timeout=600)  # one running, one waiting: a third is refused at once
    assert f.acquire(B)  # another visitor is not behind them
    f.release(A)  # A's slot passes to its waiter
    waiting.join()
    assert got == [True] and f.running_of(A) == 1 and f.refused == 1
    f.release(A)
    f.release(B)
    assert f.running_of(A) == 0 and f.running_of(B) == 0


def test_waiting_on_the_event_loop_takes_no_thread_and_gives_up_after_its_time():
    f = InFlight(running=1, waiting=4)

    async def scenario() -> tuple[bool, bool, int]:
        assert await f.wait(A)
        timed_out = await f.wait(A, timeout=0.01)  # nobody releases: it gives up, refused
        later = asyncio.ensure_future(f.wait(A, timeout=600))
        while not f._waiters.get(A):
            await asyncio.sleep(0)
        threading.Thread(target=f.release, args=(A,)).start()  # released from a request thread
        return timed_out, await later, f.running_of(A)

    assert asyncio.run(scenario()) == (False, True, 1)


def test_a_visitors_requests_keep_to_a_rate_after_a_burst_and_another_visitor_is_not_slowed():
    now = [100.0]
    f = InFlight(rate=5.0, burst=20, clock=lambda: now[0])
    assert [f.pace(A) for _ in range(20)] == [0.0] * 20  # a page's burst goes at once
    assert f.pace(A) == pytest.approx(0.2) and f.pace(A) == pytest.approx(0.4)  # then one each 1/RATE s
    while (w := f.pace(A)) is not None:  # a looping client waits longer and longer...
        assert w <= 10.0
    assert f.refused == 1  # ...until a wait past MAX_RATE_WAIT_S is refused (its place not taken)
    assert f.pace(B) == 0.0
    now[0] += 60.0  # after a pause the burst is back
    assert f.pace(A) == 0.0


@pytest.fixture
def public_app(monkeypatch):
    """The public app on a Space (SPACE_ID), the search panel's summary a stand-in that holds until released."""
    from conftest import launch_app
    from viewer.ui.find_panel import FindPanel

    monkeypatch.setenv("SPACE_ID", "test/fairness")
    release = threading.Event()
    entered: list[str] = []
    lock = threading.Lock()

    def held(self, req):
        with lock:
            entered.append(str(req.get("who")))
        release.wait(600)
        return {"rollouts": 0}

    monkeypatch.setattr(FindPanel, "summary", held)
    demo, url = launch_app(public=True, mcp=True)
    component = next(b._id for b in demo.blocks.values() if getattr(b, "elem_id", None) == "find-panel")
    try:
        yield url, component, release, entered, demo
    finally:
        release.set()
        demo.close()


def _server_fn(url: str, component: int, who: str) -> httpx.Response:
    return httpx.post(f"{url}/gradio_api/component_server/", headers={"X-Forwarded-For": who}, timeout=600,
                      json={"session_hash": f"s-{who}", "component_id": component, "fn_name": "find_summary",
                            "data": {"who": who}})


def test_a_visitor_looping_server_functions_is_bounded_and_another_is_served(public_app):
    url, component, release, entered, demo = public_app
    limit = demo.in_flight
    n = limit.running + limit.waiting
    with ThreadPoolExecutor(n + 2) as pool:
        held = [pool.submit(_server_fn, url, component, A) for _ in range(n)]
        while len(entered) < limit.running or len(limit._waiters.get(A, ())) < limit.waiting:
            threading.Event().wait(0.01)
        refused = _server_fn(url, component, A)  # A has RUNNING running and WAITING waiting: refused at once
        assert refused.status_code == 429 and "too many of your requests" in refused.json()["error"]
        assert entered.count(A) == limit.running  # A's waiting requests hold no worker thread
        other = pool.submit(_server_fn, url, component, B)
        while B not in entered:  # B's request runs while all of A's are held
            threading.Event().wait(0.01)
        release.set()
        assert other.result().status_code == 200
        assert all(f.result().status_code == 200 for f in held)  # A's waiters ran in turn
    while limit.running_of(A) or limit.running_of(B):  # each slot is given back once its response is sent
        threading.Event().wait(0.01)


def test_mcp_calls_count_against_their_visitor(public_app):
    url, component, release, entered, demo = public_app
    limit = demo.in_flight
    for _ in range(limit.running):  # A's slots taken by server functions that hold
        threading.Thread(target=_server_fn, args=(url, component, A), daemon=True).start()
    while len(entered) < limit.running:
        threading.Event().wait(0.01)
    before = limit.refused
    limit.waiting, keep = 0, limit.waiting  # no waiting room: A's MCP call is refused at once
    try:
        got = httpx.post(f"{url}/gradio_api/mcp/", headers={"X-Forwarded-For": A, "accept": "application/json, "
                                                            "text/event-stream"}, timeout=600,
                         json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert got.status_code == 429 and limit.refused == before + 1
        other = httpx.post(f"{url}/gradio_api/mcp/", headers={"X-Forwarded-For": B, "accept": "application/json, "
                                                              "text/event-stream"}, timeout=600,
                           json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert other.status_code != 429
    finally:
        limit.waiting = keep
        release.set()


def test_every_queued_handler_of_the_public_app_runs_in_its_visitors_slot(monkeypatch):
    from viewer.ui.app import build_app

    monkeypatch.setenv("SPACE_ID", "test/fairness")
    demo = build_app(default_source="scripted-smollm2", public=True, mcp=True)
    queued = [fn for fn in demo.fns.values() if fn.queue]
    unwrapped = [fn.name for fn in queued if not getattr(fn.fn, "_in_flight", False)]
    assert queued and unwrapped == []  # public without capture: no generator handler is left out


def test_a_page_load_is_one_chain_of_events():
    """One event on the page's load, the next after it (viewer/ui/app.py says why): two loads side by side let one's
    end close the page's event stream while the other's next event is joined, which then waits unanswered. The
    search panel's value comes with the first."""
    from viewer.ui.app import build_app

    demo = build_app(default_source="scripted-smollm2")
    loads = [fn for fn in demo.fns.values() if any(event == "load" for _, event in fn.targets)]
    assert len(loads) == 1, [fn.name for fn in loads]
    panel = [b for b in demo.blocks.values() if "fp-mount" in str(getattr(b, "html_template", ""))]
    assert len(panel) == 1 and panel[0] in loads[0].outputs
    after = [fn for fn in demo.fns.values() if fn.trigger_after == loads[0]._id]
    assert [fn.name for fn in after] == ["on_page_load"]  # the index and token view, once the run page is shown


def test_a_visitors_page_events_past_the_queue_bound_are_refused_at_join():
    class Event:
        def __init__(self, who):
            self.request = type("R", (), {"headers": {"x-forwarded-for": who}, "client": None})()

    class App:
        def get_blocks(self):
            return type("B", (), {"_queue": type("Q", (), {"event_ids_to_events": {
                str(k): Event(A if k < F.QUEUED else B) for k in range(F.QUEUED + 1)}})()})()

    assert F.queued_in(App(), A, on_space=True) == F.QUEUED
    assert F.queued_in(App(), B, on_space=True) == 1
    assert F.queued_in(object(), A, on_space=True) == 0


def test_a_source_being_indexed_holds_no_other_source_and_its_waiters_hear_how_far_it_got(monkeypatch):
    from types import SimpleNamespace

    from viewer.find import cache as find_cache
    from viewer.find.text_index import RolloutRow

    started, release = threading.Event(), threading.Event()

    def build(c, index, limit):  # the slow source's build holds until released; the other's is quick
        index.add([(RolloutRow(f"{c.name}/r0"), None, [])])
        if c.name == "slow":
            started.set()
            release.wait(600)

    monkeypatch.setattr(find_cache, "index_collection", build)
    cache = find_cache.FindCache()
    one_row = [SimpleNamespace(kind="artifact")]
    slow, quick = (SimpleNamespace(name=n, records=one_row, part_of=None) for n in ("slow", "quick"))
    try:
        builder = threading.Thread(target=cache.get, args=("org/slow", slow, False))
        builder.start()
        started.wait(600)
        assert len(cache.get("org/quick", quick, False, wait_s=0)) == 1  # not behind the slow build
        with pytest.raises(find_cache.Building) as got:
            cache.get("org/slow", slow, False, wait_s=0)
        assert (got.value.read, got.value.total) == (1, 1) and "1 of 1 rollouts read so far" in str(got.value)
        release.set()
        builder.join()
        assert len(cache.get("org/slow", slow, False, wait_s=0)) == 1
    finally:
        release.set()
        cache.close()


def test_a_visitors_queued_events_are_bounded_and_another_visitors_event_still_runs(monkeypatch):
    """Through Gradio's queue as a page sends events: A's events hold (a stand-in handler), A may have QUEUED of
    them in the queue and RUNNING running, its next join is refused, and B's event of the same kind runs."""
    import json
    import uuid

    from conftest import launch_app
    from viewer.ui.find_panel import FindPanel

    monkeypatch.setenv("SPACE_ID", "test/fairness")
    release = threading.Event()
    running: list[str] = []

    def held(self, source):
        running.append(source)
        if source == "hold":
            release.wait(600)
        return self.value("")

    monkeypatch.setattr(FindPanel, "on_source", held)
    demo, url = launch_app(public=True)
    fn = next(i for i, f in demo.fns.items() if getattr(getattr(f.fn, "__wrapped__", None), "__func__", None) is held)
    limit = demo.in_flight

    def join(c: httpx.Client, session: str, source: str) -> httpx.Response:
        return c.post("/gradio_api/queue/join", json={"data": [source], "fn_index": fn, "session_hash": session,
                                                       "event_data": None, "trigger_id": None})

    try:
        with httpx.Client(base_url=url, timeout=600, headers={"X-Forwarded-For": A}) as a, \
                httpx.Client(base_url=url, timeout=600, headers={"X-Forwarded-For": B}) as b:
            session = uuid.uuid4().hex[:12]
            assert all(join(a, session, "hold").status_code == 200 for _ in range(F.QUEUED))
            while len(running) < limit.running:  # A's events: RUNNING running, the rest waiting their turn
                threading.Event().wait(0.01)
            refused = join(a, session, "hold")
            assert refused.status_code == 429 and "page events" in refused.json()["error"]
            other = uuid.uuid4().hex[:12]
            event = join(b, other, "pass").json()["event_id"]
            with b.stream("GET", "/gradio_api/queue/data", params={"session_hash": other}) as stream:
                for line in stream.iter_lines():  # B's event completes while every one of A's holds
                    msg = json.loads(line[5:]) if line.startswith("data:") else {}
                    if msg.get("msg") == "process_completed" and msg.get("event_id") == event:
                        break
            assert running.count("hold") == limit.running and "pass" in running
    finally:
        release.set()
        demo.close()
