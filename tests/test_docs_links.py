"""Every relative link and image in README.md and docs/*.md names a file of the repo (and an anchor, a heading)."""

from __future__ import annotations

import re

from conftest import ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_relative_links_resolve():
    broken = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in LINK.findall(doc.read_text()):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve()
            if not file.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
            elif anchor and file.suffix == ".md":
                headings = {_anchor(h) for h in re.findall(r"^#+ (.+)$", file.read_text(), re.M)}
                if anchor not in headings:
                    broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, broken
