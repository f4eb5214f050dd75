"""Rescore parts and models for tests that must not need the real model: arrays made up to the right
shapes, and a tiny randomly initialised Llama saved to a folder (no download)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rollout_trace.artifact import Artifact, RescoredTurn, RescoreMeta
from rollout_trace.artifact.schema import RESCORE_VERSION


def fake_arrays(a: Artifact, k: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """Plausible scores: the engine's logprobs nudged by small noise, positive entropies, ids in range."""
    rng = np.random.default_rng(seed)
    n = sum(t.n_output for t in a.turns)
    engine = np.concatenate([t.logprobs for t in a.turns]) if n else np.zeros(0)
    logprobs = np.minimum(engine + rng.normal(0, 0.05, n), 0)
    return {
        "offsets": np.concatenate([[0], np.cumsum([t.n_output for t in a.turns])]).astype(np.int64),
        "logprobs": logprobs.astype(np.float32),
        "entropy": rng.uniform(0, 3, n).astype(np.float32),
        "is_top1": (rng.uniform(size=n) < 0.5).astype(np.uint8),
        "topk_ids": rng.integers(0, 49152, (n, k)).astype(np.int32),
        "topk_logprobs": np.sort(-rng.uniform(0, 5, (n, k)), axis=1)[:, ::-1].astype(np.float32),
    }


def fake_meta(a: Artifact, k: int = 3, vocab: int = 49152, model: str = "fake/model") -> RescoreMeta:
    return RescoreMeta(format_version=RESCORE_VERSION, model=model, vocab_size=vocab, dtype="float32", device="cpu",
                       temperature=1.0, temperature_source="test", top_k=k,
                       turns=[RescoredTurn(t.index, t.seed_trained, None) for t in a.turns],
                       libraries={"torch": "test"}, duration_s=0.0, created="2026-01-01T00:00:00+00:00")


def tiny_llama(folder: Path, vocab: int, seed: int = 0) -> Path:
    """A 2-layer Llama with `vocab` ids and random weights, saved as a model folder."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                      tie_word_embeddings=True)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    return folder
