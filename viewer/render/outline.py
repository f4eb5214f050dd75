"""The outline the token view opens with: one record per turn plus the rollout's panels, as records.

This is the render layer's half of the page contract (viewer/contract.py): the panels' records are built by
viewer/render/panels.py from the analysis objects in viewer/rollout.py, and the page draws them, every string as
text. Lists that a hostile artifact could make huge (tools per turn, calls, tests) are bounded in panels.py, so
one upload cannot send a giant page.
"""

from __future__ import annotations

import msgspec

from rollout_trace.analysis import continuity
from rollout_trace.analysis.training import Training as TrlTraining

from ..contract import (
    MODE_CHOICES,
    SCOPE_CHOICES,
    TRAINER_MODES,
    Audit,
    Fate,
    Outline,
    RunContext,
    Training,
    TurnOutline,
)
from ..fate import row_fate, with_turns
from ..rollout import CHUNK, Rollout
from ..trainer_records import trainer_outline
from . import panels

MAX_TOOL_NAMES = 12  # per turn, in the navigator


def _tool_names(names: tuple[str | None, ...]) -> list[str]:
    shown = [(n or "?")[:80] for n in names[:MAX_TOOL_NAMES]]
    if len(names) > MAX_TOOL_NAMES:
        shown.append(f"+{len(names) - MAX_TOOL_NAMES:,} more")
    return shown


def turn_outlines(r: Rollout) -> list[TurnOutline]:
    a, rep = r.artifact, r.report
    bounds: list[continuity.Boundary | None] = [None, *rep.boundaries]
    calls_by_turn: dict[int, list] = {}
    for c in r.tool_calls:
        calls_by_turn.setdefault(c.turn, []).append(c)
    out = []
    tr = r.training
    # A recorded run's rollout has no capture script: its turns.json flag is not that script's, so no page
    # says what "the capture script" marks (its seed flag is TRL's own there).
    recorded = a.summary.run is not None
    for t, d, b, e, au in zip(a.turns, r.deltas, bounds, r.engine_checks, r.audits, strict=False):
        calls = calls_by_turn.get(t.index, [])
        out.append(TurnOutline(
            index=t.index, trained=tr.trained(t.index), trained_tokens=tr.trained_tokens(t.index),
            seed_trained=tr.trained(t.index) if recorded else t.seed_trained, tools=_tool_names(t.tool_calls),
            prompt_tokens=t.n_prompt, output_tokens=t.n_output, shared=d.shared, added=d.added,
            drift_at=None if b is None or b.continuous else b.diverge_at, carried=b.held if b is not None else 0,
            has_logprobs=bool(t.logprobs.size), tool_failed=any(c.failed for c in calls),
            audit=Audit(au.ones_in_prompt, au.zeros_in_output, au.trained_without_logprobs),
            boundary=panels.boundary(b), engine=panels.engine(e), calls=panels.tool_calls(calls), call_count=len(calls),
            trained_note=None if recorded and t.index in tr.disagreements else panels.turn_training(tr, t.index),
        ))
    return out


def outline(r: Rollout) -> Outline:
    a, rep = r.artifact, r.report
    notice = None
    if not a.turns and r.pending == "running":
        notice = "Waiting for the agent's first model call: its turns appear here as the capture proxy records them."
    elif not a.turns and r.pending:
        notice = f"The capture {r.pending} before the agent's first model call was recorded: there are no turns to show."
    elif not a.turns:
        notice = ("This rollout has no agent turn: the agent made no model call with tools, so there are no tokens "
                  "to show and TRL has nothing to train on. The tests and reward are below.")
    trainer = trainer_outline(r)  # the trainer's modes need a rescore part: offered only with one
    modes = tuple(m for m in MODE_CHOICES if trainer is not None or m.id not in TRAINER_MODES)
    return Outline(
        chunk_size=CHUNK, max_context=rep.max_context, turns=turn_outlines(r),
        modes=modes, scopes=SCOPE_CHOICES,
        summary=panels.summary(a, rep, r.pending),
        header=panels.header(a, rep, r.vocab.origin if r.vocab else None, r.vocab_why, r.alignment.note, r.training),
        tests=panels.tests(a, r.pending), reward=panels.reward(a, rep, r.pending), notice=notice,
        # A group capture will give the rollout its advantage; until then the reader picks a sign.
        trainer=trainer, advantage=getattr(r, "advantage", None),
    )


def with_run(o: Outline, r: Rollout, run: RunContext) -> Outline:
    """The outline of a run's rollout opened from its group: its place in the run and the trainer's fate,
    in the record (the page's pills, legends, headline and header draw from it; an export carries it) and in the
    headline's status."""
    run = complete_run(r, run)
    return msgspec.structs.replace(o, run=run, advantage=run.advantage,
                                   summary=panels.summary(r.artifact, r.report, r.pending, run))


def complete_run(r: Rollout, run: RunContext) -> RunContext:
    """`run` for the read rollout `r`: its rows naming the turns they train, each turn's fate, the rollout's
    fate worded by turns (viewer/fate.py `with_turns`)."""
    tr = r.training
    return with_turns(run, r.artifact, [(t.index, tr.trained(t.index)) for t in r.artifact.turns])


def training(r: Rollout, run: RunContext | None = None) -> Training:
    """TRL's rows of the rollout (the row scope); with `run`, each row's fate beside it."""
    view = r.training
    return panels.training(view, row_fates(view, complete_run(r, run)) if run is not None else None)


def row_fates(view: TrlTraining, run: RunContext) -> list[Fate | None]:
    """The fate of each row TRL builds from the trace, from the run's row in the same place of its queue: TRL
    queued exactly these rows (`viewer check` compares them), so row k is the k-th queued row when its sizes
    agree; None where they do not (the page then says it is not known)."""
    out: list[Fate | None] = []
    for k, row in enumerate(view.rows):
        q = run.rows[k] if k < len(run.rows) else None
        ok = q is not None and (q.tokens, q.trained_tokens) == (int(row.input_ids.size), row.n_trained)
        out.append(row_fate(q) if ok and q is not None else None)
    return out
