"""Load the training model the way TRL's async GRPO trainer holds it, and say exactly which model it is.

The trainer patches its policy with `trl.trainer.utils.add_fused_lm_head`, so that a forward with
`fused_lm_head=True` returns per-token log-probabilities, entropy and top-1 flags computed in tiles,
never the `(tokens, vocab)` logits. We patch the same way with the same function, so the numbers we
show are the trainer's. The weights are identified by their Hub revision, or by the sha256 of the
weight files when they come from a folder, so two re-scorings can be told apart later.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollout_trace.artifact.errors import RolloutTraceError

DTYPES = ("float32", "bfloat16")
OUTPUTS = ("log_probs", "entropy", "is_top1")


class RescoreError(RolloutTraceError, RuntimeError):
    """Re-scoring cannot go on; the message says why and what to do."""


@dataclass
class TrainerModel:
    model: Any  # a transformers causal LM, patched with TRL's fused LM head
    name: str  # path or Hub id as given
    dtype: str
    device: str
    temperature: float
    vocab_size: int  # rows of the output embedding: the ids it can score
    revision: str | None
    sha256: str | None


def weights_sha256(folder: Path) -> str:
    """sha256 over the weight files of a model folder (names and bytes, in name order)."""
    h = hashlib.sha256()
    files = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin", ".pt") and p.is_file())
    for p in files:
        h.update(p.name.encode() + b"\0")
        with p.open("rb") as f:
            while block := f.read(1 << 22):
                h.update(block)
    return h.hexdigest()


def load(name: str, dtype: str = "float32", device: str = "cpu", temperature: float = 1.0,
         local_files_only: bool = False) -> TrainerModel:
    """The model in eval mode on `device`, patched with TRL's fused LM head at `temperature`."""
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging
    from trl.trainer.utils import add_fused_lm_head

    hf_logging.disable_progress_bar()  # our progress lines say what happens; a bar per weight file is noise

    if dtype not in DTYPES:
        raise RescoreError(f"--dtype {dtype}: choose one of {', '.join(DTYPES)}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RescoreError(f"--device {device}: this torch build sees no CUDA device; use --device cpu")
    if not temperature > 0:
        raise RescoreError(f"--temperature {temperature}: the logits are divided by it, so it must be > 0")
    try:
        model = AutoModelForCausalLM.from_pretrained(name, dtype=getattr(torch, dtype), trust_remote_code=False,
                                                     local_files_only=local_files_only)  # no code, no prompt
    except (OSError, ValueError) as e:
        raise RescoreError(f"cannot load the model {name!r}: {str(e).splitlines()[0][:300]}. Give a model folder "
                           "or a Hub id of a causal LM (or --local-model for the offline SmolLM2)") from None
    model.to(device).eval()  # type: ignore[arg-type]  # transformers' stub types .to's device as the model
    add_fused_lm_head(model, temperature=temperature, outputs=OUTPUTS)
    folder = Path(name)
    return TrainerModel(model, name, dtype, device, temperature,
                        vocab_size=int(model.get_output_embeddings().weight.shape[0]),
                        revision=None if folder.is_dir() else getattr(model.config, "_commit_hash", None),
                        sha256=weights_sha256(folder) if folder.is_dir() else None)
