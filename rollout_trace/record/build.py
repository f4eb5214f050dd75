"""One scored group, as TRL handed it over, into rows of the run's rollouts table (rollout_trace/artifact/run_schema.py).

Everything here runs on the recorder's writer thread in TRL's worker child, off TRL's path. It reads TRL's
own objects (the `RolloutSample`s `_score_group` returned, the group's lists) and what the session showed
(sessions.py) and never changes them. A rollout becomes a row holding the files of the artifact capture writes
(rollout_trace/artifact/schema.py), its searchable text and findings (searchable.py), and its index columns:

- trace.json: OpenEnv's `TrainingTrace.to_trace_entries()`, the entries TRL trained on;
- turns.json: the agent calls (rollout_trace/recipe/agent_turns.py; every call when none offers tools) derived by
  capture's own `derive_turn` (engine ids, OpenEnv's loss mask, logprobs);
- task.json: the prompt's instruction, its id the sha1 the recipe uses (rollout_trace/recipe/tasks.py);
- summary.json: the reward TRL summed, the verify() reward, `trl_training` from TRL's own functions over
  trace.json (rollout_trace/analysis/training.py), and the `run` extra (segment, version, ids, advantage, and
  the rest of the session's VerifyResult: `done` and its metrics);
- trl/: the rows TRL queued, exactly (rollout_trace/artifact/trl_part.py).
"""

from __future__ import annotations

import math
import numbers
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from rollout_trace.analysis.continuity import boundaries
from rollout_trace.analysis.training import TRL_VERSION, record, row_trains, training
from rollout_trace.artifact import Artifact, Summary, Task, Turn
from rollout_trace.artifact.run_format import Drift, group_path
from rollout_trace.artifact.run_schema import ARTIFACT_FILES, RolloutRecord, RowRef, row_columns
from rollout_trace.artifact.schema import (
    TRL_PART_VERSION,
    MetricValue,
    RunInfo,
    RunStatus,
    TrlRowRef,
    TrlSample,
    Verified,
)
from rollout_trace.artifact.trace import calls_from_entries
from rollout_trace.artifact.trl_part import encode_rows, fingerprint
from rollout_trace.artifact.write import artifact_files
from rollout_trace.recipe.agent_turns import select_agent_calls
from rollout_trace.recipe.tasks import task_id, title_of
from rollout_trace.recipe.turns import derive_turn

from .sessions import SessionRecord, one_line

MAX_METRICS = 100  # of one VerifyResult's metrics: a verifier's dict is the user's code, so its size is bounded
MAX_METRIC_TEXT = 200  # characters of a metric's name or text value
SESSION_FIELDS = ("turns", "sequences", "tally", "loop_exhausted", "duration_s", "tool_calls_by_name",
                  "tool_failures_by_name")


@dataclass
class ScoredRollout:
    """One rollout of a scored group, as TRL holds it (references, never copies)."""

    index: int  # its position in TRL's group
    record: SessionRecord | None
    prompt: list
    samples: list  # TRL's RolloutSamples for this rollout, in queue order
    ordinals: list[int]  # their positions in the queue within the segment
    tool_calls: int
    tool_failures: int


@dataclass
class ScoredGroup:
    segment: str
    group_id: int
    model_version: int
    dataset_index: int | None
    model: str
    reward_func_names: list[str]
    rollouts: list[ScoredRollout]
    scored_at: float = field(default_factory=time.time)
    # TRL's (metrics, advantage) for every rollout, from its own _score_group (scores.py): called on the
    # writer thread, only when a rollout has no row to read them from
    scores: Callable[[], list[tuple[dict, float]]] | None = None

    @property
    def name(self) -> str:
        return f"{self.segment}-v{self.model_version:06d}-g{self.group_id:06d}"


@dataclass
class BuiltRollout:
    """What the writer writes for one rollout (artifact parts) and what the index says of it."""

    index: int
    status: RunStatus
    cause: str | None
    reward: float | None
    env_reward: float | None
    advantage: float | None  # TRL's (None without rows)
    task: Task
    summary: Summary | None = None  # None: no artifact (the session failed before any trace)
    turns: list[Turn] = field(default_factory=list)
    entries: list[dict] | None = None
    trl: tuple[TrlSample, dict[str, np.ndarray] | None] | None = None
    rows: list[RowRef] = field(default_factory=list)
    timed_out: bool = False
    rollout_id: str | None = None
    drifting: int | None = None
    problem: str | None = None  # why this rollout is not recorded whole (the recorder's model did not fit it)
    artifact: Artifact | None = None  # the artifact in memory (its text and findings are read from it)


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def number(x: Any) -> float | None:
    """A reward as JSON holds it: NaN (TRL's unscorable) and None become null."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _metric(v: Any) -> MetricValue:
    """One VerifyResult metric as JSON holds it: a scalar as given (numpy's too; NaN as null), else its text."""
    if v is None or isinstance(v, (bool, np.bool_)):
        return None if v is None else bool(v)
    if isinstance(v, str):
        return one_line(v, MAX_METRIC_TEXT)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return number(v)
    return one_line(repr(v), MAX_METRIC_TEXT)


def verified(result: Any) -> Verified | None:
    """What the recorder keeps of OpenEnv's VerifyResult beside its env_reward (schema.py's `Verified`)."""
    if result is None:
        return None
    metrics = getattr(result, "metrics", None)
    items = list(metrics.items())[:MAX_METRICS] if isinstance(metrics, dict) else []
    return Verified(done=bool(getattr(result, "done", False)),
                    metrics={one_line(k, MAX_METRIC_TEXT): _metric(v) for k, v in items})


def instruction_of(prompt: list) -> str:
    """The task text: the prompt's last user message (text parts joined)."""
    for message in reversed(prompt or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def task_of(prompt: list, dataset_index: int | None) -> Task:
    text = instruction_of(prompt)
    return Task(task_id(text), dataset_index if dataset_index is not None else -1, text)


def _rows(r: ScoredRollout) -> tuple[list[TrlRowRef], dict[str, np.ndarray] | None]:
    refs = [TrlRowRef(o, fingerprint(s.input_ids, s.completion_mask, s.old_log_probs, s.advantage),
                      int(len(s.input_ids)), int(s.completion_mask.sum())) for o, s in zip(r.ordinals, r.samples, strict=True)]
    arrays = encode_rows([(s.input_ids, s.completion_mask, s.old_log_probs) for s in r.samples]) if r.samples else None
    return refs, arrays


def _status(r: ScoredRollout, reward: float | None) -> tuple[RunStatus, str | None]:
    rec = r.record
    if rec is None:
        return "failed", "the recorder did not see this rollout's session"
    if rec.create_error:
        return "failed", f"the session could not be created: {rec.create_error}"
    if not rec.session_metrics:  # TRL returned its empty rollout: the session failed, TRL built no row
        why = rec.fetch_error or rec.verify_error or rec.trl_failure
        return "failed", f"the session failed, TRL built no row: {why}" if why else \
            "the session failed, TRL built no row (the worker was stopping)"
    if reward is None:
        return "unscorable", "no reward: the session's verify() gave no env_reward (TRL's NaN, advantage 0)"
    if rec.timed_out:
        return "timed-out", "the agent timed out: TRL trains the turns it captured"
    if not r.samples:
        return "ok", "TRL built no row: no token of the trace is in OpenEnv's loss mask"
    return "ok", None


def trl_numbers(g: ScoredGroup, r: ScoredRollout, scored: tuple[dict, float] | None
                ) -> tuple[dict[str, float | None], float | None, dict[str, float | None]]:
    """TRL's metrics, advantage and reward columns for a rollout: from the sample it queued, else from what
    its `_score_group` computed for the rollout (`scored`, scores.py); ({}, None, {}) when neither is known."""
    source = r.samples[0].metrics if r.samples else scored[0] if scored is not None else None
    if source is None:
        return {}, None, {}
    metrics = {k: number(v) for k, v in source.items()}
    advantage = float(r.samples[0].advantage) if r.samples else float(scored[1]) if scored is not None else None
    return metrics, advantage, {name: metrics.get(f"rewards/{name}") for name in g.reward_func_names}


def misfit(g: ScoredGroup, r: ScoredRollout, scored: tuple[dict, float] | None, problem: str) -> BuiltRollout:
    """A rollout whose artifact could not be built: what TRL decided (rows, reward, advantage) and why not."""
    metrics, advantage, _ = trl_numbers(g, r, scored)
    rec = r.record
    status, cause = _status(r, metrics.get("reward"))
    out = BuiltRollout(r.index, status, cause, metrics.get("reward"), None, advantage, task_of(r.prompt, g.dataset_index),
                       timed_out=bool(rec and rec.timed_out), rollout_id=rec.rollout_id if rec else None,
                       problem=problem)
    refs, _ = _rows(r)
    out.rows = [RowRef(x.ordinal, x.fingerprint, x.tokens, x.trained_tokens) for x in refs]
    return out


def build_rollout(g: ScoredGroup, r: ScoredRollout, scored: tuple[dict, float] | None = None) -> BuiltRollout:
    rec = r.record
    metrics, advantage, columns = trl_numbers(g, r, scored)
    reward = metrics.get("reward")
    status, cause = _status(r, reward)
    verify = rec.verify if rec is not None else None
    env_reward = number(getattr(verify, "env_reward", None))
    task = task_of(r.prompt, g.dataset_index)
    out = BuiltRollout(r.index, status, cause, reward, env_reward, advantage, task,
                       timed_out=bool(rec and rec.timed_out), rollout_id=rec.rollout_id if rec else None)
    refs, arrays = _rows(r)
    out.rows = [RowRef(x.ordinal, x.fingerprint, x.tokens, x.trained_tokens) for x in refs]
    if rec is None or rec.training_trace is None:
        return out  # no trace: group.json and the index say what happened
    entries = rec.training_trace.to_trace_entries()
    calls = calls_from_entries(entries)
    agent = select_agent_calls(calls) or calls  # a harness whose calls offer no tools: every call is a turn
    turns = [derive_turn(n, c) for n, c in enumerate(agent)]
    counts = dict(Counter(name for t in turns for name in t.tool_calls if name))
    drifting = sum(not b.continuous for b in boundaries(turns, None))
    run = RunInfo(segment=g.segment, policy_version=g.model_version, group_id=g.group_id, rollout_index=r.index,
                  rollout_id=out.rollout_id, status=status, reward=reward, rewards=columns, advantage=advantage,
                  rows=len(refs), trained_tokens=sum(x.trained_tokens for x in refs), dataset_index=g.dataset_index,
                  cause=cause, verify=verified(verify))
    summary = Summary(
        model=g.model, task_id=task.task_id, captured_calls=len(entries), agent_turns=len(turns),
        trained_turns=sum(t.seed_trained for t in turns), tool_calls_by_name=counts, held_out_tests=0,
        n_tests_eval_cap=0, env_reward=env_reward, reward_after_penalties=reward, timed_out=out.timed_out,
        produced_by=(f"Recorded from a TRL {TRL_VERSION} async GRPO run by rollout_trace.record: OpenEnv's training "
                     "trace of the session and the rows TRL queued for it."),
        reward_breakdown=[{"label": name, "delta": v, "value": v, "why": "TRL reward column"} for name, v in columns.items()]
        + [{"label": "final", "delta": None, "value": reward, "why": "TRL's sum of its reward columns"}],
        captured_at=iso(rec.ended_at or time.time()), n_tokens=sum(t.n_prompt + t.n_output for t in turns),
        drifting_boundaries=drifting, run=run)
    # which turns each queued row trains, so a page can give each turn its row's fate without opening the rollout
    out.rows = [msgspec.structs.replace(x, turns=list(row_trains(s.input_ids, s.completion_mask, turns)))
                for x, s in zip(out.rows, r.samples, strict=True)]
    in_memory = Artifact(source="recorded rollout", root=None, summary=summary, turns=turns, trace=calls)
    summary.trl_training = record(training(in_memory, validated=rec.training_trace))  # the trace TRL trained on
    sample = TrlSample(format_version=TRL_PART_VERSION, trl=TRL_VERSION, segment=g.segment, group_id=g.group_id,
                       rollout_index=r.index, rollout_id=out.rollout_id, model_version=g.model_version,
                       advantage=advantage, reward=reward, metrics=metrics,
                       session={k: rec.session_metrics[k] for k in SESSION_FIELDS if k in rec.session_metrics},
                       rows=refs)
    out.summary, out.turns, out.entries, out.trl, out.drifting = summary, turns, entries, (sample, arrays), drifting
    out.artifact = in_memory
    return out


def rollout_record(g: ScoredGroup, b: BuiltRollout, searched: dict | None) -> RolloutRecord:
    """The rollout's row: its index columns, its artifact's files (none when it has no artifact), and its text and
    findings (`searched`: searchable.py's columns; None when they could not be computed)."""
    s = b.summary
    tools = sorted(n for n, c in (s.tool_calls_by_name if s else {}).items() if c)
    drift: Drift = "unknown" if b.drifting is None else "drift" if b.drifting else "none"
    group = group_path(g.segment, g.model_version, g.group_id)
    files: dict[str, Any] = {}
    if s is not None:
        written = artifact_files(summary=s, turns=b.turns, task=b.task, trace_entries=b.entries, trl=b.trl)
        files = {col: written.get(name) for col, name in ARTIFACT_FILES.items()}
    return RolloutRecord(
        segment=g.segment, policy_version=g.model_version, group_id=g.group_id, rollout=b.index,
        rollout_id=b.rollout_id, group=group, path=f"{group}/rollout-{b.index:02d}" if s is not None else None,
        status=b.status, cause=b.cause, reward=b.reward, env_reward=b.env_reward, advantage=b.advantage,
        **row_columns(b.rows), trained_tokens=sum(x.trained_tokens for x in b.rows), task_id=b.task.task_id,
        title=title_of(b.task.instruction), dataset_index=g.dataset_index,
        agent_turns=s.agent_turns if s else None,
        trained_turns=s.trl_training.trained_turns if s and s.trl_training else None,
        seed_trained_turns=s.trained_turns if s else None, tokens=s.n_tokens if s else None, drift=drift,
        drifting_boundaries=b.drifting, timed_out=b.timed_out, tools=tools,
        tool_calls=sum(s.tool_calls_by_name.values()) if s else 0, recorded_at=iso(g.scored_at), problem=b.problem,
        **(searched or {}), **files)
