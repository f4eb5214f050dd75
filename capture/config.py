"""What one capture is asked to do (`CaptureConfig`), its defaults, and whether the request is well formed.

The CLI's flags, the Capture tab's form defaults and the library all read the defaults here, so a
default lives in one place. `problems(cfg)` checks the settings before anything starts (no I/O): each
problem is a `CaptureError` naming its setting, which the CLI shows as a flag and the tab as a label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable
from urllib.parse import urlsplit, urlunsplit

from . import opencode
from .errors import CaptureError

DEFAULT_DATASET = "agentica-org/DeepCoder-Preview-Dataset"
DEFAULT_IMAGE = "ghcr.io/huggingface/openenv-opencode-sandbox:latest"
DEFAULT_FLAVOR = "cpu-basic"
BACKENDS = ("local", "hf-sandbox")

# The settings that decide the task, and those that decide the model endpoint: Preview and Check
# endpoint validate only their own, so a half-filled form can already preview its task.
TASK_FIELDS = ("dataset", "example", "n_prompts", "seed", "task_index")
ENDPOINT_FIELDS = ("backend", "model", "endpoint", "sandbox_vllm_url")


@dataclass
class CaptureConfig:
    model: str = "Qwen/Qwen3-8B"
    backend: str = "hf-sandbox"  # or "local": the agent's commands run on this machine, as this user
    endpoint: str | None = None  # local: the OpenAI-compatible server the proxy forwards to
    sandbox_vllm_url: str | None = None  # hf-sandbox: a URL the remote sandbox can reach
    dataset: str = DEFAULT_DATASET
    example: str | None = None
    n_prompts: int = 64
    seed: int = 0
    rollout_seed: int | None = None
    task_index: int = 0
    sandbox_image: str = DEFAULT_IMAGE
    sandbox_flavor: str = DEFAULT_FLAVOR
    out_dir: str = "trace_artifact"
    timeout_s: float = 900.0
    push_to_dataset: str | None = None
    tokenizer: str | None = None  # path or hub id of the tokenizer, for re-tokenized prompts and offline rendering
    max_output_tokens: int = 8192
    context: int = 32768
    deny_tools: tuple[str, ...] = opencode.DENIED_TOOLS
    local_model: bool = False  # serve SmolLM2-135M-Instruct with vLLM CPU for this capture (local_model.py)
    rescore: bool = False  # re-score the written artifact with the training model (run.rescore_after_capture)
    trainer_model: str | None = None  # that model; None: the local SmolLM2 with local_model, else tokenizer/model
    request_seed: int | None = None  # sent as each model call's `seed` (group rollouts); None = the engine's own
    # Asked for by a visitor of a public deployment: capture.policy.check_public must pass before
    # anything runs, and the tokenizer is fetched by Hub repo id, never looked up as a server folder.
    public: bool = False
    api_key: str | None = field(default=None, repr=False)  # upstream credential, never logged
    hf_token: str | None = field(default=None, repr=False)

    @property
    def first_rollout_seed(self) -> int:
        """The rollout's seed (a group's first): `rollout_seed`, or the dataset seed when none is given."""
        return self.rollout_seed if self.rollout_seed is not None else self.seed

    @property
    def llm_url(self) -> str | None:
        return self.endpoint if self.backend == "local" else self.sandbox_vllm_url

    @property
    def url_field(self) -> str:
        """The setting that holds the endpoint for this backend."""
        return "endpoint" if self.backend == "local" else "sandbox_vllm_url"


def redact_url(url: str) -> str:
    """The URL without credentials or query (what may be recorded in an artifact)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def problems(cfg: CaptureConfig, only: Iterable[str] | None = None) -> list[CaptureError]:
    """Every malformed or missing setting of `cfg` (restricted to the fields in `only`), in form order."""
    found: list[CaptureError] = []
    if cfg.backend not in BACKENDS:
        found.append(CaptureError(f"must be local or hf-sandbox, not {cfg.backend!r}", "backend"))
    if not (cfg.model or "").strip():
        found.append(CaptureError("is required: the model name the endpoint serves", "model"))
    url = (cfg.llm_url or "").strip()
    if cfg.backend in BACKENDS and not url:
        found.append(CaptureError(f"is required with the {cfg.backend} backend", cfg.url_field))
    elif url:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            found.append(CaptureError("should be an http:// or https:// URL, such as http://127.0.0.1:8000/v1",
                                      cfg.url_field))
    if not cfg.example and not (cfg.dataset or "").strip():
        found.append(CaptureError("is required: a Hub dataset id or a task file", "dataset"))
    if cfg.n_prompts < 1:
        found.append(CaptureError(f"must be at least 1, not {cfg.n_prompts}", "n_prompts"))
    if cfg.task_index < 0 or cfg.task_index >= max(cfg.n_prompts, 1):
        found.append(CaptureError(f"must be from 0 to {max(cfg.n_prompts, 1) - 1} (one less than the number of "
                                  f"tasks), not {cfg.task_index}", "task_index"))
    if not cfg.timeout_s > 0:
        found.append(CaptureError(f"must be more than 0 seconds, not {cfg.timeout_s}", "timeout_s"))
    if cfg.backend == "hf-sandbox":
        for name in ("sandbox_image", "sandbox_flavor"):
            if not (getattr(cfg, name) or "").strip():
                found.append(CaptureError("is required with the hf-sandbox backend", name))
    if only is not None:
        keep = set(only)
        found = [p for p in found if p.field in keep]
    return found
