"""A failed browser test's report tells which side dropped what it waited for (tests/support/page_watch.py): the
requests its pages still waited on, and what the app's Gradio queue held for their sessions."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import gradio as gr

from support import page_watch


class FakePage:
    """A page's event hooks, fired by hand."""

    url = "http://127.0.0.1:7860/?src=x"

    def __init__(self) -> None:
        self.hooks: dict[str, list] = {}

    def on(self, name, fn) -> None:
        self.hooks.setdefault(name, []).append(fn)

    def fire(self, name, arg) -> None:
        for fn in self.hooks.get(name, []):
            fn(arg)


def request(url: str, method: str = "GET", failure: str | None = None):
    return SimpleNamespace(url=url, method=method, failure=failure)


def test_a_page_tells_the_requests_still_waiting_and_the_sessions_it_joined():
    page = page_watch.watch(FakePage())
    stream = request("http://127.0.0.1:7860/gradio_api/queue/data?session_hash=abc123")
    join = request("http://127.0.0.1:7860/gradio_api/queue/join?", "POST")
    answered = request("http://127.0.0.1:7860/config")
    outside = request("https://cdn.example.org/x.js")
    for r in (stream, join, answered, outside):
        page.fire("request", r)
    page.fire("requestfinished", answered)
    page.fire("requestfailed", request(stream.url, failure="net::ERR_ABORTED"))
    page.fire("requestfailed", stream)  # the same request object failing: no longer in flight
    page.fire("response", SimpleNamespace(status=429, url=join.url, request=join))  # a refused join
    got = page_watch.record(page)
    assert got["bad_responses"] == ["429 POST http://127.0.0.1:7860/gradio_api/queue/join?"]
    assert [w.split(": ", 1)[1] for w in got["in_flight"]] == [
        "POST http://127.0.0.1:7860/gradio_api/queue/join?", "GET https://cdn.example.org/x.js"]
    assert got["sessions"] == ["abc123"] and page.outside_requests == ["https://cdn.example.org/x.js"]
    assert got["failed_requests"][0].endswith("session_hash=abc123: net::ERR_ABORTED")


def test_the_queue_says_an_event_finished_whose_completion_no_stream_carried(monkeypatch):
    """The two causes a stuck page can have, told apart: an event still running, or one finished whose messages
    wait for a stream the page no longer holds."""
    with gr.Blocks() as demo:
        gr.Button().click(lambda: None)
    demo.queue()
    queue = demo._queue

    running = SimpleNamespace(fn=SimpleNamespace(name="open_view"))
    queue.pending_event_ids_session["s1"] = {"e-running", "e-done"}
    queue.event_ids_to_events["e-running"] = running
    waiting: asyncio.Queue = asyncio.Queue()
    waiting.put_nowait("process_completed")
    queue.pending_messages_per_session["s1"] = waiting
    monkeypatch.setattr(page_watch, "_apps", [demo])
    lines = page_watch.queue_state({"s1", "s-idle"})
    assert len(lines) == 1, lines  # a session with nothing pending says nothing
    assert "e-done (finished)" in lines[0] and "e-runnin open_view (not finished)" in lines[0]
    assert "1 messages not yet carried by a stream" in lines[0]

    page_watch.forget()
    page = page_watch.watch(FakePage())
    page.fire("request", request("http://127.0.0.1:7860/gradio_api/heartbeat/s1"))  # the session, from its heartbeat
    page.fire("close", page)  # closed by its test: its record kept for the report
    told = page_watch.told()
    assert "--- page http://127.0.0.1:7860/?src=x" in told and "--- queue: " in told and "open_view" in told
    page_watch.forget()
    assert page_watch.told() == ""
