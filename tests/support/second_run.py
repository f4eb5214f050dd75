"""A second recorded run for the tests that compare two runs: the bundled examples/trl-run's rows written as a run of
their own (tests/support/run_tables.py) with other rewards (each reward r becomes 1 - r and a passing verifier score
0 and any other 1, so passing and failing swap), task 5 under a new task id (the same title: matched by title) and
task 6 renamed (matched by nothing). Its rollouts' places and files are the bundled run's."""

from __future__ import annotations

from pathlib import Path

from support.run_tables import bundled_rows, changed, write_run

NEW_ID = "f" * 40
RENAMED_ID = "e" * 40


def _task(title: str | None, task_id: str | None) -> tuple[str | None, str | None]:
    if (title or "").startswith("[task 5]"):
        return NEW_ID, title
    if (title or "").startswith("[task 6]"):
        return RENAMED_ID, "[task 66] renamed in this run"
    return task_id, title


def second_run(dest: Path) -> Path:
    """`dest` (created): the bundled run with its rewards and two tasks changed, as above."""
    rows = bundled_rows()
    titles, ids = rows["title"].to_pylist(), rows["task_id"].to_pylist()
    tasks = [_task(title, task_id) for title, task_id in zip(titles, ids, strict=True)]
    rows = changed(rows,
                   reward=lambda xs: [None if r is None else round(1.0 - r, 4) for r in xs],
                   env_reward=lambda xs: [None if r is None else (0.0 if r >= 1.0 else 1.0) for r in xs],
                   task_id=[t for t, _ in tasks], title=[title for _, title in tasks])
    return write_run(dest, rows)
