"""What "trained" means is what TRL 1.16 trains: the viewer's records against TRL's and OpenEnv's own
functions on every bundled example, the older proxy dialect, a missing trace.json and a refused capture."""

from __future__ import annotations

import json
import shutil

import pytest

from rollout_trace.analysis.training import TRL, record, training
from rollout_trace.artifact import load_artifact, open_artifact
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support.trl_reference import assert_matches_trl
from viewer.contract import TrainedNote
from viewer.render.outline import outline
from viewer.render.outline import training as training_record
from viewer.rollout import Rollout

EXAMPLES = ["scripted-smollm2", "smollm2-offline", *[f"smollm2-group/rollout-0{i}" for i in range(4)]]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_bundled_example_trains_what_trl_trains(name):
    assert_matches_trl(EXAMPLES_DIR / name, Rollout.load(open_artifact(str(EXAMPLES_DIR / name))))


def test_scripted_example_trains_all_three_turns_and_says_where_the_script_disagrees():
    r = Rollout.load(open_artifact("scripted-smollm2"))
    tr = r.training
    # before: the seed's rule trained turns 0 and 1 only (2 of 3); TRL 1.16 trains all three
    assert [t.seed_trained for t in r.artifact.turns] == [True, True, False]
    assert [tr.trained_tokens(i) for i in range(3)] == [70, 51, 17]
    assert [row.n_trained for row in tr.rows] == [70, 68] and [row.turns for row in tr.rows] == [(0,), (1, 2)]
    assert tr.disagreements == (2,)
    # opencode's title call is in TRL's trace with an all-zero mask: it trains nothing and forms no row
    assert [(c.call, c.trained_tokens) for c in tr.other_calls] == [(0, 0)]
    o = outline(r)
    assert o.summary.trained == "3 of 3 turns trained by TRL"
    c = o.header.counts
    assert (c.trained, c.trained_by, c.recorded) == (3, "TRL 1.16.0", False)
    # once per rollout: a short badge beside the counts, the whole sentence on hover
    assert o.header.disagree == "TRL trains turn 2; the original capture script would not (no tool call)"
    assert o.header.disagree_tip.count("marks turn 2 untrained because it made no tool call") == 1
    assert "TRL 1.16.0 trains its 17 generated tokens" in o.header.disagree_tip
    assert [t.trained_note for t in o.turns] == [None, None, TrainedNote("TRL 1.16.0", missing=False, script_trained=False)]
    assert (o.turns[2].trained_tokens, o.turns[2].output_tokens) == (17, 17)  # "17 of this turn's 17 generated tokens"


def test_a_captured_summary_records_both_counts_versioned():
    a = open_artifact("scripted-smollm2")
    got = record(training(a))
    assert (got.trl, got.basis, got.trained_turns, got.trained_tokens, got.rows) == ("1.16.0", "trace", 3, 138, 2)
    assert a.summary.trained_turns == 2  # the seed's count stays as written


def test_without_trace_json_the_turns_loss_mask_is_given_to_trl(tmp_path):
    dest = tmp_path / "a"
    shutil.copytree(EXAMPLES_DIR / "scripted-smollm2", dest)
    (dest / "trace.json").unlink()
    tr = training(load_artifact(dest))
    assert tr.basis == "turns" and tr.error is None
    assert [tr.trained_tokens(i) for i in range(3)] == [70, 51, 17]
    assert "trace.json is not in this artifact" in tr.rule and TRL in tr.rule


def _legacy(dest):
    """The older in-sandbox proxy's dialect: no engine prompt ids, no loss mask; prompts re-tokenized."""
    trace = json.loads((dest / "trace.json").read_text())
    for e in trace["turns"]:
        for k in ("prompt_token_ids", "loss_mask"):
            e.pop(k, None)
    (dest / "trace.json").write_text(json.dumps(trace))
    turns = json.loads((dest / "turns.json").read_text())
    for t in turns["turns"]:
        t["prompt_source"] = "retokenized"
        t.pop("retokenized_prompt_ids", None)
    (dest / "turns.json").write_text(json.dumps(turns))


def test_the_older_proxy_dialect_says_which_rule_applies(tmp_path):
    dest = tmp_path / "legacy"
    shutil.copytree(EXAMPLES_DIR / "scripted-smollm2", dest)
    _legacy(dest)
    r = Rollout.load(load_artifact(dest))
    tr = r.training
    assert tr.basis == "seed" and tr.disagreements == ()
    assert [tr.trained_tokens(i) for i in range(3)] == [70, 51, 0]
    assert "older in-sandbox proxy" in tr.rule and "cannot build a training trace" in tr.rule
    assert outline(r).summary.trained == "2 of 3 turns trained (the capture script's rule)"
    assert "older in-sandbox proxy" in training_record(r).rule


def test_a_capture_openenv_refuses_trains_nothing_and_says_why(tmp_path):
    dest = tmp_path / "refused"
    shutil.copytree(EXAMPLES_DIR / "scripted-smollm2", dest)
    trace = json.loads((dest / "trace.json").read_text())
    trace["turns"][2]["per_token_logps"] = []  # OpenEnv's training trace requires a logprob per sampled token
    (dest / "trace.json").write_text(json.dumps(trace))
    r = Rollout.load(load_artifact(dest))
    assert r.training.error and r.training.trained_turns == 0 and r.training.rows == []
    o = outline(r)
    assert any("cannot train this rollout" in n and "CaptureContractError" in n for n in o.header.notices)
    assert o.summary.trained.startswith("0 of 3 turns trained")
    assert training_record(r).error and "CaptureContractError" in training_record(r).rule
