"""JavaScript and CSS of the token view and the collection index, shared by the app and exported HTML files.

The token view is written one file per part (viewer/assets/trace_view/). `read("trace_view.js")` joins
them, in PARTS' order, inside one function scope that hands out `TraceView = {mount, mountInApp,
mountExport}`: the app passes that text to `gr.HTML(js_on_load=...)` (viewer/ui/view_tab.py) and an
export inlines it in its one <script> (viewer/export.py), so both get the same code and neither needs
a module loader or a second request. A page's script that uses shared helpers (USES: dom.js's `el`) is read
with them first, inside the same script.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent

# A bundle: its global name, its parts (trace_view/<part>.js), the functions it hands out.
BUNDLES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "trace_view.js": ("TraceView",
                      ("format", "advantage", "navigator", "toolbar", "token_pane", "trainer", "live", "place",
                       "markup", "turn", "chrome", "input", "settle", "mount", "adapters"),
                      ("mount", "mountInApp", "mountExport")),
}

# A page's script -> the shared scripts read before it (each gr.HTML's js_on_load is a scope of its own).
USES: dict[str, tuple[str, ...]] = {"collection_index.js": ("dom.js",), "find_panel.js": ("dom.js",),
                                    "run_page.js": ("dom.js",)}


def parts(name: str) -> list[Path]:
    """The files a bundle is joined from (the type check reads them one by one)."""
    _, names, _ = BUNDLES[name]
    return [HERE / name.removesuffix(".js") / f"{part}.js" for part in names]


@lru_cache(maxsize=None)
def read(name: str) -> str:
    """An asset's text; a bundle's parts joined into one script."""
    if name not in BUNDLES:
        return "".join(read(shared) + "\n" for shared in USES.get(name, ())) + (HERE / name).read_text(encoding="utf-8")
    glob, _, exported = BUNDLES[name]
    body = "\n".join(f"// -- {p.relative_to(HERE)}\n{p.read_text(encoding='utf-8')}" for p in parts(name))
    return f"const {glob} = (() => {{\n{body}\nreturn {{{', '.join(exported)}}};\n}})();\n"
