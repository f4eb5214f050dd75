"""What a run's readers say about index lines they leave out: a finished segment's cut last line is a note on the
run page's reader too (rollout_trace/artifact/run_table.py), and a followed run's garbage line stays named after
the next poll (rollout_trace/artifact/run.py's `follow` keeps the problems of lines it does not read again)."""

from __future__ import annotations

import shutil

from rollout_trace.artifact.run import follow, open_run
from rollout_trace.artifact.run_table import _read_table
from rollout_trace.artifact.sources import EXAMPLES_DIR

CUT = "the last line has no newline"


def test_a_finished_segments_cut_last_line_is_noted_by_both_readers(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    index = sorted((root / "index").glob("*.jsonl"))[0]
    index.write_bytes(index.read_bytes().rstrip(b"\n"))
    assert any(CUT in n for n in open_run(str(root)).notes)
    t = _read_table(root)
    assert any(CUT in n and index.name in n for n in t.run_files.notes)
    whole = _read_table((EXAMPLES_DIR / "trl-run").resolve())
    assert not any(CUT in n for n in whole.run_files.notes)


def test_a_followed_runs_garbage_line_stays_named(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / "trl-run", root)
    index = sorted((root / "index").glob("*.jsonl"))[-1]
    run = open_run(str(root))
    with open(index, "ab") as f:
        f.write(b'{"not": "an index line"}\n')
    grown = follow(run)
    assert grown is not None and any("line" in (p.field or "") for p in grown.problems)
    with open(index, "ab") as f:  # the recorder goes on: the next poll reads only what it wrote since
        f.write(b"\n")
    later = follow(grown)
    assert later is not None and [str(p) for p in later.problems] == [str(p) for p in grown.problems]
