"""Watching a capture as it runs (capture/live.py): the proxy watch's pace, live updates that arrive
before the capture ends and match the written artifact, the polling that stops with the capture, and
`python -m capture --follow` printing each call as it lands."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from test_capture import config

from capture import capture
from capture.agent import AgentRun, Cancelled
from capture.live import ProxyWatch
from conftest import ROOT
from rollout_trace.artifact import load_artifact


class FakeProxy:
    """A proxy session whose recorded calls the test adds; it counts what it was asked."""

    def __init__(self):
        self.entries: list[dict] = []
        self.asked: list[str] = []
        self.fail = False

    def get(self, path: str) -> dict:
        self.asked.append(path)
        if self.fail:
            raise OSError("proxy busy")
        if path.endswith("/trace_entries"):
            return {"entries": list(self.entries)}
        return {"n_turns": len(self.entries), "idle_s": 0.5}


def test_watch_keeps_a_steady_pace_and_fetches_entries_only_when_calls_land():
    proxy, now, got = FakeProxy(), [0.0], []
    watch = ProxyWatch(proxy.get, "s1", lambda e, at: got.append((len(e), at)), interval_s=1.0, clock=lambda: now[0])
    for step in range(40):  # the wait loop ticks every 0.25 s for 10 s
        now[0] = step * 0.25
        if step == 8:
            proxy.entries.append({"n": 1})
        if step == 20:
            proxy.entries += [{"n": 2}, {"n": 3}]
        watch.tick()
    status = [p for p in proxy.asked if p == "/sessions/s1"]
    fetches = [p for p in proxy.asked if p.endswith("/trace_entries")]
    assert len(status) == 10  # once a second, however often the loop runs
    assert len(fetches) == 2 and [n for n, _ in got] == [1, 3]  # only when the count grew
    assert all(at is not None and abs(at - (time.time() - 0.5)) < 5 for _, at in got)
    assert watch.requests == len(proxy.asked)


def test_watch_skips_a_failed_poll_and_catches_up():
    proxy, now, got = FakeProxy(), [0.0], []
    watch = ProxyWatch(proxy.get, "s1", lambda e, at: got.append(len(e)), clock=lambda: now[0])
    proxy.entries.append({"n": 1})
    proxy.fail = True
    watch.tick()
    assert watch.failures == 1 and got == []
    proxy.fail, now[0] = False, 1.0
    watch.tick()
    assert got == [1]


@pytest.mark.capture
def test_live_updates_arrive_before_the_capture_ends_and_match_the_artifact(tmp_path, task_file, tokenizer_dir,
                                                                            scripted_llm, monkeypatch):
    llm = scripted_llm(held=True)  # each agent reply waits until the turns before it were seen live
    asked: list[float] = []
    real_get = AgentRun.proxy_get

    def counting_get(self, path):
        asked.append(time.monotonic())
        return real_get(self, path)

    monkeypatch.setattr(AgentRun, "proxy_get", counting_get)
    updates, stages = [], []

    def seen(u):
        updates.append((time.time(), len(stages), u))
        llm.allow(len(u.artifact.turns) + 1)  # the next reply, once every turn so far was seen

    a = capture(config(tmp_path, task_file, tokenizer_dir, llm.url), progress=lambda p: stages.append(p.stage),
                live=seen)
    ended = time.monotonic()
    counts = [len(u.artifact.turns) for _, _, u in updates]
    assert counts == sorted(counts) and counts[-1] == 3
    first = next(i for i, c in enumerate(counts) if c >= 1)
    # turn 0 was seen while the agent still worked: before the verify stage began
    assert stages[: updates[first][1]].count("verify") == 0
    assert len([c for c in counts if c < 3]) >= 2  # more than one step on the way
    assert updates[0][2].artifact.turns == [] and updates[0][2].artifact.task is not None  # the task, before any call
    for seen_at, _, u in updates[:-1]:
        assert u.artifact.root is None and u.artifact.test_results is None
        assert u.artifact.summary.reward_after_penalties is None
        if u is updates[0][2]:
            continue
        # a poll or so behind the proxy's record (the delay itself is measured by bench/bench_live.py)
        assert u.recorded_at is not None and -0.2 <= seen_at - u.recorded_at < 10
    # the written artifact holds what was shown live: same turns, ids and masks
    written = load_artifact(tmp_path / "out")
    last = updates[-1][2].artifact
    assert len(written.turns) == len(last.turns) == len(a.turns)
    for w, t in zip(written.turns, last.turns, strict=True):
        assert np.array_equal(w.ids, t.ids) and np.array_equal(w.mask, t.mask)
        assert np.array_equal(w.logprobs, t.logprobs) and w.seed_trained == t.seed_trained and w.tool_calls == t.tool_calls
    # the watch polled about once a second while the agent worked, and not once after the capture ended
    assert asked and max(asked) <= ended
    span = max(asked) - min(asked)
    assert len(asked) <= 2 * (span + 1) + 2  # the watch is ticked by the agent's wait loop: none once it returned


@pytest.mark.capture
def test_cancel_midway_keeps_what_was_seen(tmp_path, task_file, tokenizer_dir, scripted_llm):
    llm = scripted_llm(delay_s=60.0, slow_after=1)
    updates, cancel = [], threading.Event()

    def on_update(u):
        updates.append(u)
        if u.artifact.turns:
            cancel.set()

    with pytest.raises(Cancelled):
        capture(config(tmp_path, task_file, tokenizer_dir, llm.url), live=on_update, cancel=cancel)
    assert updates and len(updates[-1].artifact.turns) >= 1
    assert not (tmp_path / "out").exists()


@pytest.mark.capture
def test_follow_prints_each_call_as_it_lands(tmp_path, task_file, tokenizer_dir, scripted_llm):
    llm = scripted_llm(held=True)  # each reply waits until the turn before it was printed
    llm.allow(1)
    cmd = [sys.executable, "-m", "capture", "--backend", "local", "--endpoint", llm.url, "--model", "scripted-model",
           "--dataset", str(task_file), "--n-prompts", "1", "--tokenizer", str(tokenizer_dir),
           "--out-dir", str(tmp_path / "out"), "--follow"]
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as err_file:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=err_file, text=True)
    watchdog = threading.Timer(240, proc.kill)  # a capture that hangs ends the reading below
    watchdog.start()
    printed: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # a turn printed lets the next reply go
            printed.append(line.rstrip("\n"))
            if "     live] " in line and "] turn " in line:
                llm.allow(sum("] turn " in x for x in printed if "     live] " in x) + 1)
        proc.wait(timeout=240)
    finally:
        watchdog.cancel()
        proc.kill()
    assert proc.returncode == 0, errors.read_text()[-2000:]
    out = "\n".join(printed)
    lines = out.splitlines()
    live = [i for i, line in enumerate(lines) if "     live] " in line]
    turns = [i for i in live if "] turn " in lines[i]]
    verify = next(i for i, line in enumerate(lines) if " verify]" in line)
    assert turns and turns[0] < verify, out  # turn 0 printed while the agent was still working
    assert "] turn 0 · in " in lines[turns[0]] and "tool write" in lines[turns[0]] and " out " in lines[turns[0]]
    # no tool call, and TRL 1.16 trains it all the same (its loss mask): no "(not trained)"
    assert any("] turn 2 · " in lines[i] and "no tool" in lines[i] and "Done" in lines[i] for i in turns)
    assert not any("(not trained)" in lines[i] for i in turns)
    written = load_artifact(tmp_path / "out")
    assert len(turns) == len(written.turns)  # one line per agent turn, none twice


def test_the_proxy_is_asked_the_same_from_here_or_from_inside_the_sandbox():
    """Local backend: straight to the proxy's port. A Hugging Face sandbox's proxy listens on its own
    loopback, so the question is asked from inside (in_sandbox.py get), with the same answer."""
    import dataclasses
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from capture.agent import HELPER, Layout
    from capture.progress import Reporter
    from capture.sandbox import LocalSandbox

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = json.dumps({"path": self.path, "n_turns": 2}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    box = LocalSandbox.create()
    try:
        lay = Layout(home=box.home, python=sys.executable, opencode="opencode", proxy_port=server.server_port)
        box.files.write(f"{lay.state}/in_sandbox.py", HELPER.read_bytes())
        inside = AgentRun(box, lay, Reporter(None)).proxy_get("/sessions/s1")
        here = AgentRun(box, dataclasses.replace(lay, proxy_from_host=True), Reporter(None)).proxy_get("/sessions/s1")
        assert inside == here == {"path": "/sessions/s1", "n_turns": 2}
    finally:
        box.kill()
        server.shutdown()


def test_follow_prints_each_call_once_per_rollout(capsys):
    """A group's rollouts print apart; a call listed again in a later poll (or dropped from the chain, as
    opencode's title request is) is never printed twice."""
    import dataclasses

    from capture.live import LiveTrace, follow_printer
    from capture.tasks import TaskSpec
    from conftest import EXAMPLE
    from rollout_trace.artifact import open_artifact

    a = open_artifact(str(EXAMPLE))
    entries = [{**e, "metadata": {**(e.get("metadata") or {}), "node_id": f"n{i}"}}
               for i, e in enumerate(json.loads((EXAMPLE / "trace.json").read_text())["turns"])]
    trace = LiveTrace(a.summary.model, TaskSpec(0, "t", "instruction", [], [], ""), None, "test")
    show = follow_printer(start=0.0)
    first = trace.update(entries[:2])
    show(first)
    show(trace.update(entries))
    show(dataclasses.replace(trace.update(entries), rollout=1))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 * len(entries)  # every call once for the single view, once for rollout 1
    assert sum("rollout 1]" in line for line in lines) == len(entries)
    assert sum("] turn 0 · " in line for line in lines) == 2
