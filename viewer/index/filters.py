"""Filter and sort a collection's index, and carry the filter state in a URL query string.

Pure functions over `Record`s: the UI and the CLI call the same ones. `from_query` is lenient by
design, because a query string comes from a URL anyone can edit: a value it cannot read is dropped
with a note saying which and why, never an exception.

Query keys (all optional):
    model=TEXT        model name contains TEXT (case-insensitive)
    task=TEXT         task id starts with TEXT, or the title contains it
    reward_min=X reward_max=X   reward range, inclusive; rows without a reward drop out
    drift=none|drift|unknown
    trained_min=N trained_max=N  trained turns range
    timed_out=yes|no
    tool=NAME         used this tool;  no_tool=NAME  never used it
    q=TEXT            text search over titles (and task ids, paths)
    kind=artifact|group
    valid=yes|no
    sort=COLUMN       any Record field; "-COLUMN" sorts descending
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from urllib.parse import urlencode

from rollout_trace.artifact.collection import COLUMNS, Record

_YES = {"1", "true", "yes", "y", "on"}
_NO = {"0", "false", "no", "n", "off"}
_CHOICES = {"drift": ("none", "drift", "unknown"), "kind": ("artifact", "group", "run")}


@dataclass(frozen=True)
class Filters:
    model: str | None = None
    task: str | None = None
    reward_min: float | None = None
    reward_max: float | None = None
    drift: str | None = None
    trained_min: int | None = None
    trained_max: int | None = None
    timed_out: bool | None = None
    tool: str | None = None
    no_tool: str | None = None
    q: str | None = None
    kind: str | None = None
    valid: bool | None = None
    sort: str = "path"  # a Record field, "-field" for descending


QUERY_KEYS = tuple(f.name for f in fields(Filters))
_KINDS = {f.name: f.type for f in fields(Filters)}


def _has(text: str | None, needle: str) -> bool:
    return text is not None and needle.casefold() in text.casefold()


def matches(r: Record, f: Filters) -> bool:
    """Whether one row passes every filter that is set."""
    if f.model and not _has(r.model, f.model):
        return False
    if f.task and not ((r.task_id or "").startswith(f.task.lower()) or _has(r.title, f.task)):
        return False
    if f.reward_min is not None and (r.reward is None or r.reward < f.reward_min):
        return False
    if f.reward_max is not None and (r.reward is None or r.reward > f.reward_max):
        return False
    if f.drift and r.drift != f.drift:
        return False
    if f.trained_min is not None and (r.trained_turns is None or r.trained_turns < f.trained_min):
        return False
    if f.trained_max is not None and (r.trained_turns is None or r.trained_turns > f.trained_max):
        return False
    if f.timed_out is not None and r.timed_out is not f.timed_out:
        return False
    if f.tool and f.tool not in r.tools:
        return False
    if f.no_tool and f.no_tool in r.tools:
        return False
    if f.q and not any(_has(x, f.q) for x in (r.title, r.task_id, r.path)):
        return False
    if f.kind and r.kind != f.kind:
        return False
    return f.valid is None or r.valid is f.valid


def _sort_key(column: str):
    def key(r: Record):
        v = getattr(r, column)
        if isinstance(v, float) and math.isnan(v):
            v = None
        if isinstance(v, tuple):
            v = ",".join(map(str, v)) if column in ("tools", "statuses") else len(v)
        return v

    return key


def sort_records(records: Iterable[Record], sort: str = "path") -> list[Record]:
    """Sort by any column ("-column" descending); rows lacking the value go last either way; ties by path."""
    desc = sort.startswith("-")
    column = sort.lstrip("-")
    if column not in COLUMNS:
        column, desc = "path", False
    key = _sort_key(column)
    rows = sorted(records, key=lambda r: r.path)
    known = [r for r in rows if key(r) is not None]
    unknown = [r for r in rows if key(r) is None]
    known.sort(key=lambda r: (isinstance(key(r), str), key(r)), reverse=desc)  # Python's sort is stable
    return known + unknown


def apply(records: Iterable[Record], f: Filters) -> list[Record]:
    """The rows that pass `f`, in its sort order."""
    return sort_records((r for r in records if matches(r, f)), f.sort)


def to_query(f: Filters) -> str:
    """The query string of the filters that differ from the defaults, in a fixed order."""
    default = Filters()
    pairs = []
    for name in QUERY_KEYS:
        v = getattr(f, name)
        if v == getattr(default, name):
            continue
        pairs.append((name, "yes" if v is True else "no" if v is False else _num(v)))
    return urlencode(pairs)


def _num(v) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _parse(name: str, raw: str):
    kind = _KINDS[name]
    if "bool" in kind:
        low = raw.strip().lower()
        if low in _YES:
            return True
        if low in _NO:
            return False
        raise ValueError("expected yes or no")
    if "float" in kind:
        try:
            x = float(raw)
        except ValueError:
            raise ValueError("expected a number") from None
        if not math.isfinite(x):
            raise ValueError("expected a finite number")
        return x
    if "int" in kind:
        try:
            return int(raw)
        except ValueError:
            raise ValueError("expected a whole number") from None
    text = raw.strip()
    if name in _CHOICES and text not in _CHOICES[name]:
        raise ValueError("expected one of " + ", ".join(_CHOICES[name]))
    if name == "sort" and text.lstrip("-") not in COLUMNS:
        raise ValueError("expected a column: " + ", ".join(COLUMNS))
    return text[:200] or None


def from_query(params: Mapping[str, str | list[str]]) -> tuple[Filters, list[str]]:
    """Filters from query parameters (a dict of str or lists, as web frameworks give them), and notes on
    what was ignored. Unknown keys and unreadable values are dropped; the last value of a repeated key wins."""
    values, notes = {}, []
    for name, raw in params.items():
        if name not in QUERY_KEYS:
            continue  # other parameters (src, turn...) belong to other parts of the page
        if isinstance(raw, (list, tuple)):
            raw = raw[-1] if raw else ""
        raw = str(raw)
        if raw == "":
            continue
        try:
            values[name] = _parse(name, raw)
        except ValueError as e:
            notes.append(f"ignored {name}={raw[:40]!r}: {e}")
    f = replace(Filters(), **values)
    if f.reward_min is not None and f.reward_max is not None and f.reward_min > f.reward_max:
        notes.append(f"reward_min {f.reward_min} is above reward_max {f.reward_max}: no row can match")
    return f, notes
