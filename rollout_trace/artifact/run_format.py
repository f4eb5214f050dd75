"""The files of a recorded TRL training run: the contract between the recorder and the reader.

A run is a folder (or a .zip of one, or a Hub dataset) that rollout_trace/record writes while TRL 1.16's
async GRPO trains, and rollout_trace/artifact/run.py reads. docs/runs.md tells the whole story; this is the format:

    run.json                 RunManifest: model, dataset, library versions, the config that matters,
                             start and end time (written by the main process; rewritten at the end)
    tokenizer/               the policy's tokenizer, once for the whole run (rollouts carry none)
    segments/<seg>.json      SegmentStart: one per start of TRL's worker child (a resume starts a new
                             segment: TRL's group ids restart at 0 in every child)
    segments/<seg>.end.json  SegmentEnd: what the child wrote before it exited, and what it lost
    index/<seg>.jsonl        one IndexEntry per recorded rollout, appended only after its group folder
                             is renamed into place: the run is indexed from these files alone
    consumed/<seg>.jsonl     one Consumed line per training row whose fate the trainer decided
    consumed/<seg>.end.json  ConsumptionEnd: training stopped; rows never taken are "in-queue"
    rescored/<seg>.jsonl     one Rescored line per rescore part `viewer rescore` wrote into a rollout of the
                             run in place: the trainer mismatch per version without opening a folder
    groups/<seg>-v<policy_version:06d>-g<group_id:06d>/   one scored group (rollout_trace/artifact/group.py), written
                             atomically (artifact.write.GroupBuild): group.json with its `run` extra,
                             task.json, and rollout-NN/, each a complete artifact (rollout_trace/artifact/schema.py)
                             with summary.json's `run` extra and the trl/ part (rollout_trace/artifact/trl_part.py)

Keys: a training row (RolloutSample) is (segment, ordinal), its position in the worker's queue within
the segment (one producer, one consumer, FIFO), checked by its fingerprint; a rollout is (segment,
group_id, rollout) with `rollout_id` (TRL's uuid4 = OpenEnv's episode_id) as its unique name; a group is
(segment, group_id), its policy version an attribute. Every line file is JSON Lines that `datasets`
reads (`load_dataset("json", data_files="RUN/index/*.jsonl")`); a line is written whole and flushed, and
a reader ignores a last line without its newline (a write cut by SIGKILL).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from .schema import RunStatus

RUN_FORMAT_VERSION = 1
RUN_KIND = "trl-async-grpo-run"
MANIFEST = "run.json"
INDEX_DIR, CONSUMED_DIR, SEGMENTS_DIR, GROUPS_DIR = "index", "consumed", "segments", "groups"
RESCORED_DIR = "rescored"
Drift = Literal["none", "drift", "unknown"]
# Every whole number in a run's files: at most 2**53 either way, the numbers a page's JavaScript (and a float64
# column) holds exactly. A larger one (a policy version of 10**30 in a hostile run) is refused where the line is
# read, named with its file, line and field, instead of overflowing a column far from it.
MAX_WHOLE = 2**53
Whole = Annotated[int, msgspec.Meta(ge=-MAX_WHOLE, le=MAX_WHOLE)]
# What became of a training row. "trained": in the loss at global step `step`. Dropped by TRL:
# "stale" (its RolloutQueueDataset: staleness > max_staleness), "oversize" (its TokenBudgetBatcher:
# longer than token_budget). Consumed but never trained: "resume-skip" (on resume the Trainer fast-forwards
# its dataloader past the steps already trained, ignore_data_skip=False), "read-ahead" (collated by
# accelerate one micro-batch ahead when training stopped), "in-batcher" (taken, waiting for its
# micro-batch when training stopped). The reader adds "in-queue" (recorded, never taken: training
# stopped first) and "unknown" (no consumption log for the segment).
Fate = Literal["trained", "stale", "oversize", "resume-skip", "read-ahead", "in-batcher"]


class RunManifest(msgspec.Struct, omit_defaults=True):
    """run.json: what was trained, with what, when. Never a secret (no token, no URL credentials)."""

    format_version: int
    kind: str  # RUN_KIND
    started_at: str  # ISO 8601 UTC, the first segment's start
    model: str  # the policy's name or path as the worker was given it
    produced_by: str  # one honest sentence
    versions: dict[str, str]  # trl, openenv, transformers, torch, accelerate, datasets
    dataset: dict  # {name, config, split, rows, fingerprint} as far as the dataset says
    worker: dict  # the worker's arguments that decide what is generated (num_generations, queue_maxsize...)
    config: dict | None = None  # the trainer's arguments that decide what is trained (the consumption log)
    tokenizer: str | None = None  # "tokenizer" when the run holds its tokenizer folder
    ended_at: str | None = None


class SegmentStart(msgspec.Struct, omit_defaults=True):
    """segments/<seg>.json: one start of TRL's worker child, written by the main process before it spawns."""

    segment: str
    started_at: str
    dataset_start_index: Whole  # TRL's resume position: group g's prompt is dataset row (start + g) % len
    model_version: Whole  # the policy version when the child started (restored on resume)
    num_generations: Whole


class SegmentEnd(msgspec.Struct, omit_defaults=True):
    """segments/<seg>.end.json: written by the child inside run(), before TRL's stop() terminates it."""

    segment: str
    ended_at: str
    groups_written: Whole
    groups_lost: Whole  # scored groups still waiting for the writer when it had to stop
    write_errors: Whole  # groups the writer failed to write (first_error and the child's log say why)
    rollouts_never_scored: Whole  # rollouts that finished but whose group TRL never scored (stopped first)
    writer_busy_s: float  # the writer thread's time
    handoff_s: float  # the recorder's time on TRL's event loop (the critical path)
    max_queued_samples: Whole  # the deepest the rollout queue got, as the child saw it
    # The first failure of the recorder's own code in this segment, one line (None: there was none).
    # Also logged, with its traceback, in the training log when it happened
    first_error: str | None = None
    rollout_problems: Whole = 0  # rollouts recorded without their artifact (their index entries' `problem`)
    # The recorder could not start in TRL's worker child (written by whichever process saw it): the
    # segment recorded nothing and training did not start with it
    start_error: str | None = None


class RowRef(msgspec.Struct):
    """One training row of a rollout in the index (its arrays live in the rollout's trl/ part)."""

    ordinal: Whole
    fingerprint: str
    tokens: Whole
    trained_tokens: Whole
    # the agent turns whose generated tokens this row trains (rollout_trace/analysis/training.py `row_trains`);
    # None: not recorded (a run recorded before the field, or a rollout without its artifact)
    turns: list[int] | None = None


class IndexEntry(msgspec.Struct):
    """index/<seg>.jsonl: one recorded rollout, with what a run page needs without opening any folder."""

    segment: str
    policy_version: Whole
    group_id: Whole
    rollout: Whole  # index in the group
    rollout_id: str | None
    group_path: str  # groups/<name>, relative, posix
    path: str | None  # the rollout's artifact folder; None when it failed before producing one
    status: RunStatus
    cause: str | None
    reward: float | None  # TRL's summed reward; None = NaN (unscorable). A failed rollout has one when a
    # reward function scored its empty completion (TRL does), and counts in the group's baseline
    env_reward: float | None  # the session's verify() reward
    # TRL's, as its _score_group computed it for every rollout of the group; only rows train with it, so a
    # rollout without rows (`rows` empty: failed, or no trained token) has one that trained nothing.
    # None only when the recorder could not recover it (`problem` says why)
    advantage: float | None
    rows: list[RowRef]
    trained_tokens: Whole  # over TRL's rows
    task_id: str | None
    title: str
    dataset_index: Whole | None
    turns: Whole | None  # agent turns
    trained_turns: Whole | None  # agent turns TRL trains a token of
    seed_trained_turns: Whole | None  # the original capture script's rule (turns with a tool call)
    tokens: Whole | None  # prompt + output tokens over the agent turns
    drift: Drift
    drifting_boundaries: Whole | None
    timed_out: bool
    tools: list[str]  # tool names used, sorted
    tool_calls: Whole
    recorded_at: str  # ISO 8601 UTC
    # What of this rollout the recorder could not record, and why (its artifact could not be built, or
    # TRL's reward and advantage could not be recovered): the rest of the entry is still TRL's
    problem: str | None = None


class Consumed(msgspec.Struct, omit_defaults=True):
    """consumed/<seg>.jsonl: the fate of one training row, decided on the trainer's main process."""

    segment: str
    ordinal: Whole  # the row's position in the queue within the segment (the n-th row the trainer took)
    fingerprint: str
    fate: Fate
    step: Whole | None  # the global step it was trained at ("trained" only)
    group_id: Whole
    model_version: Whole  # the version TRL stamped on the row
    trainer_version: Whole  # the trainer's policy version when it took the row
    taken_at: str


class ConsumptionEnd(msgspec.Struct, omit_defaults=True):
    """consumed/<seg>.end.json: training stopped; `taken` rows were taken, every later one is "in-queue"."""

    segment: str
    taken: Whole
    global_step: Whole
    ended_at: str


class Rescored(msgspec.Struct, omit_defaults=True):
    """rescored/<seg>.jsonl: a rescore part written into one rollout of the run (`python -m viewer rescore`)."""

    segment: str
    group_id: Whole
    rollout: Whole
    part: str
    tokens: Whole  # output tokens scored
    with_engine: Whole  # of them, with an engine logprob (a ratio)
    max_abs_log_ratio: float | None  # trainer - engine
    outside_clip: Whole  # tokens outside TRL's default clip band [0.8, 1.2]
    written_at: str


def encode_line(entry: msgspec.Struct) -> bytes:
    return msgspec.json.encode(entry) + b"\n"


def encode_file(entry: msgspec.Struct) -> bytes:
    return msgspec.json.format(msgspec.json.encode(entry), indent=2)
