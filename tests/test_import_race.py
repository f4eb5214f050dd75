"""First imports from several threads at once, each from a cold process.

transformers replaces its module in sys.modules with a lazy one at the end of its first import, so a
thread importing it while another is still inside that import fails ("cannot import name
'AutoTokenizer' from 'transformers'"). A group's rollouts, the app's start-up, a capture's
thread and a request loading a tokenizer all import it lazily; these tests start a fresh interpreter
(nothing imported first) so the race is real, as a user meets it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}

# Each rollout, in its pool thread, does what a rollout does first with transformers.
GROUP_CHILD = textwrap.dedent("""
    import json, sys, threading, time
    from capture import CaptureConfig, CaptureError
    from capture.group import capture_group

    barrier = threading.Barrier(3, timeout=60)

    def rollout(cfg, **_):
        barrier.wait()  # P=3 rollouts start together, and reach their first import a moment apart:
        time.sleep(0.15 * cfg.rollout_seed)  # the later ones while the first is inside transformers' import
        from transformers import AutoTokenizer  # noqa: F401
        raise CaptureError("stand-in: stops after the import")

    lock = threading.Lock()

    def line(p):  # from the rollouts' threads: one whole line at a time
        with lock:
            print("PROGRESS " + json.dumps([p.rollout, p.stage, p.line]), flush=True)

    cfg = CaptureConfig(model="m", backend="local", endpoint="http://127.0.0.1:9/v1", dataset=sys.argv[1],
                        n_prompts=1, out_dir=sys.argv[2])
    try:
        capture_group(cfg, 3, parallel=3, capture_fn=rollout, progress=line)
    except CaptureError:  # every rollout stops on purpose: "no rollout of the group produced an artifact"
        pass
""")


def test_group_rollouts_import_transformers_at_once_from_a_cold_process(tmp_path, task_file):
    r = subprocess.run([sys.executable, "-c", GROUP_CHILD, str(task_file), str(tmp_path / "grp")], cwd=ROOT, env=ENV,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = [json.loads(x.split(" ", 1)[1]) for x in r.stdout.splitlines() if x.startswith("PROGRESS ")]
    failed = [line for _, stage, line in lines if stage == "failed"]
    assert len(failed) == 3, lines
    assert all("stand-in: stops after the import" in f for f in failed), failed  # no ImportError in any


APP_CHILD = textwrap.dedent("""
    import threading, time
    from viewer.ui.app import build_app

    build_app(default_source="scripted-smollm2", public=True)  # imports TRL (and transformers) in this thread
    barrier, errors = threading.Barrier(3, timeout=60), []

    def request(i):  # what a request loading a slow tokenizer, or a capture's thread, imports first
        barrier.wait()
        time.sleep(0.15 * i)
        try:
            from transformers import AutoTokenizer  # noqa: F401
        except ImportError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=request, args=(i,)) for i in range(3)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print("ERRORS", errors)
""")


def test_app_threads_import_transformers_beside_the_warm_up_from_a_cold_process():
    r = subprocess.run([sys.executable, "-c", APP_CHILD], cwd=ROOT, env=ENV, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ERRORS []" in r.stdout, r.stdout[-2000:]


@pytest.mark.capture
def test_cli_group_of_three_in_parallel_from_a_cold_process(tmp_path, task_file, tokenizer_dir, scripted_llm):
    """`python -m capture --group-size 3 --parallel 3`, the real opencode behind the real proxy, nothing warmed."""
    llm = scripted_llm()
    out = tmp_path / "grp"
    r = subprocess.run([sys.executable, "-m", "capture", "--backend", "local", "--endpoint", llm.url,
                        "--model", "scripted-model", "--dataset", str(task_file), "--n-prompts", "1",
                        "--group-size", "3", "--parallel", "3", "--tokenizer", str(tokenizer_dir),
                        "--timeout-s", "200", "--out-dir", str(out)], cwd=ROOT, env=ENV, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "ImportError" not in r.stdout + r.stderr
    group = json.loads((out / "group.json").read_text())
    assert [x["status"] for x in group["rollouts"]] == ["ok", "ok", "ok"], group["rollouts"]
