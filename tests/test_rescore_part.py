"""The rescore part at the artifact boundary: written atomically beside the other files, read back
validated, and refused with a message naming file, turn, field, expected and found when corrupt."""

from __future__ import annotations

import hashlib
import shutil

import numpy as np
import pytest

from rollout_trace.artifact import ArtifactError, load_artifact, open_artifact, write_rescore
from support.rescore_fakes import fake_arrays, fake_meta


def _hashes(root) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "rescore" not in p.parts}


def _problems(root) -> list[str]:
    with pytest.raises(ArtifactError) as e:
        load_artifact(root)
    return [str(p) for p in e.value.problems]


@pytest.fixture
def bare(example_copy):
    """The bundled example without the rescore parts it ships with."""
    shutil.rmtree(example_copy / "rescore", ignore_errors=True)
    return example_copy


def test_artifacts_without_a_part_read_as_before(bare):
    a = load_artifact(bare)
    assert a.rescores == {} and a.notices == []


def test_write_keeps_other_files_and_other_parts(bare):
    a = load_artifact(bare)
    before = _hashes(bare)
    write_rescore(bare, "m.float32", fake_meta(a), fake_arrays(a), a.turns)
    write_rescore(bare, "m.bfloat16", fake_meta(a), fake_arrays(a, seed=1), a.turns)
    again = fake_arrays(a, seed=2)
    write_rescore(bare, "m.float32", fake_meta(a), again, a.turns)  # same name: replaced
    assert _hashes(bare) == before
    b = load_artifact(bare)
    assert sorted(b.rescores) == ["m.bfloat16", "m.float32"]
    assert np.array_equal(b.rescores["m.float32"].logprobs, again["logprobs"])
    assert sorted(p.name for p in (bare / "rescore").iterdir()) == ["m.bfloat16", "m.float32"]  # no leftovers
    part = b.rescores["m.bfloat16"]
    assert part.turn_slice(1).stop - part.turn_slice(1).start == b.turns[1].n_output


def test_a_failed_write_leaves_the_old_part(bare):
    a = load_artifact(bare)
    write_rescore(bare, "m", fake_meta(a), fake_arrays(a), a.turns)
    bad = fake_arrays(a)
    bad["entropy"][0] = np.nan
    with pytest.raises(ArtifactError):
        write_rescore(bare, "m", fake_meta(a), bad, a.turns)
    assert np.isfinite(load_artifact(bare).rescores["m"].entropy).all()
    assert sorted(p.name for p in (bare / "rescore").iterdir()) == ["m"]


@pytest.mark.parametrize("corrupt, expect", [
    (lambda f: f.write_bytes(f.read_bytes()[:100]), "not a readable safetensors file"),
    (lambda f: f.write_bytes(b""), "not a readable safetensors file"),
])
def test_corrupt_scores_file_is_named(bare, corrupt, expect):
    a = load_artifact(bare)
    write_rescore(bare, "m", fake_meta(a), fake_arrays(a), a.turns)
    corrupt(bare / "rescore" / "m" / "scores.safetensors")
    problems = _problems(bare)
    assert any(p.startswith("rescore/m/scores.safetensors: " + expect) for p in problems), problems


def _write_raw(root, a, arrays, meta=None):
    """Write a part past the writer's own validation, as a buggy or foreign tool might."""
    import msgspec
    from safetensors.numpy import save_file

    d = root / "rescore" / "m"
    d.mkdir(parents=True)
    (d / "meta.json").write_bytes(msgspec.json.encode(meta or fake_meta(a)))
    save_file(arrays, str(d / "scores.safetensors"))


def test_nan_names_turn_field_and_token(bare):
    a = load_artifact(bare)
    arrays = fake_arrays(a)
    arrays["logprobs"][a.turns[0].n_output + 4] = np.nan  # turn 1, its fifth output token
    _write_raw(bare, a, arrays)
    assert _problems(bare) == [
        "rescore/m/scores.safetensors, turn 1, field `logprobs`: invalid value at output token 4 of the turn "
        "(expected a finite log-probability <= 0, found nan)"]


def test_shape_mismatch_and_missing_array(bare):
    a = load_artifact(bare)
    arrays = fake_arrays(a)
    arrays["offsets"][1] += 1
    del arrays["entropy"]
    _write_raw(bare, a, arrays)
    problems = _problems(bare)
    assert any("field `entropy`: array is missing" in p for p in problems), problems


def test_offsets_that_do_not_match_the_turns(bare):
    a = load_artifact(bare)
    arrays = fake_arrays(a)
    arrays["offsets"][1] += 1
    _write_raw(bare, a, arrays)
    (p,) = _problems(bare)
    assert p.startswith("rescore/m/scores.safetensors, turn 0, field `offsets`: one score per output token")


def test_vocabulary_too_small_for_the_artifact(bare):
    a = load_artifact(bare)
    arrays = fake_arrays(a)
    arrays["topk_ids"] %= 1000
    _write_raw(bare, a, arrays, fake_meta(a, vocab=1000))
    (p,) = _problems(bare)
    assert "field `vocab_size`: the scoring model's vocabulary cannot hold the artifact's token ids" in p
    assert p.startswith("rescore/m/meta.json")


def test_topk_id_outside_vocabulary(bare):
    a = load_artifact(bare)
    arrays = fake_arrays(a)
    arrays["topk_ids"][2, 1] = 49152
    _write_raw(bare, a, arrays)
    (p,) = _problems(bare)
    assert "turn 0, field `topk_ids`: invalid value at output token 2" in p and "49152" in p


def test_meta_with_wrong_type(bare):
    a = load_artifact(bare)
    _write_raw(bare, a, fake_arrays(a))
    f = bare / "rescore" / "m" / "meta.json"
    f.write_text(f.read_text().replace('"temperature":1.0', '"temperature":"hot"'))
    (p,) = _problems(bare)
    assert p == "rescore/m/meta.json, field `temperature`: wrong type (expected float, found str)"


def test_part_names_the_turn_it_disagrees_with(bare):
    a = load_artifact(bare)
    meta = fake_meta(a)
    meta.turns[2].trained = True
    _write_raw(bare, a, fake_arrays(a), meta)
    (p,) = _problems(bare)
    assert p.startswith("rescore/m/meta.json, turn 2, field `turns`: describes another turn than turns.json")


def test_bundled_examples_carry_valid_parts():
    for name in ("scripted-smollm2", "smollm2-offline"):
        a = open_artifact(name)
        for part in a.rescores.values():
            assert part.logprobs.size == sum(t.n_output for t in a.turns)
