"""Push a growing run folder to a Hub dataset in the background, with huggingface_hub's CommitScheduler.

The scheduler runs in the process that started TRL's worker (the main process) and commits every
`every_minutes` only the files that changed: the run's small files, and each table's shards as they are
sealed (rollout_trace/artifact/run_shards.py), never an open tail (`*.arrows`: it grows between commits and is
sealed into a shard the next commit pushes) nor a hidden file (a shard being written). A sealed shard is written
once, so no file is pushed twice, and a commit holds the few shards sealed since the last one: a run of a
million rollouts stays within the Hub's limits (run_format.py). The dataset card (README.md, rollout_trace/
artifact/run_publish.py) is written into the folder first, so the Hub shows the rollouts table from the first
commit on. `finish` makes the last commit after the worker stopped (the segment's tail sealed by then), so the
Hub ends up with what the folder ends up with. The token is passed to huggingface_hub and nowhere else: never
printed, logged or written.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("rollout_trace.record")
HIDDEN = [".*", "*/.*"]  # fnmatch's * spans "/": any path with a component that starts with "."
OPEN_TAILS = ["*.arrows"]  # a table's open tail: pushed as the shard it is sealed into


class HubPush:
    def __init__(self, folder: Path, repo_id: str, token: str | None = None, every_minutes: float = 5.0,
                 private: bool | None = None):
        from huggingface_hub import CommitScheduler

        from rollout_trace.artifact.atomic import write_bytes
        from rollout_trace.artifact.run_publish import CARD, card

        self.repo_id = repo_id
        if not (Path(folder) / CARD).exists():
            write_bytes(Path(folder) / CARD, card(Path(folder), repo_id, None).encode())
        self.scheduler = CommitScheduler(repo_id=repo_id, folder_path=Path(folder), every=every_minutes,
                                         repo_type="dataset", private=private, token=token,
                                         ignore_patterns=HIDDEN + OPEN_TAILS)

    def finish(self, timeout_s: float = 600.0) -> None:
        """The last commit (what changed since the previous one), then stop the schedule."""
        try:
            self.scheduler.trigger().result(timeout=timeout_s)
        except Exception as e:  # the run is recorded locally either way; say so, without the token
            log.error("rollout_trace: the last push to the Hub dataset %s failed (%s); the run folder is complete "
                      "and can be pushed again with `hf upload`", self.repo_id, type(e).__name__)
        finally:
            self.scheduler.stop()
