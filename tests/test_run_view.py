"""The run page's Gradio handlers (viewer/ui/run_view.py) called directly, without a browser: every answer is
keyed by component and names only components its event was wired to (one value too many made a visitor's
follow state the timer), a quiet poll answers the timer alone, a grown run answers its parts, and the
per-version numbers are computed once per run state however many visitors ask."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import gradio as gr
import msgspec
import pytest
from test_run_stats import TASK5, add_version

from rollout_trace.artifact.sources import EXAMPLES_DIR
from viewer.run_stats import RunBody, RunHead
from viewer.ui.follower import HUB_CHECK_S
from viewer.ui.parts import ViewParts
from viewer.ui.run_view import RunView
from viewer.ui.service import Service


@pytest.fixture
def page(tmp_path):
    """A RunView in Blocks of its own (no app, no browser), and a copy of the bundled run that can grow."""
    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    rv = RunView(Service(str(root), public=False))
    with gr.Blocks() as demo:
        rv.render()
        rv.wire(ViewParts(view=gr.HTML(), loaded=gr.State(), index=gr.HTML(), src=gr.Dropdown(), load=gr.Button(),
                          upload=gr.UploadButton()))
    wired = {fn.fn.__name__: set(fn.outputs) for fn in demo.fns.values() if fn.fn is not None}
    return SimpleNamespace(rv=rv, root=root, src=str(root), wired=wired)


def _decode(value: str, kind: type):
    return msgspec.json.decode(value, type=kind)


def test_show_answers_every_part_by_component(page):
    rv = page.rv
    got = rv.show(page.src, {"version": "3", "task": TASK5})
    assert set(got) == set(rv.outputs()) == page.wired["on_source"]
    head = _decode(got[rv.head_html], RunHead)
    body = _decode(got[rv.body_html], RunBody)
    assert head.versions == len(body.versions) and body.open_version == 3 and body.groups
    assert body.task is not None and [p.version for p in body.task.pass_rates] == [2, 3]
    assert got[rv.src_state][0] == page.src


def test_a_source_that_is_not_a_run_hides_the_page(page):
    rv = page.rv
    got = rv.show("scripted-smollm2", {})
    assert set(got) <= set(rv.outputs()) and got[rv.column]["visible"] is False
    assert got[rv.src_state] == ("", None)


def test_the_follow_poll_answers_only_its_outputs(page):
    rv = page.rv
    seen = rv.show(page.src, {})[rv.src_state]
    quiet = rv.poll(seen)
    assert set(quiet) == {rv.timer}  # nothing new: the timer alone, the visitor's state untouched
    add_version(page.root, 5)
    grown = rv.poll(seen)
    assert set(grown) <= page.wired["poll"] and set(grown) == {rv.head_html, rv.body_html, rv.timer, rv.src_state}
    body = _decode(grown[rv.body_html], RunBody)
    assert body.refresh and [s.version for s in body.versions][-1] == 5
    assert grown[rv.src_state] != seen
    assert set(rv.poll(grown[rv.src_state])) == {rv.timer}
    assert set(rv.poll(("", None))) == {rv.timer}  # no run open: the timer stops


def test_task_and_open_events(page):
    rv = page.rv
    got = rv.on_task(SimpleNamespace(_data={"action": "task", "src": page.src, "task": TASK5, "version": "2"}))
    assert set(got) <= page.wired["on_task"]
    body = _decode(got[rv.body_html], RunBody)
    assert body.task is not None and body.task.task_id == TASK5 and body.open_version == 2
    # the other handler's event, or none: every output keeps its value (an empty dict is a value to Gradio, which
    # it refuses for several outputs and writes into one)
    assert rv.on_task(SimpleNamespace(_data={"action": "open"})) == gr.skip()
    assert rv.on_task(SimpleNamespace(_data=None)) == gr.skip()
    assert rv.on_action(SimpleNamespace(_data={"action": "task"})) == gr.skip()
    opened = rv.on_action(SimpleNamespace(_data={"action": "open", "src": page.src, "row": body.groups[0].path}))
    assert set(opened) == page.wired["on_action"]  # the token view, loaded source and index, by component


def test_per_version_numbers_once_per_run_state(page):
    rv = page.rv
    for _ in range(3):  # three visitors
        rv.show(page.src, {})
    seen = rv.show(page.src, {})[rv.src_state]
    for _ in range(3):  # quiet polls
        rv.poll(seen)
    assert rv.service.follower.stats_computed == 1
    add_version(page.root, 5)
    rv.poll(seen)
    rv.show(page.src, {})
    assert rv.service.follower.stats_computed == 2  # the grown run is one new state


def test_a_public_page_bounds_the_versions_it_sends(page, monkeypatch):
    from viewer.ui import run_view

    rv = page.rv
    monkeypatch.setattr(run_view, "MAX_PUBLIC_VERSIONS", 2)
    got = rv.show(page.src, {})
    assert len(_decode(got[rv.body_html], RunBody).versions) == 4  # not public: every version
    rv.service.public = True
    monkeypatch.setattr(rv.service, "allow_local", lambda src: True)  # the owner's run, opened publicly
    got = rv.show(page.src, {})
    body, head = _decode(got[rv.body_html], RunBody), _decode(got[rv.head_html], RunHead)
    assert [s.version for s in body.versions] == [3, 4]
    assert head.notes[0] == "a public Space shows the last 2 of this run's 4 versions" and head.versions == 4


def _hub_view(hub, monkeypatch, tmp_path) -> tuple[RunView, list[float]]:
    """A private app's run page reading the Hub stand-in `hub`, and its follower's clock (set `now[0]`)."""
    hub.patch(monkeypatch, tmp_path / "cache")
    rv = RunView(Service("", public=False))
    with gr.Blocks():
        rv.render()
    now = [1000.0]
    rv.service.follower.clock = lambda: now[0]
    return rv, now


def test_hub_follow_one_request_per_interval_per_run_and_new_commits(tmp_path, monkeypatch):
    """Ten visitors following a Hub run cost at most one Hub request per HUB_CHECK_S (the revision's commit);
    a push (a new commit) is seen, and the page stops polling when the run ends."""
    from support.hub_standin import HubStandIn
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES_DIR / "trl-run", repo)
    end = next((repo / "segments").glob("*.end.json"))
    ended = end.read_bytes()
    end.unlink()  # the run is being recorded
    with HubStandIn({"org/run": repo}) as hub:
        rv, now = _hub_view(hub, monkeypatch, tmp_path)
        shown = rv.show("org/run", {})
        assert shown[rv.timer].active is True
        seen = shown[rv.src_state]
        hub.requests.clear()
        for _ in range(10):  # ten visitors' polls within one interval
            assert set(rv.poll(seen)) == {rv.timer}
        asked = hub.paths()
        assert len(asked) <= 1 and all(p.startswith("/api/datasets/org/run") and "/tree/" not in p for p in asked), asked
        add_version(repo, 5)
        hub.commit()  # the recorder pushed
        now[0] += HUB_CHECK_S / 2
        assert set(rv.poll(seen)) == {rv.timer} and len(hub.paths()) <= 1  # not asked again yet
        now[0] += HUB_CHECK_S
        grown = rv.poll(seen)
        assert rv.body_html in grown and [s.version for s in _decode(grown[rv.body_html], RunBody).versions][-1] == 5
        end.write_bytes(ended)  # the run ended
        hub.commit()
        now[0] += HUB_CHECK_S
        last = rv.poll(grown[rv.src_state])
        assert last[rv.timer].active is False


def test_a_copy_of_a_live_run_says_it_is_not_followed(tmp_path, monkeypatch):
    """A zip of a run being recorded, or a Hub run pinned to a commit, never changes: its head says it is a copy
    that is not followed, its page sets no timer, and a poll asks the Hub nothing. The same run at its branch is
    followed."""
    from support.hub_standin import HubStandIn
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES_DIR / "trl-run", repo)
    next((repo / "segments").glob("*.end.json")).unlink()  # the run is being recorded
    zipped = shutil.make_archive(str(tmp_path / "copy"), "zip", repo)
    with HubStandIn({"org/run": repo}) as hub:
        rv, now = _hub_view(hub, monkeypatch, tmp_path)
        for src, followed in ((str(repo), True), ("org/run", True), (zipped, False), (f"org/run@{hub.sha}", False)):
            shown = rv.show(src, {})
            head = _decode(shown[rv.head_html], RunHead)
            assert head.live and head.followed is followed, src
            assert shown[rv.timer].active is followed, src
            if not followed:
                assert head.every_s == 0.0
                hub.requests.clear()
                now[0] += 2 * HUB_CHECK_S
                assert rv.poll(shown[rv.src_state])[rv.timer].active is False  # a stale timer is stopped
                assert hub.paths() == [], src  # a pinned commit is not asked for again
