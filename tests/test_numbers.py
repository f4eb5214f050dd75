"""Summaries of untrusted numbers (rollout_trace/artifact/numbers.py) hold for every float."""

from __future__ import annotations

import math
import statistics

import pytest

from rollout_trace.artifact.numbers import finite_summary

TOP = 1.7976931348623157e308


def test_a_plain_summary_is_the_textbook_one():
    xs = [1.0, 0.0, 0.5, -0.1, 2.0]
    s = finite_summary(xs)
    assert s.n == 5 and s.min == -0.1 and s.max == 2.0
    assert s.mean == pytest.approx(statistics.fmean(xs)) and s.sd == pytest.approx(statistics.pstdev(xs))


@pytest.mark.parametrize("xs", [[TOP, TOP], [TOP, -TOP], [-TOP] * 3, [TOP, 0.0, 5e-324], [TOP, math.nan, math.inf]])
def test_the_float_limit_never_overflows(xs):
    s = finite_summary(xs)
    assert all(math.isfinite(v) for v in (s.mean, s.sd, s.min, s.max))
    assert s.min <= s.mean <= s.max


def test_nan_inf_and_none_are_counted_out():
    assert finite_summary([None, math.nan, math.inf, -math.inf]) == (0, None, None, None, None)
    assert finite_summary([0.0, 0.0]) == (2, 0.0, 0.0, 0.0, 0.0)
    assert finite_summary([math.nan, 2.0]).mean == 2.0


def test_a_few_values_summarised_as_python_floats_are_the_numpy_summarys_numbers():
    """A version's few rewards are summarised as Python floats (numpy's calls cost more than the arithmetic):
    the very same numbers as numpy's path gives, for every size up to SMALL, values far apart, huge and tiny."""
    import random

    import numpy as np

    from rollout_trace.artifact import numbers

    rng = random.Random(7)
    pools = [lambda: rng.random(), lambda: rng.uniform(-1e6, 1e6), lambda: rng.choice([TOP, -TOP, 5e-324, 0.0, 1.0]),
             lambda: rng.choice([0.1, 0.2, 0.3]) * 10 ** rng.randint(-300, 300), lambda: float(rng.randint(0, 1))]
    for size in range(1, numbers.SMALL + 1):
        for pool in pools:
            xs = [pool() for _ in range(size)]
            arr = np.array(xs)
            python, numpy = numbers.finite_summary(arr), numbers._summary(arr, float(arr.min()), float(arr.max()))
            assert python == numpy, (xs, python, numpy)
            assert numbers.finite_summary(xs) == python
    big = np.array([rng.random() for _ in range(numbers.SMALL * 3)])
    assert numbers.finite_summary(big) == numbers.finite_summary(big.tolist())
    assert numbers.finite_summary(np.array([math.nan] * 40 + [1.0, 3.0])) == (2, 2.0, 1.0, 1.0, 3.0)
