"""The pages' committed scripts (viewer/assets/built/) are what the pinned esbuild makes of their sources
(viewer/assets/src/), and each stands alone: a page's script defines its one name and reads no other page's.

The app and exported files run the committed scripts (the Space has no build step), so a source edited
without a build would never reach a page: the comparison below fails first and says what to run.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

from conftest import requires
from viewer import assets
from viewer.assets import build

NODE = shutil.which("node")
needs_esbuild = requires(build.ESBUILD.exists(), "esbuild is not installed (bash scripts/setup.sh runs npm install)")
needs_node = requires(NODE is not None, "node is not installed")


@needs_esbuild
def test_the_committed_scripts_are_a_fresh_build(tmp_path):
    fresh = {p.name: p.read_bytes() for p in build.build(tmp_path)}
    committed = {p.name: p.read_bytes() for p in build.OUT.glob("*.js")}
    assert sorted(committed) == sorted(build.PAGES), f"viewer/assets/built/ is stale: run {build.COMMAND}"
    for name, text in fresh.items():
        assert committed[name] == text, f"viewer/assets/built/{name} is stale: run {build.COMMAND}"


def test_the_esbuild_that_builds_them_is_pinned():
    """An exact version in package.json, so every checkout builds the same bytes."""
    package = json.loads((assets.HERE.parents[1] / "package.json").read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d+\.\d+\.\d+", package["devDependencies"]["esbuild"])


def test_no_page_reads_another_pages_name():
    """Each gr.HTML runs its script in a scope of its own: a name defined by another page's script is not there."""
    scripts = {name: assets.read(name) for name in build.PAGES}
    for name, text in scripts.items():
        for other, glob in build.PAGES.items():
            if other != name:
                assert not re.search(rf"\b{glob}\b", text), f"built/{name} reads {glob}, which built/{other} defines"


@needs_node
def test_each_page_defines_only_its_own_name():
    """Run alone (no other page's script, no DOM), each script defines one name: the one its mount line calls."""
    names = {name: assets.HERE / "built" / name for name in build.PAGES}
    code = """
    const vm = require("vm"), fs = require("fs");
    const out = {};
    for (const [name, path] of Object.entries(JSON.parse(process.argv[1]))) {
      const context = vm.createContext({});
      const before = new Set(Object.getOwnPropertyNames(context));
      vm.runInContext(fs.readFileSync(path, "utf8"), context);
      const added = Object.getOwnPropertyNames(context).filter((k) => !before.has(k));
      out[name] = Object.fromEntries(added.map((k) => [k, Object.keys(context[k]).sort()]));
    }
    process.stdout.write(JSON.stringify(out));
    """
    got = subprocess.run([NODE or "node", "-e", code, json.dumps({k: str(v) for k, v in names.items()})],
                         capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    defined = json.loads(got.stdout)
    for name, glob in build.PAGES.items():
        assert list(defined[name]) == [glob], defined[name]
        assert "mountInApp" in defined[name][glob]
    assert defined["trace_view.js"]["TraceView"] == ["mountExport", "mountInApp"]  # viewer/export.py calls mountExport
