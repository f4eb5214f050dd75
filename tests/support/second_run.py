"""A second recorded run for the tests that compare two runs: a copy of the bundled examples/trl-run whose index
says other rewards (each reward r becomes 1 - r and a passing verifier score 0 and any other 1, so passing and failing swap),
task 5 under a new task id (the same title: matched by title) and task 6 renamed (matched by nothing)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rollout_trace.artifact.sources import EXAMPLES_DIR

NEW_ID = "f" * 40
RENAMED_ID = "e" * 40


def _change(row: dict) -> dict:
    if row.get("reward") is not None:
        row["reward"] = round(1.0 - row["reward"], 4)
    if row.get("env_reward") is not None:
        row["env_reward"] = 0.0 if row["env_reward"] >= 1.0 else 1.0
    title = row.get("title") or ""
    if title.startswith("[task 5]"):
        row["task_id"] = NEW_ID
    elif title.startswith("[task 6]"):
        row["task_id"], row["title"] = RENAMED_ID, "[task 66] renamed in this run"
    return row


def second_run(dest: Path) -> Path:
    """`dest` (created): the bundled run with its rewards and two tasks changed, as above."""
    shutil.copytree(EXAMPLES_DIR / "trl-run", dest)
    for index in sorted((dest / "index").glob("*.jsonl")):
        rows = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines() if line.strip()]
        index.write_text("".join(json.dumps(_change(r)) + "\n" for r in rows), encoding="utf-8")
    return dest
