"""The layers, enforced: a lower layer never imports a higher one, and Gradio stays in the UI layer.

    rollout_trace.artifact -> rollout_trace.recipe -> rollout_trace.analysis -> capture / rescore / rollout_trace.record -> viewer

`processes` (process groups that die with us), `crash_log` (where unexpected errors' tracebacks go) and
`local_model` (the offline model server, on processes) sit below capture and rescore.

Inside `viewer` the rooms are held apart the same way: the pages' pure parts (records, rules, renderers:
everything not named below) import neither the Gradio wiring (the package `viewer.ui`) nor the command line
(the package `viewer.cli`, and `viewer/__main__.py` that runs it); the wiring and the command line may import
the pages, not each other. Inside the wiring the tabs (the View tab, the collection index, the
run page, the search panel, the Capture tab, the agent tools) import no other tab, nor does anything the tabs
share: they meet in the app's service (viewer/ui/service.py), and only the app (viewer/ui/app.py), which makes
them, imports them. A type-only import (`if TYPE_CHECKING:`) counts like any other.

Every import counts, at module level or inside a function (a lazy import is still a dependency). Read
from the source with `ast`, so the test needs nothing installed and names the file and line of each breach.

No module of ours reaches itself through its imports, type-only ones included: a cycle that only type
checking sees still ties two modules into one unit (neither can be read, tested or moved without the other),
and one lazy or type-only import away from an import-time failure. A module depends on the module it names:
`from pkg import sub` on the submodule `pkg.sub` when there is one, else on `pkg`. The parent packages that
importing a module runs are not counted, since every module of a package "imports" its `__init__` that way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
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
    return _imports_in(path.read_text(), _module_of(path), path.name == "__init__.py", str(path))


def _imports_in(source: str, module: str, is_package: bool, filename: str = "<probe>") -> list[tuple[int, str]]:
    tree = ast.parse(source, filename=filename)
    here = module.split(".")
    package = here if is_package else here[:-1]
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
            found += [(node.lineno, f"{mod}.{a.name}") for a in node.names if mod.split(".")[0] in OURS]
    return found


def _sources() -> list[Path]:
    return sorted(p for layer in ("rollout_trace", "processes", "crash_log.py", "local_model.py", "rescore", "capture", "viewer")
                  for p in ([ROOT / layer] if layer.endswith(".py") else (ROOT / layer).rglob("*.py")))


# the rooms inside viewer: room -> the rooms it may import (itself always)
ROOMS: dict[str, set[str]] = {"pages": set(), "ui": {"pages"}, "cli": {"pages"}}
CLI = {"viewer.cli", "viewer.__main__"}  # the command line's package, and what `python -m viewer` runs


def _room(module: str) -> str | None:
    """The room of a module of `viewer` (None outside it)."""
    parts = module.split(".")
    if parts[0] != "viewer":
        return None
    if len(parts) > 1 and parts[1] == "ui":
        return "ui"
    if any(module == c or module.startswith(c + ".") for c in CLI):
        return "cli"
    return "pages"


def _layer_breaches(module: str, imports: list[tuple[int, str]], where: str) -> list[str]:
    layer = _layer(module)
    assert layer is not None, f"{where}: in no layer"
    out = []
    for line, mod in imports:
        target = _layer(mod)
        if target is not None and target != layer and target not in ALLOWED[layer]:
            out.append(f"{where}:{line} ({layer}) imports {mod} ({target})")
    return out


def _room_breaches(module: str, imports: list[tuple[int, str]], where: str) -> list[str]:
    room = _room(module)
    if room is None:
        return []
    out = []
    for line, mod in imports:
        target = _room(mod)
        # `import viewer` / `from viewer import x` names the package (pages) or, resolved, the module itself
        if target is not None and target != room and target not in ROOMS[room]:
            out.append(f"{where}:{line} (viewer {room}) imports {mod} (viewer {target})")
    return out


# the tabs of viewer/ui: each owns its components and events; only the app that makes them imports one
TABS = {"viewer.ui.view_tab", "viewer.ui.collection_view", "viewer.ui.run_view", "viewer.ui.find_panel",
        "viewer.ui.capture_tab", "viewer.ui.mcp_tools"}
MAKES_THE_TABS = "viewer.ui.app"


def _tab_of(module: str) -> str | None:
    """The tab module `module` names, or a name inside it names (None for any other module)."""
    return next((t for t in TABS if module == t or module.startswith(t + ".")), None)


def _tab_breaches(module: str, imports: list[tuple[int, str]], where: str) -> list[str]:
    if module == MAKES_THE_TABS:
        return []
    return [f"{where}:{line} imports the tab {mod}" for line, mod in imports
            if (tab := _tab_of(mod)) is not None and tab != module]


def _ui_only_breaches(rel: str, imports: list[tuple[int, str]]) -> list[str]:
    return [f"{rel}:{line} imports {mod}" for line, mod in imports
            if mod.split(".")[0] in UI_ONLY and not rel.startswith("viewer/ui/")]


def _checked() -> list[tuple[Path, str, list[tuple[int, str]]]]:
    return [(p, _module_of(p), _imports(p)) for p in _sources()
            if p != ROOT / "rollout_trace" / "__init__.py"]  # the namespace itself: a docstring


def test_no_layer_imports_a_higher_one():
    breaches = [b for p, m, imps in _checked() for b in _layer_breaches(m, imps, str(p.relative_to(ROOT)))]
    assert not breaches, "upward imports:\n" + "\n".join(breaches)


def test_viewer_rooms_stay_apart():
    breaches = [b for p, m, imps in _checked() for b in _room_breaches(m, imps, str(p.relative_to(ROOT)))]
    assert not breaches, "imports across viewer's rooms:\n" + "\n".join(breaches)


def test_tabs_meet_in_the_service_not_in_each_other():
    breaches = [b for p, m, imps in _checked() for b in _tab_breaches(m, imps, str(p.relative_to(ROOT)))]
    assert not breaches, "a tab reached through another tab (share it in viewer/ui/service.py):\n" + "\n".join(breaches)


def test_gradio_only_in_the_ui_layer():
    breaches = [b for p, _, imps in _checked() for b in _ui_only_breaches(p.relative_to(ROOT).as_posix(), imps)]
    assert not breaches, "\n".join(breaches)


def test_the_checks_see_a_breach():
    """Each check fails on what it forbids, read from source text (nothing is written into the package):
    a lazy upward import in the artifact layer, a renderer importing the Gradio wiring or the command line,
    the wiring importing the command line, a tab importing another (type-only) or the service a tab (lazily),
    and Gradio below the UI."""
    lazy_up = _imports_in("def f():\n    from viewer import cli\n", "rollout_trace.artifact._probe", False)
    assert _layer_breaches("rollout_trace.artifact._probe", lazy_up, "probe")
    to_ui = _imports_in("def f():\n    from ..ui import run_view\n", "viewer.render._probe", False)
    assert _room_breaches("viewer.render._probe", to_ui, "probe")
    to_cli = _imports_in("import viewer.cli.rescore\n", "viewer.contract_probe", False)
    assert _room_breaches("viewer.contract_probe", to_cli, "probe")
    ui_to_cli = _imports_in("from viewer.cli import collection\n", "viewer.ui._probe", False)
    assert _room_breaches("viewer.ui._probe", ui_to_cli, "probe")
    assert not _room_breaches("viewer.ui._probe", _imports_in("from viewer.render import safe\n", "viewer.ui._probe",
                                                              False), "probe")
    tab_to_tab = _imports_in("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .view_tab import ViewTab\n",
                             "viewer.ui.run_view", False)
    assert _tab_breaches("viewer.ui.run_view", tab_to_tab, "probe")
    shared_to_tab = _imports_in("def f():\n    from . import collection_view\n", "viewer.ui.service", False)
    assert _tab_breaches("viewer.ui.service", shared_to_tab, "probe")
    assert not _tab_breaches("viewer.ui.app", _imports_in("from .run_view import RunView\n", "viewer.ui.app", False),
                             "probe")
    assert not _tab_breaches("viewer.ui.run_view", _imports_in("from .service import Service\n", "viewer.ui.run_view",
                                                               False), "probe")
    gradio = _imports_in("import gradio as gr\n", "viewer.render._probe", False)
    assert _ui_only_breaches("viewer/render/_probe.py", gradio)


# -- cycles ---------------------------------------------------------------------------------------

def _dependencies(source: str, module: str, is_package: bool, known: set[str],
                  filename: str = "<probe>") -> list[tuple[int, str]]:
    """(line, module of ours) for every import in the source, each resolved to the most specific module in
    `known` it names: `from a import b` depends on `a.b` when that is a module, else on `a`."""
    here = module.split(".")
    package = here if is_package else here[:-1]

    def resolve(name: str) -> str | None:
        parts = name.split(".")
        return next((m for m in (".".join(parts[:n]) for n in range(len(parts), 0, -1)) if m in known), None)

    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, resolve(a.name)) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                found.append((node.lineno, sub if sub in known else resolve(mod)))
    return [(line, m) for line, m in found if m is not None and m != module]


def _tangles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The groups of modules that reach each other through imports (Tarjan's strongly connected components),
    each sorted; a module importing itself is a group of one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # recursion depth is bounded by the number of modules
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, {})):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in graph.get(node, {}):
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def _shortest_cycle(graph: dict[str, dict[str, int]], group: Iterable[str]) -> list[str]:
    members = set(group)
    start = min(members)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph.get(node, {})):
                if nxt == start:
                    return [*paths[node], start]
                if nxt in members and nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    raise AssertionError(f"no cycle through {start} in {sorted(members)}")


def _import_graph() -> tuple[dict[str, dict[str, int]], dict[str, str]]:
    """module -> {module it imports: first line}, and module -> its file, for every module of ours."""
    files = {_module_of(p): p for p in [*_sources(), ROOT / "app.py"]}
    known = set(files)
    graph: dict[str, dict[str, int]] = {}
    for module, path in files.items():
        edges = graph.setdefault(module, {})
        for line, target in _dependencies(path.read_text(), module, path.name == "__init__.py", known, str(path)):
            edges.setdefault(target, line)
    return graph, {m: p.relative_to(ROOT).as_posix() for m, p in files.items()}


def _describe(group: list[str], graph: dict[str, dict[str, int]], files: dict[str, str]) -> str:
    """The group's modules, then one shortest cycle through it, each step with the file and line of its import."""
    cycle = _shortest_cycle(graph, group)
    steps = [f"  {files.get(a, a)}:{graph[a][b]} imports {b}" for a, b in zip(cycle, cycle[1:], strict=False)]
    return f"{len(group)} modules ({', '.join(group)}): " + " -> ".join(cycle) + "\n" + "\n".join(steps)


def test_no_import_cycles():
    graph, files = _import_graph()
    tangles = _tangles(graph)
    assert not tangles, "import cycles (type-only and lazy imports count):\n" + "\n".join(
        _describe(t, graph, files) for t in tangles)


def test_the_cycle_check_sees_a_cycle():
    """A cycle closed only by a type-only import, or only by an import inside a function, is found and named;
    importing a sibling through its package, and a package importing its own modules, are not cycles."""
    known = {"viewer.ui", "viewer.ui.service", "viewer.ui.rows", "viewer.ui.follower"}
    sources = {
        "viewer.ui.service": "from . import follower, rows\n",
        "viewer.ui.rows": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .service import Service\n",
        "viewer.ui.follower": "def f():\n    from viewer.ui.service import Service\n",
        "viewer.ui": "from .rows import Rows\n",
    }
    graph = {m: {t: line for line, t in _dependencies(src, m, m == "viewer.ui", known)} for m, src in sources.items()}
    assert graph["viewer.ui.rows"] == {"viewer.ui.service": 3}
    assert _tangles(graph) == [["viewer.ui.follower", "viewer.ui.rows", "viewer.ui.service"]]
    assert _shortest_cycle(graph, _tangles(graph)[0]) == ["viewer.ui.follower", "viewer.ui.service",
                                                          "viewer.ui.follower"]
    ring = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert _tangles(ring) == [["a", "b", "c"]]
    assert _tangles({"a": {"a": 1}}) == [["a"]]
    assert _tangles({"a": {"b": 1}, "b": {}}) == []
    assert _describe(["a", "b"], {"a": {"b": 3}, "b": {"a": 7}}, {"a": "a.py"}) == (
        "2 modules (a, b): a -> b -> a\n  a.py:3 imports b\n  b:7 imports a")
