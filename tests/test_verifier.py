"""The held-out verifier: output comparison rules and the limits that keep a bad solution from stalling."""

from __future__ import annotations

from artifact import TestCase as Case
from recipe import verifier
from recipe.verifier import outputs_match, run_test, verify


def test_outputs_match_rules():
    assert outputs_match("3\n", "3")
    assert outputs_match("1 2\n3\n", "1 2   \n3\n\n")
    assert outputs_match("1 2 3", "1\n2\n3")  # equal token lists
    assert not outputs_match("3", "4")


def _solution(tmp_path, code: str):
    p = tmp_path / "solution.py"
    p.write_text(code)
    return p


def test_pass_fail_error(tmp_path):
    sol = _solution(tmp_path, "a, b = map(int, input().split())\nprint(a + b)\n")
    score, results = verify(sol, [Case("1 2\n", "3\n"), Case("2 2\n", "5\n"), Case("x\n", "1\n")])
    assert score == 1 / 3
    assert [r.status for r in results] == ["pass", "fail", "error"]
    assert "ValueError" in results[2].detail


def test_hanging_solution_times_out(tmp_path):
    sol = _solution(tmp_path, "while True: pass\n")
    r = run_test(sol, Case("", "1"), 0, time_limit=0.5)
    assert r.status == "timeout" and not r.passed


def test_flooding_solution_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(verifier, "OUTPUT_CAP_BYTES", 1000)
    sol = _solution(tmp_path, "print('x' * 5000)\n")
    r = run_test(sol, Case("", "x"), 0)
    assert r.status == "fail" and "more than 1000 bytes" in r.detail


def test_no_solution_scores_zero(tmp_path):
    score, results = verify(tmp_path / "solution.py", [Case("", "1")])
    assert score == 0.0 and results[0].status == "not-run"
