"""A rescore part placed in a recorded run of format 2 as the format says (rollout_trace/artifact/run_format.py):
its files under `rescored/<group name>/rollout-NN/<part>/` and one `Rescored` line in `rescored/<seg>.jsonl`, for
the tests of the run page's trainer mismatch and of the token view's trainer modes on a run's rollout.

    a = rescore_in_run(run_dir, row.path, "fake.float32", fake_meta, fake_arrays, numbers)

The part's files are written by the artifact layer's own `write_part` (into a scratch copy of the rollout's
files, so they are validated against its turns) and moved into place; the line is the format's record. A run's
rollout has no folder of its own, so `viewer rescore` cannot write into one in place (it re-scores folders).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rollout_trace.artifact import Artifact, load_artifact
from rollout_trace.artifact.rescore import write_part
from rollout_trace.artifact.run import open_run, rescore_folder
from rollout_trace.artifact.run_format import RESCORED_DIR, Rescored, encode_line
from rollout_trace.artifact.schema import RESCORE_DIR


def rescore_in_run(run_dir: Path, path: str, part: str, meta: Callable[[Artifact], Any],
                   arrays: Callable[[Artifact], dict], numbers: dict) -> Artifact:
    """Place rescore part `part` (its meta and arrays made from the rollout's artifact) for the rollout named `path`
    in the run at `run_dir`, and note it in the rescore log with `numbers` (tokens, with_engine, max_abs_log_ratio,
    outside_clip). Returns the rollout as the run then opens it."""
    run = open_run(str(run_dir))
    try:
        files = run.files(path)
        with tempfile.TemporaryDirectory(prefix="rescore-in-run-") as scratch:
            root = Path(scratch)
            for name, data in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_bytes(data)
            a = load_artifact(root)
            write_part(root, part, meta(a), arrays(a), a.turns)
            dest = Path(run_dir) / rescore_folder(path, part)
            shutil.rmtree(dest, ignore_errors=True)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(root / RESCORE_DIR / part, dest)
        info = a.summary.run
        assert info is not None, f"{path}: not a run's rollout"
        line = Rescored(segment=info.segment, group_id=info.group_id, rollout=info.rollout_index, part=part,
                        written_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **numbers)
        with (Path(run_dir) / RESCORED_DIR / f"{info.segment}.jsonl").open("ab") as f:
            f.write(encode_line(line))
    finally:
        run.close()
    again = open_run(str(run_dir))
    try:
        return again.open(path)
    finally:
        again.close()
