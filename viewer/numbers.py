"""How the viewer writes a number, on a page or in a terminal: one spelling per kind of number, so the
collection index, a group's map, the run page and the command lines say the same value the same way, and a
missing one as "-" everywhere.
"""

from __future__ import annotations

from typing import Literal

MISSING = "-"

Sign = Literal["pos", "neg", "zero", "none"]


def number(v: float | None, spec: str = "+.3f") -> str:
    """A reward, an advantage or a mean; signed to 3 decimals unless `spec` says otherwise."""
    return MISSING if v is None else format(v, spec)


def count(v: int | None) -> str:
    """A count, with thousands separators (12,345)."""
    return MISSING if v is None else f"{v:,}"


def percent(v: float | None) -> str:
    """A share in [0, 1] as a whole percent (0.333 -> 33%)."""
    return MISSING if v is None else f"{round(100 * v)}%"


def sign(v: float | None) -> Sign:
    """The CSS class a value's colour comes from."""
    return "none" if v is None else "pos" if v > 0 else "neg" if v < 0 else "zero"
