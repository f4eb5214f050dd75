"""Push a growing run folder to a Hub dataset in the background, with huggingface_hub's CommitScheduler.

The scheduler runs in the process that started TRL's worker (the main process), commits every
`every_minutes` only the files that changed, and reads an append-only file only up to its size when it
listed it, so a JSONL index that grows while a commit runs is pushed a whole number of lines at a time
(the reader ignores a last line without its newline anyway). Hidden files and folders (a group still
being built, a temporary file) are never pushed. `finish` makes the last commit after the worker stopped,
so the Hub ends up with what the folder ends up with. The token is passed to huggingface_hub and nowhere
else: never printed, logged or written.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("rollout_trace.record")
HIDDEN = [".*", "*/.*"]  # fnmatch's * spans "/": any path with a component that starts with "."


class HubPush:
    def __init__(self, folder: Path, repo_id: str, token: str | None = None, every_minutes: float = 5.0,
                 private: bool | None = None):
        from huggingface_hub import CommitScheduler

        self.repo_id = repo_id
        self.scheduler = CommitScheduler(repo_id=repo_id, folder_path=Path(folder), every=every_minutes,
                                         repo_type="dataset", private=private, token=token, ignore_patterns=HIDDEN)

    def finish(self, timeout_s: float = 600.0) -> None:
        """The last commit (what changed since the previous one), then stop the schedule."""
        try:
            self.scheduler.trigger().result(timeout=timeout_s)
        except Exception as e:  # the run is recorded locally either way; say so, without the token
            log.error("rollout_trace: the last push to the Hub dataset %s failed (%s); the run folder is complete "
                      "and can be pushed again with `hf upload`", self.repo_id, type(e).__name__)
        finally:
            self.scheduler.stop()
