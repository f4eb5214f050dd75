"""`python -m capture`: the seed's flags, with the same meaning and defaults, plus backend, endpoint,
dataset, example and push. See capture/run.py for what a capture does."""

from __future__ import annotations

import argparse
import os
import sys

import crash_log

from .agent import Cancelled
from .config import BACKENDS, CaptureConfig
from .errors import CaptureError
from .live import follow_printer
from .progress import print_progress
from .run import capture

DEFAULTS = CaptureConfig()  # the flags' defaults are the library's


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m capture", description="Capture one opencode rollout trace as an artifact.")
    p.add_argument("--model", default=DEFAULTS.model, help="served model name (and tokenizer id)")
    p.add_argument("--backend", choices=BACKENDS, default=DEFAULTS.backend,
                   help="where opencode runs: a Hugging Face sandbox, or this machine")
    p.add_argument("--sandbox-vllm-url", default=None, help="public URL the remote sandbox reaches vLLM through")
    p.add_argument("--endpoint", default=None, help="local backend: the OpenAI-compatible server (vLLM) to forward to")
    p.add_argument("--local-model", action="store_true",
                   help="no GPU, no network: serve SmolLM2-135M-Instruct with vLLM's CPU build for this capture "
                        "(prepared once by scripts/local_model.sh prepare; implies --backend local)")
    p.add_argument("--dataset", default=DEFAULTS.dataset, help="Hub dataset id, or a local .jsonl/.parquet file "
                   "of rows with `problem` and `tests`")
    p.add_argument("--example", default=None, help="a training script defining build_dataset (TRL's "
                   "opencode_hf_sandbox.py): the source of truth for which task an index points at")
    p.add_argument("--n-prompts", type=int, default=DEFAULTS.n_prompts, help="same as training, so task indices line up")
    p.add_argument("--seed", type=int, default=DEFAULTS.seed, help="dataset seed: decides which task each index points at")
    p.add_argument("--rollout-seed", type=int, default=None, help="seed for the rollout only (defaults to --seed)")
    p.add_argument("--task-index", type=int, default=DEFAULTS.task_index, help="which task of the built dataset to capture")
    p.add_argument("--sandbox-image", default=DEFAULTS.sandbox_image)
    p.add_argument("--sandbox-flavor", default=DEFAULTS.sandbox_flavor)
    p.add_argument("--out-dir", default=DEFAULTS.out_dir)
    p.add_argument("--timeout-s", type=float, default=DEFAULTS.timeout_s)
    p.add_argument("--tokenizer", default=None, help="tokenizer path or id when it differs from --model")
    p.add_argument("--max-output-tokens", type=int, default=DEFAULTS.max_output_tokens, help="per-turn completion cap")
    p.add_argument("--context", type=int, default=DEFAULTS.context, help="the model's context length, told to opencode")
    p.add_argument("--rescore", action="store_true",
                   help="re-score the captured rollout with the training model right after (python -m viewer rescore)")
    p.add_argument("--trainer-model", default=None, help="with --rescore: the training model (default: the local "
                   "SmolLM2 with --local-model, else --tokenizer or --model)")
    p.add_argument("--group-size", type=int, default=None, metavar="K",
                   help="capture a GRPO group: K rollouts of the same task (TRL's num_generations) with rollout "
                        "seeds rollout_seed..rollout_seed+K-1, written as OUT/group.json + OUT/rollout-NN")
    p.add_argument("--parallel", type=int, default=None, metavar="P",
                   help="with --group-size: rollouts at once (default min(K, 4) local, min(K, 8) hf-sandbox)")
    p.add_argument("--no-request-seed", action="store_true",
                   help="with --group-size: record each rollout's seed but do not send it as the request `seed` "
                        "(for engines that reject or crash on seeded requests; implied by --local-model)")
    p.add_argument("--follow", action="store_true",
                   help="print one line per model call as the proxy records it (turn, tokens in/out, tool, the "
                        "start of the output), while the agent works")
    p.add_argument("--push-to-dataset", default=os.environ.get("PUSH_TO_DATASET"),
                   help="Hub dataset repo to upload the artifact to (or set PUSH_TO_DATASET)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    cfg = CaptureConfig(
        model=a.model, backend="local" if a.local_model else a.backend, endpoint=a.endpoint, sandbox_vllm_url=a.sandbox_vllm_url,
        dataset=a.dataset, example=a.example, n_prompts=a.n_prompts, seed=a.seed, rollout_seed=a.rollout_seed,
        task_index=a.task_index, sandbox_image=a.sandbox_image, sandbox_flavor=a.sandbox_flavor, out_dir=a.out_dir,
        timeout_s=a.timeout_s, push_to_dataset=a.push_to_dataset, tokenizer=a.tokenizer,
        max_output_tokens=a.max_output_tokens, context=a.context, local_model=a.local_model,
        rescore=a.rescore, trainer_model=a.trainer_model,
        api_key=os.environ.get("OPENENV_LLM_API_KEY") or None, hf_token=os.environ.get("HF_TOKEN") or None)
    if a.parallel is not None and a.group_size is None:
        print("capture failed: --parallel needs --group-size", file=sys.stderr)
        return 2
    live = follow_printer() if a.follow else None
    try:
        if a.group_size is not None:
            from .group import capture_group, print_group_progress

            capture_group(cfg, a.group_size, a.parallel, progress=print_group_progress,
                          send_seed=False if a.no_request_seed else None, live=live)
        else:
            capture(cfg, progress=print_progress, live=live)
    except CaptureError as e:
        print(f"capture failed: {e}", file=sys.stderr)
        return 1
    except (Cancelled, KeyboardInterrupt):
        print("capture cancelled; nothing was written", file=sys.stderr)
        return 130
    except Exception as e:  # a message, never a traceback
        details = crash_log.unexpected("capture")
        print(f"capture failed unexpectedly: {type(e).__name__}: {e}{details}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
