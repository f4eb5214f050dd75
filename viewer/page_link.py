"""Validate a page's query string (`/?src=...&turn=3&mode=logprob&scope=full`) before anything uses it.

The query is typed by whoever sends the link, so every value is checked here, in one pure function,
and a bad one becomes a default plus a message for the page, never an exception (a 100 kB `src`
used to become a bare "Internal Server Error"). Nothing here touches the file system or the network.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from rollout_trace.artifact.sources import parse_hub_id

from .contract import MODES, SCOPES
from .untrusted import whole

MAX_SRC_CHARS = 1024  # a Hub id with revision and sub-folder fits in ~700; a path in far less
MAX_TURN = 10_000_000
# An upload is named by its content's digest (viewer/ui/token_values.py): `upload:<hex>` reopens it while the
# server still holds it, and names no file.
UPLOAD_SRC = re.compile(r"upload:([0-9a-f]{32})")
# printable text only: no control characters (newlines, NUL, escapes) in a source name
_PRINTABLE = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029]+")


@dataclass(frozen=True)
class PageQuery:
    src: str | None  # None: use the app's default source
    turn: int = 0
    mode: str = MODES[0]
    scope: str = SCOPES[0]
    problems: list[str] = field(default_factory=list)  # one line per refused value, safe to show after escaping

    @property
    def initial(self) -> dict:
        """What the token view starts at (turn, mode, scope)."""
        return {"turn": self.turn, "mode": self.mode, "scope": self.scope}


def _one(params: Mapping, name: str) -> str | None:
    """The parameter as one string (a repeated parameter or a non-string counts as absent-and-wrong)."""
    value = params.get(name)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and len(value) == 1 and isinstance(value[0], str):
        return value[0]
    return "\x00"  # forces the invalid branch below


def parse_page_query(params: Mapping | None, public: bool, examples: list[str] | tuple[str, ...] = ()) -> PageQuery:
    """Checked values of `src`, `turn`, `mode`, `scope`; each bad one is replaced by its default and named.

    `public`: only a bundled example (`examples`) or a Hub dataset id is accepted as `src`, the same rule
    the source loader applies, so a path is refused before it reaches it."""
    params = params or {}
    problems: list[str] = []
    src = _one(params, "src")
    if src is not None:
        src = src.strip()
        if not src:
            src = None
        elif len(src) > MAX_SRC_CHARS:
            problems.append(f"the link's src is {len(src):,} characters long (at most {MAX_SRC_CHARS:,})")
            src = None
        elif not _PRINTABLE.fullmatch(src):
            problems.append("the link's src holds control characters")
            src = None
        elif public and src not in examples and parse_hub_id(src) is None and not UPLOAD_SRC.fullmatch(src):
            problems.append("the link's src is neither a bundled example nor a Hub dataset id "
                            "(org/name[@revision][:sub/folder])")
            src = None
    turn = 0
    raw_turn = _one(params, "turn")
    if raw_turn not in (None, ""):
        got = whole(raw_turn, MAX_TURN)
        if got is not None:
            turn = got
        else:
            problems.append(f"the link's turn is not a turn number (0 to {MAX_TURN:,}); starting at turn 0")
    choices = {"mode": MODES, "scope": SCOPES}
    chosen: dict[str, str] = {}
    for name, allowed in choices.items():
        value = _one(params, name)
        if value in (None, "") or value in allowed:
            chosen[name] = value or allowed[0]
        else:
            chosen[name] = allowed[0]
            problems.append(f"the link's {name} must be one of {', '.join(allowed)}; using {allowed[0]}")
    return PageQuery(src, turn, chosen["mode"], chosen["scope"], problems)
