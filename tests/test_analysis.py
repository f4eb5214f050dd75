"""The analysis functions on real tokenizer output: spans, context delta, continuity with each cause,
tool pairing, engine vs re-tokenized ids, TRL's training rows, and the reward waterfall."""

from __future__ import annotations

import dataclasses
import json

import msgspec
import numpy as np
import pytest

from rollout_trace.analysis.alignment import align
from rollout_trace.analysis.continuity import boundaries, boundary, verdict
from rollout_trace.analysis.engine_ids import engine_check
from rollout_trace.analysis.report import reward_check
from rollout_trace.analysis.spans import common_prefix_len, context_deltas, mask_audit
from rollout_trace.analysis.tools import tool_calls
from rollout_trace.analysis.training import training
from rollout_trace.artifact import Artifact, Turn, open_artifact
from rollout_trace.recipe.reward import reward, reward_waterfall


@pytest.fixture(scope="module")
def example():
    return open_artifact("scripted-smollm2")


def make_turn(index: int, prompt: list[int], output: list[int], trained: bool = True, logprobs: bool = True) -> Turn:
    return Turn(index, trained, ("bash",) if trained else (), np.asarray(prompt, np.int32), np.asarray(output, np.int32),
                np.full(len(output) if logprobs else 0, -0.5), np.asarray([0] * len(prompt) + [1] * len(output), np.int8))


def render(tok, messages, gen=True) -> list[int]:
    return tok.apply_chat_template(messages, add_generation_prompt=gen, tokenize=True, return_dict=False)


def two_turns(tok, model_text: str, history_text: str, extra_user: str = "ok") -> tuple[Turn, Turn]:
    """Turn 0 generates `model_text`; the template writes `history_text` back into turn 1's prompt."""
    base = [{"role": "user", "content": "hi"}]
    p0 = render(tok, base)
    out = tok.encode(model_text, add_special_tokens=False)
    p1 = render(tok, base + [{"role": "assistant", "content": history_text}, {"role": "user", "content": extra_user}])
    return make_turn(0, p0, out), make_turn(1, p1, tok.encode("done<|im_end|>", add_special_tokens=False))


def test_common_prefix():
    assert common_prefix_len(np.array([1, 2, 3]), np.array([1, 2, 4, 5])) == 2
    assert common_prefix_len(np.array([1, 2]), np.array([1, 2, 3])) == 2


def test_context_delta_is_the_tool_observation(example, vocab):
    d = context_deltas(example.turns)
    assert d[0].shared == 0 and d[0].added == example.turns[0].n_prompt
    t2 = example.turns[2]
    added = vocab.decode(t2.prompt_ids[d[2].shared:])
    assert d[2].shared == example.turns[1].n_prompt + example.turns[1].n_output
    assert added.startswith("\n<|im_start|>user\n<tool_response>\n3\n")  # bash printed 3
    assert added.endswith("<|im_start|>assistant\n")


def test_example_boundary_drift_is_whitespace(example, vocab):
    b0, b1 = boundaries(example.turns, vocab)
    assert not b0.continuous and b0.in_output and b0.cause.startswith("whitespace")
    assert b0.held_text.startswith(".\n<tool_call>") and b0.next_text.startswith(".<tool_call>")
    assert b1.continuous and verdict([b0, b1]).text == "1 of 2 boundaries drift"


def test_continuous_boundary(hf_tokenizer, vocab):
    t0, t1 = two_turns(hf_tokenizer, "Hello there<|im_end|>", "Hello there")
    b = boundary(t0, t1, vocab)
    assert b.continuous and b.diverge_at is None and verdict([b]).kind == "clean"


def test_drift_causes(hf_tokenizer, vocab):
    cases = {
        "end-of-turn": ("Hello there<|endoftext|>", "Hello there"),
        "stripped reasoning": ("<think>let me see</think>Hello<|im_end|>", "Hello"),
        "whitespace": ("Hello  there\n\n<|im_end|>", "Hello there"),
        "re-rendered template": ('{"b": 1, "a": 2}<|im_end|>', '{"a": 2, "b": 1}'),
    }
    for cause, (said, written) in cases.items():
        t0, t1 = two_turns(hf_tokenizer, said, written)
        b = boundary(t0, t1, vocab)
        assert not b.continuous and b.cause.startswith(cause), (cause, b)
        assert b.diverge_at >= t0.n_prompt and b.in_output


def test_retokenized_same_text(hf_tokenizer, vocab):
    t0, t1 = two_turns(hf_tokenizer, "Hello there<|im_end|>", "Hello there")
    # the model produced " there" as single characters: same text, other ids
    chars = [i for ch in "Hello there" for i in hf_tokenizer.encode(ch, add_special_tokens=False)]
    t0 = make_turn(0, t0.prompt_ids.tolist(), chars + hf_tokenizer.encode("<|im_end|>", add_special_tokens=False))
    b = boundary(t0, t1, vocab)
    assert b.cause.startswith("re-tokenized")


def test_tool_calls_paired_with_results(example):
    calls = tool_calls(align(example).calls, example.trace)
    assert [(c.turn, c.name) for c in calls] == [(0, "write"), (1, "bash")]
    assert calls[0].arguments["filePath"] == "solution.py" and calls[0].arguments_ok
    assert calls[0].result == "Wrote file successfully." and not calls[0].failed
    assert calls[1].result.strip() == "3"


def test_tool_failure_flagged(example):
    trace = [dataclasses.replace(c) for c in example.trace]
    last = trace[-1]
    msgs = json.loads(json.dumps(last.messages))
    msgs[-1]["content"] = "Traceback (most recent call last):\n  ValueError"
    trace[-1] = dataclasses.replace(last, messages=msgs)
    calls = tool_calls(trace[1:], trace)
    assert calls[1].failed and not calls[0].failed


def test_alignment_skips_bookkeeping_calls(example):
    al = align(example)
    assert al.note is None and [c.index for c in al.calls] == [1, 2, 3]


def test_engine_ids_against_retokenized(example, vocab):
    t = example.turns[1]
    call = align(example).calls[1]
    assert engine_check(t, call, vocab).status == "same"
    retok = t.prompt_ids.copy()
    retok[40] = 7
    check = engine_check(dataclasses.replace(t, retokenized_prompt_ids=retok), call, vocab)
    assert check.status == "differ" and check.diverge_at == 40 and check.engine_text != check.retok_text
    # seed layout: prompt_ids are the re-tokenized ones, engine ids live in trace.json
    seed = dataclasses.replace(t, prompt_source="retokenized", prompt_ids=retok, retokenized_prompt_ids=None)
    assert engine_check(seed, call, vocab).diverge_at == 40
    assert engine_check(seed, None, vocab).status == "no_engine_ids"


def _rows(turns):
    return training(Artifact(source="turns", root=None, summary=None, turns=turns))


def test_training_rows_clean_chain_is_one_row(hf_tokenizer):
    t0, t1 = two_turns(hf_tokenizer, "Hello there<|im_end|>", "Hello there")
    view = _rows([t0, t1])
    assert len(view.rows) == 1 and view.tally["clean"] == 1 and view.rows[0].n_trained == t0.n_output + t1.n_output


def test_training_rows_without_logprobs_reports_trl_refusal():
    view = _rows([make_turn(0, [1, 2], [3, 4], logprobs=False)])
    assert view.rows == [] and view.rows_error.startswith("TRL's _chain_to_sequences refuses its turns")


def test_mask_audit():
    t = make_turn(0, [1, 2, 3], [4, 5])
    t = dataclasses.replace(t, mask=np.array([0, 1, 0, 0, 1], np.int8))
    audit = mask_audit(t, trained_tokens=1)
    assert audit.ones_in_prompt == 1 and audit.zeros_in_output == 1


@pytest.mark.parametrize("env,tools,timed_out,final", [
    (None, {"bash": 1}, False, None),
    (0.75, {"write": 1}, False, -0.1),
    (0.75, {"bash": 2}, True, 0.0),
    (0.75, {"bash": 3}, False, 0.75),
    (1.0, {"bash": 40}, False, 1.0 - 0.3),
    (1.0, {"bash": 100}, False, 0.5),
])
def test_reward_recipe(env, tools, timed_out, final):
    steps = reward_waterfall(env, tools, timed_out)
    assert steps[0].label == "verifier score" and steps[-1].label == "final"
    got = reward(env, tools, timed_out)
    assert got is None if final is None else got == pytest.approx(final)


def test_reward_mismatch_is_shown(example):
    assert reward_check(example).matches
    tampered = dataclasses.replace(example, summary=msgspec.structs.replace(example.summary, reward_after_penalties=0.5))
    rc = reward_check(tampered)
    assert not rc.matches and rc.recomputed == pytest.approx(0.8) and rc.recorded == 0.5
