"""The group view without a browser: the records of the group map and the comparison, opening a
group (map, ?rollout= deep link, advantage in the outline), the compare server function, and the Capture
tab's group run with a stand-in `capture_group` (no opencode)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import EXAMPLE, edit_json
from rollout_trace.artifact.group import GroupFile, GroupRollout, encode_group, grpo_advantages
from viewer.contract import MODES, Initial
from viewer.group import first_difference

ROOT = Path(__file__).resolve().parent.parent
REWARDS = [0.2, 1.0, -0.1, None]
CHANGED_AT = 10  # rollout-01's turn 0 output differs from its siblings' at this generated token


def make_group(root: Path, rewards=REWARDS) -> Path:
    """examples/scripted-smollm2 copied to rollout-00..03 with edited rewards; rollout-01 says something else."""
    rollouts = []
    for i, r in enumerate(rewards):
        name = f"rollout-{i:02d}"
        shutil.copytree(EXAMPLE, root / name)
        edit_json(root / name / "summary.json", lambda d, r=r: d.update(reward_after_penalties=r, timed_out=r is None))
        rollouts.append(GroupRollout(index=i, folder=name, status="timed-out" if r is None else "ok", reward=r,
                                     advantage=0.0, rollout_seed=i))
    edit_json(root / "rollout-01" / "turns.json",
              lambda d: d["turns"][0]["output_ids"].__setitem__(CHANGED_AT, d["turns"][0]["output_ids"][CHANGED_AT] + 1))
    # the same token in what the proxy recorded (call 1 is turn 0: call 0 is opencode's title call)
    edit_json(root / "rollout-01" / "trace.json", lambda d: d["turns"][1]["completion_token_ids"].__setitem__(
        CHANGED_AT, d["turns"][1]["completion_token_ids"][CHANGED_AT] + 1))
    for g, a in zip(rollouts, grpo_advantages(rewards), strict=False):
        g.advantage = a
    task = json.loads((EXAMPLE / "task.json").read_text())
    shutil.copy(EXAMPLE / "task.json", root / "task.json")
    g = GroupFile(task_id=task["task_id"], k=len(rewards), rollouts=rollouts, model="HuggingFaceTB/SmolLM2-135M-Instruct",
                  rollout_seed=0)
    (root / "group.json").write_bytes(encode_group(g))
    return root


@pytest.fixture(scope="module")
def grp(tmp_path_factory) -> Path:
    return make_group(tmp_path_factory.mktemp("grp") / "grp")


@pytest.fixture
def tab():
    from viewer.ui.service import Service
    from viewer.ui.view_tab import ViewTab

    return ViewTab(Service("scripted-smollm2", public=False))


def test_first_difference():
    a = np.array([1, 2, 3, 4])
    assert first_difference(a, a.copy()) is None
    assert first_difference(a, np.array([1, 2, 9, 4])) == 2
    assert first_difference(a, a[:3]) == 3


def test_advantage_mode_is_listed():
    assert "advantage" in MODES and MODES.index("advantage") > MODES.index("drift")


def test_open_group_shows_the_map_sorted_by_advantage(tab, grp):
    cv = tab.service.rows
    assert tab.service.is_collection(str(grp))
    _, _, index = cv.open_source(str(grp))
    page = json.loads(index)
    assert page["mode"] == "group" and page["row"] == ""
    order = [r["rollout"] for r in page["group"]["rows"]]
    adv = grpo_advantages(REWARDS)
    assert order == sorted(range(4), key=lambda i: (-adv[i], i)) == [1, 3, 0, 2]  # unscorable: 0, above a negative
    assert page["group"]["rows"][order.index(3)]["status"] == "timed-out"


def test_bundled_group_opens_and_deep_link_carries_the_advantage(tab, grp):
    cv = tab.service.rows
    assert tab.service.is_collection("smollm2-group")
    assert json.loads(cv.open_source("smollm2-group")[2])["mode"] == "group"
    view, loaded, index = cv.open_row(str(grp), "", {}, Initial(turn=0), rollout=1)
    opened, page = json.loads(view), json.loads(index)
    assert page["mode"] == "row" and page["rollout"] == 1 and loaded.endswith("rollout-01")
    assert opened["outline"]["advantage"] == pytest.approx(grpo_advantages(REWARDS)[1])
    # the same rollout opened on its own has no advantage (one shared rollout, two outlines)
    alone = json.loads(tab.service.values.source_value(str(grp / "rollout-01"))[0])
    assert alone["outline"]["advantage"] is None and alone["key"] == opened["key"]


def test_compare_marks_the_first_difference(tab, grp):
    cv = tab.service.rows
    cv.open_source(str(grp))
    got = cv.compare({"src": str(grp), "row": "", "a": 0, "b": 1, "turn": 0})
    c = got["compare"]
    turn0 = json.loads((grp / "rollout-00" / "turns.json").read_text())["turns"][0]
    assert c["output_diverge_at"] == CHANGED_AT and (c["a"]["rollout"], c["b"]["rollout"]) == (0, 1)
    # each side has all its generated tokens, with their mask, from the first one
    for side in (c["a"], c["b"]):
        assert side["out_total"] == len(side["out_text"]) == turn0["n_output_ids"] and side["out_mask"] == "1" * len(side["out_text"])
    assert c["a"]["out_text"][:CHANGED_AT] == c["b"]["out_text"][:CHANGED_AT] != []
    assert c["a"]["out_text"][CHANGED_AT] != c["b"]["out_text"][CHANGED_AT]
    assert c["prompt_diverge_at"] is None  # their prompts are identical
    # the bundled real group (captured before every sandbox had one working directory): the prompts part at
    # the sandbox folder's name, said in a folded note under the generated tokens
    cv.open_source("smollm2-group")
    real = cv.compare({"src": "smollm2-group", "row": "", "a": 0, "b": 1, "turn": 0})["compare"]
    at = real["prompt_diverge_at"]
    assert at is not None and real["a"]["text"][at - real["a"]["start"]] != real["b"]["text"][at - real["b"]["start"]]
    assert real["output_diverge_at"] == 0  # their generated tokens part at the first one
    same = cv.compare({"src": str(grp), "row": "", "a": 0, "b": 2, "turn": 0})["compare"]
    assert same["output_diverge_at"] is None and same["diverge_at"] is None  # identical
    assert "error" in cv.compare({"src": str(grp), "row": "", "a": 0, "b": 0, "turn": 0})
    # past the last turn of both single-turn siblings, the note says so (not "one of them")
    past = cv.compare({"src": "smollm2-group", "row": "", "a": 0, "b": 1, "turn": 1})["compare"]
    assert past["note"] == "neither has a turn 1 (both have 1 turn): comparing their last turns"


def test_capture_tab_group_run_with_a_stand_in(tab, grp, monkeypatch, tmp_path):
    import gradio as gr

    from capture.group import GroupResult, RolloutProgress
    from viewer.ui import capture_tab as ct

    monkeypatch.setenv("ROLLOUT_VIEWER_CAPTURE_DIR", str(tmp_path))
    from viewer.ui.app import ViewPage

    cap = ct.CaptureTab(tab.service, enabled=True, public=False)
    page = ViewPage(tab.service)
    with gr.Blocks():
        page.render()
        cap.render()
        cap.parts = page.wire()
    calls = {}

    def stand_in(cfg, k, parallel=None, progress=None, cancel=None, live=None):
        calls.update(k=k, parallel=parallel)
        for i in range(k):
            progress(RolloutProgress(i, "agent", f"rollout {i} <b>works</b>", i, 0.1))
        progress(RolloutProgress(None, "done", "group written", 0, 0.2))
        g = GroupFile(task_id="t", k=k, rollouts=[])
        return GroupResult(root=grp, group=g, outcomes=[], artifacts=[])

    cap.capture_group = stand_in
    cap._vet = lambda values, profile, only, testid, out_dir="": (ct.CaptureConfig(out_dir=out_dir), None)
    updates = list(cap.run(cap.values(group_size=4, parallel=2)))
    assert calls == {"k": 4, "parallel": 2}
    last = updates[-1]
    status = last[cap.status]
    assert status.count("data-testid='group-progress-row'") == 4 and "&lt;b&gt;works" in status
    assert json.loads(last[cap.parts.index])["mode"] == "group"
    # K = 1 keeps the single capture path
    cap.capture_group = lambda *a, **k: pytest.fail("a single rollout must not run a group")
    seen = []
    cap._run = lambda cfg, k=None, parallel=None: iter(seen.append(k) or [{cap.status: "single"}])
    assert list(cap.run(cap.values(group_size=1)))[-1][cap.status] == "single" and seen == [None]
    del cap._run
    assert "whole number" in list(cap.run(cap.values(group_size=0)))[-1][cap.status]
    cap.capture_group = stand_in
    list(cap.run(cap.values(group_size=2, parallel=0)))  # the form's default: the backend's own P
    assert calls == {"k": 2, "parallel": None}


def test_one_loop_drives_a_rollout_and_a_group(tab, grp, monkeypatch, tmp_path):
    """The Capture tab runs a single rollout and a group through one loop (`_run`), and opens either in the
    View tab through one callback (CaptureTab.open_capture)."""
    from test_live_view import capture_beside

    from capture import Progress
    from capture.group import GroupResult, RolloutProgress
    from rollout_trace.artifact import load_artifact
    from rollout_trace.artifact.group import load_group
    from viewer.ui import capture_tab as ct

    cap, tabs, parts = capture_beside(tab.service, monkeypatch, tmp_path)
    single = tmp_path / "single"
    shutil.copytree(EXAMPLE, single)

    def one(cfg, progress=None, cancel=None, live=None):
        progress(Progress("agent", "the agent <works>", 2, 0.1))
        return load_artifact(single)

    def group(cfg, k, parallel=None, progress=None, cancel=None, live=None):
        for i in range(k):
            progress(RolloutProgress(i, "agent", f"rollout {i} works", 1, 0.1))
        g = load_group(grp)
        return GroupResult(root=grp, group=g, outcomes=[], artifacts=[load_artifact(grp / r.folder)
                                                                      for r in g.rollouts])

    monkeypatch.setattr(ct, "capture", one)
    cap.capture_group = group
    loops, opened = [], []
    real_run, real_open = cap._run, cap.open_capture
    monkeypatch.setattr(cap, "_run", lambda cfg, k=None, parallel=None: loops.append(k) or real_run(cfg, k, parallel))
    monkeypatch.setattr(cap, "open_capture", lambda root, following: opened.append(root) or real_open(root, following))

    last = list(cap.run(cap.values(group_size=1)))[-1]
    assert "<b>done</b> · 3 agent turn(s)" in last[cap.status] and "reward +0.800" in last[cap.status]
    assert last[parts.loaded] == str(single) and last[cap.download].endswith("single.zip") and tabs in last
    assert "[   0.1s agent] the agent <works>" in last[cap.log]
    last = list(cap.run(cap.values(group_size=4, parallel=2)))[-1]
    assert "3 of 4 rollouts ok" in last[cap.status]  # rollout 3 timed out
    assert last[cap.status].count("data-testid='group-progress-row'") == 4
    assert json.loads(last[parts.index])["mode"] == "group" and tabs in last
    assert "[   0.1s rollout 3 agent] rollout 3 works" in last[cap.log] and last[cap.download].endswith("grp.zip")
    assert loops == [None, 4] and opened == [single, grp]
