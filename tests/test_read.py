"""The reading boundary: valid artifacts of every kind load; malformed ones are refused with messages
that name the file, the turn, the field, what was expected and what was found."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from conftest import edit_json
from rollout_trace.artifact import ArtifactError, load_artifact, load_index, open_artifact


def problems_of(folder) -> list[str]:
    with pytest.raises(ArtifactError) as e:
        load_artifact(folder)
    return [str(p) for p in e.value.problems]


def test_bundled_example_loads_with_typed_arrays():
    a = open_artifact("scripted-smollm2")
    assert len(a.turns) == a.summary.agent_turns == 3
    assert [t.seed_trained for t in a.turns] == [True, True, False]
    t = a.turns[0]
    assert t.prompt_ids.dtype == np.int32 and t.mask.dtype == np.int8 and t.logprobs.size == t.n_output
    assert t.mask.size == t.n_prompt + t.n_output
    assert a.trace is not None and [c.dialect for c in a.trace] == ["openenv"] * 4
    assert a.tokenizer_dir is not None and a.notices == []
    assert a.test_results is not None and sum(r.passed for r in a.test_results) == 4


def test_seed_format_without_extras_loads(example_copy):
    """What the seed writes (indent=2, none of our optional fields or files) reads as it is."""
    for extra in ("test_results.json", "solution.py", "tokenizer"):
        p = example_copy / extra
        shutil.rmtree(p) if p.is_dir() else p.unlink()

    def strip(d):
        for t in d["turns"]:
            t.pop("prompt_source"), t.pop("retokenized_prompt_ids")
    edit_json(example_copy / "turns.json", strip)
    edit_json(example_copy / "summary.json", lambda d: [d.pop(k) for k in ("format_version", "produced_by")])
    a = load_artifact(example_copy)
    assert a.summary.format_version == 1 and a.turns[0].prompt_source == "retokenized"
    assert a.tokenizer_dir is None and a.test_results is None


def test_legacy_trace_dialect(example_copy):
    """The older proxy: no prompt ids, no mask, completion ids only as "token_id:N" strings."""
    def legacy(d):
        for n, e in enumerate(d["turns"]):
            ids = e.pop("completion_token_ids")
            e.pop("prompt_token_ids"), e.pop("loss_mask"), e.pop("metadata")
            e["completion_tokens"] = [f"token_id:{i}" for i in ids]
            e.update(turn=n, finish_reason="stop", latency_s=0.5, timestamp=1.0)
    edit_json(example_copy / "trace.json", legacy)
    a = load_artifact(example_copy)
    assert {c.dialect for c in a.trace} == {"legacy"}
    assert a.trace[1].engine_prompt_ids is None and a.trace[1].loss_mask is None
    assert np.array_equal(a.trace[1].completion_ids, a.turns[0].output_ids)


def test_bad_token_string_in_legacy_trace(example_copy):
    def legacy(d):
        e = d["turns"][2]
        e.pop("completion_token_ids"), e.pop("prompt_token_ids"), e.pop("loss_mask")
        e["completion_tokens"] = ["token_id:5", "hello"]
    edit_json(example_copy / "trace.json", legacy)
    [msg] = problems_of(example_copy)
    assert "trace.json, turn 2, field `completion_tokens[1]`" in msg and "'hello'" in msg


def test_missing_optional_files_are_notices(example_copy):
    (example_copy / "trace.json").unlink()
    (example_copy / "visible_tests.txt").unlink()
    a = load_artifact(example_copy)
    assert a.trace is None and a.visible_tests is None
    assert any("trace.json is not in this artifact" in n for n in a.notices)
    assert any("visible_tests.txt" in n for n in a.notices)


def test_missing_required_file(example_copy):
    (example_copy / "turns.json").unlink()
    [msg] = problems_of(example_copy)
    assert msg.startswith("turns.json: required file is missing")


@pytest.mark.parametrize("content,expect", [
    (lambda b: b[: len(b) // 2], "turns.json: the file is truncated"),
    (lambda b: b"<html>not json</html>", "turns.json: not valid JSON"),
    (lambda b: b"", "turns.json: the file is empty"),
])
def test_truncated_or_non_json(example_copy, content, expect):
    p = example_copy / "turns.json"
    p.write_bytes(content(p.read_bytes()))
    [msg] = problems_of(example_copy)
    assert msg.startswith(expect)


@pytest.mark.parametrize("change,expect", [
    (lambda t: t.update(mask=t["mask"][:-2]),
     "turns.json, turn 1, field `mask`: the mask covers prompt_ids + output_ids (expected {p} + {o} = {po} values, found {po2})"),
    (lambda t: t.update(n_prompt_ids=t["n_prompt_ids"] + 1),
     "turns.json, turn 1, field `n_prompt_ids`: n_prompt_ids is the length of the array it counts (expected {p}, found {p1})"),
    (lambda t: t.update(n_output_ids="12"),
     "turns.json, turn 1, field `n_output_ids`: wrong type (expected int, found str)"),
    (lambda t: t["prompt_ids"].__setitem__(3, 1.5),
     "turns.json, turn 1, field `prompt_ids`: expected a JSON int, found float at element 3"),
    (lambda t: t["prompt_ids"].__setitem__(3, -7),
     "turns.json, turn 1, field `prompt_ids`: token id at element 3 is out of range (expected an integer in 0..2147483647, found -7)"),
    (lambda t: t["mask"].__setitem__(0, 2),
     "turns.json, turn 1, field `mask`: mask value at element 0 is out of range (expected an integer in 0..1, found 2)"),
    # numpy's parser saturates 2**64 to 2**63-1: the message must name the value the file holds
    (lambda t: t["prompt_ids"].__setitem__(4, 2**64),
     "turns.json, turn 1, field `prompt_ids`: token id at element 4 is out of range (expected an integer in 0..2147483647, found 18446744073709551616)"),
    (lambda t: t["output_ids"].__setitem__(0, -2**64),
     "turns.json, turn 1, field `output_ids`: token id at element 0 is out of range (expected an integer in 0..2147483647, found -18446744073709551616)"),
    (lambda t: t["prompt_ids"].__setitem__(2, 2**31),
     "turns.json, turn 1, field `prompt_ids`: token id at element 2 is out of range (expected an integer in 0..2147483647, found 2147483648)"),
    (lambda t: t["prompt_ids"].__setitem__(1, 10**30),
     "turns.json, turn 1, field `prompt_ids`: token id at element 1 is out of range (expected an integer in 0..2147483647, found 1000000000000000000000000000000)"),
    (lambda t: t.update(per_token_logps=t["per_token_logps"][:3]),
     "turns.json, turn 1, field `per_token_logps`: one logprob per output token, or none (expected {o} or 0 values, found 3)"),
    (lambda t: t.update(trained=False),
     "turns.json, turn 1, field `trained`: `trained` is true exactly when the turn made a tool call (expected true, found false)"),
    (lambda t: t.pop("output_ids"),
     "turns.json, turn 1, field `output_ids`: required field is missing"),
])
def test_turn_invariants_name_turn_and_field(example_copy, change, expect):
    data = json.loads((example_copy / "turns.json").read_text())
    t = data["turns"][1]
    p, o = t["n_prompt_ids"], t["n_output_ids"]
    change(t)
    (example_copy / "turns.json").write_text(json.dumps(data))
    msgs = problems_of(example_copy)
    assert expect.format(p=p, o=o, po=p + o, po2=p + o - 2, p1=p + 1) in msgs


def test_summary_counts_checked(example_copy):
    edit_json(example_copy / "summary.json", lambda d: d.update(trained_turns=3, captured_calls=9,
                                                                 tool_calls_by_name={"bash": 2}))
    msgs = problems_of(example_copy)
    assert "summary.json, field `trained_turns`: disagrees with the other files (expected 2, found 3)" in msgs
    assert "summary.json, field `captured_calls`: disagrees with the other files (expected 4, found 9)" in msgs
    assert any(m.startswith("summary.json, field `tool_calls_by_name`") for m in msgs)


def test_trace_loss_mask_length_checked(example_copy):
    edit_json(example_copy / "trace.json", lambda d: d["turns"][1].update(loss_mask=[0, 1]))
    [msg] = problems_of(example_copy)
    assert msg.startswith("trace.json, turn 1, field `loss_mask`: loss_mask covers prompt + completion")


def test_turn_index_skips_arrays(example_copy):
    headers = load_index(example_copy)
    assert [h.n_output_ids for h in headers] == [t.n_output for t in load_artifact(example_copy).turns]
    assert bytes(headers[0].prompt_ids).startswith(b"[")  # still raw, not materialised


def test_not_a_folder(tmp_path):
    with pytest.raises(ArtifactError, match="not a folder"):
        load_artifact(tmp_path / "nope")
