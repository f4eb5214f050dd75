"""Markdown from a trace (a task's instruction) as `Md` nodes the page draws as elements, never as HTML.

It is parsed by the same markdown-it setup as viewer/render/safe.py `markdown` (commonmark, raw HTML kept as
text, images off, line breaks kept), so it shows what that HTML showed; each node names an element from a fixed
list and carries its text as text. Links keep only what markdown-it validated (no javascript:, vbscript:, file:
or data: URL); the page opens them in a new tab with no referrer. A code block's language is not kept (no style
reads it).
"""

from __future__ import annotations

from typing import cast

from markdown_it.token import Token

from ..contract import Folded, Md, MdTag
from .safe import MAX_MARKDOWN, _md, folded

_BLOCKS: dict[str, MdTag] = {"paragraph": "p", "heading": "h1", "bullet_list": "ul", "ordered_list": "ol",
                             "list_item": "li", "blockquote": "blockquote"}
_INLINE: dict[str, MdTag] = {"em": "em", "strong": "strong", "link": "a"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


def parse(value: str | None) -> tuple[list[Md], Folded | None]:
    """`value` as markdown nodes, or, when it is too long to parse (its cost grows with its syntax), as folded text."""
    if value and len(value) > MAX_MARKDOWN:
        return [], folded(value, label="the text (too long to render as markdown)")
    return _blocks(_md().parse(value or "")), None


class _Open:
    """An element being filled: its tag and attributes, and the nodes inside it so far."""

    def __init__(self, tag: MdTag, href: str | None = None, start: int | None = None, title: str = ""):
        self.tag, self.href, self.start, self.title, self.children = tag, href, start, title, cast(list[Md], [])

    def close(self) -> Md:
        return Md(self.tag, text=self.title, href=self.href, start=self.start, children=self.children)


def _blocks(tokens: list[Token]) -> list[Md]:
    root = _Open("p")
    stack = [root]
    for t in tokens:
        kind = t.type
        if kind.endswith("_open") and kind[:-5] in _BLOCKS:
            if t.hidden:  # a tight list's paragraph: its text sits in the item itself
                continue
            tag = cast(MdTag, t.tag) if t.tag in _HEADINGS else _BLOCKS[kind[:-5]]
            start = t.attrGet("start")
            stack.append(_Open(tag, start=int(start) if isinstance(start, (int, str)) and str(start).isdigit() else None))
        elif kind.endswith("_close") and kind[:-6] in _BLOCKS:
            if t.hidden:
                continue
            done = stack.pop().close()
            stack[-1].children.append(done)
        elif kind == "inline":
            stack[-1].children.extend(_inline(t.children or []))
        elif kind in ("fence", "code_block"):
            stack[-1].children.append(Md("pre", children=[Md("code", text=t.content)]))
        elif kind == "hr":
            stack[-1].children.append(Md("hr"))
        elif t.content:  # anything else (raw HTML is off, so none is expected): its text
            stack[-1].children.append(Md("p", children=[Md("text", text=t.content)]))
    while len(stack) > 1:  # markdown-it closes what it opens; never leave a node behind
        done = stack.pop().close()
        stack[-1].children.append(done)
    return root.children


def _inline(tokens: list[Token]) -> list[Md]:
    root = _Open("p")
    stack = [root]
    for t in tokens:
        kind = t.type
        if kind.endswith("_open") and kind[:-5] in _INLINE:
            href, title = (t.attrGet("href"), t.attrGet("title")) if kind == "link_open" else (None, None)
            stack.append(_Open(_INLINE[kind[:-5]], href=str(href) if href is not None else None, title=str(title or "")))
        elif kind.endswith("_close") and kind[:-6] in _INLINE:
            if len(stack) > 1:
                done = stack.pop().close()
                stack[-1].children.append(done)
        elif kind == "code_inline":
            stack[-1].children.append(Md("code", text=t.content))
        elif kind in ("softbreak", "hardbreak"):  # line breaks are kept (breaks=True)
            stack[-1].children.append(Md("br"))
        elif t.content:  # text, and raw HTML shown as text
            stack[-1].children.append(Md("text", text=t.content))
    while len(stack) > 1:
        done = stack.pop().close()
        stack[-1].children.append(done)
    return root.children
