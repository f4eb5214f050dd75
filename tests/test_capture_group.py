"""GRPO groups (capture/group.py): K rollouts of one task, P at a time, written as one folder.

The first tests replace the single capture with a stand-in that copies the bundled example (fast, no
opencode): failure isolation, statuses, seeds, NaN rewards, cancel, atomic write. The `capture`-marked
tests run the real opencode behind the real proxy against a scripted endpoint that plays a different
script per rollout (chosen by the request `seed` the group sends), P=4 at once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from capture import CaptureConfig, CaptureError, Progress, isolation, task_for
from capture.agent import Cancelled
from capture.group import StageBoard, capture_group, default_parallel
from conftest import ROOT
from rollout_trace.artifact import load_artifact
from rollout_trace.artifact.group import load_group
from support.collection_data import copy_example
from support.viewer_cli import viewer


def trl_advantages(rewards) -> np.ndarray:
    """TRL's `_score_group` lines, restated with numpy: NaN rewards are excluded and get 0."""
    r = np.array([np.nan if x is None else x for x in rewards], dtype=float)
    adv = np.zeros_like(r)
    ok = ~np.isnan(r)
    if ok.any():
        adv[ok] = (r[ok] - r[ok].mean()) / (r[ok].std() + 1e-8)
    return adv


def config(tmp_path, task_file, url="http://127.0.0.1:9/v1", **kw) -> CaptureConfig:
    base = dict(model="scripted-model", backend="local", endpoint=url, dataset=str(task_file), n_prompts=1,
                out_dir=str(tmp_path / "grp"), timeout_s=120, rollout_seed=10)
    return CaptureConfig(**(base | kw))


def stand_in(plan: dict[int, object], seen: list | None = None, delay_s: float = 0.0):
    """A single-capture stand-in: rollout seed -> reward (an artifact), "timeout", an exception, or "wait"."""
    def run(cfg, progress, cancel, sandbox_factory, **_):
        if seen is not None:
            seen.append((cfg.rollout_seed, cfg.request_seed, cfg.out_dir))
        progress(Progress("agent", "agent running", 1, 0.0))
        what = plan.get(cfg.rollout_seed, 0.5)
        deadline = time.monotonic() + delay_s
        while time.monotonic() < deadline or what == "wait":
            if cancel is not None and cancel.is_set():
                raise Cancelled("capture cancelled")
            time.sleep(0.02)
        if isinstance(what, BaseException):
            raise what
        return written(cfg, what)
    return run


def written(cfg: CaptureConfig, what: object = 0.5):
    """The bundled example written as `cfg`'s rollout (its task, the reward `what`, or "timeout"), rescore parts
    left out: what a capture writes."""
    out = Path(cfg.out_dir)
    task = task_for(cfg)
    copy_example(out, reward_after_penalties=0.0 if what == "timeout" else what, timed_out=what == "timeout",
                 task_id=task.task_id)
    shutil.rmtree(out / "rescore", ignore_errors=True)
    (out / "task.json").write_text(json.dumps({"task_id": task.task_id, "task_index": task.index,
                                               "instruction": task.instruction}))
    return load_artifact(out)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from support.rescore_fakes import tiny_llama

    return tiny_llama(tmp_path_factory.mktemp("tiny") / "tiny-llama", vocab=49152)


def test_group_with_rescore_rescores_every_rollout(tmp_path, task_file, tiny, monkeypatch):
    """`--group-size K --rescore`: each rollout is the whole single rollout, its rescore included (the
    group once skipped it). Only the agent's part is a stand-in; the rescore is the real one."""
    import capture.run

    agents = []

    def agent(cfg, say, cancel, sandbox_factory, **_):
        agents.append(cfg.rollout_seed)
        say("agent running", stage="agent", turns=1)
        return written(cfg, {10: 1.0, 11: 0.2, 12: 0.5}[cfg.rollout_seed])

    monkeypatch.setattr(capture.run, "_capture", agent)
    lines = []
    r = capture_group(config(tmp_path, task_file, rescore=True, trainer_model=str(tiny)), 3, parallel=3,
                      progress=lines.append)
    assert sorted(agents) == [10, 11, 12] and [x.status for x in r.group.rollouts] == ["ok", "ok", "ok"]
    for i in range(3):
        parts = load_artifact(tmp_path / "grp" / f"rollout-{i:02d}").rescores
        assert [name for name in parts if name.startswith("tiny-llama")], (i, sorted(parts))
        assert r.artifacts[i] is not None and r.artifacts[i].root == tmp_path / "grp" / f"rollout-{i:02d}"
    assert {p.rollout for p in lines if p.stage == "rescore"} == {0, 1, 2}


def test_a_failing_rescore_fails_its_rollout_and_keeps_the_others(tmp_path, task_file, tiny, monkeypatch):
    import capture.run
    import rescore

    real = rescore.rescore

    def flaky(a, cfg, **kw):
        if a.summary.reward_after_penalties == 0.2:  # rollout 1's
            raise rescore.RescoreError("the model ran out of memory")
        return real(a, cfg, **kw)

    monkeypatch.setattr(capture.run, "_capture", lambda cfg, say, *a, **k: written(cfg, {11: 0.2}.get(cfg.rollout_seed, 1.0)))
    monkeypatch.setattr(rescore, "rescore", flaky)
    r = capture_group(config(tmp_path, task_file, rescore=True, trainer_model=str(tiny)), 2)
    assert [x.status for x in r.group.rollouts] == ["ok", "failed"]
    assert r.group.rollouts[1].error == "captured, but re-scoring it failed: the model ran out of memory"
    assert sorted(p.name for p in (tmp_path / "grp").iterdir()) == ["group.json", "rollout-00", "task.json"]


def test_the_group_is_written_through_the_artifact_package(tmp_path, task_file, monkeypatch):
    """rollout_trace.artifact's GroupBuild writes the group: the rollouts are built inside it, and a failure
    before its rename (here its commit) or in the middle of the rollouts leaves no group folder, partial or hidden."""
    from rollout_trace.artifact.problems import ArtifactError, Problem
    from rollout_trace.artifact.write import GroupBuild

    staged = []

    def failing_commit(self, group, task, validate=True):
        staged.append(sorted(p.name for p in self.root.iterdir()))
        raise ArtifactError([Problem("group.json", "the disk is full")])

    with monkeypatch.context() as m:
        m.setattr(GroupBuild, "commit", failing_commit)
        with pytest.raises(CaptureError, match="the disk is full"):
            capture_group(config(tmp_path, task_file), 2, capture_fn=stand_in({}))
    assert staged == [["rollout-00", "rollout-01"]]
    assert list(tmp_path.iterdir()) == [tmp_path / "tasks.jsonl"]
    # Ctrl-C in the middle: rollout 0 is written, rollout 1 is interrupted, rollout 2 never starts
    with pytest.raises(KeyboardInterrupt):
        capture_group(config(tmp_path, task_file), 3, parallel=1, capture_fn=stand_in({11: KeyboardInterrupt()}))
    assert list(tmp_path.iterdir()) == [tmp_path / "tasks.jsonl"]


def test_group_keeps_failures_and_scores_like_trl(tmp_path, task_file):
    seen, lines = [], []
    plan = {10: 0.8, 11: CaptureError("the agent made no model call"), 12: "timeout", 13: RuntimeError("boom")}
    r = capture_group(config(tmp_path, task_file), 4, parallel=2, progress=lines.append,
                      capture_fn=stand_in(plan, seen))
    g = r.group
    assert [x.status for x in g.rollouts] == ["ok", "failed", "timed-out", "failed"]
    assert [x.reward for x in g.rollouts] == [0.8, None, 0.0, None]
    assert np.allclose([x.advantage for x in g.rollouts], trl_advantages([0.8, None, 0.0, None]))
    assert [x.folder for x in g.rollouts] == ["rollout-00", None, "rollout-02", None]
    assert "no model call" in g.rollouts[1].error and "RuntimeError: boom" in g.rollouts[3].error
    assert sorted((s, q) for s, q, _ in seen) == [(10, 10), (11, 11), (12, 12), (13, 13)]  # seed = request seed
    assert g.k == 4 and g.rollout_seed == 10 and g.parallel == 2 and g.format_version == 2
    # on disk: group.json, task.json, the two artifacts, nothing else (no partial folders anywhere)
    root = tmp_path / "grp"
    assert sorted(p.name for p in root.iterdir()) == ["group.json", "rollout-00", "rollout-02", "task.json"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert load_group(root).k == 4 and r.artifacts[0].root == root / "rollout-00" and r.artifacts[1] is None
    assert {p.rollout for p in lines} == {None, 0, 1, 2, 3}
    assert any(p.rollout == 1 and p.stage == "failed" for p in lines)


def test_seed_recorded_but_not_sent(tmp_path, task_file):
    seen = []
    capture_group(config(tmp_path, task_file), 2, capture_fn=stand_in({}, seen), send_seed=False)
    assert sorted((s, q) for s, q, _ in seen) == [(10, None), (11, None)]


def test_advantages_all_unscorable_and_all_equal(tmp_path, task_file):
    r = capture_group(config(tmp_path, task_file), 3, capture_fn=stand_in({10: 0.5, 11: 0.5, 12: 0.5}))
    assert [x.advantage for x in r.group.rollouts] == [0.0, 0.0, 0.0]  # std 0: (r - mean) / 1e-8 = 0
    assert r.group.format_version == 1  # every rollout has its folder: readable by version-1 readers


def test_every_rollout_failing_writes_nothing(tmp_path, task_file):
    with pytest.raises(CaptureError, match="no rollout of the group produced an artifact.*endpoint down"):
        capture_group(config(tmp_path, task_file), 2, capture_fn=stand_in({10: CaptureError("endpoint down"),
                                                                           11: CaptureError("endpoint down")}))
    assert list(tmp_path.iterdir()) == [tmp_path / "tasks.jsonl"]


def test_cancel_mid_group_writes_nothing(tmp_path, task_file):
    cancel = threading.Event()
    board = StageBoard(4)

    def on(p):
        board.update(p)
        if p.rollout == 0 and p.stage == "done":
            cancel.set()  # one rollout finished, one still waits, two never started

    with pytest.raises(Cancelled):
        capture_group(config(tmp_path, task_file), 4, parallel=2, progress=on, cancel=cancel,
                      capture_fn=stand_in({11: "wait"}))
    assert list(tmp_path.iterdir()) == [tmp_path / "tasks.jsonl"]
    assert [p.stage for p in board.snapshot()][2:] == ["queued", "queued"]
    assert board.group.stage == "cancelled"


def test_refusals(tmp_path, task_file):
    (tmp_path / "grp").mkdir()
    (tmp_path / "grp" / "x").write_text("keep")
    with pytest.raises(CaptureError, match="already exists"):
        capture_group(config(tmp_path, task_file), 2, capture_fn=stand_in({}))
    with pytest.raises(CaptureError, match="between 1 and"):
        capture_group(config(tmp_path, task_file, out_dir=str(tmp_path / "g2")), 0, capture_fn=stand_in({}))
    assert default_parallel("local", 8) == 4 and default_parallel("hf-sandbox", 16) == 8
    assert default_parallel("local", 2) == 2


def test_viewer_check_cross_checks_the_group(tmp_path, task_file):
    capture_group(config(tmp_path, task_file), 4, capture_fn=stand_in({10: 1.0, 11: CaptureError("x"), 12: 0.2,
                                                                       13: 0.5}))
    root = tmp_path / "grp"
    ok = viewer("check", str(root))
    assert ok.returncode == 0 and "4 of 4 valid" in ok.stdout, ok.stdout + ok.stderr
    # a reward that disagrees with the rollout's summary, and a status that disagrees with timed_out
    data = json.loads((root / "group.json").read_text())
    data["rollouts"][2]["reward"] = 0.9
    data["rollouts"][0]["status"] = "timed-out"
    (root / "group.json").write_text(json.dumps(data))
    bad = viewer("check", str(root))
    assert bad.returncode == 1
    assert "rollouts[2].reward" in bad.stdout and "rollouts[2].advantage" in bad.stdout, bad.stdout
    assert "rollouts[0].status" in bad.stdout
    # k and the folder of a rollout that failed
    data = json.loads((root / "group.json").read_text())
    data["k"] = 5
    data["rollouts"][1]["reward"] = 0.5
    (root / "group.json").write_text(json.dumps(data))
    bad = viewer("check", str(root))
    assert bad.returncode == 1 and "k is the number" in bad.stdout, bad.stdout
    assert "rollouts[1].reward" in bad.stdout


# -- end to end: the real opencode, the real proxy, a scripted endpoint, four scripts ---------------

RIGHT = "import sys\ndata = sys.stdin.read().split()\nn = int(data[0])\nprint(len(set(data[1:n + 1])))\n"
WRONG = "n = int(input())\nprint(len(input().split()))\n"
RUN = ("bash", {"command": "printf '5\\n1 2 2 3 3\\n' | python3 solution.py", "description": "Run the example"})
SCRIPTS = {
    0: [("write", {"filePath": "solution.py", "content": RIGHT}), RUN, "Prints 3. Done."],  # solves: 1.0
    1: [("write", {"filePath": "solution.py", "content": WRONG}), RUN, "Done."],  # wrong: 1 of 3 tests
    2: [("write", {"filePath": "solution.py", "content": RIGHT}), "Written; no need to run it."],  # no bash: -0.1
    3: "crash",  # every agent call is refused: no model call captured, the rollout fails, reward NaN
}


@pytest.mark.capture
def test_group_end_to_end_four_scripts_in_parallel(tmp_path, task_file, tokenizer_dir, scripted_llm):
    llm = scripted_llm(scripts=SCRIPTS)
    board = StageBoard(4)
    cfg = config(tmp_path, task_file, llm.url, rollout_seed=0, tokenizer=str(tokenizer_dir), timeout_s=150)
    r = capture_group(cfg, 4, parallel=4, progress=board.update)
    g = r.group
    assert [x.status for x in g.rollouts] == ["ok", "ok", "ok", "failed"], [x.error for x in g.rollouts]
    rewards = [x.reward for x in g.rollouts]
    assert rewards[0] == pytest.approx(1.0) and rewards[1] == pytest.approx(1 / 3) and rewards[2] == pytest.approx(-0.1)
    assert rewards[3] is None and len({str(x) for x in rewards}) == 4
    assert np.allclose([x.advantage for x in g.rollouts], trl_advantages(rewards), atol=1e-9)
    assert g.rollouts[3].advantage == 0.0 and "no model call" in g.rollouts[3].error
    # the seed reached the engine: every agent call carried its rollout's seed
    assert {q.get("seed") for q in llm.requests if q.get("tools") and len(q["tools"]) > 1} == {0, 1, 2, 3}
    for i, a in enumerate(r.artifacts[:3]):
        assert a.summary.capture["rollout_seed"] == i and a.summary.capture["request_seed"] == i
    # Every fenced local sandbox gives the agent the same working directory, so the K rollouts of a group start
    # from the same prompt, token for token, as in the training example (without bwrap there is no fence)
    if isolation.available()[0]:
        a, b = r.artifacts[:2]
        first = [json.dumps(next(c for c in x.trace if c.tools).messages, sort_keys=True) for x in (a, b)]
        assert first[0] == first[1] and f"Working directory: {isolation.INSIDE}/workdir" in first[0]
        assert np.array_equal(a.turns[0].prompt_ids, b.turns[0].prompt_ids)  # the engine's ids too
        assert not np.array_equal(a.turns[0].output_ids, b.turns[0].output_ids)  # the answers still differ
    # P = 4: the rollouts really ran at once
    spans = [(o.started, o.ended) for o in r.outcomes]
    assert max(s for s, _ in spans) < min(e for _, e in spans), spans
    assert [p.stage for p in board.snapshot()] == ["done", "done", "done", "failed"]
    # each rollout folder passes `viewer check` on its own; the group is checked against its rollouts, by the
    # user's command in a fresh process
    for i in range(3):
        one = viewer("check", str(r.root / f"rollout-{i:02d}"))
        assert one.returncode == 0 and one.stdout.startswith("OK"), one.stdout + one.stderr
    grp = subprocess.run([sys.executable, "-m", "viewer", "check", str(r.root)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert grp.returncode == 0 and "4 of 4 valid" in grp.stdout, grp.stdout + grp.stderr


@pytest.mark.capture
def test_group_cancel_mid_run_leaves_nothing(tmp_path, task_file, tokenizer_dir, scripted_llm):
    llm = scripted_llm(delay_s=60.0, slow_after=1)  # every rollout hangs after its first tool call
    cancel = threading.Event()
    roots = []

    def factory(**kw):
        from capture.sandbox import LocalSandbox

        box = LocalSandbox.create(**kw)
        roots.append(box.root)
        return box

    def on(p):
        if p.stage == "agent" and p.turns >= 1:
            cancel.set()

    cfg = config(tmp_path, task_file, llm.url, tokenizer=str(tokenizer_dir))
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        capture_group(cfg, 2, parallel=2, progress=on, cancel=cancel, sandbox_factory=factory)
    assert time.monotonic() - t0 < 90
    assert list(tmp_path.iterdir()) == [tmp_path / "tasks.jsonl"]
    assert roots and not any(r.exists() for r in roots)  # every sandbox and its processes are gone


def test_cli_group_flags(tmp_path, task_file):
    r = subprocess.run([sys.executable, "-m", "capture", "--parallel", "2", "--out-dir", str(tmp_path / "o")],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--parallel needs --group-size" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "capture", "--backend", "local", "--endpoint", "http://127.0.0.1:9/v1",
                        "--dataset", str(task_file), "--n-prompts", "1", "--group-size", "2",
                        "--out-dir", str(tmp_path / "o")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "no rollout of the group produced an artifact" in r.stderr, r.stdout + r.stderr
    assert "[rollout 0]" in r.stdout and "[rollout 1]" in r.stdout and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_group_json_v2_rollout_without_folder():
    from rollout_trace.artifact.group import GroupFile, GroupRollout, encode_group, parse_group
    from rollout_trace.artifact.problems import Findings

    def check(rollouts, version=None):
        g = GroupFile(task_id="t", k=len(rollouts), rollouts=rollouts)
        data = encode_group(g) if version is None else encode_group(g).replace(b'"format_version": 2',
                                                                             f'"format_version": {version}'.encode())
        f = Findings()
        got = parse_group(data, f)
        return got, [str(p) for p in f.problems]

    ok = [GroupRollout(index=0, status="ok", reward=1.0, advantage=0.0, folder="rollout-00"),
          GroupRollout(index=1, status="failed", reward=None, advantage=0.0, error="no model call")]
    g, problems = check(ok)
    assert problems == [] and g.format_version == 2 and g.rollouts[1].folder is None
    _, problems = check(ok, version=1)
    assert any("format_version" in p for p in problems)
    bad = [GroupRollout(index=0, status="ok", reward=None, advantage=0.0)]
    _, problems = check(bad)
    assert any("rollouts[0].folder" in p for p in problems)
