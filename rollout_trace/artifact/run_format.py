"""The files of a recorded TRL training run: the contract between the recorder and the reader.

A run is a folder (or a .zip of one, or a Hub dataset) that rollout_trace/record writes while TRL 1.16's
async GRPO trains, and rollout_trace/artifact/run.py reads. docs/runs.md tells the whole story; this is the format
(format_version 2; a run of format 1, a folder per group, is converted by `python -m viewer convert OLD NEW`):

    run.json                    RunManifest: model, dataset, library versions, the config that matters,
                                start and end time (written by the main process; rewritten at the end)
    tokenizer/                  the policy's tokenizer, once for the whole run
    segments/<seg>.json         SegmentStart: one per start of TRL's worker child (a resume starts a new
                                segment: TRL's group ids restart at 0 in every child)
    segments/<seg>.end.json     SegmentEnd: what the child wrote before it exited, and what it lost
    rollouts/<seg>-<NNNNN>.parquet   a sealed shard of the rollouts table (rollout_trace/artifact/run_schema.py
                                `ROLLOUTS_TABLE`): one row per rollout, whole groups in the order they were
                                scored, up to 16,384 rows in one row group (what a page scans); written once,
                                never rewritten
    files/<seg>-<NNNNN>.parquet      a sealed shard of the files table (`FILES`): the artifact files of the rollouts
                                that have any, with their keys, 2,048 rollouts a shard in row groups of 32 (opening
                                one rollout reads its row group); a rollout's row says where its files sit
                                (`files_shard`, the number of its segment's files shard, and `files_row`)
    rollouts/<seg>-<NNNNN>.arrows    a table's open tail (files/ has its own), its columns as an Arrow IPC stream
    files/<seg>-<NNNNN>.arrows       of one record batch per group, appended and flushed a group at a time (a
                                group's files before its rows); sealed into the .parquet of the same number when
                                it is large enough or the segment ends
    consumed/<seg>-<NNNNN>.parquet   the consumption table (`CONSUMED`): one row per training row whose fate
    consumed/<seg>-<NNNNN>.arrows    the trainer decided, sealed and open tail as above
    consumed/<seg>.end.json     ConsumptionEnd: training stopped; rows never taken are "in-queue"
    rescored/<seg>.jsonl        one Rescored line per rescore part `viewer rescore` wrote for a rollout of the run
    rescored/<group>/rollout-NN/<part>/   that part's files (rollout_trace/artifact/rescore.py)

A reader reads every sealed shard and every tail up to its last whole batch (a write cut short by SIGKILL
leaves at most a partial batch, which is skipped with a note), and a tail whose shard is already sealed (a seal
cut short before it removed the tail) not at all. A run of a million rollouts is about 60 rollouts shards and
500 files shards: within the Hub's advice (fewer than 10k files a folder, 100k a repository). DuckDB, polars, Spark and `datasets` read
`rollouts/*.parquet` as one table (docs/runs.md has a query).

Keys: a training row (RolloutSample) is (segment, ordinal), its position in the worker's queue within the
segment (one producer, one consumer, FIFO), checked by its fingerprint; a rollout is (segment, group_id,
rollout) with `rollout_id` (TRL's uuid4 = OpenEnv's episode_id) as its unique name, and `path`
(`groups/<seg>-v<version:06d>-g<group_id:06d>/rollout-NN`) as the name pages and links use; a group is
(segment, group_id), its policy version an attribute.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

import msgspec

RUN_FORMAT_VERSION = 2
RUN_KIND = "trl-async-grpo-run"
MANIFEST = "run.json"
ROLLOUTS_DIR, CONSUMED_DIR, SEGMENTS_DIR, RESCORED_DIR = "rollouts", "consumed", "segments", "rescored"
FILES_DIR = "files"
GROUPS = "groups"  # the first part of every rollout's `path`: a name, not a folder of the run
SEALED, TAIL = ".parquet", ".arrows"
# A shard's file name: the segment, then its number within the segment
SHARD_NAME = re.compile(r"^(?P<segment>[A-Za-z0-9_.-]+)-(?P<number>\d{5})(?P<ext>\.parquet|\.arrows)$")
Drift = Literal["none", "drift", "unknown"]
# Every whole number a run's JSON files hold is within what a float64 holds exactly (JavaScript's safe integers):
# a larger one (10**30 in a hostile file) is a named problem where the file is read, never an OverflowError in a
# column, a tool or a page. A table's `policy_version` is bounded the same way (run_table.py `_fits`).
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


def shard_name(segment: str, number: int, ext: str) -> str:
    return f"{segment}-{number:05d}{ext}"


def group_name(segment: str, policy_version: int, group_id: int) -> str:
    return f"{segment}-v{policy_version:06d}-g{group_id:06d}"


def group_path(segment: str, policy_version: int, group_id: int) -> str:
    """A group's name as pages and links use it (what was its folder in format 1)."""
    return f"{GROUPS}/{group_name(segment, policy_version, group_id)}"


# A group's name (`group_path`) or one of its rollouts' (`<group>/rollout-NN`) read back: its segment and group id,
# from the right (a segment name may hold "-v" and "-g" itself)
PLACE_NAME = re.compile(rf"^{GROUPS}/(?P<segment>.+)-v\d+-g(?P<group>\d{{1,12}})(/rollout-(?P<rollout>\d+))?$", re.ASCII)


class RunManifest(msgspec.Struct, omit_defaults=True):
    """run.json: what was trained, with what, when. Never a secret (no token, no URL credentials)."""

    format_version: Whole
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
    rollout_problems: Whole = 0  # rollouts recorded without their artifact (their row's `problem`)
    # The recorder could not start in TRL's worker child (written by whichever process saw it): the
    # segment recorded nothing and training did not start with it
    start_error: str | None = None


class ConsumptionEnd(msgspec.Struct, omit_defaults=True):
    """consumed/<seg>.end.json: training stopped; `taken` rows were taken, every later one is "in-queue"."""

    segment: str
    taken: Whole
    global_step: Whole
    ended_at: str


class Rescored(msgspec.Struct, omit_defaults=True):
    """rescored/<seg>.jsonl: a rescore part written for one rollout of the run (`python -m viewer rescore`)."""

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
