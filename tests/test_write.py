"""The writer: what it writes reads back identical, and a failed write leaves nothing behind."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rollout_trace.artifact import ArtifactError, OutDirExists, load_artifact, open_artifact, write_artifact


def _kwargs(a):
    import json
    trace = json.loads((a.root / "trace.json").read_text())["turns"]
    return dict(summary=a.summary, turns=a.turns, task=a.task, visible_tests=a.visible_tests,
                held_out_tests=a.held_out_tests, trace_entries=trace, test_results=a.test_results, solution=a.solution)


def test_round_trip(tmp_path):
    a = open_artifact("scripted-smollm2")
    b = write_artifact(tmp_path / "out", **_kwargs(a))
    assert b.summary == a.summary
    for x, y in zip(a.turns, b.turns, strict=False):
        assert np.array_equal(x.ids, y.ids) and np.array_equal(x.mask, y.mask) and np.allclose(x.logprobs, y.logprobs)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755


def test_refuses_non_empty_out_dir(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(OutDirExists, match="already exists"):
        write_artifact(tmp_path / "out", **_kwargs(open_artifact("scripted-smollm2")))
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


def test_invalid_artifact_leaves_nothing(tmp_path):
    a = open_artifact("scripted-smollm2")
    bad = dataclasses.replace(a.turns[0], mask=a.turns[0].mask[:-1])
    kw = _kwargs(a) | {"turns": [bad] + a.turns[1:]}
    with pytest.raises(ArtifactError, match="turn 0, field `mask`"):
        write_artifact(tmp_path / "out", **kw)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ArtifactError):
        load_artifact(tmp_path / "out")
