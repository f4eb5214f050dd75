"""One capture, start to finish: task -> endpoint check -> sandbox -> agent -> verify -> reward -> artifact.

`capture(config)` is what `python -m capture` and the Capture tab call. It reports progress through a
callback, honours a cancel event, and either returns the written artifact or raises `CaptureError`
with a message that says what went wrong and what to do. Nothing is written to `out_dir` unless the
whole artifact is valid (artifact.write_artifact is atomic), and no token or key is ever logged.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit, urlunsplit

from artifact import Artifact, ArtifactError, OutDirExists, Summary, Task, TestResult, write_artifact
from artifact.trace import calls_from_entries
from recipe.agent_turns import select_agent_calls
from recipe.reward import reward_waterfall
from recipe.verifier import score

from . import opencode
from .agent import AgentError, AgentRun, Cancelled, Layout, free_port
from .preflight import check_endpoint
from .progress import Callback, Reporter
from .sandbox import LocalSandbox
from .tasks import DEFAULT_DATASET, TaskError, build_tasks, load_rows, select_task, tasks_from_example
from .turns import TurnError, derive_turns

DEFAULT_IMAGE = "ghcr.io/huggingface/openenv-opencode-sandbox:latest"
DEFAULT_FLAVOR = "cpu-basic"


class CaptureError(RuntimeError):
    """A capture that could not finish; the message is for the user."""


@dataclass
class CaptureConfig:
    model: str = "Qwen/Qwen3-8B"
    backend: str = "hf-sandbox"  # or "local"
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
    local_model: bool = False  # serve SmolLM2-135M-Instruct with vLLM CPU for this capture (capture/local_model.py)
    api_key: str | None = field(default=None, repr=False)  # upstream credential, never logged
    hf_token: str | None = field(default=None, repr=False)
    request_seed: int | None = None  # sent as each model call's `seed` (group rollouts); None = the engine's own


    @property
    def llm_url(self) -> str | None:
        return self.endpoint if self.backend == "local" else self.sandbox_vllm_url


def redact_url(url: str) -> str:
    """The URL without credentials or query (what may be recorded in an artifact)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _load_tokenizer(cfg: CaptureConfig, say) -> Any:
    from transformers import AutoTokenizer

    name = cfg.tokenizer or cfg.model
    for local_only in (True, False):
        try:
            return AutoTokenizer.from_pretrained(name, local_files_only=local_only)
        except Exception as e:  # no tokenizer is a notice, not a failure
            why = f"{type(e).__name__}: {str(e)[:200]}"
    say(f"no tokenizer for {name} ({why}); the artifact keeps engine ids only and renders ids without text")
    return None


def _layout(cfg: CaptureConfig, box) -> Layout:
    if isinstance(box, LocalSandbox):
        return Layout(home=str(box.root), python=sys.executable, opencode=str(opencode.LOCAL_BINARY),
                      proxy_port=free_port())
    return Layout(home="/root", python="python3", opencode="opencode")


def _open_sandbox(cfg: CaptureConfig, factory: Callable | None):
    if factory is not None:
        return factory(image=cfg.sandbox_image, flavor=cfg.sandbox_flavor)
    if cfg.backend == "local":
        if not opencode.LOCAL_BINARY.exists():
            raise CaptureError(f"opencode is not installed at {opencode.LOCAL_BINARY}: run `bash scripts/setup.sh` "
                               "(it installs opencode-ai "
                               f"{opencode.OPENCODE_VERSION} with npm)")
        return LocalSandbox.create()
    from huggingface_hub import Sandbox

    try:
        return Sandbox.create(cfg.sandbox_image, flavor=cfg.sandbox_flavor, token=cfg.hf_token,
                              idle_timeout=None, start_timeout=300)
    except Exception as e:
        raise CaptureError(f"could not start a Hugging Face sandbox ({cfg.sandbox_image}, {cfg.sandbox_flavor}): "
                           f"{type(e).__name__}: {str(e)[:300]}. It needs an HF token with Jobs/sandbox access "
                           "(HF_TOKEN or `hf auth login`).") from None


# SmolLM2's context is 8k tokens and opencode's system prompt alone is about 2.2k: keep only the tools
# the coding task needs (write, edit, bash) and cap each completion.
LOCAL_MODEL_DENY = opencode.DENIED_TOOLS + ("glob", "grep", "list", "read", "skill", "todowrite", "todoread", "patch")
LOCAL_MODEL_MAX_OUTPUT = 512


def capture(cfg: CaptureConfig, progress: Callback | None = None, cancel: threading.Event | None = None,
            sandbox_factory: Callable | None = None) -> Artifact:
    say = Reporter(progress)
    if cfg.local_model:
        return _capture_with_local_model(cfg, say, cancel, sandbox_factory)
    return _capture(cfg, say, cancel, sandbox_factory)


def _check_out_dir(cfg: CaptureConfig) -> Path:
    out = Path(cfg.out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CaptureError(f"--out-dir {out} already exists and is not empty: choose another or remove it")
    return out


def _capture_with_local_model(cfg: CaptureConfig, say: Reporter, cancel: threading.Event | None,
                              sandbox_factory: Callable | None) -> Artifact:
    """Prepare (once) and serve the offline model, capture against it, and stop it again."""
    from . import local_model

    _check_out_dir(cfg)  # before minutes of model preparation
    if not local_model.is_prepared():
        say("preparing the local model (vLLM CPU + SmolLM2-135M-Instruct; a few minutes, once)", stage="preflight")
        try:
            local_model.prepare(lambda line: say(line))
        except RuntimeError as e:
            raise CaptureError(str(e)) from None
    server = local_model.LocalModelServer()
    say(f"starting vLLM (CPU) serving {local_model.MODEL_NAME} on {server.url} (about a minute)", stage="preflight")
    try:
        server.start()
    except RuntimeError as e:
        raise CaptureError(f"the local model server did not start: {e}") from None
    try:
        return _capture(local_model_config(cfg, server.url), say, cancel, sandbox_factory,
                        served_by=local_model_served_by())
    finally:
        say("stopping the local model server")
        server.stop()


def local_model_config(cfg: CaptureConfig, url: str) -> CaptureConfig:
    """`cfg` pointed at the local SmolLM2 server at `url`, with the context, output cap and tools it fits."""
    from . import local_model

    return replace(cfg, local_model=False, backend="local", endpoint=url, model=local_model.MODEL_NAME,
                   tokenizer=str(local_model.model_dir()), context=local_model.MAX_MODEL_LEN,
                   max_output_tokens=min(cfg.max_output_tokens, LOCAL_MODEL_MAX_OUTPUT),
                   deny_tools=tuple(dict.fromkeys(cfg.deny_tools + LOCAL_MODEL_DENY)))


def local_model_served_by() -> str:
    from . import local_model

    return f"vLLM {local_model.VLLM_VERSION} on CPU"


def _capture(cfg: CaptureConfig, say: Reporter, cancel: threading.Event | None,
             sandbox_factory: Callable | None, served_by: str | None = None) -> Artifact:
    out = _check_out_dir(cfg)
    if cfg.backend not in ("local", "hf-sandbox"):
        raise CaptureError(f"--backend must be local or hf-sandbox, not {cfg.backend!r}")
    if not cfg.llm_url:
        raise CaptureError("--endpoint is required with --backend local" if cfg.backend == "local"
                           else "--sandbox-vllm-url is required with --backend hf-sandbox")
    rollout_seed = cfg.rollout_seed if cfg.rollout_seed is not None else cfg.seed

    say(f"building tasks from {cfg.example or cfg.dataset} (n_prompts={cfg.n_prompts}, seed={cfg.seed})", stage="task")
    try:
        tasks = (tasks_from_example(Path(cfg.example), cfg.n_prompts, cfg.seed) if cfg.example
                 else build_tasks(load_rows(cfg.dataset), cfg.n_prompts, cfg.seed))
        task = select_task(tasks, cfg.task_index)
    except TaskError as e:
        raise CaptureError(str(e)) from None
    say(f"task index={task.index} id={task.task_id[:12]} held_out_tests={len(task.held_out)} "
        f"dataset_seed={cfg.seed} rollout_seed={rollout_seed}")

    say(f"checking {redact_url(cfg.llm_url)} for token ids and logprobs", stage="preflight")
    verdict = check_endpoint(cfg.llm_url, cfg.model)
    say(verdict.message)
    if not verdict.ok:
        raise CaptureError(verdict.message)

    say(f"opening the {cfg.backend} sandbox", stage="sandbox")
    box = _open_sandbox(cfg, sandbox_factory)
    run = AgentRun(box, _layout(cfg, box), say)
    try:
        run.start(cfg.llm_url, cfg.model, task.instruction, cfg.max_output_tokens, cfg.context, cfg.api_key,
                  cfg.deny_tools, seed=cfg.request_seed)
        timed_out, exit_code, events = run.wait(cfg.timeout_s, cancel)
        entries, solution = run.collect()
        if exit_code not in (0, None):
            say(f"opencode exited with status {exit_code}: {run.agent_stderr()[-300:]}")
        if not entries:
            raise CaptureError(f"the agent made no model call through the proxy (opencode exit status {exit_code}). "
                               f"opencode said: {run.agent_stderr()[-600:]}")
        say(f"{len(entries)} captured model calls", stage="verify")
        if solution is None:
            say("the agent wrote no solution.py: the verifier scores 0")
        results = run.verify([{"input": t.input, "output": t.output} for t in task.held_out])
    except Cancelled:
        say("cancelled: stopping the agent and the sandbox; nothing is written")
        raise
    except AgentError as e:
        raise CaptureError(str(e)) from None
    finally:
        run.stop()
        try:
            box.kill()
        except Exception:  # the sandbox may be gone already
            pass

    env_reward = score(results)
    say(f"held-out tests: {sum(r['passed'] for r in results)}/{len(results)} passed (score {env_reward:.3f})")
    try:
        calls = calls_from_entries(entries)
    except ArtifactError as e:
        raise CaptureError(f"the proxy returned entries we cannot read: {e}") from None
    agent_calls = select_agent_calls(calls)
    tokenizer = _load_tokenizer(cfg, say)
    try:
        turns = derive_turns(agent_calls, tokenizer)
    except TurnError as e:
        raise CaptureError(str(e)) from None
    counts = dict(Counter(name for t in turns for name in t.tool_calls if name))
    steps = reward_waterfall(env_reward, counts, timed_out)
    summary = Summary(
        model=cfg.model, task_id=task.task_id, captured_calls=len(entries), agent_turns=len(turns),
        trained_turns=sum(t.trained for t in turns), tool_calls_by_name=counts, held_out_tests=len(task.held_out),
        n_tests_eval_cap=task.n_tests_eval_cap, env_reward=env_reward, reward_after_penalties=steps[-1].value,
        timed_out=timed_out,
        produced_by=(f"Captured by `python -m capture` ({cfg.backend} backend): opencode {opencode.OPENCODE_VERSION} "
                     f"behind the openenv {version('openenv')} capture proxy, model {cfg.model}"
                     + (f" served by {served_by}" if served_by else "") + "."),
        reward_breakdown=[{"label": s.label, "delta": s.delta, "value": s.value, "why": s.why} for s in steps],
        capture={"backend": cfg.backend, "endpoint": redact_url(cfg.llm_url), "dataset": cfg.example or cfg.dataset,
                 "n_prompts": cfg.n_prompts, "seed": cfg.seed, "rollout_seed": rollout_seed,
                 "task_index": cfg.task_index, "timeout_s": cfg.timeout_s, "opencode_exit": exit_code,
                 "sandbox_image": cfg.sandbox_image if cfg.backend == "hf-sandbox" else None,
                 "sandbox_flavor": cfg.sandbox_flavor if cfg.backend == "hf-sandbox" else None,
                 "agent_events": len(events), "denied_tools": list(cfg.deny_tools),
                 "max_output_tokens": cfg.max_output_tokens, "request_seed": cfg.request_seed},
    )
    say(f"writing {out}", stage="write")
    try:
        artifact = write_artifact(
            out, summary=summary, turns=turns, task=Task(task.task_id, task.index, task.instruction),
            visible_tests=task.visible_tests, held_out_tests=task.held_out, trace_entries=entries,
            test_results=[TestResult(**r) for r in results], solution=solution, tokenizer=tokenizer)
    except OutDirExists as e:
        raise CaptureError(str(e)) from None
    except ArtifactError as e:
        raise CaptureError(f"the captured rollout does not form a valid artifact: {e}") from None
    if cfg.push_to_dataset:
        push(out, cfg.push_to_dataset, cfg.hf_token, say)
    say(f"done: reward {summary.reward_after_penalties}", stage="done")
    return artifact


def push(folder: Path, repo: str, token: str | None, say, message: str = "Capture one opencode rollout trace") -> str:
    from huggingface_hub import HfApi

    say(f"pushing to the Hub dataset {repo}", stage="push")
    api = HfApi(token=token)
    try:
        api.create_repo(repo, repo_type="dataset", exist_ok=True)
        api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset",
                          commit_message=message)
    except Exception as e:
        raise CaptureError(f"the artifact is written at {folder} but pushing to {repo} failed: "
                           f"{type(e).__name__}: {str(e)[:300]}") from None
    url = f"https://huggingface.co/datasets/{repo}"
    say(f"pushed: {url}")
    return url
