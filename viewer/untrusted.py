"""Numbers from whoever sends them: a page link's parameters, a page's server calls, a form's fields.

Every such value is typed by a stranger (the API accepts any JSON), so each is parsed here and only here, by
one rule: an int (not a bool), a float that is a whole number (a form's number field sends 8.0), or a string
of ASCII digits with an optional leading "-" (a link's `turn=3`), inside the bounds the caller names. Anything
else (3.7, "1e3", "٣", "", a list, a 5,000-digit string, which Python would spend time converting) is None,
and the caller falls back to its default or names the field. `number` is the same for a measure (seconds, an
advantage): a finite float inside its bounds. Pure; nothing here raises.
"""

from __future__ import annotations

import math

MOST = 10**9  # more than any turn, row, group, rollout, version or chunk index a page can hold


def whole(value: object, most: int = MOST, least: int = 0) -> int | None:
    """`value` as an int in [least, most], or None when it is not a whole number in that range."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer() or not least <= value <= most:
            return None
        value = int(value)
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text.startswith("-") else text
        if not (digits.isascii() and digits.isdigit()) or len(digits) > len(str(max(most, -least, 1))):
            return None
        value = int(text)
    if not isinstance(value, int):
        return None
    return value if least <= value <= most else None


def number(value: object, most: float, least: float) -> float | None:
    """`value` as a finite float in [least, most] (an int, a float or a decimal string), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text.isascii() or len(text) > 40 or any(c in text.lower() for c in ("_", "n", "i")):  # no nan, inf, 1_0
            return None
        try:
            value = float(text)
        except ValueError:
            return None
    got = float(value)
    return got if math.isfinite(got) and least <= got <= most else None


def span(value: object, most: int = MOST) -> tuple[int, int] | None:
    """`value` as a half-open range [a, b) of whole numbers, 0 <= a < b <= most: a link's `A-B` (a search hit's
    tokens, `found=582-590`) or an event's `[a, b]`; else None."""
    if isinstance(value, str):
        parts = value.strip().split("-")
        if len(parts) != 2:
            return None
        value = parts
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    a, b = whole(value[0], most), whole(value[1], most)
    return (a, b) if a is not None and b is not None and a < b else None


def whole_or(value: object, default: int, most: int = MOST, least: int = 0) -> int:
    """`whole(value, most, least)`, or `default` when that is None."""
    got = whole(value, most, least)
    return default if got is None else got
