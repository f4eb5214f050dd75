"""The validated, in-memory rollout: what every consumer past the reading boundary works with.

Token arrays are numpy (int32 ids, int8 mask, float64 logprobs) so a 500k-token turn costs about
2 MB instead of 18 MB of Python ints. Objects here are only built by rollout_trace/artifact/read.py after
validation, so code that receives them can trust their invariants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from .schema import RescoreMeta, Summary, Task, TestCase, TestResult, TrlSample


@dataclass(frozen=True, slots=True)
class Turn:
    index: int
    # turns.json's `trained`: the original capture script's rule (the turn made a tool call). What TRL
    # trains is rollout_trace/analysis/training.py's question, asked of TRL itself.
    seed_trained: bool
    tool_calls: tuple[str | None, ...]
    prompt_ids: np.ndarray
    output_ids: np.ndarray
    logprobs: np.ndarray  # the engine's, len(output_ids), or 0 when the proxy recorded none
    mask: np.ndarray  # prompt + output, 0 = context, 1 = generated (the proxy's loss_mask when it recorded one)
    prompt_source: Literal["engine", "retokenized"] = "retokenized"
    retokenized_prompt_ids: np.ndarray | None = None

    @property
    def n_prompt(self) -> int:
        return int(self.prompt_ids.size)

    @property
    def n_output(self) -> int:
        return int(self.output_ids.size)

    @property
    def ids(self) -> np.ndarray:
        """prompt + output, the sequence the mask covers."""
        return np.concatenate([self.prompt_ids, self.output_ids])


@dataclass(frozen=True, slots=True)
class TraceCall:
    """One captured model call, normalised from either proxy dialect."""

    index: int
    dialect: Literal["openenv", "legacy"]
    messages: list[dict]
    tools: list[dict] | None
    reply: dict  # choices[0].message: content, tool_calls, reasoning...
    finish_reason: str | None
    engine_prompt_ids: np.ndarray | None
    completion_ids: np.ndarray | None
    logprobs: np.ndarray | None
    loss_mask: np.ndarray | None
    metadata: dict

    @property
    def system_prompt(self) -> str | None:
        for m in self.messages:
            if m.get("role") == "system":
                return str(m.get("content"))
        return None


@dataclass(frozen=True)
class Rescore:
    """One validated rescore part: the trainer's scores of every output token (rollout_trace/artifact/schema.py)."""

    name: str
    meta: RescoreMeta
    offsets: np.ndarray  # int64 [turns + 1]
    logprobs: np.ndarray  # float32 [N]
    entropy: np.ndarray  # float32 [N]
    is_top1: np.ndarray  # bool [N]
    topk_ids: np.ndarray  # int32 [N, K]
    topk_logprobs: np.ndarray  # float32 [N, K]

    def turn_slice(self, turn: int) -> slice:
        """Where turn `turn`'s output tokens sit in the flat arrays."""
        return slice(int(self.offsets[turn]), int(self.offsets[turn + 1]))


@dataclass(frozen=True)
class TrlPart:
    """What TRL queued for a rollout of a recorded run (trl/): its rows' arrays, flat, in TRL's dtypes."""

    sample: TrlSample
    offsets: np.ndarray  # int64 [rows + 1]
    input_ids: np.ndarray  # int32 [N] (TRL's int64 values)
    completion_mask: np.ndarray  # uint8 [N] (TRL's int64 0/1)
    old_log_probs: np.ndarray  # float32 [N]

    @property
    def n_rows(self) -> int:
        return len(self.sample.rows)

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Row i's (input_ids, completion_mask, old_log_probs), exactly as TRL queued them (TRL's dtypes)."""
        s = slice(int(self.offsets[i]), int(self.offsets[i + 1]))
        return (self.input_ids[s].astype(np.int64), self.completion_mask[s].astype(np.int64),
                self.old_log_probs[s].copy())


@dataclass
class Artifact:
    source: str  # how the user named it (path, zip, hub id, example name)
    root: Path | None  # local folder holding the files; None once a temporary (unpacked) copy is deleted
    summary: Summary
    turns: list[Turn]
    task: Task | None = None
    visible_tests: str | None = None
    held_out_tests: list[TestCase] | None = None
    trace: list[TraceCall] | None = None
    test_results: list[TestResult] | None = None
    solution: str | None = None
    tokenizer_dir: Path | None = None
    tokenizer_json: bytes | None = None  # tokenizer.json in memory, when its folder was temporary and is gone
    notices: list[str] = field(default_factory=list)
    rescores: dict[str, Rescore] = field(default_factory=dict)  # by part name; empty when never re-scored
    trl: TrlPart | None = None  # what TRL queued (a recorded run's rollouts only)

    @property
    def n_tokens(self) -> int:
        return sum(t.n_prompt + t.n_output for t in self.turns)
