"""JavaScript and CSS of the app's pages and of exported HTML files.

Each page's JavaScript is written as ES modules under src/ (the token view one part per file, src/trace_view/;
the helpers the pages share in src/dom.js), each importing what it uses. viewer/assets/build.py compiles every
page to one committed plain script in built/ that defines one name (`TraceView`, `CollectionIndex`,
`FindPanel`, `RunPage`): a gr.HTML's js_on_load runs it as a function body and calls that name's
mountInApp, and an export inlines viewer/assets/built/trace_view.js in its one <script>. The app reads the
committed scripts, so the Space needs no build step and no node.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def read(name: str) -> str:
    """An asset's text: a page's compiled script (built/) for a .js name outside vendor/, else the file itself."""
    path = HERE / "built" / name if name.endswith(".js") and not name.startswith("vendor/") else HERE / name
    return path.read_text(encoding="utf-8")
