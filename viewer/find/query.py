"""What a search asks, checked: the pattern (plain text, or `/regex/` with flags i, s, m), where to look, which
versions and statuses; every bad value a clear message, never an exception past `parse_query`.

A plain pattern matches case-insensitively as a substring. A regex runs on RE2 (google-re2): its matching time is
linear in the text and its memory bounded (MAX_MEM), so no pattern backtracks or grows without end; RE2's syntax
is Python's without backreferences, lookaround, conditionals or recursion (a pattern using them is refused by
name), and its classes (word, digit, space, word boundary) are ASCII only. A search has a time budget
(`Query.budget_s`) counted from when it was asked, waits included, after which it answers with what it read; in public mode the pattern and the budget are
smaller. No files, no Gradio.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import re2

from rollout_trace.analysis.texts import FIELDS, Field
from rollout_trace.artifact.errors import RolloutTraceError

MAX_PATTERN = 500
MAX_PATTERN_PUBLIC = 200
BUDGET_S = 10.0
BUDGET_S_PUBLIC = 2.0
MAX_MEM = 32 << 20  # bytes RE2 may use for one pattern (its compiled program and its DFA's cache)
MAX_HITS = 200  # hits listed; counts cover every match
FIRST_S = 0.3  # a first answer that has a hit returns after this long, the rest counted in a second one
_REGEX = re.compile(r"^/(.*)/([ism]*)$", re.DOTALL)


class QueryError(RolloutTraceError, ValueError):
    """A search that cannot run: the message says which value and what was expected."""


@dataclass(frozen=True)
class Query:
    text: str  # the pattern as typed
    compiled: re2._Regexp
    is_regex: bool
    literal: str | None  # a substring every match contains (what the text index looks up), when one is known
    fields: tuple[Field, ...] = FIELDS
    versions: tuple[int | None, int | None] = (None, None)
    statuses: tuple[str, ...] = ()
    limit: int = MAX_HITS
    budget_s: float = BUDGET_S
    notes: tuple[str, ...] = field(default=())
    # a run's search in two answers: the first hits (`first`: it stops once it has some, after FIRST_S), then the
    # counts of the rest from the shard it stopped before (`start`); a collection's index answers whole either way
    first: bool = False
    start: int = 0


def _required_literal(pattern: str, flags: int) -> str | None:
    """The longest run of plain characters every match of `pattern` must contain (None: none of 3+ characters).

    Read from Python's own regular-expression parser: only a top-level sequence without alternation counts."""
    import re._parser as sre_parse  # Python 3.11+ (pyproject's floor)
    try:
        parsed = sre_parse.parse(pattern, flags)
    except Exception:
        return None
    best, run = "", ""
    for op, arg in parsed.data:
        if str(op) == "LITERAL":
            run += chr(arg)
            continue
        best, run = max(best, run, key=len), ""
    best = max(best, run, key=len)
    return best if len(best) >= 3 else None


def _compile(pattern: str, shown: str) -> re2._Regexp:
    options = re2.Options()
    options.max_mem = MAX_MEM
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as e:
        said = e.args[0] if e.args else ""
        why = (said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)) or "RE2 cannot compile it"
        raise QueryError(f"/{shown[:60]}/ is not a valid regular expression for this search: {why} (RE2 syntax: no "
                         "backreferences, lookaround, conditionals or recursion)") from None


def parse_versions(text: str | None) -> tuple[int | None, int | None]:
    """`A:B`, `A:`, `:B` or `A` (inclusive) as a pair of bounds."""
    if text is None or not text.strip():
        return None, None
    parts = text.strip().split(":")
    if len(parts) > 2 or not all(p.strip() == "" or (p.strip().isascii() and p.strip().isdigit() and len(p.strip()) <= 9)
                                 for p in parts):
        raise QueryError(f"versions {text[:40]!r}: expected A:B, A:, :B or A (whole numbers)")
    lo = int(parts[0]) if parts[0].strip() else None
    hi = (int(parts[1]) if parts[1].strip() else None) if len(parts) == 2 else lo
    if lo is not None and hi is not None and hi < lo:
        raise QueryError(f"versions {text!r}: the range ends ({hi}) before it starts ({lo})")
    return lo, hi


def parse_query(pattern: str, fields: list[str] | tuple[str, ...] = (), versions: str | None = None,
                statuses: list[str] | tuple[str, ...] = (), public: bool = False, limit: int = MAX_HITS) -> Query:
    """A checked query; raises QueryError naming the value that is wrong."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise QueryError("the pattern is empty: give text to find, or /regex/")
    try:  # a command line's bytes that are not UTF-8 arrive as lone surrogates: no text holds them
        pattern.encode("utf-8")
    except UnicodeEncodeError as e:
        raise QueryError(f"the pattern is not text: character {e.start + 1} is a byte that is not UTF-8 "
                         f"({pattern[e.start:e.end].encode('utf-8', 'surrogateescape')!r})") from None
    cap = MAX_PATTERN_PUBLIC if public else MAX_PATTERN
    if len(pattern) > cap:
        raise QueryError(f"the pattern is {len(pattern):,} characters long (at most {cap:,})")
    bad = [f for f in fields if f not in FIELDS]
    if bad:
        raise QueryError(f"--in {bad[0]!r}: expected one of {', '.join(FIELDS)}")
    m = _REGEX.match(pattern.strip())
    if m and m.group(1):
        flags = "".join(f for f in "ism" if f in m.group(2))
        compiled = _compile((f"(?{flags})" if flags else "") + m.group(1), m.group(1))
        literal = _required_literal(m.group(1), re.IGNORECASE if "i" in m.group(2) else 0)
        is_regex = True
    else:
        compiled = _compile("(?i)" + re2.escape(pattern), pattern)
        literal, is_regex = pattern, False
    return Query(text=pattern, compiled=compiled, is_regex=is_regex, literal=literal,
                 fields=tuple(fields) or FIELDS, versions=parse_versions(versions),  # type: ignore[arg-type]
                 statuses=tuple(s.strip() for s in statuses if s.strip()), limit=max(1, min(limit, MAX_HITS)),
                 budget_s=BUDGET_S_PUBLIC if public else BUDGET_S)
