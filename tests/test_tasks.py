"""Task building: cleaning, selection, ids, held-out caps, malformed rows, and --example scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capture.tasks import (
    MIN_TESTS,
    N_TESTS_EVAL,
    TaskError,
    build_tasks,
    clean_problem,
    load_rows,
    select_task,
    tasks_from_example,
)
from rollout_trace.recipe.tasks import task_id


def rows(n: int, tests: int = 4) -> list[dict]:
    return [{"problem": f"Solve the following coding problem using the programming language python:\nProblem {i}\n"
                        "Now solve the problem and return the code.",
             "tests": json.dumps([{"type": "stdin_stdout", "input": f"{k}\n", "output": f"{k}\n"} for k in range(tests)])}
            for i in range(n)]


def test_clean_problem_strips_boilerplate():
    raw = ("Solve the following coding problem using the programming language python:\n\nAdd two numbers.\n\n"
           "The input will be stdin and you should print your solution to stdout\n\nNow solve the problem")
    assert clean_problem(raw) == "Add two numbers."


def test_selection_is_deterministic_and_skips_short_rows():
    data = rows(10) + rows(5, tests=MIN_TESTS - 1)
    a, b = build_tasks(data, 6, seed=3), build_tasks(data, 6, seed=3)
    assert [t.task_id for t in a] == [t.task_id for t in b] and len(a) == 6
    assert [t.task_id for t in build_tasks(data, 6, seed=4)] != [t.task_id for t in a]
    assert all(len(t.held_out) >= MIN_TESTS for t in a)
    t = a[0]
    assert t.task_id == task_id(t.instruction) and "Problem" in t.instruction and "Solve the following" not in t.instruction
    assert t.prompt == [{"role": "user", "content": t.instruction}]


def test_held_out_capped_and_function_tests_skipped():
    data = rows(1, tests=20)
    extra = json.loads(data[0]["tests"]) + [{"type": "function_call", "input": "f()", "output": "1"}]
    data[0]["tests"] = json.dumps(extra)
    [t] = build_tasks(data, 1, 0)
    assert len(t.held_out) == N_TESTS_EVAL


def test_index_out_of_range_says_the_range():
    with pytest.raises(TaskError, match=r"--task-index 7 is outside 0\.\.1"):
        select_task(build_tasks(rows(2), 2, 0), 7)


@pytest.mark.parametrize("row,match", [
    ({"problem": "x", "tests": "[not json"}, "row 0: field `tests` is not valid JSON"),
    ({"problem": "x", "tests": json.dumps({"a": 1})}, "row 0: field `tests` should be a list"),
    ({"problem": None, "tests": "[]"}, "row 0: field `problem` should be the statement text"),
    ({"problem": "x", "tests": json.dumps([{"type": "stdin_stdout", "input": 1, "output": "1"}])},
     r"row 0: tests\[0\] needs string `input` and `output`"),
])
def test_malformed_rows_are_named(row, match):
    with pytest.raises(TaskError, match=match):
        build_tasks([row], 1, 0)


def test_local_task_files(task_file, tmp_path):
    data = load_rows(str(task_file))
    [t] = build_tasks(data, 1, 0)
    assert len(t.held_out) == 3  # the function-call test is not a stdin test
    assert "Input" in t.visible_tests and "1 2 2 3 3" in t.visible_tests
    (tmp_path / "bad.jsonl").write_text(json.dumps({"statement": "x"}))
    with pytest.raises(TaskError, match="no column"):
        load_rows(str(tmp_path / "bad.jsonl"))
    with pytest.raises(TaskError, match="--dataset names .*missing.parquet, which is not a file"):
        load_rows(str(tmp_path / "missing.parquet"))


def test_example_script_decides_the_tasks(tmp_path):
    script = tmp_path / "opencode_hf_sandbox.py"
    script.write_text(
        "import hashlib\nN_TESTS_EVAL = 2\n"
        "def _instruction_id(text):\n    return 'id-' + hashlib.sha1(text.encode()).hexdigest()[:8]\n"
        "def build_dataset(n_prompts, seed):\n"
        "    rows = [{'prompt': [{'role': 'user', 'content': f'task {i} seed {seed}'}]} for i in range(n_prompts)]\n"
        "    tests = {_instruction_id(r['prompt'][-1]['content']): [{'input': '1', 'output': '1'}] * 3 for r in rows}\n"
        "    return rows, tests\n")
    tasks = tasks_from_example(script, 3, 5)
    assert [t.instruction for t in tasks] == ["task 0 seed 5", "task 1 seed 5", "task 2 seed 5"]
    assert tasks[1].task_id.startswith("id-") and tasks[1].n_tests_eval_cap == 2 and len(tasks[1].held_out) == 3
    broken = tmp_path / "broken.py"
    broken.write_text("def build_dataset(n_prompts, seed):\n    raise RuntimeError('no data')\n")
    with pytest.raises(TaskError, match="build_dataset failed: RuntimeError: no data"):
        tasks_from_example(broken, 1, 0)


def test_the_visible_tests_are_the_statements_examples_not_its_format_headings():
    """A statement with "Input" and "Output" sections before its example: the visible tests start at the example
    (the bundled scripted rollout's statement); one without an example heading keeps the seed's lines."""
    from rollout_trace.recipe.tasks import visible_tests_from

    statement = ("You are given n integers. Print how many distinct values there are.\n\nInput\nThe first line "
                 "contains n (0 <= n <= 100000). The second line contains n integers separated by spaces.\n\nOutput\n"
                 "Print one integer: the number of distinct values.\n\nExample\nInput\n5\n1 2 2 3 3\nOutput\n3")
    assert visible_tests_from(statement) == "Example\nInput\n5\n1 2 2 3 3\nOutput\n3"
    assert visible_tests_from("Sum two numbers.\nInput\n1 2\nOutput\n3") == "Input\n1 2\nOutput\n3"
    assert visible_tests_from("Examples\n\nInput\n2\nOutput\n4\n\nInput\n3\nOutput\n9") == \
        "Examples\nInput\n2\nOutput\n4\nInput\n3\nOutput\n9"
    assert visible_tests_from("no examples here") == "no examples here"
    bundled = (Path(__file__).parent.parent / "examples" / "scripted-smollm2")
    instruction = json.loads((bundled / "task.json").read_text())["instruction"]
    assert (bundled / "visible_tests.txt").read_text() == visible_tests_from(instruction)  # as make_scripted writes it
