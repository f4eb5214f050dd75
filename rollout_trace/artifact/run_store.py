"""A run inside a store: the one view of a run's files that the snapshot (run_table.py) and the Python rows
(run.py) both read through, kept apart from both so neither imports the other to reach it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class RunStore:
    """A run inside a store (rollout_trace/artifact/stores.py), at `prefix` (a zip of a run folder holds it in one folder)."""

    def __init__(self, store: Any, prefix: str = ""):
        self.store, self.prefix = store, prefix.strip("/")

    def full(self, path: str) -> str:
        return "/".join(p for p in (self.prefix, path) if p)

    def list_dir(self, path: str) -> dict[str, int]:
        return self.store.list_dir(self.full(path))

    def read(self, paths: list[str], max_bytes: int) -> dict[str, bytes | str]:
        got = self.store.read([self.full(p) for p in paths], max_bytes)
        return {p: got[self.full(p)] for p in paths}

    def open(self, path: str) -> Any:
        """A seekable binary file of `path` (a shard), read in place: range reads on the Hub."""
        return self.store.open(self.full(path))

    def folder(self, path: str) -> Path:
        return self.store.folder(self.full(path))

    def source_of(self, path: str) -> str | None:
        return self.store.source_of(self.full(path))

    def stamp(self, path: str, size: int) -> tuple:
        """What says a file changed: in a local folder its size, modification time and inode (a rewrite of
        the same size is seen), elsewhere its size (a zip is reopened when it changes; a Hub store is pinned)."""
        root = getattr(self.store, "root", None)
        if self.store.kind == "folder" and root is not None:
            try:
                st = os.stat(Path(root) / self.full(path))
            except OSError:
                return (size,)
            return (st.st_size, st.st_mtime_ns, st.st_ino)
        return (size,)
