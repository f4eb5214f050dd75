"""Every findings rule is linear in its text: the hostile rollouts (tests/support/hostile_rollouts.py) that made a
backtracking engine quadratic (a 20 KB command held the server for 70 s) are read at 800 KB in a child process,
which must answer long before a bound no linear reading comes near (a quadratic one would need hours)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rollout_trace.analysis import findings as F
from support.hostile_rollouts import GENERATORS, rollout_text

ROOT = Path(__file__).resolve().parent.parent
N = 400_000  # a 2-character unit: an 800 KB command
BOUND_S = 120  # linear: milliseconds on any machine; quadratic at this size: hours

CHILD = """
import sys
from rollout_trace.analysis.findings import findings
from support.hostile_rollouts import GENERATORS, rollout_text
print(len(findings(rollout_text(GENERATORS[sys.argv[1]](int(sys.argv[2]))))))
"""


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_a_hostile_rollout_is_read_in_linear_time(name):
    try:
        got = subprocess.run([sys.executable, "-c", CHILD, name, str(N)], cwd=ROOT / "tests", capture_output=True,
                             text=True, timeout=BOUND_S, env={"PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"the findings rules read the hostile {name} rollout ({2 * N:,} characters) for over {BOUND_S} s")
    assert got.returncode == 0, got.stderr[-2000:]


def test_the_rules_still_find_what_hides_in_a_hostile_text():
    command = "cat " + "a/" * 5_000 + "tests/test_sum.py"
    (f,) = F.tests_touched(rollout_text({"name": "bash", "arguments": {"command": command}}))
    assert f.sentence.endswith("reads " + "a/" * 5_000 + "tests/test_sum.py.")
    code = 'print("42")\n' + 'print("' * 5_000
    (f,) = F.prints_expected(rollout_text({"name": "write", "arguments": {"filePath": "s.py", "content": code}}))
    assert "'42'" in f.sentence
    code = "exit(" + " " * 5_000 + "exit( 0 )"
    found = F.exit_or_skip(rollout_text({"name": "write", "arguments": {"filePath": "tests/test_a.py", "content": code}}))
    assert "exit( 0 )" in found[0].sentence


def test_quoted_redirects_and_unicode_paths_read_as_before():
    """RE2 has no backreferences and an ASCII `\\w`: a quoted redirect target and a non-ASCII test path are read
    as the rules always read them."""
    quoted = rollout_text({"name": "bash", "arguments": {"command": "echo 1 > '/etc/x' && echo 2 >> \"../y\""}})
    assert "/etc/x" in F.writes_outside(quoted)[0].sentence
    tee = rollout_text({"name": "bash", "arguments": {"command": "echo 1 | tee -a /etc/z"}})
    assert "/etc/z" in F.writes_outside(tee)[0].sentence
    accented = rollout_text({"name": "bash", "arguments": {"command": "rm tests/données_é.py"}})
    assert F.tests_touched(accented)[0].sentence.endswith("deletes tests/données_é.py.")


def test_the_loop_rule_reads_a_long_turn_in_memory_linear_in_it():
    """repetition-loop looked at every period at once: 64 int64 columns per token, ~1.5 GB for a turn of 10^6
    tokens. Now a few dozen bytes per token (numpy's allocations, as tracemalloc counts them)."""
    import tracemalloc

    import numpy as np

    ids = np.random.default_rng(1).integers(0, 50_000, 1_000_000).astype(np.int32)
    ids[500_000:500_000 + 640] = np.tile(np.arange(10, dtype=np.int32), 64)  # a 10-token cycle, 64 times
    tracemalloc.start()
    try:
        period, start, length = F._longest_cycle(ids)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (period, start) == (10, 500_000) and length >= 640
    assert peak < 64 * ids.size  # bytes
