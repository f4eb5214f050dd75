"""The local backend fenced in with bubblewrap: an agent command cannot write outside
its work folder; without bwrap the capture says so and records `isolation: "none"`."""

from __future__ import annotations

import pytest

from capture import CaptureConfig, capture
from capture import isolation as fence
from capture.sandbox import LocalSandbox
from conftest import ROOT, requires

needs_bwrap = requires(fence.available()[0], f"no usable bwrap: {fence.available()[1]}")


@needs_bwrap
def test_commands_cannot_write_outside_the_work_folder(tmp_path):
    outside = tmp_path / "outside.txt"
    box = LocalSandbox.create()
    try:
        assert box.isolation == "bubblewrap"
        ok = box.run("echo fine > inside.txt && cat inside.txt", check=False)
        assert ok.ok and ok.stdout == "fine\n" and (box.root / "inside.txt").is_file()
        for target in (ROOT / ".escape-probe", "/etc/escape-probe"):
            r = box.run(f"echo pwned > {target}", check=False)
            assert not r.ok and "Read-only file system" in r.stderr, r.stderr
        # the rest of /tmp (other captures, uploads) is not even visible: a private empty tmpfs
        r = box.run(f"ls {tmp_path}; echo pwned > {outside}", check=False)
        assert not r.ok and "No such file or directory" in r.stderr + r.stdout or "nonexistent" in r.stderr
        assert not outside.exists() and not (ROOT / ".escape-probe").exists()
        r = box.run(["python3", "-c", f"open({str(outside)!r}, 'w')"], check=False)  # argv form too
        assert not r.ok and not outside.exists()
        bg = box.run("sleep 300", background=True)
        assert bg.running
    finally:
        box.kill()
    assert not bg.running and not box.root.exists()


@needs_bwrap
def test_what_commands_run_from_stays_visible_when_it_lives_in_tmp(tmp_path, monkeypatch):
    """A checkout (or venv) under /tmp is hidden by the fence's private /tmp unless it is bound back, read-only."""
    project = tmp_path / "checkout"
    project.mkdir()
    (project / "tool.sh").write_text("echo tool ran\n")
    monkeypatch.setattr(fence, "RUNS_FROM", (*fence.RUNS_FROM, str(project)))
    box = LocalSandbox.create()
    try:
        r = box.run(["sh", str(project / "tool.sh")], check=False)
        assert r.ok and r.stdout == "tool ran\n", r.stderr
        r = box.run(f"echo pwned > {project / 'tool.sh'}", check=False)
        assert not r.ok and "Read-only file system" in r.stderr, r.stderr
        assert (project / "tool.sh").read_text() == "echo tool ran\n"
    finally:
        box.kill()


def test_without_bwrap_the_sandbox_says_so(monkeypatch):
    monkeypatch.setattr(fence, "available", lambda: (False, "bwrap is not installed (Debian package `bubblewrap`)"))
    box = LocalSandbox.create()
    try:
        assert box.isolation == "none" and "bwrap is not installed" in box.isolation_note
        assert box.run("echo hi").stdout == "hi\n"
    finally:
        box.kill()


@needs_bwrap
@pytest.mark.capture
def test_capture_agent_cannot_escape(tmp_path, task_file, tokenizer_dir, scripted_llm):
    outside = ROOT / ".escaped-by-agent.txt"
    llm = scripted_llm(steps=[("bash", {"command": f"echo pwned > {outside}; echo tried", "description": "escape"}),
                              "Done."])
    lines = []
    a = capture(CaptureConfig(model="scripted-model", backend="local", endpoint=llm.url, dataset=str(task_file),
                              n_prompts=1, out_dir=str(tmp_path / "out"), timeout_s=120, tokenizer=str(tokenizer_dir)),
                progress=lines.append)
    assert not outside.exists()
    assert a.summary.capture["isolation"] == "bubblewrap"
    assert any("isolation: bubblewrap" in p.line for p in lines)
    tool_out = " ".join(str(m.get("content")) for c in a.trace for m in c.messages if m.get("role") == "tool")
    assert "Read-only file system" in tool_out and "tried" in tool_out


# A child started by the Python a venv linked from the system temp folder names: what the sandbox starts.
LINKED_CHILD = """
import sys
from capture.sandbox import LocalSandbox
box = LocalSandbox.create()
try:
    r = box.run([sys.executable, "-c", "import sys; print('fenced', sys.prefix)"], check=False)
    print("RESULT", box.isolation, r.ok, r.stdout.strip(), r.stderr.strip()[-300:])
finally:
    box.kill()
"""


@needs_bwrap
def test_a_venv_reached_through_a_symlink_in_the_temp_folder():
    """A venv reached through a symlink in /tmp (pointing to a venv elsewhere) made every fenced
    command fail with "not found": the fence bound back the resolved venv, not the path sys.executable names."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    venv = Path(sys.prefix).resolve()  # wherever the venv lives (a checkout in /tmp too), the link is in /tmp
    link = Path(tempfile.mkdtemp(prefix="rollout-linked-venv-", dir=tempfile.gettempdir())) / "venv"
    try:
        link.symlink_to(venv)
        r = subprocess.run([str(link / "bin" / "python"), "-c", LINKED_CHILD], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        assert f"RESULT bubblewrap True fenced {link}" in r.stdout, r.stdout + r.stderr[-1000:]
    finally:
        link.unlink(missing_ok=True)
        link.parent.rmdir()
