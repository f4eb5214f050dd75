"""Forward token sequences through the patched model and read off each scored token's numbers.

One call of the patched model (`fused_lm_head=True`, `shift_labels`, `position_ids`, as
`AsyncGRPOTrainer.compute_loss` calls it) gives every scored position's log-probability, entropy and
top-1 flag from TRL's kernel. The top-K alternatives are not something TRL computes, so we project
the same final hidden states (caught with a forward hook on the backbone TRL calls) through the
LM head ourselves, in tiles of positions by vocabulary, keeping a running log-sum-exp and a running
top-K: memory stays `positions_per_tile x vocab_per_tile` floats whatever the sequence length.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

# A top-K tile is POS_TILE x VOCAB_TILE float32 values (64 MB), small beside any model.
POS_TILE = 512
VOCAB_TILE = 32768
# TRL folds the LM head in [4096 tokens x 32768 vocab] tiles, sized for a GPU. On CPU its torch
# fallback holds about five float32 temporaries of a tile at once (~2.5 GB). Each token's statistics
# are folded on their own, so fewer tokens per tile changes no number (tests/test_rescore_model.py
# checks), only the peak: 1024 tokens keep it near 0.6 GB. The vocabulary tiling, which decides the
# summation order, stays TRL's.
CPU_TOKEN_TILE = 1024


@dataclass
class Scores:
    """Per scored token of one sequence, in the order the positions were asked for."""

    logprobs: np.ndarray  # float32 [n]
    entropy: np.ndarray  # float32 [n]
    is_top1: np.ndarray  # bool [n]
    topk_ids: np.ndarray  # int32 [n, K]
    topk_logprobs: np.ndarray  # float32 [n, K]


def head_transform(config) -> tuple[float, float | None]:
    """(logit scale, final softcap) as `add_fused_lm_head` reads them, so top-K and log_probs agree."""
    text = config.get_text_config()
    softcap = getattr(text, "final_logit_softcapping", None)
    scale = getattr(text, "logit_scale", None)
    if scale is None:
        scale = getattr(text, "output_multiplier", None)
    if scale is None:
        scale = getattr(text, "lm_head_multiplier", None)
    if scale is None and getattr(text, "logits_scaling", None) is not None:
        scale = text.logits_scaling if text.model_type == "hyperclovax" else 1 / text.logits_scaling
    return (1.0 if scale is None else float(scale)), softcap


def _topk_tiles(hidden, weight, bias, k: int, temperature: float, scale: float, softcap: float | None):
    """Top-K log-probabilities of `hidden @ weight.T` (one position tile), vocabulary tile by tile."""
    import torch

    h = hidden.float()
    n, vocab = h.shape[0], weight.shape[0]
    lse = torch.full((n,), -math.inf)
    best_v = torch.full((n, k), -math.inf)
    best_i = torch.zeros((n, k), dtype=torch.long)
    for v0 in range(0, vocab, VOCAB_TILE):
        z = h @ weight[v0:v0 + VOCAB_TILE].float().T
        if bias is not None:
            z += bias[v0:v0 + VOCAB_TILE].float()
        z *= scale
        if softcap:
            z = softcap * torch.tanh(z / softcap)
        z /= temperature
        lse = torch.logaddexp(lse, torch.logsumexp(z, dim=-1))
        if k:
            v, i = z.topk(min(k, z.shape[1]), dim=-1)
            cat_v, cat_i = torch.cat([best_v, v], dim=1), torch.cat([best_i, i + v0], dim=1)
            best_v, order = cat_v.topk(k, dim=-1)
            best_i = cat_i.gather(1, order)
    return best_i, best_v - lse[:, None]


def score_sequence(model, ids: np.ndarray, targets: np.ndarray, k: int, temperature: float) -> Scores:
    """Score tokens `ids[targets]` (each predicted from the position before it) in one forward."""
    import torch

    device = model.get_output_embeddings().weight.device
    if targets.size and int(targets.min()) < 1:
        raise ValueError("the first token of a sequence has nothing before it to be predicted from")
    labels = np.full(ids.size, -100, dtype=np.int64)
    labels[targets - 1] = ids[targets]
    caught: dict[str, Any] = {}
    backbone = model.base_model  # what the fused forward runs before its LM head
    hook = backbone.register_forward_hook(lambda _m, _a, out: caught.__setitem__("h", out.last_hidden_state))
    try:
        with torch.inference_mode(), _token_tile(device):
            out = model(input_ids=torch.as_tensor(ids, dtype=torch.long, device=device)[None],
                        position_ids=torch.arange(ids.size, device=device)[None],
                        shift_labels=torch.as_tensor(labels, device=device)[None], fused_lm_head=True)
            pos = torch.as_tensor(targets - 1, device=device)
            logprobs, entropy, top1 = (x[0, pos].float().cpu().numpy() for x in (out.log_probs, out.entropy, out.is_top1))
            del out
            topk_i, topk_v = _topk(model, caught.pop("h")[0], pos, k, temperature)
    finally:
        hook.remove()
    return Scores(logprobs.astype(np.float32), entropy.astype(np.float32), top1.astype(bool), topk_i, topk_v)


@contextmanager
def _token_tile(device):
    """TRL's token tile, made CPU_TOKEN_TILE for the duration of a CPU forward (see above)."""
    from trl.kernels import chunked_logprob

    before = chunked_logprob.TOKEN_CHUNK_SIZE
    if device.type == "cpu":
        chunked_logprob.TOKEN_CHUNK_SIZE = min(before, CPU_TOKEN_TILE)
    try:
        yield
    finally:
        chunked_logprob.TOKEN_CHUNK_SIZE = before


def _topk(model, hidden, pos, k: int, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    head = model.get_output_embeddings()
    scale, softcap = head_transform(model.config)
    ids, lps = [], []
    for p0 in range(0, pos.numel(), POS_TILE):
        i, v = _topk_tiles(hidden[pos[p0:p0 + POS_TILE]], head.weight, head.bias, k, temperature, scale, softcap)
        ids.append(i.cpu().numpy().astype(np.int32))
        lps.append(v.cpu().numpy().astype(np.float32))
    if not ids:
        return np.zeros((0, k), np.int32), np.zeros((0, k), np.float32)
    return np.concatenate(ids), np.concatenate(lps)
