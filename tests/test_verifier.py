"""The held-out verifier: output comparison rules and the limits that keep a bad solution from stalling."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT
from rollout_trace.recipe import verifier
from rollout_trace.recipe.verifier import outputs_match, run_test, run_tests, score


def test_outputs_match_rules():
    assert outputs_match("3\n", "3")
    assert outputs_match("1 2\n3\n", "1 2   \n3\n\n")
    assert outputs_match("1 2 3", "1\n2\n3")  # equal token lists
    assert not outputs_match("3", "4")


def _solution(tmp_path, code: str):
    p = tmp_path / "solution.py"
    p.write_text(code)
    return p


def case(i: str, o: str) -> dict:
    return {"input": i, "output": o}


def test_pass_fail_error(tmp_path):
    sol = _solution(tmp_path, "a, b = map(int, input().split())\nprint(a + b)\n")
    results = run_tests(sol, [case("1 2\n", "3\n"), case("2 2\n", "5\n"), case("x\n", "1\n")])
    assert score(results) == 1 / 3
    assert [r["status"] for r in results] == ["pass", "fail", "error"]
    assert "ValueError" in results[2]["detail"]


def test_hanging_solution_times_out(tmp_path):
    sol = _solution(tmp_path, "while True: pass\n")
    r = run_test(sol, case("", "1"), 0, time_limit=0.5)
    assert r["status"] == "timeout" and not r["passed"]


def test_flooding_solution_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(verifier, "OUTPUT_CAP_BYTES", 1000)
    sol = _solution(tmp_path, "print('x' * 5000)\n")
    r = run_test(sol, case("", "x"), 0)
    assert r["status"] == "fail" and "more than 1000 bytes" in r["detail"]


def test_memory_hog_fails(tmp_path):
    sol = _solution(tmp_path, "x = bytearray(4 * 1024**3)\nprint(1)\n")
    r = run_test(sol, case("", "1"), 0)
    assert r["status"] == "error" and "MemoryError" in r["detail"]


def test_no_solution_scores_zero(tmp_path):
    results = run_tests(tmp_path / "solution.py", [case("", "1")])
    assert score(results) == 0.0 and results[0]["status"] == "not-run"


def test_runs_standalone_as_a_script(tmp_path):
    """Capture uploads the file alone into the sandbox: it must run without this project."""
    _solution(tmp_path, "print(input()[::-1])\n")
    (tmp_path / "tests.json").write_text(json.dumps([case("abc\n", "cba\n")]))
    shutil_copy = tmp_path / "verifier.py"
    shutil_copy.write_text((ROOT / "rollout_trace" / "recipe" / "verifier.py").read_text())
    out = subprocess.run([sys.executable, "-I", str(shutil_copy), "tests.json", "solution.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout)[0]["status"] == "pass", out.stderr
