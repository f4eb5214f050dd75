"""The run page's chart reduction (viewer/assets/src/run_charts.js), run in node: a chart never draws more points
than its pixels, and the reduction keeps every bin's extremes (a one-version spike survives)."""

from __future__ import annotations

import json
import shutil
import subprocess

from conftest import requires
from viewer import assets

NODE = shutil.which("node")
needs_node = requires(NODE is not None, "node is not installed")


def _run(expr: str):
    """`expr` evaluated in node beside the chart module (the source, an ES module: src/package.json says so)."""
    module = (assets.HERE / "src" / "run_charts.js").as_uri()
    code = f"import * as RunCharts from {json.dumps(module)};\nprocess.stdout.write(JSON.stringify({expr}));"
    got = subprocess.run([NODE or "node", "--input-type=module", "-e", code], capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


@needs_node
def test_lines_are_reduced_to_two_points_per_bin_keeping_extremes():
    got = _run("""(() => {
      const xs = Array.from({length: 2000}, (_, i) => i + 1);
      const y = xs.map((x) => (x === 1234 ? 50 : x % 7));  // one spike
      const lo = xs.map((x) => -x), hi = xs.map((x) => (x === 777 ? 1e308 : x));
      const r = RunCharts.reduceLines(xs, [y, lo, hi], ["line", "lo", "hi"], 300);
      const few = RunCharts.reduceLines([1, 2, 3], [[1, null, 3]], ["line"], 300);
      return {n: r.xs.length, max: Math.max(...r.ys[0]), min: Math.min(...r.ys[1]), top: Math.max(...r.ys[2]),
              sorted: r.xs.every((x, i) => i === 0 || x >= r.xs[i - 1]), first: r.xs[0], last: r.xs[r.xs.length - 1],
              few, nan: RunCharts.reduceLines(xs, [xs.map(() => NaN)], ["line"], 10).ys[0].every((v) => v === null)};
    })()""")
    assert got["n"] <= 600 and got["max"] == 50 and got["min"] == -2000 and got["top"] == 1e308
    assert got["sorted"] and got["first"] == 1 and got["last"] == 2000
    assert got["few"] == {"xs": [1, 2, 3], "ys": [[1, None, 3]]}  # fewer points than pixels: as they are
    assert got["nan"]


@needs_node
def test_a_bar_is_its_versions_mean_and_says_how_many_versions_it_holds():
    """A bar of several versions is their mean, so it reads per version at any width (a sum grew with the width's
    versions per bar: 15k at 1024 px, 6,000 at 1440 for the same run); the last bar's mean is of its own few."""
    got = _run("""(() => {
      const xs = Array.from({length: 2000}, (_, i) => i + 1);
      const r = RunCharts.binBars(xs, [xs.map(() => 400), xs.map((x) => x)], 150);
      return {n: r.xs.length, per: r.per, flat: r.ys[0], first: r.ys[1][0], last: r.ys[1][r.ys[1].length - 1], x0: r.xs[0],
              small: RunCharts.binBars([1, 2], [[3, 4]], 150)};
    })()""")
    assert got["n"] <= 150 and got["per"] == 14 and got["x0"] == 1
    assert set(got["flat"]) == {400}  # as many tokens per version as each version has, whatever the bin
    assert got["first"] == sum(range(1, 15)) / 14 and got["last"] == sum(range(1989, 2001)) / 12  # 2000 = 142·14 + 12
    assert got["small"] == {"xs": [1, 2], "ys": [[3, 4]], "per": 1}


@needs_node
def test_the_value_axis_never_overflows_at_the_float_limit():
    got = _run("[RunCharts.padded(-1.7976931348623157e308, 1.7976931348623157e308), RunCharts.padded(0, 1), RunCharts.padded(2, 2)]")
    assert all(abs(v) <= 1.7976931348623157e308 for v in got[0])
    assert got[1][0] < 0 and got[1][1] > 1  # no line on the frame
    assert got[2][0] < 2 < got[2][1]


@needs_node
def test_smoothing_is_the_debiased_ema_of_tensorboard_and_wandb_and_keeps_gaps():
    got = _run("[RunCharts.ema([1, 1, 1], 0.9), RunCharts.ema([0, 10, null, 10], 0.5), RunCharts.ema([3, null, 5], 0)]")
    assert all(abs(v - 1) < 1e-12 for v in got[0])  # debiased: a constant curve stays where it is
    # last = 0.5·last + 0.5·y over the finite points only, divided by 1 − 0.5^n: 0, 5/0.75, gap, 7.5/0.875
    assert got[1][0] == 0 and abs(got[1][1] - 5 / 0.75) < 1e-12 and got[1][2] is None and abs(got[1][3] - 7.5 / 0.875) < 1e-12
    assert got[2] == [3, None, 5]  # weight 0: the raw curve


@needs_node
def test_a_band_without_width_is_not_filled_even_when_reduced():
    """A version whose groups all have zero spread has lo = hi: no band there. Reduced to fewer bins than points,
    the bins would otherwise be filled from their lowest to their highest mean: a band the data do not have."""
    got = _run("""(() => {
      const xs = Array.from({length: 300}, (_, i) => i + 1);
      const mean = xs.map((x) => [1, 0, 0.5, -0.1][x % 4]);
      const [lo, hi] = RunCharts.bandEdges(mean, mean);
      const r = RunCharts.reduceLines(xs, [lo, mean, hi], ["lo", "line", "hi"], 20);
      const [lo2, hi2] = RunCharts.bandEdges([0, 1, null], [0, 2, 3]);
      return {lo: r.ys[0], hi: r.ys[2], line: r.ys[1], lo2, hi2};
    })()""")
    assert all(v is None for v in got["lo"] + got["hi"])  # nothing to fill
    assert min(got["line"]) == -0.1 and max(got["line"]) == 1  # the line keeps every bin's extremes
    assert got["lo2"] == [None, 1, None] and got["hi2"] == [None, 2, None]
