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


# at most this many values are summarised as Python floats: numpy's calls cost ~6 us whatever the size, ten times
# the arithmetic of a few values (a run of 100,000 versions summarises 100,000 small arrays: 0.6 s)
SMALL = 32


def finite_summary(values: Iterable[float | None] | np.ndarray) -> Summary:
    """Mean, population sd, min and max of the finite values (None, NaN and ±inf left out). A float array is
    summarised without a Python float per value (a run's column: the same numbers, faster); a few values (SMALL)
    as Python floats, by the same operations in the same order: the same numbers."""
    if isinstance(values, np.ndarray) and len(values) > SMALL:
        arr = values.astype(np.float64, copy=False)
        arr = arr[np.isfinite(arr)]
        if len(arr) > SMALL:
            return _summary(arr, float(arr.min()), float(arr.max()))
        values = arr
    xs = [float(x) for x in (values.tolist() if isinstance(values, np.ndarray) else values)
          if x is not None and math.isfinite(x)]
    if not xs:
        return EMPTY
    if len(xs) > SMALL:
        return _summary(np.array(xs, dtype=np.float64), min(xs), max(xs))
    lo, hi = min(xs), max(xs)
    scale = max(abs(lo), abs(hi))
    if scale == 0.0:
        return Summary(len(xs), 0.0, 0.0, lo, hi)
    ys = [x / scale for x in xs]
    m = math.fsum(ys) / len(ys)
    var = math.fsum([(y - m) * (y - m) for y in ys]) / len(ys)
    return Summary(len(xs), min(max(m * scale, lo), hi), math.sqrt(var) * scale, lo, hi)


def _summary(arr: np.ndarray, lo: float, hi: float) -> Summary:
    """`finite_summary` of the finite values `arr` (their least `lo` and greatest `hi`), in numpy."""
    scale = max(abs(lo), abs(hi))
    if scale == 0.0:
        return Summary(len(arr), 0.0, 0.0, lo, hi)
    ys = arr / scale  # each in [-1, 1]: no sum below overflows
    m = math.fsum(ys.tolist()) / len(ys)  # exact (correctly rounded) sums, as the values' own
    var = math.fsum(((ys - m) ** 2).tolist()) / len(ys)
    # |m| <= 1 and the sd of values in [-1, 1] is at most 1, so scaling back stays finite
    mean = min(max(m * scale, lo), hi)  # rounding never puts the mean outside the values
    return Summary(len(arr), mean, math.sqrt(var) * scale, lo, hi)
