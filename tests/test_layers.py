"""The layers, enforced: a lower layer never imports a higher one, and Gradio stays in the UI layer.

    rollout_trace.artifact -> rollout_trace.recipe -> rollout_trace.analysis -> capture / rescore / rollout_trace.record -> viewer

`processes` (process groups that die with us), `crash_log` (where unexpected errors' tracebacks go) and
`local_model` (the offline model server, on processes) sit below capture and rescore. Every
import counts, at module level or inside a function (a lazy import is still a dependency). Read from the
source with `ast`, so the test needs nothing installed and names the file and line of each breach.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

# package -> the packages of ours it may import (itself always)
ALLOWED: dict[str, set[str]] = {
    "rollout_trace.artifact": set(),
    "rollout_trace.recipe": {"rollout_trace.artifact"},
    "rollout_trace.analysis": {"rollout_trace.artifact", "rollout_trace.recipe"},
    "rollout_trace.record": {"rollout_trace.artifact", "rollout_trace.recipe", "rollout_trace.analysis"},
    "processes": set(),
    "crash_log": set(),
    "local_model": {"processes"},
    "rescore": {"rollout_trace.artifact", "rollout_trace.recipe", "rollout_trace.analysis", "local_model", "processes",
                "crash_log"},
    "capture": {"rollout_trace.artifact", "rollout_trace.recipe", "rollout_trace.analysis", "local_model", "processes",
                "crash_log", "rescore"},
    "viewer": {"rollout_trace.artifact", "rollout_trace.recipe", "rollout_trace.analysis", "local_model", "processes",
               "crash_log", "rescore", "capture"},
}
OURS = {"rollout_trace", "processes", "crash_log", "local_model", "rescore", "capture", "viewer", "app", "bench", "support", "conftest"}
UI_ONLY = {"gradio", "fastapi", "starlette"}  # only viewer/ui (and app.py) build pages


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "rollout_trace" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0] if parts[0] in ALLOWED else None


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = _module_of(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            found.append((node.lineno, mod))
            found += [(node.lineno, f"{mod}.{a.name}") for a in node.names if mod in OURS]
    return found


def _sources() -> list[Path]:
    return sorted(p for layer in ("rollout_trace", "processes", "crash_log.py", "local_model.py", "rescore", "capture", "viewer")
                  for p in ([ROOT / layer] if layer.endswith(".py") else (ROOT / layer).rglob("*.py")))


def test_no_layer_imports_a_higher_one():
    breaches = []
    for path in _sources():
        if path == ROOT / "rollout_trace" / "__init__.py":  # the namespace itself: a docstring
            continue
        layer = _layer(_module_of(path))
        assert layer is not None, f"{path}: in no layer"
        for line, mod in _imports(path):
            target = _layer(mod)
            if target is not None and target != layer and target not in ALLOWED[layer]:
                breaches.append(f"{path.relative_to(ROOT)}:{line} ({layer}) imports {mod} ({target})")
    assert not breaches, "upward imports:\n" + "\n".join(breaches)


def test_gradio_only_in_the_ui_layer():
    breaches = [f"{p.relative_to(ROOT)}:{line} imports {mod}" for p in _sources()
                for line, mod in _imports(p) if mod.split(".")[0] in UI_ONLY
                and not p.relative_to(ROOT).as_posix().startswith("viewer/ui/")]
    assert not breaches, "\n".join(breaches)


def test_the_check_sees_a_breach(tmp_path, monkeypatch):
    """The test would fail on an upward import: a lazy one inside a function of the artifact layer."""
    bad = ROOT / "rollout_trace" / "artifact" / "_layer_probe.py"
    bad.write_text("def f():\n    from viewer import cli\n")
    try:
        assert any("viewer" in mod for _, mod in _imports(bad))
        assert _layer("viewer.cli") not in ALLOWED["rollout_trace.artifact"]
    finally:
        bad.unlink()
