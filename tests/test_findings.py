"""Every findings rule (rollout_trace/analysis/findings.py) on small hand-built rollouts: one that should be
flagged and one that should not, and the link each finding carries (turn + token range)."""

from __future__ import annotations

import numpy as np
import pytest

from rollout_trace.analysis import findings as F
from rollout_trace.analysis.texts import Piece, RolloutText, TurnText
from rollout_trace.analysis.tools import ToolCall


def call(name: str, turn: int = 0, ok: bool = True, result: str | None = "ok", failed: bool = False, **args) -> ToolCall:
    return ToolCall(turn, f"c{turn}", name, args if ok else "{not json", ok, result, failed)


def turn(i: int = 0, text: str = "some answer", calls: tuple = (), ids=None, n_prompt: int = 10, **kw) -> TurnText:
    """A turn whose generated text is one character per token (so char k is token n_prompt + k)."""
    ids = np.arange(len(text), dtype=np.int32) if ids is None else np.asarray(ids, dtype=np.int32)
    offsets = np.arange(len(ids), dtype=np.int64)
    return TurnText(index=i, n_prompt=n_prompt, output_ids=ids,
                    generated=Piece("generated", i, text, n_prompt, offsets),
                    context=Piece("tool-output", i, "", 0, np.zeros(0, np.int64)), calls=tuple(calls),
                    content=kw.pop("content", text), **kw)


def one(*turns: TurnText, **kw) -> RolloutText:
    return RolloutText(turns=tuple(turns), **kw)


def test_tests_touched_flags_deleting_and_rewriting_tests_not_running_them():
    deleted = one(turn(0, "bash rm", [call("bash", command="rm -rf tests/")]))
    (f,) = F.tests_touched(deleted)
    assert f.rule == "tests-touched" and "deletes" in f.sentence and f.turn == 0
    assert f.start == 10  # where "bash" starts in the generated text: token n_prompt + 0
    rewritten = one(turn(0, "write", [call("write", filePath="tests/test_sum.py", content="def test(): pass")]))
    assert "rewrites tests/test_sum.py" in F.tests_touched(rewritten)[0].sentence
    read = one(turn(0, "cat", [call("bash", command="cat visible_tests.txt")]))
    assert "reads visible_tests.txt" in F.tests_touched(read)[0].sentence
    ran = one(turn(0, "run", [call("bash", command="python -m pytest tests/test_sum.py")]))
    solution = one(turn(0, "w", [call("write", filePath="solution.py", content="print(1)")]))
    assert F.tests_touched(ran) == [] and F.tests_touched(solution) == []


def test_prints_expected_flags_a_hard_coded_answer_not_a_verdict_word():
    hard = one(turn(0, "w", [call("write", filePath="solution.py", content="print('42 17')\n")]),
               expected_outputs=("42 17\n", "3\n"))
    (f,) = F.prints_expected(hard)
    assert "'42 17'" in f.sentence
    computed = one(turn(0, "w", [call("write", filePath="solution.py", content="print(sum(map(int, input().split())))")]),
                   expected_outputs=("42 17\n",))
    verdict = one(turn(0, "w", [call("write", filePath="s.py", content="print('YES' if ok else 'NO')")]),
                  expected_outputs=("YES\n",))
    assert F.prints_expected(computed) == [] and F.prints_expected(verdict) == []


def test_exit_or_skip_flags_skips_and_swallowed_test_failures():
    swallowed = one(turn(0, "b", [call("bash", command="pytest -q || true")]))
    assert "|| true" in F.exit_or_skip(swallowed)[0].sentence
    skip = one(turn(0, "w", [call("write", filePath="tests/test_a.py", content="import pytest\npytest.skip('x')")]))
    exit_in_test = one(turn(0, "e", [call("edit", filePath="test_main.py", newString="import sys\nsys.exit(0)\n")]))
    assert len(F.exit_or_skip(skip)) == 1 and "test file test_main.py" in F.exit_or_skip(exit_in_test)[0].sentence
    plain = one(turn(0, "b", [call("bash", command="python solution.py < in.txt || echo failed")]))
    solution_exit = one(turn(0, "w", [call("write", filePath="solution.py", content="import sys\nsys.exit(0)")]))
    assert F.exit_or_skip(plain) == [] and F.exit_or_skip(solution_exit) == []


def test_writes_outside_the_working_directory():
    wd = "/tmp/sandbox/workdir"
    up = one(turn(0, "w", [call("write", filePath="../grader.py", content="x")]), workdir=wd)
    absolute = one(turn(0, "b", [call("bash", command="echo 1 > /etc/passwd")]), workdir=wd)
    assert "../grader.py" in F.writes_outside(up)[0].sentence and "/etc/passwd" in F.writes_outside(absolute)[0].sentence
    inside = one(turn(0, "w", [call("write", filePath=f"{wd}/solution.py", content="x"),
                               call("bash", command="python s.py > out.txt 2>/dev/null")]), workdir=wd)
    assert F.writes_outside(inside) == []


def test_repetition_loop_flags_a_short_cycle_repeated_not_varied_text():
    loop = [1, 2, 3, 4] * 30
    (f,) = F.repetition_loop(one(turn(0, "x" * 130, ids=[9] * 10 + loop, n_prompt=5)))
    assert f.start == 5 + 10 and f.end == 5 + 10 + 120 and "4-token cycle 30 times" in f.sentence
    rng = np.random.default_rng(0)
    assert F.repetition_loop(one(turn(0, "x" * 300, ids=rng.integers(0, 5000, 300)))) == []


def test_cut_at_limit_by_finish_reason_or_token_count():
    cut = one(turn(0, "x" * 40, finish_reason="length"))
    (f,) = F.cut_at_limit(cut)
    assert f.end == 10 + 40 and f.start == 10 + 40 - 16
    assert len(F.cut_at_limit(one(turn(0, "x" * 8, finish_reason="stop"), max_output_tokens=8))) == 1
    assert F.cut_at_limit(one(turn(0, "x" * 7, finish_reason="stop"), max_output_tokens=8)) == []


def test_empty_answer_flags_no_text_and_no_call():
    assert len(F.empty_answer(one(turn(0, "  \n", content="")))) == 1
    assert F.empty_answer(one(turn(0, "", calls=[call("bash", command="ls")], content=""))) == []
    assert F.empty_answer(one(turn(0, "done"))) == []


def test_unparsed_tool_call_flags_bad_json_and_unparsed_markup():
    bad = one(turn(0, "bash {", [call("bash", ok=False)]))
    assert "not JSON" in F.unparsed_tool_call(bad)[0].sentence
    text = 'I will run it <tool_call>{"name": "bash"'
    (f,) = F.unparsed_tool_call(one(turn(0, text, content=text)))
    assert f.start == 10 + text.index("<tool_call>") and f.end == f.start + len("<tool_call>")
    assert F.unparsed_tool_call(one(turn(0, "bash", [call("bash", command="ls")]))) == []


def test_tool_error_uses_the_failure_flag_and_quotes_the_first_line():
    failed = one(turn(0, "bash", [call("bash", command="python s.py", result="\nTraceback (most recent call last):\n",
                                       failed=True)]))
    assert "failed: Traceback" in F.tool_error(failed)[0].sentence
    assert F.tool_error(one(turn(0, "bash", [call("bash", command="ls", result="a.py")]))) == []


def test_trainer_side_rules_need_a_rescore():
    lr = np.zeros(20)
    lr[7] = -2.5
    (f,) = F.log_ratio_outlier(one(turn(0, "x" * 20, log_ratio=lr, rescored_by="p")))
    assert (f.start, f.end) == (17, 18) and "2.50" in f.sentence
    assert F.log_ratio_outlier(one(turn(0, "x" * 20, log_ratio=np.full(20, 0.1)))) == []
    assert F.log_ratio_outlier(one(turn(0, "x" * 20))) == [] and F.clipped_share(one(turn(0, "x" * 20))) == []
    clipped = np.zeros(20)
    clipped[:5] = 0.5  # ratio 1.65: 25% outside [0.8, 1.2]
    assert "25%" in F.clipped_share(one(turn(0, "x" * 20, log_ratio=clipped)))[0].sentence
    clipped[:1] = 0.0
    clipped[1:] = 0.0
    assert F.clipped_share(one(turn(0, "x" * 20, log_ratio=clipped))) == []


def test_drift_fork_links_to_the_first_token_that_differs():
    (f,) = F.drift_fork(one(turn(0), turn(1, shared=31, continuous=False)))
    assert (f.turn, f.start, f.end) == (1, 31, 32)
    assert F.drift_fork(one(turn(0), turn(1, shared=40))) == []


@pytest.mark.parametrize("name", sorted(F.RULES))
def test_every_rule_is_quiet_on_a_plain_good_rollout(name):
    good = one(turn(0, "I'll write it", [call("write", filePath="solution.py", content="print(len(set(input().split())))")]),
               turn(1, "bash", [call("bash", command="printf '3\\n1 2 2\\n' | python solution.py", result="2\n")],
                    shared=30),
               turn(2, "Done."), expected_outputs=("2\n",), workdir="/w")
    assert F.RULES[name](good) == []
