"""The tables of a recorded run, declared once: a rollout's row and a consumption row, as typed records.

`RolloutRecord` is one row of `rollouts/*.parquet` (rollout_trace/artifact/run_format.py), `ConsumedRecord` one row
of `consumed/*.parquet`. Their Arrow schemas are derived from these classes (`ROLLOUTS`, `CONSUMED`), so a new
column is one field added here: the recorder writes it, every reader reads it, `viewer ls --json` shows it.

A rollout's row holds what its folder held in format 1, column by column:
- the index: where it sits (segment, policy_version, group_id, rollout, path, group), what TRL decided (status,
  reward, advantage, its training rows with the turns each trains), and what a page lists without opening it
  (turns, tokens, drift, tools, task, title);
- `findings` (rollout_trace/analysis/findings.py) and its searchable text pieces (`text_*`, one entry per piece:
  rollout_trace/analysis/texts.py), computed when it was recorded, so the whole run is searched from columns;
- its artifact's files as written (`file_*`: turns.json, trace.json, summary.json, task.json and the trl part),
  read by the one artifact reader (rollout_trace/artifact/read.py) when a page opens the rollout.
What the trainer did with its rows is not in it: that is the consumption table, joined when read.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import msgspec
import pyarrow as pa

from .schema import RunStatus


class RowRef(msgspec.Struct, frozen=True):
    """One training row TRL queued for the rollout (its arrays are in `file_trl_rows`)."""

    ordinal: int  # its position in the worker's queue within the segment: the consumption table's key
    fingerprint: str  # rollout_trace/artifact/trl_part.py `fingerprint` of its arrays and advantage
    tokens: int
    trained_tokens: int  # in TRL's completion mask
    # the agent turns whose generated tokens it trains (rollout_trace/analysis/training.py `row_trains`); None:
    # not known (the rollout has no artifact)
    turns: list[int] | None = None


class FindingRecord(msgspec.Struct, frozen=True):
    """One finding of a rule in the rollout (rollout_trace/analysis/findings.py `Finding`)."""

    rule: str
    turn: int
    start: int  # tokens [start, end) of the turn's full sequence
    end: int
    sentence: str


class RolloutRecord(msgspec.Struct, kw_only=True, frozen=True):
    """One recorded rollout: a row of the rollouts table."""

    # in the order a page reads them: a sealed shard stores its columns in this order, so the columns a run
    # page reads (place, outcome, training rows) sit together at the start of each row group, and a Hub
    # reader's range reads of them coalesce
    segment: str
    policy_version: int
    group_id: int
    rollout: int  # its index in the group
    agent_turns: int | None
    status: RunStatus
    reward: float | None  # TRL's summed reward; None = unscorable (NaN)
    env_reward: float | None  # the session's verify() reward
    advantage: float | None  # TRL's; None only when the recorder could not recover it (`problem`)
    timed_out: bool
    # its training rows (RowRef), one entry per row in queue order, a column per field: a reader of the index
    # reads the ordinals without the fingerprints
    row_ordinal: list[int]
    row_trained_tokens: list[int]
    trained_tokens: int  # over TRL's rows: what its mask WOULD train
    trained_turns: int | None  # agent turns TRL's mask trains a token of
    seed_trained_turns: int | None  # the original capture script's rule (turns with a tool call)
    tokens: int | None  # prompt + output tokens over the agent turns
    tool_calls: int
    drift: Literal["none", "drift", "unknown"]
    drifting_boundaries: int | None
    dataset_index: int | None
    cause: str | None
    task_id: str | None
    title: str
    tools: list[str]  # tool names used, sorted
    row_tokens: list[int]
    row_turns: list[list[int] | None]
    row_fingerprint: list[str]
    rollout_id: str | None  # TRL's uuid4 (OpenEnv's episode_id)
    recorded_at: str  # ISO 8601 UTC, when its group was written
    group: str  # run_format.group_path: "groups/<segment>-v<version>-g<group>"
    path: str | None  # "<group>/rollout-NN"; None when the session failed before producing an artifact
    problem: str | None = None  # what of it the recorder could not record, and why
    findings: list[FindingRecord] | None = None  # None: not computed (no artifact, or the text could not be read)
    # its searchable text, one entry per piece (rollout_trace/analysis/texts.py `Piece`): the turn, the field
    # (generated, tool-call, tool-output), the token the piece starts at, where each of its tokens starts in the
    # text (int32 little-endian; empty when its characters all sit at `start`), and the text
    text_turn: list[int] = []
    text_field: list[str] = []
    text_start: list[int] = []
    text_offsets: list[bytes] = []
    text: list[str] = []
    # where its files sit in the run's files table: the number of its segment's files shard and the row in it
    # (the recorder writes them; None where it has none)
    files_shard: int | None = None
    files_row: int | None = None
    # its artifact's files as written (rollout_trace/artifact/schema.py); None where it has none: kept in the files
    # table (files/), not in the rollouts table a page scans
    file_summary: bytes | None = None
    file_task: bytes | None = None
    file_turns: bytes | None = None
    file_trace: bytes | None = None
    file_trl_sample: bytes | None = None
    file_trl_rows: bytes | None = None


class ConsumedRecord(msgspec.Struct, kw_only=True, frozen=True):
    """The fate of one training row, decided on the trainer's main process: a row of the consumption table."""

    segment: str
    ordinal: int  # the row's position in the queue within the segment (the n-th row the trainer took)
    fingerprint: str
    fate: Literal["trained", "stale", "oversize", "resume-skip", "read-ahead", "in-batcher"]
    step: int | None  # the global step it was trained at ("trained" only)
    group_id: int
    model_version: int  # the version TRL stamped on the row
    trainer_version: int  # the trainer's policy version when it took the row
    taken_at: str


# How a sealed shard stores the columns Parquet's default (a dictionary of the chunk's values, then zstd) stores
# badly, by column path: an ordinal counts up by one from the row before (a rollout's rows, a files shard's rows, the
# queue the trainer takes rows from), so its differences are stored (~2 KB a shard where the dictionary took
# ~75-190 KB); TRL's advantages are nearly all distinct floats, which a dictionary only adds its indices to. Every
# Parquet reader decodes these (DuckDB, `datasets`, polars: docs/runs.md); what they decode to is unchanged.
ENCODINGS: dict[str, str] = {"row_ordinal.list.element": "DELTA_BINARY_PACKED", "files_row": "DELTA_BINARY_PACKED",
                             "ordinal": "DELTA_BINARY_PACKED", "advantage": "PLAIN"}


def row_columns(rows: list[RowRef]) -> dict[str, Any]:
    """A rollout's RowRefs as its `row_*` columns."""
    return {"row_ordinal": [r.ordinal for r in rows], "row_fingerprint": [r.fingerprint for r in rows],
            "row_tokens": [r.tokens for r in rows], "row_trained_tokens": [r.trained_tokens for r in rows],
            "row_turns": [r.turns for r in rows]}


# Where each file column's bytes go in an artifact folder
ARTIFACT_FILES: dict[str, str] = {"file_summary": "summary.json", "file_task": "task.json", "file_turns": "turns.json",
                                  "file_trace": "trace.json", "file_trl_sample": "trl/sample.json",
                                  "file_trl_rows": "trl/rows.safetensors"}
TEXT_COLUMNS = ("text_turn", "text_field", "text_start", "text_offsets", "text")


def _arrow(kind: Any) -> pa.DataType:
    """The Arrow type of one annotation of these records."""
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):  # X | None: every Arrow column holds nulls
        inner = [a for a in get_args(kind) if a is not type(None)]
        return _arrow(inner[0])
    if origin is Literal or kind is str:
        return pa.string()
    if origin is list:
        return pa.list_(_arrow(get_args(kind)[0]))
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        hints = typing.get_type_hints(kind)
        return pa.struct([(name, _arrow(hints[name])) for name in kind.__struct_fields__])
    return {int: pa.int64(), float: pa.float64(), bool: pa.bool_(), bytes: pa.large_binary()}[kind]


def schema_of(record: type[msgspec.Struct]) -> pa.Schema:
    hints = typing.get_type_hints(record)
    return pa.schema([(name, _arrow(hints[name])) for name in record.__struct_fields__])


ROLLOUTS = schema_of(RolloutRecord)  # a record, every column: what the recorder builds for one rollout
CONSUMED = schema_of(ConsumedRecord)
FILE_KEYS = ("segment", "group_id", "rollout")
FILE_PLACE = ("files_shard", "files_row")
# The two tables a rollout's record is written into (rollout_trace/artifact/run_format.py): the rollouts table (every
# column but the artifact files: what pages scan) and the files table (the files, with their rollout's keys)
ROLLOUTS_TABLE = pa.schema([f for f in ROLLOUTS if f.name not in ARTIFACT_FILES])
FILES = pa.schema([ROLLOUTS.field(c) for c in (*FILE_KEYS, *ARTIFACT_FILES)])
# What a page lists without opening a rollout: the rollouts table less its text and where its files sit
INDEX_COLUMNS: tuple[str, ...] = tuple(n for n in ROLLOUTS_TABLE.names if n not in TEXT_COLUMNS and n not in FILE_PLACE)


def to_table(records: list[Any], schema: pa.Schema) -> pa.Table:
    """Records of one of these classes as a table of its schema (bytes stay bytes)."""
    return pa.Table.from_pylist([msgspec.to_builtins(r, builtin_types=(bytes,)) for r in records], schema=schema)
