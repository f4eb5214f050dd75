"""The records the token view receives from Python: the page contract, in one place.

The page (viewer/assets/trace_view.js) gets one `Outline` when a rollout opens and `Chunk`s of tokens
as they scroll into view; nothing else crosses. Keys are the readable field names below, encoded by
msgspec, so a renamed field is one edit here and in the JS that reads it. Panels that need markup
arrive as `*_html` fragments built (and escaped) by viewer/render, never assembled in the page.
Modes and scopes are listed by the server so the page does not repeat them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Mode = Literal["mask", "logprob", "drift", "advantage"]
Scope = Literal["new", "full", "row"]
MODES: tuple[Mode, ...] = ("mask", "logprob", "drift", "advantage")
SCOPES: tuple[Scope, ...] = ("new", "full", "row")


class Choice(msgspec.Struct, frozen=True):
    id: str
    label: str
    help: str


MODE_CHOICES = (
    Choice("mask", "mask", "context (mask 0) against generated tokens (mask 1)"),
    Choice("logprob", "logprob", "how likely the engine found each generated token"),
    Choice("drift", "drift", "which context tokens were carried over, rewritten or new"),
    Choice("advantage", "advantage", "the GRPO advantage TRL stamps on every trained token of this rollout "
           "(known when it is opened from its group)"),
)
SCOPE_CHOICES = (
    Choice("new", "new in turn", "what this turn adds; the prefix shared with the turn before is folded"),
    Choice("full", "full context", "the turn's whole prompt and output"),
    Choice("row", "training rows", "the rows TRL builds from the whole rollout and trains on"),
)


class Chunk(msgspec.Struct, frozen=True):
    """Tokens [start, start + len(ids)) of one scope, as parallel arrays."""

    start: int
    ids: list[int]
    text: list[str]
    kind: str  # one digit per token: viewer/tokens.py NORMAL 0, SPECIAL 1, JOINED 2, UNKNOWN 3
    mask: str  # one digit per token
    logprob: list[float | None]  # None where the engine recorded none (never drawn as p = 1)


class Audit(msgspec.Struct, frozen=True):
    ones_in_prompt: int
    zeros_in_output: int
    trained_without_logprobs: bool


class TurnOutline(msgspec.Struct, frozen=True):
    index: int
    trained: bool
    tools: list[str]
    prompt_tokens: int
    output_tokens: int
    shared: int  # prompt positions identical to the turn before (the "new" scope starts here)
    added: int
    drift_at: int | None  # first position where this prompt departs from the turn before
    carried: int  # tokens of the turn before (its prompt + output)
    has_logprobs: bool
    tool_failed: bool
    audit: Audit
    boundary_html: str
    engine_html: str
    tools_html: str

    @property
    def story_at(self) -> int:
        """Where a reader should land: the drift when the boundary breaks, else the first generated token."""
        return self.drift_at if self.drift_at is not None else self.prompt_tokens


class Initial(msgspec.Struct, frozen=True):
    turn: int = 0
    mode: Mode = "mask"
    scope: Scope = "new"


class Outline(msgspec.Struct, frozen=True):
    chunk_size: int
    max_context: int
    turns: list[TurnOutline]
    modes: tuple[Choice, ...]
    scopes: tuple[Choice, ...]
    summary_html: str
    header_html: str
    tests_html: str
    reward_html: str
    notice: str | None  # a rollout-level note the page shows once (e.g. no agent turn at all)
    # The rollout's GRPO advantage when it was opened from its group (TRL stamps it on all its rows);
    # None when opened on its own. The advantage mode colours by it; a loss mode may read it.
    advantage: float | None = None


class TrainingRow(msgspec.Struct, frozen=True):
    tokens: int
    trained: int
    turns: list[int]


class Training(msgspec.Struct, frozen=True):
    html: str
    rows: list[TrainingRow]


class Opened(msgspec.Struct, frozen=True):
    """What the app sends when a rollout opens: the shared outline, this visitor's place, the first chunk."""

    key: str
    src: str | None
    outline: msgspec.Raw  # an encoded Outline, shared by every visitor of the rollout
    initial: Initial
    first_chunk: Chunk | None  # the chunk holding the initial turn's story, so the first paint needs no round trip
    built: bool = False  # the value the page was built with (the default rollout), not an answer to this visitor


class Failed(msgspec.Struct, frozen=True):
    error_html: str


_encoder = msgspec.json.Encoder()


def encode(record: msgspec.Struct) -> bytes:
    return _encoder.encode(record)
