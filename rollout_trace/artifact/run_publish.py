"""A recorded run as a Hub dataset repo: its tables as Parquet, a card that declares them, within the Hub's limits.

    publish("runs/my-run", "org/my-run")       # `python -m viewer publish RUN org/name`

What is uploaded is what a reader needs and the ecosystem reads: run.json, the segments' files, the tokenizer, the
rollouts table (rollouts/*.parquet, and its artifact files in files/*.parquet), the consumption table
(consumed/*.parquet and each segment's end), the rescore log and parts. An open tail (a run still recording, or
one whose recorder was killed) is uploaded as the sealed shard it would become, its whole batches only; the run
folder itself is never changed. The card (README.md) declares the tables in its YAML `configs` (Hugging Face's
dataset card format), so the Hub's Data Studio shows the rollouts and `datasets.load_dataset("org/name")` loads
them, `load_dataset("org/name", "consumed")` the consumption table; DuckDB reads
`hf://datasets/org/name/rollouts/*.parquet`.

The Hub advises fewer than 100 files a commit: files go up in commits of at most MAX_COMMIT_FILES, the card with
the last, so a repo with a card holds the whole run. huggingface_hub's `create_commit` does the uploading (large
files through its own large-file path); the token goes to it and nowhere else.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .run_format import CONSUMED_DIR, FILES_DIR, MANIFEST, RESCORED_DIR, ROLLOUTS_DIR, SEGMENTS_DIR, TAIL
from .run_shards import FILES_ROW_GROUP, SEAL_ROWS, read_tail_file, shards, write_sealed
from .schema import TOKENIZER_DIR

MAX_COMMIT_FILES = 50  # the Hub's advice is fewer than 100 files a commit
CARD = "README.md"


def card(run: Path, repo_id: str, rollouts: int | None) -> str:
    """The dataset card: YAML `configs` naming the tables' files, then what the repo is and how to read it."""
    name = repo_id.split("/")[-1]
    return f"""---
configs:
- config_name: rollouts
  data_files:
  - split: train
    path: "{ROLLOUTS_DIR}/*.parquet"
  default: true
- config_name: consumed
  data_files:
  - split: train
    path: "{CONSUMED_DIR}/*.parquet"
- config_name: files
  data_files:
  - split: train
    path: "{FILES_DIR}/*.parquet"
tags:
- rollout-trace
- trl
- grpo
- reinforcement-learning
---

# {name}: a recorded TRL training run

{f"{rollouts:,} rollouts" if rollouts is not None else "The rollouts"} of an async GRPO run, recorded by \
`rollout_trace.record` while TRL trained, one row each:
where it sits (`policy_version`, `group_id`, `rollout`), TRL's `reward`, `advantage` and `status`, its training rows
(`row_*`, with the turns each trains), what a page lists (`agent_turns`, `tokens`, `drift`, `tools`, `task_id`,
`title`), its findings and searchable text. `consumed` says what the trainer did with each training row (trained at
which global step, or why never); `files` holds each rollout's artifact files (turns.json, trace.json, ...).
`run.json` says what was trained with what.

```python
from datasets import load_dataset
rollouts = load_dataset("{repo_id}")                 # the rollouts table
consumed = load_dataset("{repo_id}", "consumed")     # the trainer's fate of each training row
```

```sql
-- DuckDB: the pass rate per policy version
SELECT policy_version, avg(CASE WHEN env_reward >= 1 THEN 1 ELSE 0 END) AS pass_rate
FROM read_parquet('hf://datasets/{repo_id}/{ROLLOUTS_DIR}/*.parquet')
WHERE env_reward IS NOT NULL GROUP BY policy_version ORDER BY policy_version;
```

Open it token by token in the rollout trace viewer: `?src={repo_id}`.
"""


def _sealed(path: Path, row_group: int) -> bytes:
    """An open tail as the Parquet file its shard would be sealed as (its whole batches)."""
    table = read_tail_file(path)[0]
    buf = io.BytesIO()
    write_sealed(table, buf, row_group)
    return buf.getvalue()


def run_files(run: Path) -> Iterator[tuple[str, Path | bytes]]:
    """(path in the repo, the local file or the bytes to upload) for every file of the run a reader needs."""
    run = Path(run)
    yield MANIFEST, run / MANIFEST
    for folder in (SEGMENTS_DIR, TOKENIZER_DIR):
        for p in sorted((run / folder).rglob("*")) if (run / folder).is_dir() else []:
            if p.is_file() and not p.name.startswith("."):
                yield p.relative_to(run).as_posix(), p
    for folder, row_group in ((ROLLOUTS_DIR, SEAL_ROWS), (FILES_DIR, FILES_ROW_GROUP), (CONSUMED_DIR, SEAL_ROWS)):
        listing = {p.name: p.stat().st_size for p in (run / folder).iterdir()} if (run / folder).is_dir() else {}
        for s in shards(listing)[0]:
            if s.sealed:
                yield f"{folder}/{s.name}", run / folder / s.name
            else:
                yield f"{folder}/{s.name[: -len(TAIL)]}.parquet", _sealed(run / folder / s.name, row_group)
        for end in sorted((run / folder).glob("*.end.json")) if folder == CONSUMED_DIR else []:
            yield f"{CONSUMED_DIR}/{end.name}", end
    for p in sorted((run / RESCORED_DIR).rglob("*")) if (run / RESCORED_DIR).is_dir() else []:
        if p.is_file() and not p.name.startswith("."):
            yield p.relative_to(run).as_posix(), p


def publish(run: Path, repo_id: str, token: str | None = None, private: bool | None = None,
            api: Any = None) -> int:
    """Upload the run at `run` to the dataset repo `repo_id` (made when missing); returns the files uploaded."""
    from huggingface_hub import CommitOperationAdd, HfApi

    from .run import open_run

    rollouts = len(open_run(str(run)).table)  # a run this tool reads (raises ArtifactError otherwise)
    api = api or HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    files = list(run_files(Path(run)))
    batches = [files[i:i + MAX_COMMIT_FILES] for i in range(0, len(files), MAX_COMMIT_FILES)] or [[]]
    for k, batch in enumerate(batches):
        ops = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(f) if isinstance(f, Path) else f)
               for p, f in batch]
        last = k == len(batches) - 1
        if last:
            ops.append(CommitOperationAdd(path_in_repo=CARD, path_or_fileobj=card(Path(run), repo_id,
                                                                                rollouts).encode()))
        api.create_commit(repo_id, repo_type="dataset", operations=ops,
                          commit_message=f"rollout_trace: a recorded run, part {k + 1} of {len(batches)}")
    return len(files) + 1
