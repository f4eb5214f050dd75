"""The only ways untrusted trace text becomes HTML: escaped text, or markdown with raw HTML and images off; and
the same folding as a record (`folded`) for pages that draw text themselves.

Model output, tool output, task text and test data all come from the trace and are untrusted. An
image in rendered markdown would make every reader's browser call someone's server, and raw HTML
could run script, so markdown is rendered by markdown-it with `html=False` and the image rule
disabled; links get rel="noopener noreferrer nofollow" and open nothing by themselves.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache

from markdown_it import MarkdownIt

from ..contract import Folded

FOLD_CHARS = 2000
MAX_CHARS = 100_000  # of one text in the page; the rest is counted, never sent (the artifact keeps it all)
MAX_MARKDOWN = 30_000  # longer markdown is shown as plain text: rendering cost grows with its syntax


def text(value: object) -> str:
    """Escaped text, quotes included (safe in element bodies and attribute values)."""
    return html.escape("" if value is None else str(value), quote=True)


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    # breaks: problem statements put examples on separate lines and mean them to stay there
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": True})
    md.disable("image")

    def link_open(renderer, tokens, idx, options, env):
        tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
        tokens[idx].attrSet("target", "_blank")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


def markdown(value: str | None) -> str:
    """Markdown to HTML with raw HTML shown as text and images not rendered (long text: plain, folded)."""
    if value and len(value) > MAX_MARKDOWN:
        return pre(value, label="the text (too long to render as markdown)")
    return _md().render(value or "")


def short(value: str, limit: int) -> str:
    """At most `limit` characters of a one-line label, with an ellipsis when cut."""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def source_label(source: str) -> str:
    """A source's (or a row's) name as a message names it: a name may be up to a thousand characters, and a
    message that repeats it whole is unreadable."""
    return short(source, 80)


def pre(value: str | None, fold: int = FOLD_CHARS, label: str = "") -> str:
    """A preformatted block; text longer than `fold` characters is folded; past MAX_CHARS it is counted, not sent."""
    body = value or ""
    if len(body) <= fold:
        return f"<pre class='tv-pre'>{text(body)}</pre>"
    head, rest = body[:fold], body[fold:MAX_CHARS]
    cut = (f"<div class='tv-dim'>… {len(body) - MAX_CHARS:,} more characters are in the artifact, not shown "
           f"here</div>") if len(body) > MAX_CHARS else ""
    return (f"<pre class='tv-pre'>{text(head)}</pre><details class='tv-fold'><summary>show all "
            f"{len(body):,} characters{(' of ' + text(label)) if label else ''}</summary>"
            f"<pre class='tv-pre'>{text(rest)}</pre>{cut}</details>")


def folded(value: str | None, fold: int = FOLD_CHARS, label: str = "") -> Folded:
    """`pre`'s text as a record the page draws (dom.js, as text): the first `fold` characters, the rest behind a
    fold; past MAX_CHARS counted, not sent."""
    body = value or ""
    if len(body) <= fold:
        return Folded(body, chars=len(body))
    return Folded(body[:fold], body[fold:MAX_CHARS], len(body), max(0, len(body) - MAX_CHARS), label)


def pretty_json(value: object) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
