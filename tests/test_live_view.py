"""The live view's server side without a browser (viewer/ui/live.py): a watched run answers the page with
its newest snapshot only when it changed, chunks of a snapshot come through the usual server function,
the written artifact replaces the snapshot, a cancelled run says its tests never ran, and requests that
name no run, or a forgotten one, get a message."""

from __future__ import annotations

import dataclasses
import json
import time

import msgspec
import pytest

from capture.live import LiveUpdate
from conftest import EXAMPLE
from rollout_trace.artifact import open_artifact
from viewer.settings import CAPTURE_DIR_ENV
from viewer.ui import live as live_module
from viewer.ui.service import Service
from viewer.ui.view_tab import ViewTab


@pytest.fixture(scope="module")
def example():
    return open_artifact(str(EXAMPLE))


def snapshot(a, turns: int, tokenizer=None) -> LiveUpdate:
    """What a capture of the example had recorded after `turns` agent turns."""
    part = dataclasses.replace(a, root=None, source="live capture", turns=a.turns[:turns], test_results=None,
                               trace=None, tokenizer_dir=None,
                               summary=msgspec.structs.replace(a.summary, env_reward=None, reward_after_penalties=None))
    return LiveUpdate(part, list(part.turns[-1:]), recorded_at=1.0e9 + turns, tokenizer=tokenizer)


def capture_beside(service: Service, monkeypatch, tmp_path):
    """A Capture tab beside the View tab (`service`'s) in one app's tabs, capturing into `tmp_path`, its form taken
    as it is. Returns the Capture tab, the tabs and the View tab's components a capture writes to."""
    import gradio as gr

    from viewer.ui import capture_tab as ct
    from viewer.ui.app import ViewPage

    cap = ct.CaptureTab(service, enabled=True, public=False)
    page = ViewPage(service)
    with gr.Blocks():
        with gr.Tabs() as tabs:
            with gr.Tab("Capture"):
                cap.render()
            with gr.Tab("View"):
                page.render()
        parts = page.wire()
    cap.tabs, cap.parts = tabs, parts
    monkeypatch.setenv(CAPTURE_DIR_ENV, str(tmp_path))
    cap._vet = lambda values, profile, only, testid, out_dir="": (ct.CaptureConfig(out_dir=out_dir), None)
    return cap, tabs, parts


def ask(tab: ViewTab, run: str, version: int = 0, rollout=None) -> dict:
    got = tab.service.live.answer({"run": run, "version": version, "rollout": rollout})
    if got.get("opened"):
        got["opened"] = json.loads(got["opened"])
        got["outline"] = got["opened"]["outline"]
    return got


def test_the_page_gets_the_newest_snapshot_only_when_it_changed(example, hf_tokenizer):
    tab = ViewTab(Service("scripted-smollm2", public=False))
    run = tab.service.live.start()
    assert tab.service.live.value(run) is None  # nothing to show before the first snapshot
    tab.service.live.update(run, snapshot(example, 0, hf_tokenizer))
    first = ask(tab, run)
    assert first["live"]["state"] == "running" and first["live"]["calls"] == 0
    assert first["outline"]["turns"] == [] and "Waiting for the agent's first model call" in first["outline"]["notice"]
    assert "run when the agent finishes" in first["outline"]["summary"]["tests"]

    tab.service.live.update(run, snapshot(example, 1, hf_tokenizer))
    got = ask(tab, run, first["live"]["changed"])
    assert len(got["outline"]["turns"]) == 1 and got["live"]["recorded_at"] == 1.0e9 + 1
    assert got["opened"]["live"]["run"] == run and got["opened"]["initial"]["turn"] == 0
    assert got["outline"]["summary"]["no_reward"] == "reward pending"
    assert got["outline"]["header"]["tokenizer"] == "the capture's tokenizer"
    # a stage change is news for the badge only: no outline is resent
    tab.service.live.stage(run, "agent")
    quiet = ask(tab, run, got["live"]["changed"])
    assert quiet["opened"] is None and quiet["live"]["stage"] == "agent working"
    assert quiet["live"]["version"] > got["live"]["version"]
    # chunks of the snapshot come through the token view's own server function, as text
    chunk = tab.chunk({"key": got["opened"]["key"], "turn": 0, "scope": "full", "index": 0})
    assert chunk["ids"] and any(chunk["text"]) and set(chunk["mask"]) <= {"0", "1"}

    tab.service.live.update(run, snapshot(example, 3, hf_tokenizer))
    third = ask(tab, run, quiet["live"]["changed"])
    assert len(third["outline"]["turns"]) == 3 and third["opened"]["initial"]["turn"] == 2  # lands on the newest
    assert third["opened"]["key"] == got["opened"]["key"]  # one key per watched rollout

    # the written artifact replaces the snapshot: a new key, real tests and reward
    final_key = tab.service.values.keep_artifact(example)
    tab.service.live.finish(run, "done", finals={None: (final_key, str(EXAMPLE), None)})
    done = ask(tab, run, third["live"]["changed"])
    assert done["live"]["state"] == "done" and done["opened"]["key"] == final_key
    assert done["opened"]["src"] == str(EXAMPLE) and "held-out tests passed" in done["outline"]["summary"]["tests"]
    assert tab.service.live.requests(run) == 5


def test_a_cancelled_run_keeps_what_was_seen_and_says_its_tests_never_ran(example):
    tab = ViewTab(Service("scripted-smollm2", public=False))
    run = tab.service.live.start()
    tab.service.live.update(run, snapshot(example, 2))
    seen = ask(tab, run)
    tab.service.live.finish(run, "cancelled", "the agent and sandbox were stopped; nothing was written")
    got = ask(tab, run, seen["live"]["changed"])
    assert got["live"]["state"] == "cancelled" and "nothing was written" in got["live"]["message"]
    assert len(got["outline"]["turns"]) == 2  # what was seen stays
    assert "never ran: the capture cancelled" in got["outline"]["summary"]["tests"]
    assert got["outline"]["summary"]["no_reward"] == "no reward" and got["outline"]["reward"]["steps"] == []
    assert got["outline"]["reward"]["waiting"].startswith("No reward: the capture cancelled")
    assert got["outline"]["header"]["tokenizer"] is None and got["outline"]["header"]["no_tokenizer"]  # ids, and why


def test_a_group_is_watched_one_rollout_at_a_time(example):
    tab = ViewTab(Service("scripted-smollm2", public=False))
    run = tab.service.live.start(rollouts=3)
    tab.service.live.update(run, dataclasses.replace(snapshot(example, 1), rollout=0))
    tab.service.live.update(run, dataclasses.replace(snapshot(example, 3), rollout=2))
    tab.service.live.stage(run, "verify", rollout=2)
    zero, two = ask(tab, run, rollout=0), ask(tab, run, rollout=2)
    assert len(zero["outline"]["turns"]) == 1 and len(two["outline"]["turns"]) == 3
    assert zero["opened"]["key"] != two["opened"]["key"]
    assert [(s["rollout"], s["turns"], s["stage"]) for s in two["live"]["siblings"]] == \
        [(0, 1, "preparing the task"), (1, 0, "preparing the task"), (2, 3, "verifying")]
    assert ask(tab, run, rollout=1)["opened"] is None  # nothing recorded for rollout 1 yet


@pytest.mark.parametrize("req", [None, "run", {"run": "0" * 32}, {"run": ["x"]}, {}])
def test_requests_that_name_no_watched_run_get_a_message(req):
    tab = ViewTab(Service("scripted-smollm2", public=False))
    got = tab.service.live.answer(req)
    assert set(got) == {"error"} and isinstance(got["error"], str)


def test_only_the_newest_runs_are_kept(example, monkeypatch):
    monkeypatch.setattr(live_module, "MAX_RUNS", 2)
    tab = ViewTab(Service("scripted-smollm2", public=False))
    runs = [tab.service.live.start() for _ in range(3)]
    assert "error" in tab.service.live.answer({"run": runs[0]}) and "live" in tab.service.live.answer({"run": runs[2]})
    assert len(set(runs)) == 3 and all(len(r) == 32 for r in runs)


def test_the_page_can_cancel_only_the_run_it_watches(example):
    tab = ViewTab(Service("scripted-smollm2", public=False))
    stopped = []
    run = tab.service.live.start(cancel=lambda: stopped.append(1))
    tab.service.live.update(run, snapshot(example, 1))
    assert "error" in tab.service.live.stop({"run": "f" * 32}) and "error" in tab.service.live.stop("x") and not stopped
    assert tab.service.live.stop({"run": run}) == {"ok": True} and stopped == [1]
    assert ask(tab, run)["live"]["stage"].startswith("cancelling")
    tab.service.live.finish(run, "cancelled", "stopped")
    assert tab.service.live.stop({"run": run}) == {"ok": True} and stopped == [1]  # once ended, nothing more to stop


def test_a_capture_whose_page_went_away_keeps_the_slot_until_it_ends(example, monkeypatch, tmp_path):
    """The generator that streams a capture is closed when its page goes (closed, reloaded); the capture's
    thread runs on to its end, and no second capture may start before it has."""
    import threading

    from capture import Cancelled, Progress
    from viewer.ui import capture_tab as ct

    cap, tabs, parts = capture_beside(Service("scripted-smollm2", public=False), monkeypatch, tmp_path)
    go_on = threading.Event()

    def stand_in(cfg, progress=None, cancel=None, live=None):
        progress(Progress("agent", "working", 1, 0.1))
        live(snapshot(example, 1))
        go_on.wait(20)
        raise Cancelled("capture cancelled")

    monkeypatch.setattr(ct, "capture", stand_in)
    stream = cap.run(cap.values())
    first = next(u for u in stream if parts.view in u)  # the live view's first value, and the View tab in front
    assert json.loads(first[parts.view])["live"]["state"] == "running" and tabs in first
    stream.close()  # the page went away
    assert cap.slot.lock.locked()
    busy = list(cap.run(cap.values()))
    assert "already running" in busy[-1][cap.status]
    go_on.set()
    cap.slot.worker.join(10)
    for _ in range(100):
        if not cap.slot.lock.locked():
            break
        time.sleep(0.05)
    assert not cap.slot.lock.locked()
