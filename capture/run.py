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
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable

from processes import free_port
from rollout_trace.analysis.report import fmt_reward
from rollout_trace.analysis.training import record as trl_record
from rollout_trace.analysis.training import training
from rollout_trace.artifact import Artifact, ArtifactError, OutDirExists, Summary, Task, TestResult, write_artifact
from rollout_trace.recipe.reward import reward_waterfall
from rollout_trace.recipe.turns import TurnError
from rollout_trace.recipe.verifier import score

from . import hub, opencode
from .agent import AgentError, AgentRun, Cancelled, Layout
from .config import CaptureConfig, problems, redact_url
from .errors import CaptureError, RescoreFailed
from .live import LiveCallback, LiveTrace, LiveUpdate, ProxyWatch
from .policy import PolicyError, pinned_endpoint
from .preflight import check_endpoint
from .progress import Callback, Reporter
from .sandbox import LocalSandbox
from .tasks import TaskSpec, refuse_for_public, task_for

# The files a tokenizer needs, fetched alone when a public server loads one from the Hub.
TOKENIZER_FILES = ["tokenizer*", "special_tokens_map.json", "vocab*", "merges.txt", "*.model", "config.json",
                   "chat_template*"]


def import_before_threads(rescore: bool = False) -> None:
    """Import, in the calling thread, what a rollout imports on first use, before rollouts run in threads.

    transformers puts a lazy module in place of its own at the end of its first import; a thread that
    imports it while another is still inside that first import gets the half-built module and fails with
    "cannot import name 'AutoTokenizer' from 'transformers'" (2 of 3 rollouts of a cold
    `--group-size 3 --parallel 3` lost). openenv's endpoint probe is imported here too: every rollout
    needs it, and it takes seconds."""
    import transformers  # noqa: F401  (the first import: the racy part)
    from openenv.core.harness.capture.validate_llm import validate_llm  # noqa: F401
    from transformers import AutoTokenizer  # noqa: F401
    if rescore:  # the rescorer's torch, first imported here too rather than in a rollout's thread
        import torch  # noqa: F401


def _load_tokenizer(cfg: CaptureConfig, say) -> Any:
    """The tokenizer for re-tokenized prompts and text, or None with a notice (never a failure).

    Local files first; the Hub only when it answers (offline, transformers retries for about 50 s).
    A public config names a Hub repo, never a folder on the server, so it is fetched by repo id.
    """
    from transformers import AutoTokenizer

    name = cfg.tokenizer or cfg.model
    offline, why = None, ""
    for local_only in (True, False):
        if not local_only and (offline := hub.unreachable()):  # asked only when the local files are not enough
            break
        try:
            if cfg.public:
                from huggingface_hub import snapshot_download

                # token=False without the visitor's own: the server's credentials never read a visitor's pick
                folder = snapshot_download(name, allow_patterns=TOKENIZER_FILES, local_files_only=local_only,
                                           token=cfg.hf_token or False)
                return AutoTokenizer.from_pretrained(folder, local_files_only=True, trust_remote_code=False)
            # a tokenizer is data: its repo's code (auto_map) never runs here, and nothing prompts for it
            return AutoTokenizer.from_pretrained(name, local_files_only=local_only, trust_remote_code=False)
        except Exception as e:  # no tokenizer is a notice, not a failure
            why = f"{type(e).__name__}: {str(e)[:200]}"
    if offline:
        why = f"not in the local cache, and the Hub is out of reach: {offline}"
    say(f"no tokenizer for {name} ({why}); the artifact keeps engine ids only and renders ids without text")
    return None


def _layout(cfg: CaptureConfig, box) -> Layout:
    if isinstance(box, LocalSandbox):
        return Layout(home=box.home, python=sys.executable, opencode=str(opencode.LOCAL_BINARY),
                      proxy_port=free_port(), proxy_from_host=True)
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


def check(cfg: CaptureConfig) -> None:
    """Refuse a malformed request, or a public one that names a server path, before anything starts."""
    if cfg.public:
        refuse_for_public(cfg)
    found = problems(cfg)
    if found:
        raise found[0]


def capture(cfg: CaptureConfig, progress: Callback | None = None, cancel: threading.Event | None = None,
            sandbox_factory: Callable | None = None, public: bool = False, live: LiveCallback | None = None,
            local_model_url: str | None = None) -> Artifact:
    """Run one rollout, everything it needs: the capture, the rescore (`cfg.rescore`), the push.

    A public request (`cfg.public`, or `public=True`) is refused first if any field names a server path
    or asks for the local backend (capture/policy.py). `live` gets a `LiveUpdate` each time the proxy has
    recorded new calls while the agent works, and once more with all of them (capture/live.py); it is
    called from the capture's thread and must return quickly. With `cfg.local_model` the capture serves
    the offline model itself, unless `local_model_url` names one already running (a group's K rollouts
    share one: capture/group.py runs K of this function)."""
    if public:
        cfg = replace(cfg, public=True)
    say = Reporter(progress)
    if cfg.local_model:  # it supplies its own endpoint and model; _capture checks the rest
        if cfg.public:
            refuse_for_public(cfg)  # refuses it: the model and the agent would run on the server
        artifact = _capture_with_local_model(cfg, say, cancel, sandbox_factory, live, local_model_url)
    elif cfg.public and cfg.sandbox_vllm_url:  # connect to the addresses checked, not to what DNS says later
        try:
            pin = pinned_endpoint(cfg.sandbox_vllm_url)
            with pin:
                artifact = _capture(cfg, say, cancel, sandbox_factory, live=live)
        except PolicyError as e:
            raise CaptureError("; ".join(str(p) for p in e.problems)) from None
    else:
        artifact = _capture(cfg, say, cancel, sandbox_factory, live=live)
    if cfg.rescore:
        artifact = rescore_after_capture(artifact, cfg, say)
    assert artifact.root is not None  # read back from the folder it was written to
    if cfg.push_to_dataset:  # last: the pushed folder holds the rescore part too
        push(artifact.root, cfg.push_to_dataset, cfg.hf_token, say)
    say(f"done: reward {fmt_reward(artifact.summary.reward_after_penalties)}", stage="done")
    return artifact


# One rescoring at a time: a group's rollouts finish in their own threads, and each load is a whole model.
_RESCORE_LOCK = threading.Lock()


def rescore_after_capture(artifact: Artifact, cfg: CaptureConfig, say: Reporter) -> Artifact:
    """Add the trainer's view (a rescore part) to the artifact just written; the serving model is stopped by now.

    The capture itself succeeded, so a failure here says the artifact is written and how to retry."""
    from rescore import RescoreConfig, RescoreError, local_model, rescore

    say("re-scoring every output token with the training model (TRL's fused LM head)", stage="rescore")
    try:
        with _RESCORE_LOCK:
            if cfg.trainer_model is None and cfg.local_model:
                model, label = local_model(lambda line: say(line))
                rc = RescoreConfig(model, local_files_only=True, label=label, slug="smollm2-135m-instruct")
            else:
                rc = RescoreConfig(cfg.trainer_model or cfg.tokenizer or cfg.model)
            part = rescore(artifact, rc, progress=lambda line: say(line))
    except (RescoreError, ArtifactError) as e:
        raise RescoreFailed(f"the artifact is written at {artifact.root}, but re-scoring it failed: {e}. "
                            f"Retry with `python -m viewer rescore {artifact.root} --model ...`", str(e)) from None
    say(f"re-scored: {artifact.root}/rescore/{part.name}")
    return artifact


def _check_out_dir(cfg: CaptureConfig) -> Path:
    out = Path(cfg.out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CaptureError(f"{out} already exists and is not empty: choose another or remove it", "out_dir")
    return out


@contextmanager
def serving_local_model(say: Reporter, for_whom: str, timeout_s: float = 300) -> Iterator[str]:
    """Prepare (once) and serve the offline model for the block; yields its URL and stops it afterwards."""
    import local_model

    if not local_model.is_prepared():
        say("preparing the local model (vLLM CPU + SmolLM2-135M-Instruct; a few minutes, once)", stage="preflight")
        try:
            local_model.prepare(lambda line: say(line))
        except RuntimeError as e:
            raise CaptureError(str(e)) from None
    server = local_model.LocalModelServer()
    say(f"starting vLLM (CPU) serving {local_model.MODEL_NAME} on {server.url} {for_whom}", stage="preflight")
    try:
        server.start(timeout_s=timeout_s)
    except (RuntimeError, TimeoutError) as e:
        raise CaptureError(f"the local model server did not start: {e}") from None
    try:
        yield server.url
    finally:
        say("stopping the local model server")
        server.stop()


def _capture_with_local_model(cfg: CaptureConfig, say: Reporter, cancel: threading.Event | None,
                              sandbox_factory: Callable | None, live: LiveCallback | None,
                              url: str | None) -> Artifact:
    """Capture against the offline model at `url`, or serve it for this capture (and stop it again)."""
    _check_out_dir(cfg)  # before minutes of model preparation
    with nullcontext(url) if url else serving_local_model(say, "(about a minute)") as url:
        return _capture(local_model_config(cfg, url), say, cancel, sandbox_factory, served_by=local_model_served_by(),
                        live=live)


def local_model_config(cfg: CaptureConfig, url: str) -> CaptureConfig:
    """`cfg` pointed at the local SmolLM2 server at `url`, with the context, output cap and tools it fits."""
    import local_model

    return replace(cfg, local_model=False, backend="local", endpoint=url, model=local_model.MODEL_NAME,
                   tokenizer=str(local_model.model_dir()), context=local_model.MAX_MODEL_LEN,
                   max_output_tokens=min(cfg.max_output_tokens, LOCAL_MODEL_MAX_OUTPUT),
                   deny_tools=tuple(dict.fromkeys(cfg.deny_tools + LOCAL_MODEL_DENY)))


def local_model_served_by() -> str:
    import local_model

    return f"vLLM {local_model.VLLM_VERSION} on CPU"


def _produced_by(cfg: CaptureConfig, served_by: str | None) -> str:
    return (f"Captured by `python -m capture` ({cfg.backend} backend): opencode {opencode.OPENCODE_VERSION} "
            f"behind the openenv {version('openenv')} capture proxy, model {cfg.model}"
            + (f" served by {served_by}" if served_by else "") + ".")


def _watch(run: AgentRun, trace: LiveTrace, live: LiveCallback) -> ProxyWatch:
    """The proxy watch that hands `live` a snapshot each time calls land (entries that cannot form turns
    yet are skipped: the final read decides what is written)."""
    def on_entries(entries: list[dict], recorded_at: float | None) -> None:
        try:
            update = trace.update(entries, recorded_at)
        except (ArtifactError, TurnError):
            return
        live(update)

    return ProxyWatch(run.proxy_get, run.session_id or "", on_entries)


def _all_turns(trace: LiveTrace, entries: list[dict]) -> LiveUpdate:
    try:
        return trace.update(entries)
    except ArtifactError as e:
        raise CaptureError(f"the proxy returned entries we cannot read: {e}") from None
    except TurnError as e:
        raise CaptureError(str(e)) from None


@dataclass(frozen=True)
class _Session:
    """What one agent session left: its proxy entries as turns, its solution, the held-out tests' results."""

    timed_out: bool
    exit_code: int | None
    events: list[dict]
    entries: list[dict]
    solution: str | None
    final: LiveUpdate
    results: list[dict]


def _task_checked(cfg: CaptureConfig, say: Reporter, sandbox_factory: Callable | None, url: str) -> TaskSpec:
    """The task, after the checks that can fail before a sandbox opens: the Hub reachable when a Hugging Face
    sandbox needs it, and the endpoint answering with token ids and logprobs."""
    say(f"building tasks from {cfg.example or cfg.dataset} (n_prompts={cfg.n_prompts}, seed={cfg.seed})", stage="task")
    task = task_for(cfg)  # fails at once offline too (a Hub dataset is refused without retries)
    if cfg.backend == "hf-sandbox" and sandbox_factory is None:
        offline = hub.unreachable()
        if offline:  # say it now, not after the endpoint probe and minutes of sandbox retries
            raise CaptureError(f"hf-sandbox needs the Hugging Face Hub, which this machine cannot reach now "
                               f"({offline})", "backend")
    say(f"task index={task.index} id={task.task_id[:12]} held_out_tests={len(task.held_out)} "
        f"dataset_seed={cfg.seed} rollout_seed={cfg.first_rollout_seed}")
    say(f"checking {redact_url(url)} for token ids and logprobs", stage="preflight")
    verdict = check_endpoint(url, cfg.model)
    say(verdict.message)
    if not verdict.ok:
        raise CaptureError(verdict.message)
    return task


def _say_isolation(box: Any, say: Reporter) -> str:
    isolation = getattr(box, "isolation", "hf-sandbox")  # a LocalSandbox says; a Hugging Face one is remote
    if isolation == "none":
        say(f"WARNING: the agent's commands run on this machine as you, NOT isolated ({box.isolation_note}); "
            "install bubblewrap to fence them in")
    elif isolation == "bubblewrap":
        say("isolation: bubblewrap (read-only system, only the sandbox folder writable)")
    return isolation


def _session(cfg: CaptureConfig, say: Reporter, box: Any, url: str, task: TaskSpec, trace: LiveTrace,
             cancel: threading.Event | None, live: LiveCallback | None) -> _Session:
    """The agent's session in `box`, then the held-out tests on what it wrote; the agent and the sandbox are
    stopped whatever happens."""
    run = AgentRun(box, _layout(cfg, box), say)
    try:
        run.start(url, cfg.model, task.instruction, cfg.max_output_tokens, cfg.context, cfg.api_key,
                  cfg.deny_tools, seed=cfg.request_seed)
        watch = _watch(run, trace, live) if live is not None else None
        timed_out, exit_code, events = run.wait(cfg.timeout_s, cancel, watch.tick if watch else None)
        entries, solution = run.collect()
        if exit_code not in (0, None):
            say(f"opencode exited with status {exit_code}: {run.agent_stderr()[-300:]}")
        if not entries:
            raise CaptureError(f"the agent made no model call through the proxy (opencode exit status {exit_code}). "
                               f"opencode said: {run.agent_stderr()[-600:]}")
        final = _all_turns(trace, entries)
        say(f"{len(entries)} captured model calls", stage="verify")
        if live is not None:
            live(final)
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
    return _Session(timed_out, exit_code, events, entries, solution, final, results)


def _summary(cfg: CaptureConfig, url: str, task: TaskSpec, s: _Session, isolation: str, served_by: str | None,
             env_reward: float) -> Summary:
    turns = s.final.artifact.turns
    counts = dict(Counter(name for t in turns for name in t.tool_calls if name))
    steps = reward_waterfall(env_reward, counts, s.timed_out)
    return Summary(
        model=cfg.model, task_id=task.task_id, captured_calls=len(s.entries), agent_turns=len(turns),
        trained_turns=sum(t.seed_trained for t in turns), tool_calls_by_name=counts, held_out_tests=len(task.held_out),
        n_tests_eval_cap=task.n_tests_eval_cap, env_reward=env_reward, reward_after_penalties=steps[-1].value,
        timed_out=s.timed_out, trl_training=trl_record(training(s.final.artifact)),
        produced_by=_produced_by(cfg, served_by),
        reward_breakdown=[{"label": x.label, "delta": x.delta, "value": x.value, "why": x.why} for x in steps],
        capture={"backend": cfg.backend, "endpoint": redact_url(url), "dataset": cfg.example or cfg.dataset,
                 "n_prompts": cfg.n_prompts, "seed": cfg.seed, "rollout_seed": cfg.first_rollout_seed,
                 "task_index": cfg.task_index, "timeout_s": cfg.timeout_s, "opencode_exit": s.exit_code,
                 "sandbox_image": cfg.sandbox_image if cfg.backend == "hf-sandbox" else None,
                 "sandbox_flavor": cfg.sandbox_flavor if cfg.backend == "hf-sandbox" else None,
                 "agent_events": len(s.events), "denied_tools": list(cfg.deny_tools), "isolation": isolation,
                 "max_output_tokens": cfg.max_output_tokens, "request_seed": cfg.request_seed},
    )


def _capture(cfg: CaptureConfig, say: Reporter, cancel: threading.Event | None,
             sandbox_factory: Callable | None, served_by: str | None = None,
             live: LiveCallback | None = None) -> Artifact:
    check(cfg)
    url = cfg.llm_url
    if url is None:  # check() refuses a config without one; this keeps the type honest below
        raise CaptureError("is required", cfg.url_field)
    out = _check_out_dir(cfg)
    task = _task_checked(cfg, say, sandbox_factory, url)
    tokenizer = _load_tokenizer(cfg, say)  # before the agent: live turns are derived as calls land
    trace = LiveTrace(cfg.model, task, tokenizer, _produced_by(cfg, served_by))
    if live is not None:  # the task and its tests, before the first call: the view has a page to show
        live(trace.update([]))
    say(f"opening the {cfg.backend} sandbox", stage="sandbox")
    box = _open_sandbox(cfg, sandbox_factory)
    isolation = _say_isolation(box, say)
    s = _session(cfg, say, box, url, task, trace, cancel, live)
    env_reward = score(s.results)
    say(f"held-out tests: {sum(r['passed'] for r in s.results)}/{len(s.results)} passed (score {env_reward:.3f})")
    summary = _summary(cfg, url, task, s, isolation, served_by, env_reward)
    say(f"writing {out}", stage="write")
    try:
        return write_artifact(
            out, summary=summary, turns=s.final.artifact.turns, task=Task(task.task_id, task.index, task.instruction),
            visible_tests=task.visible_tests, held_out_tests=task.held_out, trace_entries=s.entries,
            test_results=[TestResult(**r) for r in s.results], solution=s.solution, tokenizer=tokenizer)
    except OutDirExists as e:
        raise CaptureError(str(e)) from None
    except ArtifactError as e:
        raise CaptureError(f"the captured rollout does not form a valid artifact: {e}") from None


def push(folder: Path, repo: str, token: str | None, say, message: str = "Capture one opencode rollout trace") -> str:
    from huggingface_hub import HfApi

    say(f"pushing to the Hub dataset {repo}", stage="push")
    api = HfApi(token=token)
    try:
        api.create_repo(repo, repo_type="dataset", exist_ok=True)
        api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset",
                          commit_message=message)
    except Exception as e:
        # no folder in the message: on a public server it is a server path
        raise CaptureError(f"pushing to {repo} failed (the artifact itself is written and kept): "
                           f"{type(e).__name__}: {str(e)[:300]}") from None
    url = f"https://huggingface.co/datasets/{repo}"
    say(f"pushed: {url}")
    return url
