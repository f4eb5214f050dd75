"""The trainer-view numbers against TRL's own code: `AsyncGRPOTrainer.compute_loss` run on the same
tensors (with a stand-in trainer and model, so nothing is trained or loaded), and the missing-logprob
rule (never a ratio of 1)."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from rollout_trace.analysis import trainer_view as tv
from rollout_trace.analysis.training import training
from rollout_trace.artifact import load_artifact, write_rescore
from support.rescore_fakes import fake_arrays, fake_meta


def trl_compute_loss(trainer_lp: np.ndarray, engine_lp: np.ndarray, entropy: np.ndarray, advantage: float,
                     eps_low: float, eps_high: float) -> tuple[float, dict[str, float]]:
    """TRL 1.16's compute_loss on one packed row whose every position is a trained token."""
    from trl.experimental.async_grpo.async_grpo_trainer import AsyncGRPOTrainer

    m = trainer_lp.size
    lp = torch.tensor(trainer_lp, dtype=torch.float64)[None]
    model = lambda **kw: SimpleNamespace(log_probs=lp, entropy=torch.tensor(entropy, dtype=torch.float64)[None])  # noqa: E731
    ones = torch.ones(1, m, dtype=torch.long)
    inputs = {
        "attention_mask": ones, "input_ids": ones, "position_ids": torch.arange(m)[None], "shift_labels": ones,
        "token_index": torch.arange(m)[None], "old_log_probs": torch.tensor(engine_lp, dtype=torch.float64)[None],
        "advantages": torch.full((1, m), advantage, dtype=torch.float64), "segment_id": torch.zeros(1, m, dtype=torch.long),
        "tree_kv_index": torch.arange(m)[None], "tree_cu_seqlens_q": torch.tensor([[0, m]]),
        "tree_cu_seqlens_k": torch.tensor([[0, m]]), "tree_max_seqlens": torch.tensor([[m, m]]),
        "global_n_tokens": torch.tensor([float(m)]), "global_n_forward_tokens": torch.tensor([float(m)]),
        "mean_seq_len": torch.tensor([float(m)]),
    }
    trainer = SimpleNamespace(
        aux_loss_enabled=False, epsilon_low=eps_low, epsilon_high=eps_high, current_gradient_accumulation_steps=1,
        accelerator=SimpleNamespace(num_processes=1, reduce=lambda t, reduction: t, gather=lambda t: t),
        _metrics=defaultdict(lambda: defaultdict(list)), _last_forward_time_s=0.0, _step_forward_tokens=0.0,
        _step_trained_tokens=0.0, _step_seq_len_weighted=0.0, _step_samples=0.0, _step_forward_s=0.0)
    loss = AsyncGRPOTrainer.compute_loss(trainer, model, inputs)
    return float(loss), {k: v[-1] for k, v in trainer._metrics["train"].items()}


@pytest.fixture
def scored(example_copy):
    a = load_artifact(example_copy)
    arrays = fake_arrays(a, seed=3)
    arrays["logprobs"][::7] -= 0.4  # some tokens far outside the clip band, both ways
    arrays["logprobs"][3::11] = np.minimum(arrays["logprobs"][3::11] + 0.3, 0)
    part = write_rescore(example_copy, "m", fake_meta(a), arrays, a.turns)
    return a, part


@pytest.mark.parametrize("eps", tv.EPS_CHOICES)
@pytest.mark.parametrize("advantage", [1.0, -1.0, 0.37])
def test_loss_clip_kl_and_entropy_equal_trl_compute_loss(scored, eps, advantage):
    a, part = scored
    views = tv.rollout_views(a, part, training(a), *eps, advantage)
    trained = [v for v in views if v.trained.any()]
    pick = lambda name: np.concatenate([getattr(v, name)[v.trained] for v in trained])  # noqa: E731
    loss, metrics = trl_compute_loss(pick("trainer_logprob"), pick("engine_logprob"), pick("entropy"), advantage, *eps)
    s = tv.stats(views, trained_only=True)
    n = s.tokens
    assert loss == pytest.approx(s.mean_loss, rel=1e-9, abs=1e-12)
    assert metrics["kl"] == pytest.approx(s.mean_kl_k3, rel=1e-9, abs=1e-15)
    assert metrics["entropy"] == pytest.approx(s.mean_entropy, rel=1e-6)
    assert metrics["ratio"] == pytest.approx(pick("ratio").mean(), rel=1e-12)
    assert metrics["clip_ratio/low_mean"] == pytest.approx(s.clipped_low / n)
    assert metrics["clip_ratio/high_mean"] == pytest.approx(s.clipped_high / n)
    assert s.clipped_low + s.clipped_high > 0 if advantage in (1.0, -1.0) else True


def test_per_token_terms_are_trls_formulas_on_the_same_tensors(scored):
    """Token by token, with TRL's torch expressions (compute_loss, trl 1.16) written out."""
    a, part = scored
    v = tv.token_view(a.turns[0], part, training(a).masks[0], 0.2, 0.28, advantage=-1.0)
    lp, old = torch.tensor(v.trainer_logprob), torch.tensor(v.engine_logprob)
    log_ratio = lp - old
    coef_1 = torch.exp(log_ratio)
    coef_2 = torch.clamp(coef_1, 1 - 0.2, 1 + 0.28)
    adv = torch.full_like(coef_1, -1.0)
    assert np.allclose(v.log_ratio, log_ratio.numpy(), rtol=0, atol=0)
    assert np.allclose(v.kl_k3, ((coef_1 - 1) - log_ratio).numpy(), rtol=1e-12, atol=1e-15)
    assert np.allclose(v.loss, (-torch.min(coef_1 * adv, coef_2 * adv)).numpy(), rtol=1e-12)
    assert np.array_equal(v.clipped_low, ((coef_1 < 1 - 0.2) & (adv < 0)).numpy())
    assert not v.clipped_high.any()  # A < 0 never high-clips


def test_missing_engine_logprobs_are_never_ratio_one(scored):
    a, part = scored
    t = a.turns[1]
    bare = type(t)(t.index, t.seed_trained, t.tool_calls, t.prompt_ids, t.output_ids, np.zeros(0), t.mask)
    v = tv.token_view(bare, part, np.ones(t.n_output, np.int8), advantage=1.0)
    assert np.isnan(v.engine_logprob).all() and np.isnan(v.ratio).all() and np.isnan(v.loss).all()
    assert not v.outside.any() and not v.clipped_high.any()
    s = tv.stats([v])
    assert s.tokens == t.n_output and s.with_engine == 0
    assert np.isnan(s.mean_abs_log_ratio) and np.isnan(s.mean_kl_k3) and sum(s.histogram) == 0
    assert np.isfinite(s.mean_entropy)
    assert tv.stats_dict(s)["mean_abs_log_ratio"] is None


def test_histogram_bins_and_outside_counts(scored):
    a, part = scored
    views = tv.rollout_views(a, part, training(a), 0.2, 0.2)
    s = tv.stats(views)
    lr = np.concatenate([v.log_ratio for v in views])
    assert sum(s.histogram) == lr.size and len(s.histogram) == len(tv.HIST_EDGES) + 1
    assert s.histogram[0] == int((lr < -1).sum()) and s.histogram[-1] == int((lr >= 1).sum())
    ratio = np.exp(lr)
    assert s.outside_clip == int(((ratio < 0.8) | (ratio > 1.2)).sum()) > 0
    assert s.max_abs_log_ratio == pytest.approx(np.abs(lr).max())
