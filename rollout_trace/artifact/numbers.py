"""Summaries of untrusted numbers (rewards read from a run's index) that hold for every float.

A reward is whatever a trainer logged: 1.7976931348623157e308 is finite, and two of them overflow a plain
sum (`statistics.fmean` raises, `sum` gives inf). Here the values are scaled by the largest magnitude
before they are added, so a mean or a standard deviation of finite values is always finite; NaN and
±inf are not values of a summary (a reward TRL could not score is NaN) and are counted out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np


class Summary(NamedTuple):
    n: int  # finite values summarised
    mean: float | None  # None when n == 0
    sd: float | None  # population standard deviation
    min: float | None
    max: float | None


EMPTY = Summary(0, None, None, None, None)


def finite_summary(values: Iterable[float | None] | np.ndarray) -> Summary:
    """Mean, population sd, min and max of the finite values (None, NaN and ±inf left out). A float array is
    summarised without a Python float per value (a run's column: the same numbers, faster)."""
    if isinstance(values, np.ndarray):
        arr = values.astype(np.float64, copy=False)
        arr = arr[np.isfinite(arr)]
        if not len(arr):
            return EMPTY
        lo, hi = float(arr.min()), float(arr.max())
    else:
        xs = [float(x) for x in values if x is not None and math.isfinite(x)]
        if not xs:
            return EMPTY
        arr = np.array(xs, dtype=np.float64)
        lo, hi = min(xs), max(xs)
    scale = max(abs(lo), abs(hi))
    if scale == 0.0:
        return Summary(len(arr), 0.0, 0.0, lo, hi)
    ys = arr / scale  # each in [-1, 1]: no sum below overflows
    m = math.fsum(ys.tolist()) / len(ys)  # exact (correctly rounded) sums, as the values' own
    var = math.fsum(((ys - m) ** 2).tolist()) / len(ys)
    # |m| <= 1 and the sd of values in [-1, 1] is at most 1, so scaling back stays finite
    mean = min(max(m * scale, lo), hi)  # rounding never puts the mean outside the values
    return Summary(len(arr), mean, math.sqrt(var) * scale, lo, hi)
