"""Small pure functions from analysis results to the records the token view's panels show (viewer/contract.py):
header, headline, turn boundary, engine ids, tool calls, tests, reward steps, training rows. They hold facts and
words, never markup; the page draws them (viewer/assets/src/trace_view/panels.js). Every list a trace controls is
bounded here, so one upload cannot send a giant page."""

from __future__ import annotations

import heapq

from rollout_trace.analysis.continuity import Boundary
from rollout_trace.analysis.engine_ids import EngineCheck
from rollout_trace.analysis.report import Report, fmt_reward
from rollout_trace.analysis.tokens import make_visible
from rollout_trace.analysis.tools import ToolCall as TraceToolCall
from rollout_trace.analysis.training import TRL, Training
from rollout_trace.artifact import Artifact, TestResult
from rollout_trace.artifact.schema import MetricValue

from ..contract import (
    Counts,
    EngineIds,
    Fate,
    Header,
    HeldOutTest,
    Metric,
    OtherCall,
    Reward,
    RewardColumn,
    RewardStep,
    RunContext,
    Summary,
    Tally,
    Tests,
    ToolCall,
    ToolCount,
    TrainedNote,
    TrainingRow,
    TurnBoundary,
    Verifier,
)
from ..contract import Training as TrainingRecord
from . import markdown
from .safe import folded, pretty_json, short

MAX_LIST = 200  # rows of any list a trace controls (tests, calls, names); the rest is counted, not sent
MAX_NAMED = 12  # turns or calls a sentence names
_PENDING_TEST = {"running": "runs when the agent finishes"}  # a watched capture's tests (else: never ran)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def summary(a: Artifact, r: Report, pending: str | None = None, run: RunContext | None = None) -> Summary:
    """The one line a newcomer reads first: tests, reward (coloured by sign), trained turns.

    `pending`: the state of a capture whose tests have not run (viewer/ui/live.py): running, cancelled, failed.
    A recorded run's rollout says what its mask would train apart from whether the trainer did (`run`; the page
    adds the trainer's fate from `Outline.run`)."""
    info = a.summary.run
    if info is not None and pending is None:
        env = a.summary.env_reward
        status = run.status if run is not None else info.status
        return Summary(tests="no verifier reward" if env is None else f"verifier {fmt_reward(env)}", reward=info.reward,
                       no_reward=f"{status}: no reward" if info.reward is None else None,
                       trained=f"{r.trained_turns} of {_plural(r.turns, 'turn')} in TRL's mask" if r.turns else "no agent turn",
                       recorded=True)
    results = a.test_results or []
    n_tests = len(a.held_out_tests or [])
    if pending is not None:
        tests, no_reward = ((f"{_plural(n_tests, 'held-out test')} run when the agent finishes", "reward pending")
                            if pending == "running" else
                            (f"{_plural(n_tests, 'held-out test')} never ran: the capture {pending}", "no reward"))
        return Summary(tests, None, no_reward, f"{_trained(r)} so far" if r.turns else "no agent turn yet", False)
    if results:
        tests = f"{sum(t.passed for t in results)} of {n_tests} held-out tests passed"
    elif a.held_out_tests is not None:
        tests = f"{_plural(n_tests, 'held-out test')} (no per-test results)"
    else:
        tests = "no held-out tests in this artifact"
    return Summary(tests, r.reward.recorded, None, _trained(r) if r.turns else "no agent turn: nothing to train", False)


def _trained(r: Report) -> str:
    """The headline's count, short enough for one line at 1024 px; the header names the TRL version."""
    by = "by TRL" if r.trained_by == TRL else f"({r.trained_by})"
    return f"{r.trained_turns} of {_plural(r.turns, 'turn')} trained {by}"


def _turns_words(turns: list[int]) -> str:
    return (("turn " if len(turns) == 1 else "turns ") + ", ".join(map(str, turns[:MAX_NAMED]))
            + (" …" if len(turns) > MAX_NAMED else ""))


def disagreement_short(tr: Training) -> str | None:
    """Once per rollout, beside the counts: a short line where the capture script and TRL part ways (the whole
    sentence, `disagreement`, on hover; on each such turn: `turn_training`)."""
    if disagreement(tr) is None:
        return None
    off = [i for i in tr.disagreements if tr.trained(i)]
    on = [i for i in tr.disagreements if not tr.trained(i)]
    # Plain words first (what TRL does, what the older rule would have done); the exact rule is on hover.
    return "; ".join(([f"TRL trains {_turns_words(off)}; the original capture script would not (no tool call)"] if off else [])
                     + ([f"TRL trains none of {_turns_words(on)}; the original capture script would"] if on else []))


def disagreement(tr: Training) -> str | None:
    """Once per rollout: where turns.json's `trained` (the capture script's rule) and TRL part ways."""
    off = [i for i in tr.disagreements if tr.trained(i)]  # the script says untrained, TRL trains
    on = [i for i in tr.disagreements if not tr.trained(i)]
    parts = []
    if off:
        tokens = ", ".join(f"{tr.trained_tokens(i):,}" for i in off[:MAX_NAMED])
        parts.append(f"The original capture script marks {_turns_words(off)} untrained because "
                     f"{'it' if len(off) == 1 else 'they'} made no tool call; {TRL} trains "
                     f"{'its' if len(off) == 1 else 'their'} {tokens} generated tokens (it trains OpenEnv's loss "
                     "mask on every turn, tool call or not).")
    if on:
        parts.append(f"The original capture script marks {_turns_words(on)} trained because "
                     f"{'it' if len(on) == 1 else 'they'} made a tool call; {TRL} trains none of "
                     f"{'its' if len(on) == 1 else 'their'} tokens (OpenEnv's loss mask is 0 over them).")
    return " ".join(parts) or None


def turn_training(tr: Training, turn: int) -> TrainedNote | None:
    """On the turn: what TRL trains of it, when TRL's trace lacks it or the capture script's flag says otherwise."""
    if turn in tr.missing and not tr.error:
        return TrainedNote(TRL, missing=True, script_trained=tr.seed_flags[turn])
    if turn not in tr.disagreements:
        return None
    return TrainedNote(TRL, missing=False, script_trained=tr.seed_flags[turn])


def header(a: Artifact, r: Report, vocab_origin: str | None, vocab_why: list[str], note: str | None = None,
           tr: Training | None = None) -> Header:
    """The rollout's header; a recorded run's place in the run is `Outline.run`'s, drawn beside it."""
    training_note = tr.rule if tr is not None and (tr.error or tr.basis == "seed") else None
    notes = [*([training_note] if training_note else []), *a.notices, *([note] if note else [])]
    other = r.captured_calls - r.turns  # opencode's bookkeeping calls (titles, summaries): rollout_trace/recipe/agent_turns.py
    recorded = a.summary.run is not None  # a run's rollout: no capture script's files, the trainer's own fate
    tip = ("model calls the capture proxy recorded; agent turns are the calls that offer the agent's tools with "
           "its system prompt" + (f" ({_plural(other, 'other call')}: opencode's bookkeeping, such as the session "
                                  "title, not part of the rollout)" if other > 0 else "")
           + (f". {tr.rule}" if tr is not None else ""))
    said = disagreement(tr) if tr is not None and not recorded else None
    blocks, too_long = markdown.parse(a.task.instruction if a.task else "")
    return Header(
        model=short(r.model, 120), recipe_differs=not r.reward.matches, recomputed=r.reward.recomputed,
        continuity=continuity_words(r), drift=r.continuity.kind == "drift",
        counts=Counts(r.turns, r.trained_turns, r.trained_by, r.captured_calls, recorded, tip),
        disagree=disagreement_short(tr) if said is not None and tr is not None else None, disagree_tip=said or "",
        timed_out=a.summary.timed_out, produced_by=short(a.summary.produced_by or "", 600),
        task=(a.task.task_id if a.task else a.summary.task_id)[:12], instruction=blocks, instruction_text=too_long,
        tokenizer=vocab_origin or None, no_tokenizer=[] if vocab_origin else list(vocab_why),
        tokens=r.prompt_tokens + r.output_tokens, longest=r.max_context, notices=notes[:MAX_LIST])


def continuity_words(r: Report) -> str:
    """The continuity verdict in plain words, its exact count kept: which turn's prompt rewrites the turn before."""
    drifting = [b for b in r.boundaries if not b.continuous]
    if r.continuity.kind == "clean":
        return f"every turn starts with the exact tokens of the turn before ({r.continuity.text})"
    if not drifting:
        return r.continuity.text
    if len(drifting) == 1:
        b = drifting[0]
        return f"turn {b.after}'s prompt rewrites turn {b.before}'s tokens ({r.continuity.text})"
    named = ", ".join(str(b.after) for b in drifting[:3]) + (" …" if len(drifting) > 3 else "")
    return f"the prompts of turns {named} rewrite the turn before's tokens ({r.continuity.text})"


def boundary(b: Boundary | None) -> TurnBoundary | None:
    if b is None:
        return None
    return TurnBoundary(b.before, b.after, b.continuous, b.held, b.diverge_at or 0, b.in_output, b.cause or "",
                        list(b.held_ids), make_visible(b.held_text), list(b.next_ids), make_visible(b.next_text))


def engine(c: EngineCheck) -> EngineIds:
    return EngineIds(c.status, c.engine_len, c.retok_len, c.diverge_at, make_visible(c.engine_text),
                     make_visible(c.retok_text))


def tool_calls(calls: list[TraceToolCall]) -> list[ToolCall]:
    return [ToolCall(name=short(c.name or "?", 80), call_id=short(c.call_id or "", 80),
                     arguments=folded(pretty_json(c.arguments) if c.arguments_ok else str(c.arguments), label="arguments"),
                     arguments_ok=c.arguments_ok,
                     result=folded(c.result, label="the result") if c.result is not None else None, failed=c.failed)
            for c in calls[:MAX_LIST]]


def _metric_value(v: MetricValue) -> str:
    """A verifier metric as the rest of the page writes numbers: counts with separators, others to 3 figures."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.0f}" if v.is_integer() and abs(v) < 1e15 else f"{v:.3g}"
    return short(v, 200)


def verifier(a: Artifact) -> Verifier:
    """A recorded run's rollout in place of held-out tests: what OpenEnv's verify() reported (its VerifyResult:
    env_reward, done and its metrics, e.g. tests passed and failed) beside what TRL made of it (its reward
    columns, their sum, the status its scoring gave)."""
    info = a.summary.run
    assert info is not None
    v = info.verify
    # verify() returned nothing (the session failed first), or a run recorded before it was kept
    none_why = "" if v is not None else (
        "verify() returned nothing: the session failed before it was verified" if info.status == "failed"
        else "this recording keeps only verify()'s reward (recorded before its other fields were kept)")
    metrics = list(v.metrics.items()) if v is not None else []
    return Verifier(
        env_reward=a.summary.env_reward, done=v.done if v is not None else None, none_why=none_why,
        metrics=[Metric(short(k, 80), _metric_value(x)) for k, x in metrics[:MAX_LIST]], metric_count=len(metrics),
        # A column TRL holds as NaN (its function returned None) is no verdict on the rollout: "none", not "unscorable"
        columns=[RewardColumn(short(k, 80), x) for k, x in list(info.rewards.items())[:MAX_LIST]],
        reward=info.reward, status=info.status, cause=short(info.cause, 300) if info.cause else "")


def tests(a: Artifact, pending: str | None = None) -> Tests:
    if a.summary.run is not None:
        return Tests(None, None, 0, None, "", verifier(a))
    results: dict[int, TestResult] = {r.index: r for r in a.test_results or []}
    held = []
    for i, t in enumerate((a.held_out_tests or [])[:MAX_LIST]):
        r = results.get(i)
        # Inputs and outputs are shown as the program reads and prints them, one line per line (the page's CSS)
        held.append(HeldOutTest(folded(t.input, 400, "the input"), folded(t.output, 400, "the output"),
                                r.status if r else None, bool(r and r.passed), r.detail if r else ""))
    return Tests(
        visible=folded(a.visible_tests, label="the visible tests") if a.visible_tests is not None else None,
        held_out=held if a.held_out_tests is not None else None, held_out_count=len(a.held_out_tests or []),
        passed=sum(r.passed for r in results.values()) if results else None,
        no_result=(_PENDING_TEST.get(pending, "never ran") if pending else "no per-test result"))


def reward(a: Artifact, r: Report, pending: str | None = None) -> Reward:
    waiting = None
    if pending == "running":
        waiting = ("The reward is computed from the held-out tests once the agent finishes, then penalised by the "
                   "recipe's rules.")
    elif pending is not None:
        waiting = f"No reward: the capture {pending} before its held-out tests ran."
    by_name = heapq.nsmallest(MAX_LIST, a.summary.tool_calls_by_name.items(), key=lambda kv: (-kv[1], kv[0]))
    return Reward(
        waiting=waiting, steps=[RewardStep(s.label, s.delta, s.value, s.why) for s in r.reward.steps] if waiting is None else [],
        by="the recipe" if r.reward.by == "recipe" else r.reward.by, matches=r.reward.matches,
        recorded=r.reward.recorded, recomputed=r.reward.recomputed, timed_out=a.summary.timed_out,
        tools=[ToolCount(short(k, 80), v) for k, v in by_name], tool_names=len(a.summary.tool_calls_by_name))


def no_rows(omitted: str | None = None, unavailable: str | None = None) -> TrainingRecord:
    """In place of the training rows: an export left them out (`omitted`, viewer/export.py says why), or the
    server cannot answer (`unavailable`)."""
    return TrainingRecord(rows=[], listed=0, trl=TRL, rule="", error=False, rows_error=None, tally=Tally(0, 0, 0, 0, 0, 0),
                          other_calls=[], other_call_count=0, trainer=False, omitted=omitted, unavailable=unavailable)


def training(view: Training, fates: list[Fate | None] | None = None) -> TrainingRecord:
    """TRL's rows of the rollout; `fates`: a recorded run's, each row's fate (a trainer column)."""
    t = view.tally
    rows = view.rows
    return TrainingRecord(
        rows=[TrainingRow(int(row.input_ids.size), row.n_trained, list(row.turns),
                          fates[k] if fates is not None and k < len(fates) else None) for k, row in enumerate(rows)],
        listed=min(len(rows), MAX_LIST), trl=TRL, rule=view.rule, error=bool(view.error), rows_error=view.rows_error,
        tally=Tally(*(int(t.get(k, 0)) for k in ("clean", "realign", "fork", "transitions", "drift_tokens", "drift_max"))),
        other_calls=[OtherCall(c.call, c.trained_tokens, c.output_tokens) for c in view.other_calls[:MAX_NAMED]],
        other_call_count=len(view.other_calls), trainer=fates is not None)
