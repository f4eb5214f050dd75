"""Hostile inputs, round 3: each is a message or a documented exit code,
never code run, a traceback, or a lost write."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT, zip_folder

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}


def cli(*args: str, stdin: str | None = None, tmp: Path | None = None, **kw) -> subprocess.CompletedProcess:
    env = {**ENV, **({"TMPDIR": str(tmp)} if tmp else {})}
    return subprocess.run([sys.executable, "-m", "viewer", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, input=stdin, timeout=300, **kw)


# -- #9: an artifact's tokenizer is data, never code ---------------------------------------------------

def code_tokenizer_artifact(dest: Path, marker: Path) -> Path:
    """The example with a tokenizer/ that names its own Python class (auto_map) and has no tokenizer.json."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("rescore"))
    tok = dest / "tokenizer"
    shutil.rmtree(tok)
    tok.mkdir()
    (tok / "tokenizer_config.json").write_text(
        '{"tokenizer_class": "EvilTokenizer", "auto_map": {"AutoTokenizer": ["tok.EvilTokenizer", null]}}')
    (tok / "tok.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                                "from transformers import PreTrainedTokenizer\n"
                                "class EvilTokenizer(PreTrainedTokenizer):\n    pass\n")
    return dest


def test_cli_never_runs_or_offers_to_run_an_artifacts_tokenizer_code(tmp_path):
    marker = tmp_path / "tokenizer-code-ran"
    art = code_tokenizer_artifact(tmp_path / "art", marker)
    r = cli("export", str(art), "-o", str(tmp_path / "x.html"), stdin="y\ny\n")  # a user who would say yes
    assert r.returncode == 0, r.stdout + r.stderr
    assert not marker.exists(), "the artifact's tokenizer code ran"
    assert "custom code" not in r.stdout + r.stderr and "[y/N]" not in r.stdout + r.stderr


def test_app_never_runs_an_artifacts_tokenizer_code(tmp_path, monkeypatch):
    from rollout_trace.artifact import open_artifact, open_upload

    monkeypatch.setattr("builtins.input", lambda *a: "y")  # a server started from a terminal, an operator saying yes
    from viewer.rollout import Rollout

    marker = tmp_path / "tokenizer-code-ran"
    art = code_tokenizer_artifact(tmp_path / "art", marker)
    r = Rollout.load(open_artifact(art))  # a folder: its tokenizer/ is loaded in place
    assert r.vocab is None or r.vocab.origin != "the artifact's tokenizer/ files"
    up = open_upload([zip_folder(art, tmp_path / "art.zip")])  # an upload: converted to tokenizer.json first
    assert up.tokenizer_json is None and any("tokenizer" in n for n in up.notices)
    assert not marker.exists(), "the artifact's tokenizer code ran"


# -- Low: capture-password guesses are throttled --------------------------------------------------

def test_wrong_capture_passwords_are_throttled():
    from test_capture_tab import profile

    from viewer.ui.capture_gate import FAILURE_WINDOW_S, MAX_FAILURES, Gate, Throttle

    now = [0.0]
    gate = Gate("right-pass", frozenset({"alice"}), Throttle(clock=lambda: now[0]))
    for _ in range(MAX_FAILURES):
        assert gate.refusal("guess", None) == gate.how()
    refused = gate.refusal("right-pass", None)  # not even compared now, however fast the guesses come
    assert refused is not None and refused.startswith("Too many wrong capture passwords on this server")
    assert gate.refusal(None, profile("alice")) is None  # a listed user still gets in
    now[0] += FAILURE_WINDOW_S
    assert gate.refusal("right-pass", None) is None


# -- Low: rescore/*/meta.json has a size cap -------------------------------------------------------

def test_an_oversized_rescore_meta_is_refused_unread(example_copy):
    from rollout_trace.artifact import ArtifactError, open_artifact
    from rollout_trace.artifact.rescore import meta_cap

    [part, *_] = sorted((example_copy / "rescore").iterdir())
    meta = part / "meta.json"
    text = meta.read_text()
    meta.write_text(text.replace('"device": "cpu"', '"device": "' + "x" * 5_000_000 + '"'))
    with pytest.raises(ArtifactError) as e:
        open_artifact(example_copy)
    cap = meta_cap(3)
    assert f"rescore/{part.name}/meta.json: too large for this file (expected at most {cap:,} bytes for 3 turns" in str(e.value)


# -- Low: `viewer ls BIG | head -1` exits 141; `viewer check ""` is a usage error ---------------------

def test_ls_into_a_closed_pipe_exits_141(tmp_path):
    big = tmp_path / "big"
    summary, task = (EXAMPLE / "summary.json").read_bytes(), (EXAMPLE / "task.json").read_bytes()
    for i in range(3000):  # an index of 3,000 rows: a 600 kB table, far more than a pipe holds
        d = big / f"r{i:04d}"
        d.mkdir(parents=True)
        (d / "summary.json").write_bytes(summary)
        (d / "task.json").write_bytes(task)
    for extra in ([], ["--json"]):
        r = subprocess.run(f"{sys.executable} -m viewer ls {big} {' '.join(extra)} | head -c 100 >/dev/null; "
                           "echo ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", cwd=ROOT, env=ENV,
                           capture_output=True, text=True, timeout=300)
        assert r.stdout.strip() == "141", (extra, r.stdout, r.stderr[-1000:])
        assert "Traceback" not in r.stderr


@pytest.mark.parametrize("command", [["check", ""], ["check", "   "], ["ls", ""], ["export", "", "-o", "{tmp}/x.html"]])
def test_an_empty_source_is_a_usage_error(command, tmp_path):
    command = [c.format(tmp=tmp_path) for c in command]
    # run inside an artifact folder: "" must not mean it
    r = subprocess.run([sys.executable, "-m", "viewer", *command], cwd=EXAMPLE, capture_output=True, text=True,
                       env={**ENV, "PYTHONPATH": str(ROOT)}, timeout=600)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "the source is empty" in r.stderr and "OK" not in r.stdout


def test_an_empty_source_opens_nothing_in_the_app():
    import json

    from viewer.ui.service import Service
    from viewer.ui.view_tab import ViewTab

    tab = ViewTab(Service("scripted-smollm2", public=False))
    value, loaded = tab.service.values.source_value("  ")
    assert "no source named" in json.loads(value)["error_html"] and loaded == ""


# -- Low: unknown API names and components answer 404 with a message, no traceback ----------------------

def test_unknown_names_answer_a_message_not_a_500(capfd):
    import json

    import httpx

    from conftest import launch_app

    demo, url = launch_app(public=True)
    try:
        cfg = httpx.get(url + "/config", timeout=30).json()
        tv = next(c["id"] for c in cfg["components"] if c.get("props", {}).get("elem_id") == "trace-view")
        calls = [("/gradio_api/call/no-such-api", {"data": []}),
                 ("/gradio_api/queue/join", {"data": [], "fn_index": 99999, "session_hash": "s"}),
                 ("/gradio_api/component_server", {"session_hash": "s", "component_id": 99999, "fn_name": "chunk",
                                                   "data": {}})]
        for path, body in calls:
            r = httpx.post(url + path, json=body, timeout=30)
            assert r.status_code == 404 and "not found" in r.json()["detail"], (path, r.status_code, r.text[:200])
        for data in ({}, {"key": "x", "turn": 10**30}, [1, 2], None, {"key": "k" * 10_000, "index": -10**30}):
            r = httpx.post(url + "/gradio_api/component_server", timeout=30, json={
                "session_hash": "s", "component_id": tv, "fn_name": "chunk", "data": data})
            assert r.status_code == 200 and "error" in r.json(), (data, r.text[:200])
        r = httpx.post(url + "/gradio_api/component_server", timeout=30, headers={"content-type": "application/json"},
                       content=json.dumps({"session_hash": "s", "component_id": tv, "fn_name": "trainer",
                                           "data": {"key": "x", "turn": float("inf")}}))
        assert r.status_code == 200 and "error" in r.json()
    finally:
        demo.close()
    assert "Traceback" not in capfd.readouterr().err


# -- Low: a FIFO as --dataset is named, never sent to the Hub as an id ---------------------------------

def test_a_fifo_dataset_is_refused_without_asking_the_hub(tmp_path, monkeypatch):
    import socket

    from capture import hub
    from capture.tasks import TaskError, load_rows

    fifo = tmp_path / "tasks"
    os.mkfifo(fifo)
    asked: list = []
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: asked.append(a) or [])
    monkeypatch.setattr(hub, "unreachable", lambda: asked.append("hub") or None)
    with pytest.raises(TaskError) as e:
        load_rows(str(fifo))
    assert "not a regular file (a FIFO, socket or device)" in str(e.value) and asked == []
    r = subprocess.run([sys.executable, "-m", "capture", "--backend", "local", "--endpoint", "http://127.0.0.1:9/v1",
                        "--dataset", str(fifo), "--n-prompts", "1", "--out-dir", str(tmp_path / "o")], cwd=ROOT,
                       env=ENV, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "not a regular file" in r.stderr and "Traceback" not in r.stderr
