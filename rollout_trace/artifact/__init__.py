"""The rollout artifact: its format (schema), the validating reader, the atomic writer, and sources;
collections of many artifacts and GRPO groups (collection, stores, group).

Capture writes through `write_artifact`, re-scoring adds a part through `write_rescore`; the viewer
reads through `open_artifact` (a named source) and `open_upload` (uploaded files), which leave nothing
unpacked on disk. A recorded TRL run (rollout_trace/record writes it) is read by `open_run`. Nothing outside
this package parses artifact files.
"""

from __future__ import annotations

from .collection import Collection, Record, open_collection
from .errors import RolloutTraceError
from .model import Artifact, Rescore, TraceCall, Turn
from .opening import open_artifact, open_upload
from .problems import ArtifactError, Problem
from .read import load_artifact, load_index
from .rescore import write_part as write_rescore
from .run import Run, RunGroup, RunRow, open_run
from .schema import RescoredTurn, RescoreMeta, Summary, Task, TestCase, TestResult
from .sources import bundled_examples, resolved
from .unpack import MAX_UNZIPPED_BYTES, UPLOAD_MAX_UNZIPPED_BYTES
from .write import OutDirExists, write_artifact

__all__ = ["MAX_UNZIPPED_BYTES", "UPLOAD_MAX_UNZIPPED_BYTES", "Artifact", "ArtifactError", "Collection", "OutDirExists",
           "Problem", "Record", "Rescore", "RescoreMeta", "RescoredTurn", "RolloutTraceError", "Run", "RunGroup", "RunRow", "Summary", "Task",
           "TestCase", "TestResult", "TraceCall", "Turn", "bundled_examples", "load_artifact", "load_index",
           "open_artifact", "open_collection", "open_run", "open_upload", "resolved", "write_artifact", "write_rescore"]
