"""The records the token view receives from Python: the page contract, in one place.

The page (viewer/assets/src/trace_view/, one file per part) gets one `Outline` when a rollout opens and
`Chunk`s of tokens as they scroll into view; nothing else crosses. Keys are the readable field names below, encoded by
msgspec, so a renamed field is one edit here and in the JS that reads it. Panels that need markup
arrive as `*_html` fragments built (and escaped) by viewer/render, never assembled in the page.
Modes and scopes, and what each mode needs (a rescore part, one turn), are listed by the server so the
page does not repeat them. viewer/assets/contract.d.ts is these records as TypeScript, generated from
msgspec's JSON schema (viewer/page_types.py); `tsc` checks every record field the page reads against it
(tests/test_page_contract.py), so a renamed field fails a test, not the screen.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from rollout_trace.artifact.run_table import QueuedRow

Mode = Literal["mask", "logprob", "drift", "advantage", "mismatch", "entropy", "loss"]
Scope = Literal["new", "full", "row"]
MODES: tuple[Mode, ...] = ("mask", "logprob", "drift", "advantage", "mismatch", "entropy", "loss")
SCOPES: tuple[Scope, ...] = ("new", "full", "row")


class Choice(msgspec.Struct, frozen=True):
    id: str
    label: str
    help: str


class ModeChoice(Choice, frozen=True):
    """A colour mode, with what it needs: the page offers and greys out modes from these flags alone."""

    trainer: bool = False  # the trainer's view (docs/trainer-view.md): needs a rescore part
    not_in_rows: str | None = None  # why a training row (several turns) cannot show it; None: it can


_PER_TURN = "the trainer's view is per turn; a training row spans turns"
MODE_CHOICES = (
    ModeChoice("mask", "mask", "context (mask 0) against generated tokens (mask 1)"),
    ModeChoice("logprob", "logprob", "how likely the engine found each generated token"),
    ModeChoice("drift", "drift", "which context tokens were carried over, rewritten or new",
               not_in_rows="drift compares a turn with the turn before; a training row spans turns"),
    ModeChoice("advantage", "advantage", "the GRPO advantage TRL stamps on every trained token of this rollout "
               "(known when it is opened from its group)"),
    # The trainer's view: need a rescore part; the outline leaves them out otherwise.
    ModeChoice("mismatch", "mismatch", "log ratio trainer - engine per generated token, with TRL's clip band",
               trainer=True, not_in_rows=_PER_TURN),
    ModeChoice("entropy", "entropy", "the trainer's entropy at each generated token", trainer=True, not_in_rows=_PER_TURN),
    ModeChoice("loss", "loss", "TRL's per-token loss -min(r·A, clip(r)·A) for the chosen advantage; clipped tokens marked",
               trainer=True, not_in_rows=_PER_TURN),
)
TRAINER_MODES: frozenset[str] = frozenset(m.id for m in MODE_CHOICES if m.trainer)
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
    kind: str  # one digit per token: rollout_trace/analysis/tokens.py NORMAL 0, SPECIAL 1, JOINED 2, UNKNOWN 3
    mask: str  # one digit per token
    logprob: list[float | None]  # None where the engine recorded none (never drawn as p = 1)


class Audit(msgspec.Struct, frozen=True):
    ones_in_prompt: int
    zeros_in_output: int
    trained_without_logprobs: bool


class TurnOutline(msgspec.Struct, frozen=True):
    index: int
    trained: bool  # TRL trains a token of it (rollout_trace/analysis/training.py)
    trained_tokens: int  # how many of its generated tokens TRL trains
    seed_trained: bool  # turns.json's `trained`: the original capture script's rule (a tool call)
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
    trained_html: str  # on the turn: what TRL trains of it, where the capture script's flag says otherwise

    @property
    def story_at(self) -> int:
        """Where a reader should land: the drift when the boundary breaks, else the first generated token."""
        return self.drift_at if self.drift_at is not None else self.prompt_tokens


class Initial(msgspec.Struct, frozen=True):
    """Where a visitor starts. Its fields, beside `src`, are the page link's parameters (viewer/page_link.py):
    the page tells a deep link and writes its place back by these names."""

    turn: int = 0
    mode: Mode = "mask"
    scope: Scope = "new"
    found: tuple[int, int] | None = None  # tokens [a, b) of `turn` a search hit marks (viewer/ui/find_panel.py)


class TrainerPart(msgspec.Struct, frozen=True):
    """One rescore part (rescore/<name>/): what made it, for the part picker."""

    name: str
    label: str  # short, e.g. "bfloat16 · t1"
    model: str
    dtype: str
    device: str
    temperature: float
    top_k: int


class TrainerOutline(msgspec.Struct, frozen=True):
    """What the trainer's view can show for this rollout; the numbers come per turn (`TrainerTurn`)."""

    parts: list[TrainerPart]
    eps_choices: list[tuple[float, float]]  # (eps_low, eps_high): TRL's default, DAPO's
    histogram_edges: list[float]  # log-ratio bin edges at TRL's default band (each summary carries its own)
    # An export carries one band and one advantage (viewer/export.py): the part it opens on and the
    # advantage buttons it offers ("group", "+1", "-1"); None in the app, which offers them all.
    part: str | None = None
    advantages: list[str] | None = None


class TrainerTurn(msgspec.Struct, frozen=True):
    """One turn's output tokens as the trainer sees them, as parallel arrays (None: undefined there).

    Position `start + k` of the turn's prompt + output is output token k. Ratio-derived values are None
    where the engine recorded no logprob (drawn as missing, never as a ratio of 1)."""

    turn: int
    part: str
    start: int
    eps: tuple[float, float]
    advantage: float
    trained: str  # one digit per token: in TRL's loss
    top1: str  # one digit per token: the trainer's argmax
    outside: str  # one digit per token: ratio outside [1 - eps_low, 1 + eps_high]
    clipped: str  # one char per token: "l" / "h" TRL counts it low / high clipped, "0" not
    trainer_lp: list[float | None]
    engine_lp: list[float | None]
    log_ratio: list[float | None]
    kl_k3: list[float | None]
    entropy: list[float | None]
    loss: list[float | None]
    topk_text: list[list[str]]  # decoded alternatives: untrusted text, the page escapes it
    topk_probs: list[list[float]]


class TrainerStats(msgspec.Struct, frozen=True):
    tokens: int
    with_engine: int
    mean_abs_log_ratio: float | None
    max_abs_log_ratio: float | None
    mean_kl_k3: float | None
    mean_entropy: float | None
    top1: int
    outside_clip: int
    clipped_low: int
    clipped_high: int
    mean_loss: float | None
    histogram: list[int]


class TrainerSummary(msgspec.Struct, frozen=True):
    """Per-rollout and per-turn statistics of one part, band and advantage (all output tokens)."""

    part: str
    eps: tuple[float, float]
    advantage: float
    rollout: TrainerStats
    turns: list[TrainerStats]
    # bin i of each histogram holds edges[i-1] <= log ratio < edges[i] (open ends); the band's own edges,
    # log(1 - eps_low) and log(1 + eps_high), are among them, so the bins beyond them are the tokens outside
    histogram_edges: list[float] = []
    band: tuple[float, float] = (0.0, 0.0)  # the clip band in log-ratio terms


class Fate(msgspec.Struct, frozen=True):
    """Whether the trainer DID train a recorded run's rollout or one of its turns (its consumption log, row by
    row), never to be confused with what TRL's mask WOULD train in it (`TurnOutline.trained`). viewer/fate.py
    decides and words it."""

    trained: bool  # every row of it (of a turn: the row that trains it) was in the loss at a global step
    steps: list[int]  # the global steps its rows were trained at
    cause: str | None  # why never: read-ahead, in-queue, stale, oversize, resume-skip, in-batcher, failed, not in mask...
    label: str  # "trained at step 3" | "never trained (read-ahead)" | "turn 0 trained at step 5 · turns 1–2 never trained (read-ahead)"
    why: str  # one sentence
    partly: bool = False  # a rollout some of whose rows were trained and some never


class RunContext(msgspec.Struct, frozen=True):
    """Where a rollout of a recorded TRL run sits, and what TRL and the trainer made of it."""

    run: str  # the run's source, as the page names it
    segment: str
    version: int  # the policy version TRL stamped on its group
    group_id: int
    rollout: int
    k: int
    status: str  # ok | timed-out | unscorable | failed
    reward: float | None  # TRL's; None: unscorable
    advantage: float | None  # TRL's; None when TRL gave none (a failed rollout)
    fate: Fate  # the rollout's, its rows together
    crumbs: list[str]  # ["run", "v1", "group 4", "rollout 0"]
    rows: list[QueuedRow] = []  # its TRL rows in queue order, each with the turns it trains and its fate
    dropped: str | None = None  # why it has no row ("failed", "no rows"), or its rows' first fate when none was trained
    # one per turn of the outline, in its order (viewer/fate.py `turn_fate`); empty until the artifact is read
    turns: list[Fate] = []


class Outline(msgspec.Struct, frozen=True):
    chunk_size: int
    max_context: int
    turns: list[TurnOutline]
    modes: tuple[ModeChoice, ...]
    scopes: tuple[Choice, ...]
    summary_html: str
    header_html: str
    tests_html: str
    reward_html: str
    notice: str | None  # a rollout-level note the page shows once (e.g. no agent turn at all)
    trainer: TrainerOutline | None = None  # rescore parts, when the rollout has any
    # The rollout's GRPO advantage when it was opened from its group (TRL stamps it on all its rows);
    # None when opened on its own. The advantage mode colours by it; the loss mode uses it when present.
    advantage: float | None = None
    # Set when the rollout is a recorded run's (opened from its group map): where it sits and whether the
    # trainer took it. The advantage and loss modes say their push is hypothetical when it never did.
    run: RunContext | None = None


class TrainingRow(msgspec.Struct, frozen=True):
    tokens: int
    trained: int
    turns: list[int]
    fate: Fate | None = None  # a recorded run's rollout: whether the trainer trained this row


class Training(msgspec.Struct, frozen=True):
    html: str
    rows: list[TrainingRow]


LiveState = Literal["running", "done", "cancelled", "failed"]


class LiveSibling(msgspec.Struct, frozen=True):
    """One rollout of a group being captured: the page offers to follow any of them."""

    rollout: int
    stage: str
    turns: int


class Live(msgspec.Struct, frozen=True):
    """A capture being watched while it runs (viewer/ui/live.py): the page keeps asking for this record.

    `version` grows with every change; `changed` is the version at which the rollout itself (its turns,
    panels or final artifact) last changed, so the page re-reads the outline only then."""

    run: str  # an unguessable id: whoever holds it may watch this capture
    version: int
    changed: int
    state: LiveState
    stage: str  # what the capture is doing, in words ("agent working", "verifying", ...)
    elapsed_s: float
    calls: int  # agent turns recorded so far
    recorded_at: float | None  # Unix time the proxy recorded the newest call (the paint delay is measured from it)
    message: str = ""  # why it was cancelled or failed
    rollout: int | None = None  # the followed rollout of a group
    siblings: list[LiveSibling] = []


class Opened(msgspec.Struct, frozen=True):
    """What the app sends when a rollout opens: the shared outline, this visitor's place, the first chunk."""

    key: str
    src: str | None
    # an encoded Outline, shared by every visitor of the rollout (the schema, and the page's types, say so)
    outline: Annotated[msgspec.Raw, msgspec.Meta(extra_json_schema={"$ref": "#/$defs/Outline"})]
    initial: Initial
    first_chunk: Chunk | None  # the chunk holding the initial turn's story, so the first paint needs no round trip
    built: bool = False  # the value the page was built with (the default rollout), not an answer to this visitor
    live: Live | None = None  # set while a capture is watched, and on the artifact that finishes it
    note: str | None = None  # what the page says above the view: link values it could not use, and what it used


class Problems(msgspec.Struct, frozen=True):
    """Why a source cannot be shown, in words: the page draws "Cannot open <source>" over the list
    (dom.js `problemsBox`). Every text is untrusted (a path, a trace's field) and reaches the page as text."""

    source: str  # the source as the page names it (rollout_trace safe.source_label)
    items: list[str]


class Failed(msgspec.Struct, frozen=True):
    error_html: str


class Exported(msgspec.Struct, frozen=True):
    """An export the server built (server.export): the page itself, which the browser saves as a file. Nothing is
    written on the server, so a reply names no server path and a visitor's exports cost it no disk."""

    html: str  # the whole self-contained page (at most viewer/export.py's MAX_TOKENS tokens, ~15 MB)
    name: str  # the file name a download gets
    size: str  # in words ("7.1 MB")
    note: str | None  # set when the file holds less than the rollout (viewer/export.py folds it)


_encoder = msgspec.json.Encoder()


def encode(record: msgspec.Struct) -> bytes:
    return _encoder.encode(record)
