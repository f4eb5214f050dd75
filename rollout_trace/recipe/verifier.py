"""The held-out verifier's rules: run `solution.py` on each test, compare stdout, score = fraction passed.

Outputs match when they are equal after trimming trailing spaces and blank lines, or when their
whitespace-separated tokens are equal (docs/design.md). Each run gets a time
limit, a memory limit and an output cap, so a solution that hangs or floods stdout fails its test
instead of stalling the capture.

Standard library only: capture uploads this file into the sandbox and runs it there
(`python verifier.py tests.json solution.py` prints one JSON result per test), so the agent's code
never runs on the capturing machine.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

TIME_LIMIT_S = 6.0
MEMORY_LIMIT_BYTES = 1024**3
OUTPUT_CAP_BYTES = 1024**2


def outputs_match(expected: str, got: str) -> bool:
    def trim(s: str) -> str:
        return "\n".join(line.rstrip() for line in s.strip("\n").splitlines()).rstrip()

    return trim(expected) == trim(got) or expected.split() == got.split()


def _limit_memory() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def run_test(solution: Path, test: dict, index: int, time_limit: float = TIME_LIMIT_S) -> dict:
    """One test: {index, passed, status (pass/fail/timeout/error), time_s, detail}."""
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, solution.name], cwd=solution.parent, input=test["input"].encode(),
                              capture_output=True, timeout=time_limit, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        return {"index": index, "passed": False, "status": "timeout", "time_s": round(time.monotonic() - start, 3),
                "detail": f"no answer within {time_limit:g} s"}
    took = round(time.monotonic() - start, 3)
    out = proc.stdout[:OUTPUT_CAP_BYTES].decode("utf-8", "replace")
    result = {"index": index, "passed": False, "status": "fail", "time_s": took, "detail": ""}
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        result.update(status="error", detail=(err[-1] if err else f"exit status {proc.returncode}")[:500])
    elif len(proc.stdout) > OUTPUT_CAP_BYTES:
        result.update(detail=f"printed more than {OUTPUT_CAP_BYTES} bytes")
    elif outputs_match(test["output"], out):
        result.update(passed=True, status="pass")
    else:
        result.update(detail=f"printed {out[:200]!r}")
    return result


def run_tests(solution: Path, tests: list[dict], time_limit: float = TIME_LIMIT_S) -> list[dict]:
    if not solution.is_file():
        return [{"index": i, "passed": False, "status": "not-run", "time_s": None, "detail": "no solution.py"}
                for i in range(len(tests))]
    return [run_test(solution, t, i, time_limit) for i, t in enumerate(tests)]


def score(results: list[dict]) -> float:
    """Fraction passed; 0 when there is nothing to pass."""
    return sum(r["passed"] for r in results) / len(results) if results else 0.0


if __name__ == "__main__":
    tests_path, solution_path = sys.argv[1], sys.argv[2]
    print(json.dumps(run_tests(Path(solution_path).resolve(), json.loads(Path(tests_path).read_text()))))
