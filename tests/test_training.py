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
    assert "3 of 3 turns trained by TRL" in o.summary_html
    assert "3 trained by TRL 1.16.0" in o.header_html
    # once per rollout: a short badge beside the counts, the whole sentence on hover
    assert o.header_html.count("data-testid='trained-disagree'") == 1
    assert o.header_html.count("marks turn 2 untrained because it made no tool call") == 1
    assert ">TRL trains turn 2; the original capture script would not (no tool call)</span>" in o.header_html
    assert "TRL 1.16.0 trains its 17 generated tokens" in o.header_html
    assert [bool(t.trained_html) for t in o.turns] == [False, False, True]  # and on the turn
    assert "17 of this turn&#x27;s 17 generated tokens" in o.turns[2].trained_html or \
        "17 of this turn's 17 generated tokens" in o.turns[2].trained_html


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
    assert "2 of 3 turns trained (the capture script's rule)" in outline(r).summary_html
    assert "older in-sandbox proxy" in training_record(r).html


def test_a_capture_openenv_refuses_trains_nothing_and_says_why(tmp_path):
    dest = tmp_path / "refused"
    shutil.copytree(EXAMPLES_DIR / "scripted-smollm2", dest)
    trace = json.loads((dest / "trace.json").read_text())
    trace["turns"][2]["per_token_logps"] = []  # OpenEnv's training trace requires a logprob per sampled token
    (dest / "trace.json").write_text(json.dumps(trace))
    r = Rollout.load(load_artifact(dest))
    assert r.training.error and r.training.trained_turns == 0 and r.training.rows == []
    o = outline(r)
    assert "cannot train this rollout" in o.header_html and "CaptureContractError" in o.header_html
    assert "0 of 3 turns trained" in o.summary_html
