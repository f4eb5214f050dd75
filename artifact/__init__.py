"""The rollout artifact: its format (schema), the validating reader, the atomic writer, and sources.

Capture writes through `write_artifact`, re-scoring adds a part through `write_rescore`; the viewer
reads through `open_artifact`. Nothing outside this package parses artifact files.
"""

from __future__ import annotations

from pathlib import Path

from .model import Artifact, Rescore, TraceCall, Turn
from .problems import ArtifactError, Problem
from .read import load_artifact, load_index
from .rescore import write_part as write_rescore
from .schema import RescoredTurn, RescoreMeta, Summary, Task, TestCase, TestResult
from .sources import bundled_examples, resolve
from .write import OutDirExists, write_artifact


def open_artifact(source: str | Path, token: str | None = None, allow_local: bool = True) -> Artifact:
    """Resolve a source (example, folder, zip, Hub id), then read and validate it."""
    return load_artifact(resolve(str(source), token=token, allow_local=allow_local), source=str(source))


__all__ = ["Artifact", "ArtifactError", "OutDirExists", "Problem", "Rescore", "RescoreMeta", "RescoredTurn", "Summary",
           "Task", "TestCase", "TestResult", "TraceCall", "Turn", "bundled_examples", "load_artifact", "load_index",
           "open_artifact", "resolve", "write_artifact", "write_rescore"]
