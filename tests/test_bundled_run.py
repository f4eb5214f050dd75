"""The bundled run (examples/trl-run) as the repo and the Space ship it: a handful of files in the run format,
whatever its number of rollouts. Format 1 wrote a folder per group and five files per rollout (a run of a
million rollouts was millions of files); format 2 writes a few Parquet shards per segment, so the run stays
within the Hub's advice (fewer than 10k entries a folder) and cheap to clone, copy and push."""

from __future__ import annotations

import os

from conftest import ROOT
from rollout_trace.artifact.run import open_run
from rollout_trace.artifact.run_format import (
    CONSUMED_DIR,
    FILES_DIR,
    MANIFEST,
    ROLLOUTS_DIR,
    SEGMENTS_DIR,
    SHARD_NAME,
)
from rollout_trace.artifact.schema import TOKENIZER_DIR

RUN = ROOT / "examples" / "trl-run"
MAX_FILES = 40  # outside tokenizer/: a run of 52 rollouts in two segments is 13
MAX_ENTRIES = 10_000  # a folder's entries: the Hub's advice


def _files() -> list[str]:
    return sorted(str(p.relative_to(RUN)) for p in RUN.rglob("*") if p.is_file())


def test_the_bundled_run_is_a_handful_of_files_and_no_large_folder():
    outside = [f for f in _files() if not f.startswith(f"{TOKENIZER_DIR}/")]
    assert 0 < len(outside) <= MAX_FILES, outside
    for folder, dirs, files in os.walk(RUN):
        assert len(dirs) + len(files) <= MAX_ENTRIES, folder
    run = open_run("trl-run")
    try:
        assert len(run.rows) > len(outside)  # more rollouts than files: not a file per rollout
    finally:
        run.close()


def test_every_file_of_the_bundled_run_is_one_the_run_format_names():
    """A finished run: run.json, each segment's start and end, each table's sealed shards (no open tail, nothing
    hidden, nothing left by format 1), and its tokenizer."""
    run = open_run("trl-run")
    try:
        segments = {s.start.segment for s in run.segments}
        assert segments and all(s.end is not None and s.consumption is not None for s in run.segments)
        assert run.problems == [] and not run.live
    finally:
        run.close()
    for f in _files():
        parts = f.split("/")
        assert not any(p.startswith(".") for p in parts), f
        if parts[0] == TOKENIZER_DIR or f == MANIFEST:
            continue
        assert len(parts) == 2, f
        folder, name = parts
        if folder == SEGMENTS_DIR:
            assert name.removesuffix(".json").removesuffix(".end") in segments, f
        elif folder == CONSUMED_DIR and name.endswith(".end.json"):
            assert name.removesuffix(".end.json") in segments, f
        else:
            m = SHARD_NAME.match(name)
            assert folder in (ROLLOUTS_DIR, FILES_DIR, CONSUMED_DIR) and m is not None, f
            assert m["ext"] == ".parquet" and m["segment"] in segments, f  # sealed: the segments ended
    for segment in segments:  # every segment's rollouts, their files and its consumption: sealed shards
        for folder in (ROLLOUTS_DIR, FILES_DIR, CONSUMED_DIR):
            assert (RUN / folder / f"{segment}-00000.parquet").is_file(), (folder, segment)
