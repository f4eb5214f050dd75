"""The rollout artifact format: the one place that says what each file holds.

An artifact is a folder. The six files below are exactly what the original capture script writes (docs/design.md);
artifacts from it exist on the Hub, so they are read as they are and none of their fields may become
required beyond what the seed writes.

    turns.json           {"turns": [Turn...]}: the agent turns as training sees them
    summary.json         Summary: model, counts, reward
    task.json            Task: the instruction the agent got
    visible_tests.txt    the example cases from the statement (what the agent could check)
    held_out_tests.json  [TestCase...]: the tests that produce the reward (the agent never sees them)
    trace.json           {"turns": [proxy entry...]}: the raw capture, in either proxy dialect
                         (rollout_trace/artifact/trace.py reads both)

Required: turns.json and summary.json. A missing optional file is reported as a notice.

Optional extras (format_version 2, written by our capture; all absent in seed artifacts):
    summary.json  format_version   int, 2 for artifacts we write (absent = 1, the seed)
                  produced_by      one honest sentence on what produced this rollout
                  reward_breakdown the reward recipe's steps as captured
                  capture          dict of capture settings (backend, seeds, ...); never secrets
                  captured_at      ISO 8601 time the capture finished (the collection index's date)
                  n_tokens         prompt + output tokens over the agent turns (checked on read)
                  drifting_boundaries  turn boundaries where the next prompt does not start with the
                                   tokens before it (0 = token-in = token-out); lets the collection
                                   index show drift without reading turns.json
                  trl_training     TrlTraining: what TRL trains on the rollout (its version, trained
                                   turns and tokens, rows), computed at capture time by TRL's own
                                   functions; `trained_turns` stays the original script's rule
                  run              RunInfo: only in a rollout of a recorded TRL training run
                                   (docs/runs.md): its segment, policy version, group id, index
                                   in the group and rollout id, and what TRL decided (its summed
                                   reward and per-function rewards, its advantage, its rows).
                                   `reward_after_penalties` is then TRL's summed reward, not the
                                   recipe's; `env_reward` is the session's verify() reward, and
                                   `run.verify` (Verified) the rest of that VerifyResult: `done` and
                                   its `metrics` (e.g. tests passed and failed), scalars as given;
                                   absent in runs recorded before it was kept
    turns.json    prompt_source    "engine" when prompt_ids are the engine's own ids,
                                   "retokenized" (the seed's behaviour, the default) otherwise
                  retokenized_prompt_ids  the chat-template re-rendering, kept beside engine ids
    tokenizer/           tokenizer files (tokenizer.json, tokenizer_config.json, chat template)
                         so the artifact renders offline
    test_results.json    TestResults: per held-out test pass/fail, time, status
    solution.py          the agent's final solution, as verified
    rescore/<name>/      the trainer's view of every completion token, one folder per re-scoring
                         (`python -m viewer rescore`; several can sit side by side, named by what
                         made them: model, dtype, device, temperature). rollout_trace/artifact/rescore.py reads it:
        meta.json           RescoreMeta: model and its revision or weights hash, vocabulary size,
                            dtype, device, temperature, top-K, library versions, duration, and
                            per turn whether it was trained and which training row scored it
        scores.safetensors  flat arrays over every turn's output tokens, turn after turn:
                            offsets int64 [turns + 1]      turn i is [offsets[i], offsets[i+1])
                            logprobs float32 [N]           trainer log-probability of the token
                            entropy float32 [N]            entropy of the next-token distribution
                            is_top1 uint8 [N]              1 when the token is the trainer's argmax
                            topk_ids int32 [N, K]          the K most likely tokens, best first
                            topk_logprobs float32 [N, K]   their log-probabilities
    trl/                 what TRL 1.16's async GRPO built and queued for this rollout, exactly as it
                         queued it (only in a recorded run; written by rollout_trace/record).
                         rollout_trace/artifact/trl_part.py reads and validates it:
        sample.json         TrlSample: segment, group id, rollout index and id, the policy version
                            TRL stamped, its advantage, its summed reward, the metrics dict of its
                            RolloutSamples, TRL's session metrics (turns, rows, drift tally) and one
                            TrlRowRef per training row: its ordinal (its position in the worker's
                            queue within the segment, the key the consumption log joins on), a
                            fingerprint of its arrays and advantage, its tokens and trained tokens
        rows.safetensors    the rows' arrays, flat, row after row, TRL's values in narrower dtypes
                            (TRL's are int64, int64, float32; absent when TRL built no row):
                            offsets int64 [rows + 1]       row i is [offsets[i], offsets[i+1])
                            input_ids int32 [N]            RolloutSample.input_ids
                            completion_mask uint8 [N]      RolloutSample.completion_mask (1 = in the loss)
                            old_log_probs float32 [N]      RolloutSample.old_log_probs (0 on context)

Invariants checked on read (rollout_trace/artifact/read.py): len(mask) == n_prompt_ids + n_output_ids and
n_* equal the array lengths; len(per_token_logps) is n_output_ids or 0; mask values are 0/1;
`trained` is true iff the turn made a tool call (the original capture script's rule; what TRL
trains is rollout_trace/analysis/training.py's, from TRL itself); summary counts agree with the files.
A rescore part must match the turns exactly (one value per output token, finite values, every
token id, the artifact's and the top-K's, inside the scoring model's vocabulary). A trl part must
match itself: one TrlRowRef per row, its token and trained-token counts and its fingerprint those
of the arrays, masks 0/1, finite logprobs, and summary.json's `run` naming the same rollout, rows
and advantage.
"""

from __future__ import annotations

from typing import Literal

import msgspec

FORMAT_VERSION = 2
FILES = ("turns.json", "summary.json", "trace.json", "task.json", "visible_tests.txt", "held_out_tests.json",
         "test_results.json", "solution.py")  # required, optional, then our extras
TOKENIZER_DIR = "tokenizer"
NO_RAW = msgspec.Raw(b"null")


class TurnHeader(msgspec.Struct):
    """One turns.json entry with its big arrays left as raw bytes: the turn index."""

    turn: int
    trained: bool
    tool_calls: list[str | None]
    n_prompt_ids: int
    n_output_ids: int
    prompt_ids: msgspec.Raw
    output_ids: msgspec.Raw
    per_token_logps: msgspec.Raw
    mask: msgspec.Raw
    prompt_source: Literal["engine", "retokenized"] = "retokenized"
    retokenized_prompt_ids: msgspec.Raw = NO_RAW


class TurnsFile(msgspec.Struct):
    turns: list[TurnHeader]


class TrlTraining(msgspec.Struct, omit_defaults=True):
    """summary.json `trl_training`: what TRL trains on the rollout, computed when it was captured by TRL's and
    OpenEnv's own functions (rollout_trace/analysis/training.py), so an index can show it without the token files.
    It describes the versions it names; `trained_turns` beside it is the original capture script's rule."""

    trl: str  # TRL's version, e.g. "1.16.0"
    openenv: str
    basis: Literal["trace", "turns", "seed"]  # which data TRL was given (rollout_trace/analysis/training.py)
    trained_turns: int  # agent turns with a token in TRL's loss
    trained_tokens: int  # tokens in TRL's loss, over every call of its training trace
    rows: int  # training rows TRL builds
    error: str | None = None  # TRL or OpenEnv refused the rollout: nothing is trained


RunStatus = Literal["ok", "timed-out", "unscorable", "failed"]
MetricValue = int | float | str | bool | None


class Verified(msgspec.Struct, omit_defaults=True):
    """summary.json `run.verify`: what the session's verify() returned (OpenEnv's VerifyResult) beside its
    `env_reward` (summary.json's): whether the environment called the episode done, and its `metrics` as the
    verifier named them (a coding environment's tests passed and failed, say). The recorder keeps scalar
    values as they are and writes any other value as its text (rollout_trace/record/build.py); VerifyResult's
    `artifacts` are not kept (anything, of any size)."""

    done: bool
    metrics: dict[str, MetricValue] = {}


class RunInfo(msgspec.Struct, omit_defaults=True):
    """summary.json `run`: where a rollout sits in a recorded TRL run, and what TRL decided about it.

    Keys (docs/runs.md): a rollout is (segment, group_id, rollout_index), with `rollout_id` (TRL's uuid4,
    OpenEnv's episode_id) as its unique name. `status`: "ok"; "timed-out" (the agent timed out: TRL
    trains what was captured); "unscorable" (no reward: TRL's NaN, advantage 0); "failed" (the session
    failed: TRL built no row; it has a reward when a user reward function scored its empty completion).
    `cause` says why when the status is not "ok"."""

    segment: str  # one start of TRL's worker child (a resume starts a new one)
    policy_version: int  # the model_version TRL stamped on the group
    group_id: int  # TRL's group id, counted from 0 in every segment
    rollout_index: int  # the rollout's position in TRL's group (the order rollouts finished)
    rollout_id: str | None
    status: RunStatus
    reward: float | None  # TRL's summed reward (None: NaN, unscorable)
    rewards: dict[str, float | None]  # TRL's reward columns (reward_func_names) for this rollout
    # TRL's advantage, as its _score_group computed it (from its samples; for a rollout without rows, from
    # TRL's _score_group over the recorder's stand-in group, rollout_trace/record/scores.py: it trained
    # nothing); None only when the recorder could not recover it
    advantage: float | None
    rows: int  # training rows (RolloutSamples) TRL queued for the rollout
    trained_tokens: int  # tokens in TRL's loss over those rows
    dataset_index: int | None = None  # the dataset row of the group's prompt
    cause: str | None = None
    verify: Verified | None = None  # None: verify() returned nothing (the session failed first), or an older run


class Summary(msgspec.Struct, omit_defaults=True):
    model: str
    task_id: str
    captured_calls: int
    agent_turns: int
    trained_turns: int
    tool_calls_by_name: dict[str, int]
    held_out_tests: int
    n_tests_eval_cap: int
    env_reward: float | None
    reward_after_penalties: float | None
    timed_out: bool
    format_version: int = 1
    produced_by: str | None = None
    reward_breakdown: list[dict] | None = None
    capture: dict | None = None
    captured_at: str | None = None
    n_tokens: int | None = None
    drifting_boundaries: int | None = None
    trl_training: TrlTraining | None = None
    run: RunInfo | None = None


class Task(msgspec.Struct):
    task_id: str
    task_index: int
    instruction: str


class TestCase(msgspec.Struct):
    input: str
    output: str


class TestResult(msgspec.Struct, omit_defaults=True):
    index: int
    passed: bool
    status: Literal["pass", "fail", "timeout", "error", "not-run"]
    time_s: float | None = None
    detail: str = ""


class TestResults(msgspec.Struct):
    tests: list[TestResult]


class TraceEntry(msgspec.Struct):
    """One proxy trace entry, either dialect (rollout_trace/artifact/trace.py tells them apart); big arrays stay raw."""

    request: dict = {}
    response: dict = {}
    prompt_token_ids: msgspec.Raw = NO_RAW
    completion_token_ids: msgspec.Raw = NO_RAW
    completion_tokens: list[str] | None = None
    per_token_logps: msgspec.Raw = NO_RAW
    loss_mask: msgspec.Raw = NO_RAW
    metadata: dict = {}
    finish_reason: str | None = None


class TraceFile(msgspec.Struct):
    turns: list[TraceEntry]


RESCORE_DIR = "rescore"
RESCORE_META = "meta.json"
RESCORE_SCORES = "scores.safetensors"
RESCORE_VERSION = 1


class RescoredTurn(msgspec.Struct, forbid_unknown_fields=True):
    turn: int
    trained: bool
    row: int | None  # the TRL training row whose single forward scored it; None: forwarded on its own


class RescoreMeta(msgspec.Struct, forbid_unknown_fields=True):
    """rescore/<name>/meta.json: what produced the scores, so two re-scorings can be told apart."""

    format_version: int
    model: str  # path or Hub id as given
    vocab_size: int  # rows of the model's output embedding: every scored id must be below it
    dtype: Literal["float32", "bfloat16", "float16"]
    device: str
    temperature: float
    temperature_source: str  # where the value came from (recorded sampling params, flag, default)
    top_k: int
    turns: list[RescoredTurn]
    libraries: dict[str, str]  # torch, transformers, trl, safetensors versions
    duration_s: float
    created: str  # ISO 8601, UTC
    model_revision: str | None = None  # Hub commit when loaded from the Hub
    model_sha256: str | None = None  # hash of the weight files when loaded from a folder


TRL_DIR = "trl"
TRL_SAMPLE = "sample.json"
TRL_ROWS = "rows.safetensors"
TRL_PART_VERSION = 1


class TrlRowRef(msgspec.Struct):
    """One training row (RolloutSample) TRL queued for a rollout."""

    ordinal: int  # its position in the worker's queue within the segment: the consumption log's key
    fingerprint: str  # artifact.trl_part.fingerprint of its arrays and advantage
    tokens: int  # len(input_ids)
    trained_tokens: int  # sum(completion_mask)


class TrlSample(msgspec.Struct):
    """trl/sample.json: what TRL queued for one rollout, besides the arrays (rollout_trace/artifact/trl_part.py)."""

    format_version: int
    trl: str  # TRL's version
    segment: str
    group_id: int
    rollout_index: int
    rollout_id: str | None
    model_version: int
    advantage: float | None  # TRL's (RunInfo.advantage); None only when it could not be recovered
    reward: float | None  # TRL's summed reward; None = NaN
    metrics: dict[str, float | None]  # the RolloutSample metrics TRL stamped on every row (NaN as null)
    session: dict  # TRL's own session metrics: turns, sequences, tally, loop_exhausted, duration_s, tools
    rows: list[TrlRowRef]
