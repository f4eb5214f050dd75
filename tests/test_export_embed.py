"""The exported HTML embeds its data so that no string in the rollout can change the document's
structure (a tool name `<!--<script>` used to leave the page blank)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, edit_json
from viewer.export import embed_json

PAYLOADS = ["<!--<script>", "</script><script>window.__pwned=1</script>", "a & b > c", "\u2028\u2029", "<!-- -->"]


def test_embedded_json_has_no_markup_characters_and_round_trips():
    value = {"names": PAYLOADS, "nested": {"<k>": "&amp;"}}
    blob = embed_json(value)
    assert not set(blob) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(blob) == value


@pytest.mark.browser
def test_export_with_script_like_tool_name_renders(page, example_copy, tmp_path):
    name = "<!--<script>"
    edit_json(example_copy / "turns.json", lambda d: d["turns"][0].__setitem__("tool_calls", [name]))
    edit_json(example_copy / "summary.json", lambda d: d.__setitem__("tool_calls_by_name", {name: 1, "bash": 1}))
    out = tmp_path / "rollout.html"
    r = subprocess.run([sys.executable, "-m", "viewer", "export", str(example_copy), "-o", str(out)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    page.goto(out.as_uri())
    page.wait_for_selector(".t[data-mask]", timeout=60_000)
    assert page.locator("[data-testid=nav-turn]").count() == 3
    assert name in page.locator(".tv").inner_text()
    assert page.errors == []
