"""The held-out verifier's rules: run `solution.py` on each test, compare stdout, score = fraction passed.

Outputs match when they are equal after trimming trailing spaces and blank lines, or when their
whitespace-separated tokens are equal (shared/reference/training-example.md). Each run gets a time
limit, a memory limit and an output cap, so a solution that hangs or floods stdout fails its test
instead of stalling the capture.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

from artifact import TestCase, TestResult

TIME_LIMIT_S = 6.0
MEMORY_LIMIT_BYTES = 1024**3
OUTPUT_CAP_BYTES = 1024**2


def outputs_match(expected: str, got: str) -> bool:
    def trim(s: str) -> str:
        return "\n".join(line.rstrip() for line in s.strip("\n").splitlines()).rstrip()

    return trim(expected) == trim(got) or expected.split() == got.split()


def _limit_memory() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def run_test(solution: Path, test: TestCase, index: int, time_limit: float = TIME_LIMIT_S) -> TestResult:
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, solution.name], cwd=solution.parent, input=test.input.encode(),
                              capture_output=True, timeout=time_limit, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        return TestResult(index, False, "timeout", round(time.monotonic() - start, 3), f"no answer within {time_limit:g} s")
    took = round(time.monotonic() - start, 3)
    out = proc.stdout[:OUTPUT_CAP_BYTES].decode("utf-8", "replace")
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return TestResult(index, False, "error", took, (err[-1] if err else f"exit status {proc.returncode}")[:500])
    if len(proc.stdout) > OUTPUT_CAP_BYTES:
        return TestResult(index, False, "fail", took, f"printed more than {OUTPUT_CAP_BYTES} bytes")
    if outputs_match(test.output, out):
        return TestResult(index, True, "pass", took)
    return TestResult(index, False, "fail", took, f"printed {out[:200]!r}")


def verify(solution: Path, tests: list[TestCase]) -> tuple[float, list[TestResult]]:
    """Score (fraction passed; 0 without solution.py) and one result per test."""
    if not solution.is_file():
        return 0.0, [TestResult(i, False, "not-run", None, "no solution.py") for i in range(len(tests))]
    results = [run_test(solution, t, i) for i, t in enumerate(tests)]
    return (sum(r.passed for r in results) / len(results) if results else 0.0), results
