"""What the command line and the app's API refuse, each a message and a documented exit code, never a
traceback: a closed pipe, an empty source, a name too long, a folder it may not read, an unknown API name."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLE, ROOT
from viewer.cli import main

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}


# -- `viewer ls BIG | head -1` exits 141; `viewer check ""` is a usage error ---------------------------------

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
    assert any("no source named" in p for p in json.loads(value)["problems"]["items"]) and loaded == ""


# -- names the system refuses: a message, not "a bug" --------------------------------------------------------

@pytest.mark.parametrize("command", ["check", "ls"])
def test_a_name_too_long_is_a_message(command, capsys):
    assert main([command, "a" * 5000]) == 1
    out = capsys.readouterr()
    assert "cannot use this path: File name too long" in out.out + out.err
    assert "internal error" not in out.out + out.err


def test_ls_skips_what_it_may_not_read_and_says_so(tmp_path, capsys):

    shutil.copytree(EXAMPLE, tmp_path / "r1")
    (tmp_path / "loop").symlink_to("loop")  # what /proc/1/cwd is to a reader without the right: a stat that fails
    assert main(["ls", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "r1" in out.out and "note: loop: cannot be read (Too many levels of symbolic links); skipped" in out.err


# -- unknown API names and components answer 404 with a message, no traceback --------------------------------

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
