"""The server's settings come from one module (viewer/settings.py), and only it reads the environment."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT
from viewer.settings import Settings, settings

# Gradio's own variable, which the app must also *set* for Gradio to read (viewer/ui/cache_folder.py)
ALLOWED = {"viewer/settings.py", "viewer/ui/cache_folder.py"}


def test_settings_from_an_environment():
    s = settings({"GRADIO_SERVER_PORT": "8123", "SPACE_ID": "me/app", "ROLLOUT_VIEWER_SOURCE": "  org/set ",
                  "ROLLOUT_VIEWER_CAPTURE_USERS": "Alice, ,bob", "ROLLOUT_VIEWER_CAPTURE_DATASETS": "a/b,c/d",
                  "ROLLOUT_VIEWER_CAPTURE_DIR": "/data/caps", "ROLLOUT_VIEWER_CAPTURE_SECRET": "s3cret",
                  "ROLLOUT_VIEWER_ENABLE_CAPTURE": "1"})
    assert (s.port, s.on_space, s.source, s.enable_capture) == (8123, True, "org/set", True)
    assert s.capture_users == {"alice", "bob"} and s.capture_datasets == ("a/b", "c/d")
    assert s.capture_dir == Path("/data/caps") and "s3cret" not in repr(s)
    assert settings({}) == Settings()


def test_a_bad_port_is_a_message():
    with pytest.raises(SystemExit, match="GRADIO_SERVER_PORT='http': expected a port number"):
        settings({"GRADIO_SERVER_PORT": "http"})


def _reads_environment(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") and \
                isinstance(node.value, ast.Name) and node.value.id == "os":
            return True
    return False


def test_only_the_settings_module_reads_the_environment():
    files = [ROOT / "app.py", *(ROOT / "viewer").rglob("*.py")]
    readers = {str(f.relative_to(ROOT)) for f in files if _reads_environment(ast.parse(f.read_text()))}
    assert readers <= ALLOWED, readers - ALLOWED


def test_an_unexpected_error_is_one_line_for_the_user_and_a_traceback_in_the_log(tmp_path, monkeypatch, capsys):
    """viewer CLI boundary: the message names the log file; the file holds the traceback (crash_log.py)."""
    import crash_log
    from viewer import cli

    monkeypatch.setattr(crash_log.tempfile, "gettempdir", lambda: str(tmp_path))

    def boom(*_a, **_k):
        raise RuntimeError("a bug deep inside")

    monkeypatch.setattr(cli, "check_source", boom)
    assert cli.main(["check", "scripted-smollm2"]) == cli.INTERNAL
    err = capsys.readouterr().err
    assert "Traceback" not in err and "a bug deep inside" in err and str(crash_log.log_file()) in err
    logged = crash_log.log_file().read_text()
    assert "Traceback (most recent call last)" in logged and "RuntimeError: a bug deep inside" in logged
    assert crash_log.log_file().stat().st_mode & 0o077 == 0


def test_on_a_space_the_closed_capture_tab_links_its_docs(monkeypatch):
    """SPACE_ID ("owner/name") makes docs/capture.md a link to the Space's own file; a malformed one makes none."""
    import gradio as gr

    from viewer.settings import settings
    from viewer.ui.capture_tab import CaptureTab
    from viewer.ui.service import Service

    assert settings({"SPACE_ID": "org/rollout-viewer"}).space_id == "org/rollout-viewer"
    for bad in ("", "org", "org/x)[y](javascript:z", "../../x/y", "a/b/c"):
        assert settings({"SPACE_ID": bad}).space_id == ""

    def said() -> str:
        with gr.Blocks():
            CaptureTab(Service("trl-run", public=True), enabled=False, public=True).render()
            return next(b for b in gr.context.Context.root_block.blocks.values()
                        if getattr(b, "elem_id", None) == "capture-disabled").value

    monkeypatch.setenv("SPACE_ID", "org/rollout-viewer")
    assert "[docs/capture.md](https://huggingface.co/spaces/org/rollout-viewer/blob/main/docs/capture.md)" in said()
    monkeypatch.setenv("SPACE_ID", "org/x)[y](javascript:z")
    assert "(see the project's docs/capture.md)" in said()
