"""Which task a capture runs: the training example's task list, built deterministically.

By default the list is built here with the example's rules (shared/reference/training-example.md):
rows of the DeepCoder set (or a local JSONL/Parquet file of rows with `problem` and `tests`),
shuffled with `random.Random(seed)`, keeping rows with at least 3 stdin/stdout tests, the first
`n_prompts` of them; held-out tests capped at 12. With `--example PATH` the user's copy of TRL's
training script is loaded and its `build_dataset` decides instead, exactly as the seed does, so a
task index means what it meant in training.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artifact import TestCase
from recipe.tasks import instruction_for, task_id, visible_tests_from

DEFAULT_DATASET = "agentica-org/DeepCoder-Preview-Dataset"
DEFAULT_CONFIG = "primeintellect"
N_TESTS_EVAL = 12
MIN_TESTS = 3
_PREFIX = re.compile(r"^\s*Solve the following coding problem using the programming language python:\s*", re.I)
_SUFFIX = re.compile(r"\n\s*(The input will be|Now solve the problem|Now solve this problem).*\Z", re.S | re.I)


class TaskError(ValueError):
    """The task source cannot give the requested task; the message says which row or field and why."""


@dataclass(frozen=True)
class TaskSpec:
    index: int
    task_id: str
    instruction: str
    prompt: list[dict]  # chat messages the agent starts from
    held_out: list[TestCase]
    visible_tests: str
    n_tests_eval_cap: int = N_TESTS_EVAL


def clean_problem(problem: str) -> str:
    """Strip the dataset's boilerplate: the leading 'Solve the following…' line and the trailing
    'The input will be…' / 'Now solve the problem…' sections."""
    return _SUFFIX.sub("", _PREFIX.sub("", problem)).strip()


def stdin_tests(raw: Any, row: int) -> list[TestCase]:
    """The stdin/stdout tests of one row (function-call tests are skipped)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as e:
            raise TaskError(f"row {row}: field `tests` is not valid JSON ({e.msg} at character {e.pos})") from None
    if not isinstance(raw, list):
        raise TaskError(f"row {row}: field `tests` should be a list of tests, found {type(raw).__name__}")
    out = []
    for k, t in enumerate(raw):
        if not isinstance(t, dict):
            raise TaskError(f"row {row}: tests[{k}] should be an object, found {type(t).__name__}")
        if t.get("type", "stdin_stdout") != "stdin_stdout":
            continue
        if not isinstance(t.get("input"), str) or not isinstance(t.get("output"), str):
            raise TaskError(f"row {row}: tests[{k}] needs string `input` and `output`")
        out.append(TestCase(t["input"], t["output"]))
    return out


def load_rows(dataset: str, config: str | None = DEFAULT_CONFIG) -> list[dict]:
    """Rows from a local .jsonl/.json/.parquet file or a Hub dataset (through `datasets`, cached)."""
    import datasets

    path = Path(dataset).expanduser()
    if path.suffix in (".jsonl", ".json", ".parquet"):
        if not path.is_file():
            raise TaskError(f"task file {path} does not exist")
        kind = "parquet" if path.suffix == ".parquet" else "json"
        try:
            ds = datasets.load_dataset(kind, data_files=str(path), split="train")
        except Exception as e:
            raise TaskError(f"cannot read task file {path}: {type(e).__name__}: {str(e)[:300]}") from None
    else:
        try:
            ds = datasets.load_dataset(dataset, config, split="train")
        except Exception as e:
            raise TaskError(f"cannot load dataset {dataset} ({config}): {type(e).__name__}: {str(e)[:300]}. "
                            "Without network, pass a local --dataset file.") from None
    missing = {"problem", "tests"} - set(ds.column_names)
    if missing:
        raise TaskError(f"dataset {dataset} has no column(s) {', '.join(sorted(missing))}; "
                        "rows need `problem` and `tests`")
    return list(ds)


def build_tasks(rows: list[dict], n_prompts: int, seed: int) -> list[TaskSpec]:
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    tasks: list[TaskSpec] = []
    for row in order:
        if len(tasks) == n_prompts:
            break
        problem = rows[row].get("problem")
        if not isinstance(problem, str) or not problem.strip():
            raise TaskError(f"row {row}: field `problem` should be the statement text, found {problem!r:.60}")
        tests = stdin_tests(rows[row].get("tests"), row)
        if len(tests) < MIN_TESTS:
            continue
        instruction = instruction_for(clean_problem(problem))
        tasks.append(TaskSpec(len(tasks), task_id(instruction), instruction, [{"role": "user", "content": instruction}],
                              tests[:N_TESTS_EVAL], visible_tests_from(instruction)))
    return tasks


def tasks_from_example(path: Path, n_prompts: int, seed: int) -> list[TaskSpec]:
    """The training script's own `build_dataset(n_prompts, seed)` decides the tasks (as the seed does)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise TaskError(f"--example {path} does not exist")
    spec = importlib.util.spec_from_file_location("_training_example", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
        rows, tests_by_id = module.build_dataset(n_prompts=n_prompts, seed=seed)
    except Exception as e:
        raise TaskError(f"--example {path}: build_dataset failed: {type(e).__name__}: {str(e)[:300]}") from None
    finally:
        sys.path.remove(str(path.parent))
    ident = getattr(module, "_instruction_id", task_id)
    cap = getattr(module, "N_TESTS_EVAL", N_TESTS_EVAL)
    tasks = []
    for i, row in enumerate(rows):
        prompt = row["prompt"]
        instruction = prompt[-1]["content"]
        tid = ident(instruction)
        held = [TestCase(str(t["input"]), str(t["output"])) for t in tests_by_id[tid]]
        tasks.append(TaskSpec(i, tid, instruction, list(prompt), held, visible_tests_from(instruction), cap))
    return tasks


def select_task(tasks: list[TaskSpec], index: int) -> TaskSpec:
    if not 0 <= index < len(tasks):
        raise TaskError(f"--task-index {index} outside 0..{len(tasks) - 1}")
    return tasks[index]
