"""Which task a capture runs: the training example's task list, built deterministically.

By default the list is built here with the example's rules (docs/design.md):
rows of the DeepCoder set (or a local JSONL/Parquet file of rows with `problem` and `tests`),
shuffled with `random.Random(seed)`, keeping rows with at least 3 stdin/stdout tests, the first
`n_prompts` of them; held-out tests capped at 12. With `--example PATH` the user's copy of TRL's
training script is loaded and its `build_dataset` decides instead, exactly as the seed does, so a
task index means what it meant in training.

`task_for(cfg)` is the one place a capture's task is built: the capture itself and the Capture tab's
Preview both call it, so the preview shows exactly the task the run will get.
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

from rollout_trace.artifact import TestCase
from rollout_trace.recipe.tasks import instruction_for, task_id, visible_tests_from

from . import hub
from .config import CaptureConfig
from .errors import CaptureError
from .policy import PolicyError, check_public

DEFAULT_CONFIG = "primeintellect"
N_TESTS_EVAL = 12
MIN_TESTS = 3
_PREFIX = re.compile(r"^\s*Solve the following coding problem using the programming language python:\s*", re.I)
_SUFFIX = re.compile(r"\n\s*(The input will be|Now solve the problem|Now solve this problem).*\Z", re.S | re.I)


class TaskError(CaptureError):
    """The task source cannot give the requested task; the message says which row or setting and why."""


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


TASK_SUFFIXES = (".jsonl", ".json", ".parquet")


def _local_non_folder(path: Path) -> bool:
    """Something other than a folder exists at `path` on this machine (stat only: a FIFO is never opened)."""
    try:
        return (path.exists() or path.is_symlink()) and not path.is_dir()
    except OSError:
        return True


def load_rows(dataset: str, config: str | None = DEFAULT_CONFIG, local_files: bool = True) -> list[dict]:
    """Rows from a local .jsonl/.json/.parquet file or a Hub dataset (through `datasets`, cached).

    `local_files=False` (a public server) never reads a file named by `dataset`. A Hub id is tried
    only when the Hub answers or HF_HUB_OFFLINE is set (then `datasets` reads its cache at once):
    otherwise it would retry for about 25 s before failing.
    """
    path = Path(dataset).expanduser()
    if local_files and path.suffix not in TASK_SUFFIXES and _local_non_folder(path):
        # here, not on the Hub: a FIFO or a file named like a Hub id is never sent to the Hub as one
        what = "a regular file" if path.is_file() else "not a regular file (a FIFO, socket or device)"
        raise TaskError(f"names {path}, {what}; a task file is .jsonl, .json or .parquet", "dataset")
    if local_files and path.suffix in TASK_SUFFIXES:
        import datasets

        if not path.is_file():
            raise TaskError(f"names {path}, which is not a file", "dataset")
        kind = "parquet" if path.suffix == ".parquet" else "json"
        try:
            ds = datasets.load_dataset(kind, data_files=str(path), split="train")
        except Exception as e:
            raise TaskError(f"file {path} cannot be read: {type(e).__name__}: {str(e)[:300]}", "dataset") from None
    else:
        offline = hub.unreachable()
        if offline and not hub.offline_mode():
            hint = ("Give a local .jsonl/.parquet task file, or set HF_HUB_OFFLINE=1 to use a copy in the Hub cache."
                    if local_files else "Try again later.")
            raise TaskError(f"{dataset} is on the Hugging Face Hub, which this machine cannot reach now: {offline}. "
                            + hint, "dataset")
        import datasets

        try:
            ds = datasets.load_dataset(dataset, config, split="train")
        except Exception as e:
            why = f"{type(e).__name__}: {str(e)[:300]}"
            hint = (" HF_HUB_OFFLINE is set and the Hub cache has no copy: give a local .jsonl/.parquet task file."
                    if offline else "")
            raise TaskError(f"{dataset} ({config}) cannot be loaded: {why}.{hint}", "dataset") from None
    missing = {"problem", "tests"} - set(ds.column_names)
    if missing:
        raise TaskError(f"{dataset} has no column(s) {', '.join(sorted(missing))}; rows need `problem` and `tests`",
                        "dataset")
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
        raise TaskError(f"{path} is not a file", "example")
    spec = importlib.util.spec_from_file_location("_training_example", path)
    if spec is None or spec.loader is None:
        raise TaskError(f"{path} cannot be imported as a Python file", "example")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
        rows, tests_by_id = module.build_dataset(n_prompts=n_prompts, seed=seed)
    except Exception as e:
        raise TaskError(f"{path}: build_dataset failed: {type(e).__name__}: {str(e)[:300]}", "example") from None
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
    if not tasks:
        raise TaskError("has no task: no row has at least 3 stdin/stdout tests", "dataset")
    if not 0 <= index < len(tasks):
        raise TaskError(f"{index} is outside 0..{len(tasks) - 1} (the task list has {len(tasks)})", "task_index")
    return tasks[index]


def refuse_for_public(cfg: CaptureConfig) -> None:
    """`check_public` as a CaptureError: each refused field by its form label, never its value."""
    try:
        check_public(cfg)
    except PolicyError as e:
        raise CaptureError("; ".join(str(p) for p in e.problems)) from None


def task_for(cfg: CaptureConfig) -> TaskSpec:
    """The task a capture with these settings runs (the one place tasks are built for a run or a preview).

    A public config passes `check_public` first, so nothing a visitor names is read from the server.
    """
    if cfg.public:
        refuse_for_public(cfg)
    if cfg.example:
        tasks = tasks_from_example(Path(cfg.example), cfg.n_prompts, cfg.seed)
    else:
        tasks = build_tasks(load_rows(cfg.dataset, local_files=not cfg.public), cfg.n_prompts, cfg.seed)
    return select_task(tasks, cfg.task_index)
