"""The records the token view receives from Python: the page contract, in one place.

The page (viewer/assets/src/trace_view/, one file per part) gets one `Outline` when a rollout opens and
`Chunk`s of tokens as they scroll into view; nothing else crosses. Keys are the readable field names below, encoded by
msgspec, so a renamed field is one edit here and in the JS that reads it. The panels (headline, header, tests,
reward, a turn's notes and tool calls, TRL's rows) are records of what they show (numbers, words, lists, flags),
built by viewer/render/panels.py; the page draws them with dom.js `el` (viewer/assets/src/trace_view/panels.js),
every string as text, so no markup crosses. A task's markdown arrives parsed (`Md`), its links checked by the server.
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


class Folded(msgspec.Struct, frozen=True):
    """A preformatted text from a trace (untrusted: the page shows it as text), folded past a length: `head`
    shows, `rest` is behind "show all `chars` characters of `label`"."""

    head: str  # the first characters (the whole of a short text)
    rest: str = ""  # the characters after `head`, up to viewer/render/safe.py MAX_CHARS; "": not folded
    chars: int = 0  # the whole text's length
    unsent: int = 0  # characters past MAX_CHARS: counted, never sent (the artifact keeps them)
    label: str = ""  # what the fold names ("the arguments"), or ""


MdTag = Literal["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "em",
                "strong", "a", "br", "hr", "text"]


class Md(msgspec.Struct, frozen=True):
    """One node of a markdown text from a trace, parsed by the server (viewer/render/markdown.py): the page makes
    the element `tag` names ("text": a run of text, no element), so no raw HTML, image or script can come of it."""

    tag: MdTag
    text: str = ""  # a "text" node's text, the whole text of inline "code" or a code block's, or an "a"'s title
    href: str | None = None  # an "a": the link as markdown-it validated it (no javascript:, vbscript:, file: or data:)
    start: int | None = None  # an "ol" that starts at another number than 1
    children: list[Md] = []


class TurnBoundary(msgspec.Struct, frozen=True):
    """Whether turn `after`'s prompt starts with every token of turn `before` (rollout_trace/analysis/continuity.py)."""

    before: int
    after: int
    continuous: bool
    held: int  # the tokens of turn `before` (its prompt and output)
    at: int  # the first position where the prompt departs from them (0 when continuous)
    in_output: bool  # that position lies inside turn `before`'s output, not its prompt
    cause: str  # the likely cause, in words ("" when continuous)
    held_ids: list[int]  # a few ids of turn `before` from `at` on
    held_text: str  # their text, whitespace made visible
    next_ids: list[int]  # the same positions in turn `after`'s prompt
    next_text: str


class EngineIds(msgspec.Struct, frozen=True):
    """The engine's prompt ids against the re-tokenized prompt (rollout_trace/analysis/engine_ids.py)."""

    status: Literal["same", "differ", "no_engine_ids", "no_retokenized_ids"]
    engine_len: int | None = None
    retok_len: int | None = None
    diverge_at: int | None = None  # "differ": the first position where they part
    engine_text: str = ""  # "differ": the engine's tokens from there, whitespace made visible
    retok_text: str = ""


class ToolCall(msgspec.Struct, frozen=True):
    """One tool call of a turn, as the agent made it and the tool answered."""

    name: str  # cut to 80 characters; "?" when the call names none
    call_id: str  # cut to 80 characters; "" when none
    arguments: Folded  # pretty JSON when they parse, else as sent
    arguments_ok: bool  # the arguments are valid JSON
    result: Folded | None  # None: no result recorded
    failed: bool  # the tool reported a failure


class TrainedNote(msgspec.Struct, frozen=True):
    """On a turn: what TRL trains of it, said when TRL's training trace lacks the turn or the capture script's flag
    (turns.json's `trained`) says otherwise. The counts are the turn's (`TurnOutline.trained_tokens`)."""

    trl: str  # TRL as the page names it ("TRL 1.16.0")
    missing: bool  # TRL's training trace holds no call that generated the turn: none of it is trained
    script_trained: bool  # the capture script marks it trained (it made a tool call)


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
    boundary: TurnBoundary | None  # how its prompt continues the turn before; None: the first turn
    engine: EngineIds
    calls: list[ToolCall]  # its tool calls, at most viewer/render/panels.py MAX_LIST
    call_count: int  # all of its tool calls (the rest are counted, not sent)
    trained_note: TrainedNote | None  # what TRL trains of it, where the capture script's flag says otherwise

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


class Summary(msgspec.Struct, frozen=True):
    """The headline a newcomer reads first: the tests, the reward (coloured by its sign), the trained turns. A
    recorded run's rollout's headline ends with the trainer's fate (`Outline.run`)."""

    tests: str  # the tests' tally in words ("3 of 4 held-out tests passed"), or the verifier's reward
    reward: float | None  # the recorded reward (TRL's for a run's rollout); None: unscorable
    no_reward: str | None  # set when there is no reward to show, said in its place ("reward pending", "failed: no reward")
    trained: str  # what is trained, in words ("3 of 3 turns trained by TRL")
    recorded: bool  # a recorded TRL run's rollout: the reward is TRL's, the count is what its mask would train


class Counts(msgspec.Struct, frozen=True):
    """What made the rollout, for the header's counts."""

    turns: int  # agent turns
    trained: int  # agent turns TRL trains (or its mask would, `recorded`)
    trained_by: str  # "TRL 1.16.0", or the rule that decided
    calls: int  # model calls the capture proxy recorded
    recorded: bool  # a recorded run's rollout: the count is its mask's
    tip: str  # the counts explained, one sentence


class Header(msgspec.Struct, frozen=True):
    """The rollout's header: model, verdicts, counts, how it was made, the task and its instruction, notices.
    A recorded run's rollout adds where it sits in the run (`Outline.run`)."""

    model: str  # cut to 120 characters
    recipe_differs: bool  # the recipe gives another reward than the recorded one (`recomputed`)
    recomputed: float | None  # the recipe's reward; None: unscorable
    continuity: str  # the continuity verdict in words (which turn's prompt rewrites the turn before)
    drift: bool  # some turn's prompt rewrites the turn before's tokens: the verdict warns
    counts: Counts
    disagree: str | None  # where the capture script and TRL part ways, short; None: they agree (or a run's rollout)
    disagree_tip: str  # the same, whole
    timed_out: bool
    produced_by: str  # how the artifact was made, cut to 600 characters; "": not said
    task: str  # the task's id, cut to 12 characters
    instruction: list[Md]  # the task's instruction, markdown parsed (empty when `instruction_text` holds it)
    instruction_text: Folded | None  # an instruction too long to parse as markdown, as plain text
    tokenizer: str | None  # where the tokenizer came from; None: no tokenizer files, ids are shown
    no_tokenizer: list[str]  # why there is none
    tokens: int  # every turn's prompt and output
    longest: int  # the longest context
    notices: list[str]  # notes on the rollout (at most viewer/render/panels.py MAX_LIST)


class HeldOutTest(msgspec.Struct, frozen=True):
    input: Folded  # what the program reads on stdin
    output: Folded  # the expected stdout
    status: str | None  # its result ("pass", "fail", "timeout"...); None: no result
    passed: bool
    detail: str  # the result's detail, or ""


class Metric(msgspec.Struct, frozen=True):
    name: str  # cut to 80 characters
    value: str  # in words, as the page writes numbers ("1,024", "0.25", "yes", "none")


class RewardColumn(msgspec.Struct, frozen=True):
    name: str  # a TRL reward function's column, cut to 80 characters
    value: float | None  # None: TRL holds NaN there (its function returned None)


class Verifier(msgspec.Struct, frozen=True):
    """A recorded run's rollout, in place of held-out tests: what OpenEnv's verify() reported (its VerifyResult)
    beside what TRL made of it (its reward columns, their sum, its scoring's status)."""

    env_reward: float | None
    done: bool | None  # verify()'s `done`; None: no VerifyResult kept (`none_why` says why)
    none_why: str
    metrics: list[Metric]  # at most viewer/render/panels.py MAX_LIST
    metric_count: int
    columns: list[RewardColumn]  # at most viewer/render/panels.py MAX_LIST
    reward: float | None  # TRL's reward, the sum of its columns; None: unscorable
    status: str  # ok | timed-out | unscorable | failed
    cause: str  # why, when it failed ("" else), cut to 300 characters


class Tests(msgspec.Struct, frozen=True):
    """The visible example tests beside the held-out tests that produce the reward (or a run's verifier)."""

    visible: Folded | None  # what the agent could see and run; None: not in this artifact
    held_out: list[HeldOutTest] | None  # at most viewer/render/panels.py MAX_LIST; None: not in this artifact
    held_out_count: int
    passed: int | None  # held-out tests passed; None: no per-test results
    no_result: str  # what a test without a result says ("never ran", "no per-test result")
    verifier: Verifier | None = None  # a recorded run's rollout: shown in place of the tests


class RewardStep(msgspec.Struct, frozen=True):
    label: str
    delta: float | None  # the change this step makes; None: the first
    value: float | None  # the reward after it; None: unscorable
    why: str


class ToolCount(msgspec.Struct, frozen=True):
    name: str  # cut to 80 characters
    calls: int


class Reward(msgspec.Struct, frozen=True):
    """How the reward is made: the recipe's steps from the tests' score, the check against the recorded reward."""

    waiting: str | None  # a capture whose tests have not run: what stands in for the steps, one sentence
    steps: list[RewardStep]
    by: str  # who recomputes it ("the recipe", or a named function)
    matches: bool  # the recorded reward is what `by` gives
    recorded: float | None
    recomputed: float | None
    timed_out: bool
    tools: list[ToolCount]  # tool calls by name, most first (at most viewer/render/panels.py MAX_LIST)
    tool_names: int  # all the names


class Outline(msgspec.Struct, frozen=True):
    chunk_size: int
    max_context: int
    turns: list[TurnOutline]
    modes: tuple[ModeChoice, ...]
    scopes: tuple[Choice, ...]
    summary: Summary
    header: Header
    tests: Tests
    reward: Reward
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


class OtherCall(msgspec.Struct, frozen=True):
    """A call in TRL's training trace that is no agent turn by the recipe (e.g. opencode's title call)."""

    call: int
    trained_tokens: int
    output_tokens: int


class Tally(msgspec.Struct, frozen=True):
    """How TRL packed the turn boundaries into rows (clean: appended, realigned: overwritten, forked: a new row)."""

    clean: int
    realign: int
    fork: int
    transitions: int
    drift_tokens: int
    drift_max: int


class Training(msgspec.Struct, frozen=True):
    """TRL's training rows of the rollout (the row scope), and what the page says about them."""

    rows: list[TrainingRow]
    listed: int  # the table lists rows[:listed] (a trace controls their number); the rest is counted
    trl: str  # TRL as the page names it ("TRL 1.16.0")
    rule: str  # how TRL's training is decided for this rollout, one sentence
    error: bool  # TRL or OpenEnv refused the rollout: nothing is trained, only `rule` is said
    rows_error: str | None  # TRL refused to pack the turns into rows: its message
    tally: Tally
    other_calls: list[OtherCall]  # at most 12
    other_call_count: int
    trainer: bool  # a recorded run's rollout: each row's trainer fate (or that it is not known) is a column
    omitted: str | None = None  # an export left the rows out: why, in place of all the rest
    unavailable: str | None = None  # the server cannot answer (the rollout is no longer loaded): why, in place of all


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
    """What the token view shows in place of a rollout: why it cannot open one, or nothing (`problems` None: the
    index is on screen, and the view clears and hides)."""

    problems: Problems | None


class Exported(msgspec.Struct, frozen=True):
    """An export the server built (server.export): the page itself, which the browser saves as a file. Nothing is
    written on the server, so a reply names no server path and a visitor's exports cost it no disk."""

    html: str  # the whole self-contained page (at most viewer/export.py's MAX_TOKENS tokens, ~15 MB)
    name: str  # the file name a download gets
    size: str  # in words ("7.1 MB")
    note: str | None  # set when the file holds less than the rollout (viewer/export.py folds it)


_encoder = msgspec.json.Encoder()
# JSON escapes that decode to the same characters: a value holding a trace's text as it is ("<script>" in a tool's
# output) then holds no markup a layer between the server and the page might sniff (Gradio warns on "<script" in a
# gr.HTML value); the page parses it as JSON and draws every string as text either way.
_NO_MARKUP = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def encode(record: msgspec.Struct) -> bytes:
    return _encoder.encode(record)


def encode_value(record: msgspec.Struct | dict) -> str:
    """`record` as a component's value (every page's: the token view, the index, the run page, the search panel):
    JSON text with no "<", ">" or "&" (each escaped)."""
    return _encoder.encode(record).decode().translate(_NO_MARKUP)
