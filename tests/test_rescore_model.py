"""Re-scoring with a model: TRL's fused head against an independent full-logits log_softmax, the
row-once forward against one forward per turn, the chunked top-K, and the command line (JSON keys,
clear errors with documented exit codes). Nothing is downloaded: a tiny random Llama, or the
converted offline SmolLM2 (`scripts/local_model.sh convert`) when present."""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import replace

import numpy as np
import pytest
import torch

import local_model as lm
from conftest import requires
from rescore import RescoreError, forward
from rescore.model import load
from rescore.run import check_vocab, score_turns
from rollout_trace.analysis.training import training
from rollout_trace.artifact import Artifact, Turn, load_artifact
from support.rescore_fakes import tiny_llama
from viewer.cli import main

# scripts/test.sh converts the model first, so in the full suite these run (and fail if it is missing)
real_model = requires(lm.is_converted(), "the offline SmolLM2 is not converted (bash scripts/local_model.sh convert)")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_llama(tmp_path_factory.mktemp("tiny") / "tiny-llama", vocab=49152)


@pytest.fixture(scope="module")
def tiny_model(tiny):
    return load(str(tiny), "float32", "cpu", 1.0, local_files_only=True)


@pytest.fixture(scope="module")
def smol():
    return load(str(lm.model_dir()), "float32", "cpu", 1.0, local_files_only=True)


def full_logits_logprobs(model, ids: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """log p(ids[i] | ids[:i]) for i >= 1 from the model's plain forward: all logits, one log_softmax."""
    with torch.inference_mode():
        logits = model(input_ids=torch.as_tensor(ids, dtype=torch.long)[None]).logits[0, :-1].float() / temperature
    return torch.log_softmax(logits, -1).gather(1, torch.as_tensor(ids[1:], dtype=torch.long)[:, None])[:, 0].numpy()


def _chain(base: Turn, n: int = 3, prompt: int = 120, out: int = 24) -> list[Turn]:
    """A drift-free rollout from real token ids: each turn's prompt is the previous turn's prompt + output + a tail."""
    ids = np.concatenate([base.prompt_ids, base.output_ids])
    turns, at = [], prompt
    for i in range(n):
        p, o = ids[:at], ids[at:at + out]
        mask = np.concatenate([np.zeros(p.size, np.int8), np.ones(o.size, np.int8)])
        turns.append(Turn(i, True, ("bash",), p, o, np.zeros(o.size), mask))
        at += out + 9  # the next prompt adds 9 tokens of tool result
    return turns


@pytest.mark.slow  # 1-2 min on 2 shared cores (model load + two forwards)
@real_model
def test_trainer_logprob_equals_full_logits_log_softmax(smol, example_copy):
    a = load_artifact(example_copy)
    t = a.turns[0]
    ids = t.ids[-200:]  # a known tail: the end of the prompt and the whole output
    targets = np.arange(ids.size - t.n_output, ids.size)
    s = forward.score_sequence(smol.model, ids, targets, 5, 1.0)
    ref = full_logits_logprobs(smol.model, ids)[targets - 1]
    assert np.abs(s.logprobs - ref).max() < 1e-4
    # the top-K come from the same distribution: where the token is the argmax it is top-K's first
    assert np.array_equal(s.topk_ids[s.is_top1, 0], ids[targets][s.is_top1])
    assert np.abs(s.topk_logprobs[s.is_top1, 0] - s.logprobs[s.is_top1]).max() < 1e-4


def test_row_once_equals_one_forward_per_turn(tiny_model, example_copy):
    """A property of the causal forward, not of the weights: on the tiny random Llama (SmolLM2's vocabulary and
    architecture family) in seconds, where SmolLM2 took minutes."""
    turns = _chain(load_artifact(example_copy).turns[0])
    trl_rows = training(Artifact(source="chain", root=None, summary=None, turns=turns)).rows
    rows, meta_rows = score_turns(tiny_model, turns, trl_rows, 5, per_turn=False, progress=lambda _: None)
    alone, meta_alone = score_turns(tiny_model, turns, trl_rows, 5, per_turn=True, progress=lambda _: None)
    assert [r.row for r in meta_rows] == [0, 0, 0] and [r.row for r in meta_alone] == [None] * 3
    assert np.array_equal(rows["offsets"], alone["offsets"])
    assert np.abs(rows["logprobs"] - alone["logprobs"]).max() < 1e-4
    assert np.abs(rows["entropy"] - alone["entropy"]).max() < 1e-4
    assert (rows["topk_ids"][:, 0] == alone["topk_ids"][:, 0]).mean() > 0.95  # near-ties may swap


def test_chunked_topk_equals_full_softmax(tiny, monkeypatch):
    """Tiles smaller than the vocabulary and than the positions: the running top-K is still exact."""
    monkeypatch.setattr(forward, "VOCAB_TILE", 5000)
    monkeypatch.setattr(forward, "POS_TILE", 7)
    tm = load(str(tiny), "float32", "cpu", 0.7, local_files_only=True)
    ids = np.random.default_rng(0).integers(0, 49152, 40)
    targets = np.arange(20, 40)
    s = forward.score_sequence(tm.model, ids, targets, 4, 0.7)
    with torch.inference_mode():
        logits = tm.model(input_ids=torch.as_tensor(ids)[None]).logits[0].float() / 0.7
    logp = torch.log_softmax(logits, -1)[targets - 1]
    v, i = logp.topk(4, -1)
    assert np.array_equal(s.topk_ids, i.numpy()) and np.allclose(s.topk_logprobs, v.numpy(), atol=1e-5)
    assert np.allclose(s.logprobs, logp.gather(1, torch.as_tensor(ids[targets])[:, None])[:, 0].numpy(), atol=1e-5)


def test_too_small_vocabulary_is_refused_before_any_forward(tmp_path, example_copy):
    small = tiny_llama(tmp_path / "small", vocab=1000)
    a = load_artifact(example_copy)
    before = sorted(a.rescores)
    with pytest.raises(RescoreError, match=r"turn 0, prompt_ids\[\d+\]: token id \d+ is outside the model's "
                                           r"vocabulary of 1000 ids"):
        check_vocab(a.turns, 1000)
    out, err = io.StringIO(), io.StringIO()
    from viewer.cli import rescore as rescore_command
    args = _args(["rescore", str(example_copy), "--model", str(small), "--json"])
    assert rescore_command.run(args, out, err) == 5
    res = json.loads(out.getvalue())
    assert res["ok"] is False and res["exit_code"] == 5 and "vocabulary of 1000 ids" in res["error"]
    assert "Traceback" not in err.getvalue()
    assert sorted(load_artifact(example_copy).rescores) == before


def _args(argv):
    import argparse

    from viewer.cli import rescore as rescore_command

    p = argparse.ArgumentParser()
    rescore_command.add_parser(p.add_subparsers(dest="command"))
    return p.parse_args(argv)


def test_json_output_has_the_promised_keys(tiny, example_copy, capsys):
    rc = main(["rescore", str(example_copy), "--model", str(tiny), "--top-k", "2", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    res = json.loads(out)  # exactly one object: json.loads refuses trailing text
    for key in ("tokens", "temperature", "mean_abs_log_ratio", "max_abs_log_ratio", "mean_kl_k3", "mean_entropy",
                "outside_clip"):
        assert key in res, key
    a = load_artifact(example_copy)
    assert res["tokens"] == sum(t.n_output for t in a.turns) and res["temperature"] == 1.0
    assert res["part"] == "tiny-llama.float32.cpu.t1" and a.rescores[res["part"]].topk_ids.shape[1] == 2
    assert [t["row"] for t in res["turns"]] == [0, 1, 1]  # turn 2 is read off row 1, which contains it
    # a random model disagrees with the engine everywhere
    assert res["outside_clip"] > 0 and res["mean_abs_log_ratio"] > 1


def test_errors_are_messages_with_exit_codes(tmp_path, example_copy, capsys):
    assert main(["rescore", str(example_copy), "--model", str(tmp_path / "nope")]) == 5
    assert "cannot load the model" in capsys.readouterr().err
    bad = tmp_path / "bad"
    shutil.copytree(example_copy, bad)
    (bad / "summary.json").write_text("{")
    assert main(["rescore", str(bad), "--model", "x", "--json"]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["exit_code"] == 1 and "summary.json" in res["error"]
    assert main(["rescore", str(example_copy), "--model", "x", "--top-k", "-1"]) == 2


def test_output_copy_leaves_the_source_alone(tiny, tmp_path, example_copy, capsys):
    out = tmp_path / "copy"
    assert main(["rescore", str(example_copy), "--model", str(tiny), "--top-k", "0", "-o", str(out)]) == 0
    assert "tiny-llama.float32.cpu.t1" not in load_artifact(example_copy).rescores
    assert "tiny-llama.float32.cpu.t1" in load_artifact(out).rescores
    assert "outside clip" in capsys.readouterr().out
    assert main(["rescore", str(example_copy), "--model", str(tiny), "-o", str(out)]) == 2


def test_temperature_recorded_in_the_trace_is_used(tiny, example_copy):
    from rescore import recorded_temperature
    from rescore.run import choose_temperature

    a = load_artifact(example_copy)
    assert recorded_temperature(a) == (None, "nothing recorded")
    a.trace[1] = replace(a.trace[1], metadata={**a.trace[1].metadata, "sampling_params": {"temperature": 0.7}})
    assert choose_temperature(a, None) == (0.7, "trace.json call 1 metadata.sampling_params.temperature")
    assert choose_temperature(a, 1.0) == (1.0, "--temperature")


def test_token_tile_changes_no_number(tiny, monkeypatch):
    """The CPU token tile only bounds memory: TRL's 4096-token tile and a 5-token tile give the same scores."""
    tm = load(str(tiny), "float32", "cpu", 1.0, local_files_only=True)
    ids = np.random.default_rng(1).integers(0, 49152, 64)
    targets = np.arange(10, 64)
    monkeypatch.setattr(forward, "CPU_TOKEN_TILE", 4096)
    wide = forward.score_sequence(tm.model, ids, targets, 3, 1.0)
    monkeypatch.setattr(forward, "CPU_TOKEN_TILE", 5)
    narrow = forward.score_sequence(tm.model, ids, targets, 3, 1.0)
    assert np.allclose(wide.logprobs, narrow.logprobs, atol=1e-6) and np.array_equal(wide.is_top1, narrow.is_top1)
    assert np.allclose(wide.entropy, narrow.entropy, atol=1e-5)
    from trl.kernels import chunked_logprob
    assert chunked_logprob.TOKEN_CHUNK_SIZE == 4096  # restored


def test_capture_rescore_step_adds_a_part(tiny, example_copy):
    from capture.progress import Reporter
    from capture.run import CaptureConfig, rescore_after_capture

    lines = []
    a = load_artifact(example_copy)
    rescore_after_capture(a, CaptureConfig(rescore=True, trainer_model=str(tiny)), Reporter(lambda *x, **k: lines.append(x)))
    assert "tiny-llama.float32.cpu.t1" in load_artifact(example_copy).rescores


def test_rollout_api_gives_plain_data(tiny, example_copy):
    from viewer.rollout import Rollout

    main(["rescore", str(example_copy), "--model", str(tiny), "--json"])
    r = Rollout.load(load_artifact(example_copy))
    name = "tiny-llama.float32.cpu.t1"
    assert name in [p["name"] for p in r.rescore_parts()]
    t = r.trainer_tokens(1, name, 0.2, 0.28, advantage=-1.0)
    n = r.artifact.turns[1].n_output
    assert t["start"] == r.artifact.turns[1].n_prompt
    assert all(len(t[k]) == n for k in ("trainer_lp", "engine_lp", "ratio", "loss", "clipped_low", "topk_text"))
    json.dumps(t)  # plain data only
    s = r.trainer_stats(name)
    assert len(s["turns"]) == len(r.artifact.turns) and len(s["rollout"]["histogram"]) == len(s["histogram_edges"]) + 1
    json.dumps(s)
