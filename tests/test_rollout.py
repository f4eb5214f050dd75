"""What the page asks the server for: the outline and token chunks, cut at any chunk size."""

from __future__ import annotations

import numpy as np
import pytest

from rollout_trace.artifact import bundled_examples, open_artifact
from viewer import rollout as rollout_module
from viewer.contract import MODES, SCOPES, encode
from viewer.render.outline import outline
from viewer.rollout import Rollout


@pytest.mark.parametrize("name", bundled_examples())
@pytest.mark.parametrize("chunk", [7, 2048])
def test_chunks_reassemble_every_scope(name, chunk, monkeypatch):
    monkeypatch.setattr(rollout_module, "CHUNK", chunk)
    r = Rollout.load(open_artifact(name))
    for i, t in enumerate(r.artifact.turns):
        for scope in ("new", "full"):
            start, size = r.scope_size(i, scope)
            parts = [r.chunk(i, scope, k) for k in range(-(-size // chunk))]
            assert [p.start for p in parts] == [start + k * chunk for k in range(len(parts))]
            ids = np.array([x for p in parts for x in p.ids], dtype=np.int32)
            assert np.array_equal(ids, t.ids[start:])
            assert "".join(p.mask for p in parts) == "".join(map(str, t.mask[start:].tolist()))
            lps = [x for p in parts for x in p.logprob]
            assert all(x is None for x in lps[: max(0, t.n_prompt - start)])  # no logprob over the prompt
            if t.logprobs.size:
                assert lps[max(0, t.n_prompt - start):] == [round(float(x), 4) for x in t.logprobs]


def test_outline_is_small_and_complete():
    r = Rollout.load(open_artifact("scripted-smollm2"))
    o = outline(r)
    assert [t.index for t in o.turns] == [0, 1, 2]
    assert o.turns[1].drift_at == 509 and o.turns[1].shared == 509 and o.turns[1].story_at == 509
    assert o.turns[0].story_at == o.turns[0].prompt_tokens  # no drift: the story is the generated tokens
    b = o.turns[1].boundary
    assert o.turns[0].boundary is None and b is not None and not b.continuous and b.at == 509 and b.cause
    assert [m.id for m in o.modes] == list(MODES) and [s.id for s in o.scopes] == list(SCOPES)
    assert len(encode(o)) < 40_000


def test_story_chunk_holds_the_story(monkeypatch):
    monkeypatch.setattr(rollout_module, "CHUNK", 64)
    r = Rollout.load(open_artifact("scripted-smollm2"))
    for turn, scope in [(0, "new"), (0, "full"), (1, "new"), (1, "full"), (2, "full")]:
        c = r.chunk(turn, scope, r.story_chunk(turn, scope))
        at = outline(r).turns[turn].story_at
        assert c.start <= at < c.start + len(c.ids)


def test_bad_requests_are_refused():
    r = Rollout.load(open_artifact("scripted-smollm2"))
    for bad in [(9, "new", 0), (0, "everything", 0), (0, "new", -1), (0, "new", 99)]:
        with pytest.raises(ValueError):
            r.chunk(*bad)
