"""Compiles each page's JavaScript (src/, ES modules that import one another) to the one script the page runs (built/).

Gradio evaluates a gr.HTML's js_on_load as a function body, not a module, and an exported file has a single
inline <script>: so each page becomes a plain script (esbuild's iife format) that defines one name, the one its
mount line calls (`TraceView.mountInApp(...)`, viewer/ui/view_tab.py). The scripts are committed: the Space
runs no build and needs no node. tests/test_assets_build.py checks they equal a fresh build.

esbuild is the one pinned in package.json (scripts/setup.sh installs it into node_modules/):

    python -m viewer.assets.build     # rewrites viewer/assets/built/
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from viewer.assets import HERE

ESBUILD = HERE.parents[1] / "node_modules" / ".bin" / "esbuild"
SRC = HERE / "src"
OUT = HERE / "built"
COMMAND = "python -m viewer.assets.build"

# A page's script (src/<name>, and built/<name>) -> the name it defines.
PAGES = {"trace_view.js": "TraceView", "collection_index.js": "CollectionIndex", "find_panel.js": "FindPanel",
         "run_page.js": "RunPage"}

# Readable output (reviewed in diffs, not minified) that does not depend on where the checkout is: esbuild
# names each source file in a comment relative to its working directory, which is viewer/assets.
OPTIONS = ("--bundle", "--format=iife", "--target=es2022", "--charset=utf8", "--log-level=warning")


def build(out: Path = OUT) -> list[Path]:
    """Every page compiled into `out`; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, glob in PAGES.items():
        banner = f"// Built from viewer/assets/src/{name} by `{COMMAND}`: edit the source, not this file."
        got = subprocess.run([str(ESBUILD), f"src/{name}", *OPTIONS, f"--global-name={glob}", f"--banner:js={banner}",
                              f"--outfile={out / name}"], cwd=HERE, capture_output=True, text=True, timeout=120)
        if got.returncode != 0:
            raise RuntimeError(f"esbuild could not build src/{name}:\n{got.stderr}")
        written.append(out / name)
    return written


if __name__ == "__main__":
    if not ESBUILD.exists():
        sys.exit(f"{ESBUILD} is missing: bash scripts/setup.sh installs the esbuild package.json pins")
    for path in build():
        print(path.relative_to(HERE.parents[1]))
