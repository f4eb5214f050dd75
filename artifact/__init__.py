"""The rollout artifact: its format (schema), the validating reader, the atomic writer, and sources;
collections of many artifacts and GRPO groups (collection, stores, group, query).

Capture writes through `write_artifact`; the viewer reads through `open_artifact`. Nothing outside
this package parses artifact files.
"""

from __future__ import annotations

from pathlib import Path

from .collection import Collection, Record, open_collection
from .model import Artifact, TraceCall, Turn
from .problems import ArtifactError, Problem
from .read import load_artifact, load_index
from .schema import Summary, Task, TestCase, TestResult
from .sources import bundled_examples, resolve
from .write import OutDirExists, write_artifact


def open_artifact(source: str | Path, token: str | None = None, allow_local: bool = True) -> Artifact:
    """Resolve a source (example, folder, zip, Hub id), then read and validate it."""
    return load_artifact(resolve(str(source), token=token, allow_local=allow_local), source=str(source))


__all__ = ["Artifact", "ArtifactError", "Collection", "OutDirExists", "Problem", "Record", "Summary", "Task", "TestCase",
           "TestResult", "TraceCall", "Turn", "bundled_examples", "load_artifact", "load_index", "open_artifact",
           "open_collection", "resolve", "write_artifact"]
