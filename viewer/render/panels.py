"""Small pure functions from analysis results to escaped HTML fragments: header, turn boundary,
engine ids, tool calls, tests, reward waterfall, training rows, problems."""

from __future__ import annotations

import heapq

from rollout_trace.analysis.continuity import Boundary
from rollout_trace.analysis.engine_ids import EngineCheck
from rollout_trace.analysis.report import Report, fmt_reward
from rollout_trace.analysis.tokens import make_visible
from rollout_trace.analysis.tools import ToolCall
from rollout_trace.analysis.training import TRL, Training
from rollout_trace.artifact import Artifact, Problem, TestResult
from rollout_trace.artifact.schema import MetricValue

from ..contract import Fate, RunContext
from .safe import markdown, pre, pretty_json, short, text

MAX_LIST = 200  # rows of any list a trace controls (tests, calls, names); the rest is counted, not sent
_PENDING_TEST = {"running": "runs when the agent finishes"}  # a watched capture's tests (else: never ran)


def _more(n: int, what: str) -> str:
    return f"<div class='tv-dim'>… and {n - MAX_LIST:,} more {what}, not shown here</div>" if n > MAX_LIST else ""


def problems(source: str, items: list[Problem] | list[str]) -> str:
    lis = "".join(f"<li>{text(p)}</li>" for p in items)
    return f"<div class='tv-error' role='alert'><b>Cannot open {text(source)}</b><ul>{lis}</ul></div>"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _sign(v: float | None) -> str:
    return "none" if v is None else "pos" if v > 0 else "neg" if v < 0 else "zero"


def fate_badge(f: Fate) -> str:
    """Whether the trainer took a run's rollout: "trained at step N" or "never trained (cause)"."""
    kind = "trained" if f.trained else "partly" if f.partly else "never"
    return (f"<span class='tv-badge tv-fate {kind}' data-testid='fate' "
            f"title='{text(f.why)}'>{text(f.label)}</span>")


def _run_summary(a: Artifact, r: Report, run: RunContext | None) -> str:
    """A recorded run's rollout: what the verifier gave, TRL's reward, what TRL's mask would train and, when the
    page knows the run, whether the trainer did."""
    info = a.summary.run
    assert info is not None
    env = a.summary.env_reward
    verifier = "no verifier reward" if env is None else f"verifier {fmt_reward(env)}"
    status = run.status if run is not None else info.status
    reward = (f"<span class='tv-reward-value none' data-testid='status'>{text(status)}: no reward</span>"
              if info.reward is None else
              f"<span class='tv-reward-value {_sign(info.reward)}' title='TRL&#39;s reward: the sum of its reward "
              f"columns'>reward {fmt_reward(info.reward)}</span>")
    mask = f"{r.trained_turns} of {_plural(r.turns, 'turn')} in TRL's mask" if r.turns else "no agent turn"
    fate = f" · {fate_badge(run.fate)}" if run is not None else ""
    return (f"<div class='tv-summary' data-testid='summary'><span>{text(verifier)}</span> · {reward} · "
            f"<span title='what TRL&#39;s completion mask would train, were its rows in the loss'>{mask}</span>{fate}"
            "</div>")


def summary(a: Artifact, r: Report, pending: str | None = None, run: RunContext | None = None) -> str:
    """The one line a newcomer reads first: tests, reward (coloured by sign), trained turns.

    `pending`: the state of a capture whose tests have not run (viewer/ui/live.py): running, cancelled, failed.
    A recorded run's rollout says what its mask would train apart from whether the trainer did (`run`)."""
    if a.summary.run is not None and pending is None:
        return _run_summary(a, r, run)
    results = a.test_results or []
    n_tests = len(a.held_out_tests or [])
    if pending is not None:
        tests_part, reward_part = ((f"{_plural(n_tests, 'held-out test')} run when the agent finishes", "reward pending")
                                   if pending == "running" else
                                   (f"{_plural(n_tests, 'held-out test')} never ran: the capture {pending}", "no reward"))
        trained = f"{_trained(r)} so far" if r.turns else "no agent turn yet"
        return (f"<div class='tv-summary' data-testid='summary'><span>{text(tests_part)}</span> · "
                f"<span class='tv-reward-value none'>{reward_part}</span> · <span>{trained}</span></div>")
    if results:
        tests_part = f"{sum(t.passed for t in results)} of {n_tests} held-out tests passed"
    elif a.held_out_tests is not None:
        tests_part = f"{_plural(n_tests, 'held-out test')} (no per-test results)"
    else:
        tests_part = "no held-out tests in this artifact"
    rec = r.reward.recorded
    trained = _trained(r) if r.turns else "no agent turn: nothing to train"
    return (f"<div class='tv-summary' data-testid='summary'><span>{text(tests_part)}</span> · "
            f"<span class='tv-reward-value {_sign(rec)}'>reward {fmt_reward(rec)}</span> · <span>{trained}</span></div>")


def _trained(r: Report) -> str:
    """The headline's count, short enough for one line at 1024 px; the header names the TRL version."""
    by = "by TRL" if r.trained_by == TRL else f"({r.trained_by})"
    return f"{r.trained_turns} of {_plural(r.turns, 'turn')} trained {by}"


def _tokenizer_line(vocab_origin: str | None, vocab_why: list[str]) -> str:
    if vocab_origin:
        return f"tokenizer: {text(vocab_origin)}"
    # The short line says what the reader sees; the reasons are one click away.
    return (f"<details class='tv-inline'><summary>no tokenizer files: showing ids</summary>"
            f"{text('; '.join(vocab_why))}</details>")


def _turns_words(turns: list[int]) -> str:
    return ("turn " if len(turns) == 1 else "turns ") + ", ".join(map(str, turns[:12])) + (" …" if len(turns) > 12 else "")


def disagreement_badge(tr: Training) -> str:
    """Once per rollout, beside the counts: a short line where the capture script and TRL part ways, the whole
    sentence on hover (and on each such turn: `turn_training`)."""
    said = disagreement(tr)
    if said is None:
        return ""
    off = [i for i in tr.disagreements if tr.trained(i)]
    on = [i for i in tr.disagreements if not tr.trained(i)]
    # Plain words first (what TRL does, what the older rule would have done); the exact rule is on hover.
    short = "; ".join(([f"TRL trains {_turns_words(off)}; the original capture script would not (no tool call)"] if off else [])
                      + ([f"TRL trains none of {_turns_words(on)}; the original capture script would"] if on else []))
    return f"<span class='tv-badge warn' data-testid='trained-disagree' title='{text(said)}'>{text(short)}</span>"


def disagreement(tr: Training) -> str | None:
    """Once per rollout: where turns.json's `trained` (the capture script's rule) and TRL part ways."""
    off = [i for i in tr.disagreements if tr.trained(i)]  # the script says untrained, TRL trains
    on = [i for i in tr.disagreements if not tr.trained(i)]
    parts = []
    if off:
        tokens = ", ".join(f"{tr.trained_tokens(i):,}" for i in off[:12])
        parts.append(f"The original capture script marks {_turns_words(off)} untrained because "
                     f"{'it' if len(off) == 1 else 'they'} made no tool call; {TRL} trains "
                     f"{'its' if len(off) == 1 else 'their'} {tokens} generated tokens (it trains OpenEnv's loss "
                     "mask on every turn, tool call or not).")
    if on:
        parts.append(f"The original capture script marks {_turns_words(on)} trained because "
                     f"{'it' if len(on) == 1 else 'they'} made a tool call; {TRL} trains none of "
                     f"{'its' if len(on) == 1 else 'their'} tokens (OpenEnv's loss mask is 0 over them).")
    return " ".join(parts) or None


def turn_training(tr: Training, turn: int, n_output: int) -> str:
    """On the turn: what TRL trains of it, when that is not what the capture script's flag says."""
    n = tr.trained_tokens(turn)
    if turn in tr.missing and not tr.error:
        return (f"<div class='tv-trainednote' data-testid='trained-note'>{TRL}'s training trace holds no call that "
                "generated this turn's tokens: none of them is trained.</div>")
    if turn not in tr.disagreements:
        return ""
    script = ("marks this turn untrained because it made no tool call" if not tr.seed_flags[turn] else
              "marks this turn trained because it made a tool call")
    return (f"<div class='tv-trainednote' data-testid='trained-note'>{TRL} trains <b>{n:,} of this turn's "
            f"{_plural(n_output, 'generated token')}</b>; the original capture script {script}.</div>")


def header(a: Artifact, r: Report, vocab_origin: str | None, vocab_why: list[str], note: str | None = None,
           tr: Training | None = None, run: RunContext | None = None) -> str:
    instruction = a.task.instruction if a.task else ""
    title = (a.task.task_id if a.task else a.summary.task_id)[:12]
    badge = "warn" if r.continuity.kind == "drift" else "ok"
    mismatch = "" if r.reward.matches else (f" <span class='tv-badge warn' title='recomputed from the recipe'>"
                                            f"recipe gives {fmt_reward(r.reward.recomputed)}</span>")
    training_note = tr.rule if tr is not None and (tr.error or tr.basis == "seed") else None
    notes = [*([training_note] if training_note else []), *a.notices, *([note] if note else [])]
    notices = "".join(f"<li>{text(n)}</li>" for n in notes[:MAX_LIST])
    notices = f"<ul class='tv-notices'>{notices}</ul>" if notices else ""
    timed_out = "<span class='tv-badge warn'>timed out</span>" if a.summary.timed_out else ""
    # Whole on the first screen up to three lines; a click shows the rest (CSS clamps the closed summary).
    produced = (f"<details class='tv-produced'><summary title='how this artifact was made (click for all of it)'>"
                f"{text(short(a.summary.produced_by, 600))}</summary></details>") if a.summary.produced_by else ""
    other = r.captured_calls - r.turns  # opencode's bookkeeping calls (titles, summaries): rollout_trace/recipe/agent_turns.py
    recorded = a.summary.run is not None  # a run's rollout: no capture script's files, the trainer's own fate
    mask = f"{r.trained_turns:,} in {r.trained_by}'s mask" if recorded else f"{r.trained_turns:,} trained by {r.trained_by}"
    # The agent's turns first (what the view pages through), then every call the proxy saw, opencode's own named.
    counts = (f"{_plural(r.turns, 'agent turn')} · {mask} · "
              f"{_plural(r.captured_calls, 'model call')} recorded"
              f"{f' ({other:,} by opencode itself, e.g. the session title)' if other > 0 else ''}")
    counts_tip = ("model calls the capture proxy recorded; agent turns are the calls that offer the agent's tools with "
                  "its system prompt" + (f" ({_plural(other, 'other call')}: opencode's bookkeeping, such as the session "
                                         "title, not part of the rollout)" if other > 0 else "")
                  + (f". {tr.rule}" if tr is not None else ""))
    return (
        "<div class='tv-header'>"
        f"<div class='tv-h-row'><span class='tv-model'>{text(short(r.model, 120))}</span>"
        f"{mismatch}"
        f"<span class='tv-badge {badge}' data-testid='continuity' title='does each turn start with exactly the tokens "
        f"of the turn before?'>{text(continuity_words(r))}</span>"
        f"<span class='tv-badge' data-testid='counts' title='{text(counts_tip)}'>{counts}</span>"
        f"{disagreement_badge(tr) if tr is not None and not recorded else ''}"
        f"{timed_out}{run_badge(run) if run is not None else ''}</div>"
        f"{produced}"
        "<div class='tv-h-row2'>"
        f"<details class='tv-task'><summary>task {text(title)}: instruction</summary>"
        f"<div class='tv-md'>{markdown(instruction)}</div></details>"
        f"<div class='tv-meta'>{_tokenizer_line(vocab_origin, vocab_why)} · {r.prompt_tokens + r.output_tokens:,} tokens"
        f" · longest context {r.max_context:,}</div></div>"
        f"{notices}"
        "</div>"
    )


def run_badge(run: RunContext) -> str:
    """Where a run's rollout sits, on the rollout itself (an export carries it; the headline has its fate)."""
    where = (f"run {run.run} · version {run.version} · group {run.group_id} · rollout {run.rollout} of {run.k} · "
             f"segment {run.segment}")
    adv = "TRL gave it no advantage" if run.advantage is None else f"TRL's advantage {run.advantage:+.3f}"
    return (f"<span class='tv-badge' data-testid='run-context' title='{text(where)}'>"
            f"{text(' › '.join(run.crumbs[1:]))} · {text(run.status)} · {text(adv)}</span>")


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


def boundary(b: Boundary | None) -> str:
    if b is None:
        return "<div class='tv-boundary'>first turn: everything in its prompt is new context</div>"
    if b.continuous:
        return (f"<div class='tv-boundary ok'>turn {b.before} → {b.after}: the prompt starts with all "
                f"{b.held:,} tokens of turn {b.before} (token-in = token-out)</div>")
    where = "inside turn %d's output" % b.before if b.in_output else "inside turn %d's prompt" % b.before
    at = b.diverge_at or 0  # a boundary that is not continuous always has one
    # Compact: the verdict and cause on one line, both sides on the next, their ids a hover away,
    # so the tokens below stay on the first screen.
    return (
        f"<div class='tv-boundary drift'><b>turn {b.before} → {b.after}: drift at position {at:,}</b> "
        f"({where}; {b.held - at:,} of turn {b.before}'s tokens are not carried over) "
        f"<span class='tv-cause'>· likely cause: {text(b.cause)}</span>"
        "<div class='tv-sides'>"
        f"<span class='tv-side-h'>turn {b.before} had</span> <code class='tv-tok' title='ids {text(' '.join(map(str, b.held_ids)))}'>"
        f"{text(make_visible(b.held_text))}</code> "
        f"<span class='tv-side-h'>turn {b.after}'s prompt has</span> <code class='tv-tok' title='ids "
        f"{text(' '.join(map(str, b.next_ids)))}'>{text(make_visible(b.next_text))}</code>"
        "</div></div>"
    )


def engine(c: EngineCheck) -> str:
    if c.status == "same":
        return f"<div class='tv-engine ok'>engine prompt ids and the re-tokenized prompt agree ({c.engine_len:,} tokens)</div>"
    if c.status == "differ":
        return (f"<div class='tv-engine drift'><b>engine ids and re-tokenized prompt differ at position {c.diverge_at:,}</b> "
                f"(engine {c.engine_len:,} tokens, re-tokenized {c.retok_len:,})<div class='tv-sides'>"
                f"<div><div class='tv-side-h'>engine</div><code class='tv-tok'>{text(make_visible(c.engine_text))}</code></div>"
                f"<div><div class='tv-side-h'>re-tokenized</div><code class='tv-tok'>{text(make_visible(c.retok_text))}</code></div>"
                "</div></div>")
    why = {"no_engine_ids": "the artifact has no engine prompt ids",
           "no_retokenized_ids": "the artifact has no re-tokenized prompt"}[c.status]
    return f"<div class='tv-engine'>{why}: engine and re-tokenized prompts cannot be compared</div>"


def tool_calls(calls: list[ToolCall]) -> str:
    if not calls:
        return "<div class='tv-tools empty'>no tool call in this turn</div>"
    parts = []
    for c in calls[:MAX_LIST]:
        status = ("<span class='tv-badge warn'>failed</span>" if c.failed else
                  "<span class='tv-badge'>no result recorded</span>" if c.result is None else "")
        bad_args = "" if c.arguments_ok else "<span class='tv-badge warn'>arguments are not valid JSON</span>"
        args = pretty_json(c.arguments) if c.arguments_ok else str(c.arguments)
        parts.append(
            f"<div class='tv-call{' failed' if c.failed else ''}'><div class='tv-call-h'><b>{text(short(c.name or '?', 80))}</b>"
            f" <span class='tv-dim'>{text(short(c.call_id or '', 80))}</span> {status}{bad_args}</div>"
            f"<div class='tv-side-h'>arguments</div>{pre(args, label='arguments')}"
            + (f"<div class='tv-side-h'>result</div>{pre(c.result, label='the result')}" if c.result is not None else "")
            + "</div>")
    return "<div class='tv-tools'>" + "".join(parts) + _more(len(calls), "tool calls") + "</div>"


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


def verifier(a: Artifact) -> str:
    """A recorded run's rollout in place of held-out tests: what OpenEnv's verify() reported (its VerifyResult:
    env_reward, done and its metrics, e.g. tests passed and failed) beside what TRL made of it (its reward
    columns, their sum, the status its scoring gave)."""
    info = a.summary.run
    assert info is not None
    env = a.summary.env_reward
    v = info.verify
    if v is None:  # verify() returned nothing (the session failed first), or a run recorded before it was kept
        said = ("<p class='tv-dim' data-testid='verify-none'>"
                + ("verify() returned nothing: the session failed before it was verified" if info.status == "failed"
                   else "this recording keeps only verify()'s reward (recorded before its other fields were kept)")
                + "</p>")
        metrics = ""
    else:
        said = ""
        metrics = (f"<tr><td>done</td><td class='num'>{'yes' if v.done else 'no'}</td></tr>"
                   + "".join(f"<tr data-testid='verify-metric'><td>{text(short(k, 80))}</td>"
                             f"<td class='num'>{text(_metric_value(x))}</td></tr>"
                             for k, x in list(v.metrics.items())[:MAX_LIST])
                   + _more(len(v.metrics), "metrics"))
    # A column TRL holds as NaN (its function returned None) is no verdict on the rollout: "none", not "unscorable"
    cols = "".join(f"<tr><td>{text(short(k, 80))}</td><td class='num'>{'none' if x is None else fmt_reward(x)}</td></tr>"
                   for k, x in list(info.rewards.items())[:MAX_LIST])
    cause = f" <span class='tv-dim'>{text(short(info.cause, 300))}</span>" if info.cause else ""
    return (
        "<div class='tv-tests tv-verify' data-testid='verifier'>"
        "<div><h4>What the verifier reported <span class='tv-dim'>OpenEnv's VerifyResult for this session, "
        "in place of a capture's held-out tests</span></h4>"
        f"<table class='tv-table'><tr><td>env reward</td><td class='num'>{'none' if env is None else fmt_reward(env)}"
        f"</td></tr>{metrics}</table>{said}</div>"
        "<div><h4>What TRL made of it <span class='tv-dim'>its reward functions' columns (they read the env reward) "
        "and their sum</span></h4>"
        f"<table class='tv-table'>{cols}"
        f"<tr><td><b>TRL's reward</b> (the sum of its columns)</td><td class='num'>"
        f"{'none (unscorable)' if info.reward is None else fmt_reward(info.reward)}</td></tr>"
        f"<tr><td>status</td><td>{text(info.status)}{cause}</td></tr></table></div></div>")


def tests(a: Artifact, pending: str | None = None) -> str:
    if a.summary.run is not None:
        return verifier(a)
    visible = pre(a.visible_tests, label="the visible tests") if a.visible_tests is not None else "<i>not in this artifact</i>"
    results: dict[int, TestResult] = {r.index: r for r in a.test_results or []}
    rows = []
    for i, t in enumerate((a.held_out_tests or [])[:MAX_LIST]):
        r = results.get(i)
        verdict = (f"<span class='tv-badge {'ok' if r.passed else 'warn'}'>{text(r.status)}</span>"
                   f"{(' <span class=tv-dim>' + text(r.detail) + '</span>') if r.detail else ''}") if r else \
            f"<span class='tv-dim'>{_PENDING_TEST.get(pending or '', 'never ran') if pending else 'no per-test result'}</span>"
        rows.append(f"<tr data-testid='held-out-test'><td>{i}</td><td>{pre(t.input, 400, 'the input')}</td>"
                    f"<td>{pre(t.output, 400, 'the output')}</td><td>{verdict}</td></tr>")
    n = len(a.held_out_tests or [])
    passed = sum(r.passed for r in results.values())
    count = f"{n} held-out tests" + (f", {passed} passed" if results else "")
    # Inputs and outputs are shown as the program reads and prints them: one line per line, never wrapped
    # (a wrapped "1000000000 999999999" would read as two stdin lines); a long line scrolls sideways.
    held = ("<table class='tv-table tv-heldout'><colgroup><col class='n'><col class='io'><col class='io'><col></colgroup>"
            "<tr><th>#</th><th title='what the program reads on stdin, line by line'>stdin</th>"
            "<th>expected stdout</th><th>result</th></tr>"
            + "".join(rows) + "</table>" + _more(n, "held-out tests")) if a.held_out_tests is not None else "<i>not in this artifact</i>"
    return (
        "<div class='tv-tests'>"
        f"<div><h4>Visible example tests <span class='tv-dim'>what the agent could see and run</span></h4>{visible}</div>"
        f"<div><h4>Held-out tests <span class='tv-dim'>{count}; these produce the reward, the agent never sees them</span></h4>{held}</div>"
        "</div>"
    )


def reward(a: Artifact, r: Report, pending: str | None = None) -> str:
    if pending == "running":
        return ("<div class='tv-reward'><p class='tv-dim'>The reward is computed from the held-out tests once the "
                "agent finishes, then penalised by the recipe's rules.</p></div>")
    if pending is not None:
        return (f"<div class='tv-reward'><p class='tv-dim'>No reward: the capture {text(pending)} before its held-out "
                "tests ran.</p></div>")
    steps = r.reward.steps
    scale = max([abs(s.value) for s in steps if s.value is not None] + [1.0])
    rows = []
    for s in steps:
        v = "unscorable" if s.value is None else f"{s.value:+.3f}"
        d = "" if s.delta is None else f"{s.delta:+.3f}"
        width = 0 if s.value is None else abs(s.value) / scale * 100
        neg = " neg" if (s.value or 0) < 0 else ""
        rows.append(f"<tr data-testid='reward-step'><td>{text(s.label)}</td><td class='num'>{d}</td>"
                    f"<td class='num'>{v}</td><td><div class='tv-bar{neg}' style='width:{width:.1f}%'></div></td>"
                    f"<td class='tv-dim'>{text(s.why)}</td></tr>")
    by = "the recipe" if r.reward.by == "recipe" else r.reward.by
    check = (f"recorded reward matches {text(by)}" if r.reward.matches else
             f"<b>recorded {fmt_reward(r.reward.recorded)} but {text(by)} give{'' if by.endswith('s') else 's'} "
             f"{fmt_reward(r.reward.recomputed)}</b>")
    by_name = heapq.nsmallest(MAX_LIST, a.summary.tool_calls_by_name.items(), key=lambda kv: (-kv[1], kv[0]))
    tools = "".join(f"<li>{text(short(k, 80))}: {v:,}</li>" for k, v in by_name[:MAX_LIST]) + _more(len(a.summary.tool_calls_by_name), "tool names")
    return (f"<div class='tv-reward'><table class='tv-table'><tr><th>step</th><th>change</th><th>reward</th>"
            "<th title='the reward after this step, as a bar (longest = the largest |reward|)'>size</th><th>why</th></tr>"
            f"{''.join(rows)}</table><p>{check} · timed out: {'yes' if a.summary.timed_out else 'no'}</p>"
            f"<h4>Tool calls by name</h4><ul>{tools or '<li>none</li>'}</ul></div>")


TERMS = ("<dl class='tv-terms'><dt>clean</dt><dd>the next turn's prompt starts with exactly this turn's tokens: "
         "TRL appends it to the same row</dd><dt>realigned</dt><dd>a small drift inside the last answer: TRL overwrites "
         "it as context and stays in the row</dd><dt>forked</dt><dd>any other drift: TRL starts a new row (with fork "
         "threshold 0, as in loop-owning training, every drift forks)</dd></dl>")


def _other_calls(view: Training) -> str:
    """Calls in TRL's training trace that are not agent turns by the recipe (e.g. opencode's title call)."""
    if not view.other_calls:
        return ""
    items = "; ".join(f"call {c.call}: {c.trained_tokens:,} of {_plural(c.output_tokens, 'generated token')} trained"
                      for c in view.other_calls[:12])
    return (f"<p class='tv-dim' data-testid='other-calls'>{TRL}'s training trace also holds "
            f"{_plural(len(view.other_calls), 'call')} that the recipe does not count as agent turns ({text(items)}).</p>")


def omitted(why: str) -> str:
    """In place of the training rows when an export leaves them out (viewer/export.py says why)."""
    return f"<div class='tv-training drift' data-testid='no-rows'>{text(why)}</div>"


def _row_fate(f: Fate | None) -> str:
    if f is None:
        return "<td class='tv-dim' title='this row is not the one the run recorded at its place in the queue'>not known</td>"
    return (f"<td><span class='tv-fate {'trained' if f.trained else 'never'}' data-testid='row-fate' "
            f"title='{text(f.why)}'>{text(f.label)}</span></td>")


def training(view: Training, fates: list[Fate | None] | None = None) -> str:
    """TRL's rows of the rollout; `fates`: a recorded run's, each row's fate (a trainer column)."""
    rule = f"<p class='tv-dim' data-testid='training-rule'>{text(view.rule)}</p>"
    if view.error:
        return f"<div class='tv-training drift'>{rule}</div>"
    if view.rows_error:
        return f"<div class='tv-training drift'>{text(view.rows_error)}{rule}</div>"
    if not view.rows:
        return (f"<div class='tv-training drift' data-testid='no-rows'><b>{TRL} drops this rollout</b>: no token of "
                f"any turn is trained, so it contributes no training row and no gradient.{rule}{_other_calls(view)}</div>")
    t = view.tally
    rows = "".join(f"<tr><td>{k}</td><td class='num'>{r.input_ids.size:,}</td><td class='num'>{r.n_trained:,}</td>"
                   f"<td>{text(', '.join(map(str, r.turns)))}</td>"
                   f"{_row_fate(fates[k] if k < len(fates) else None) if fates is not None else ''}</tr>"
                   for k, r in enumerate(view.rows[:MAX_LIST]))
    trainer = ("<th title='whether the trainer trained the row: the global step, or why never (the run&#39;s "
               "consumption log)'>trainer</th>") if fates is not None else ""
    return (f"<div class='tv-training'><p>TRL packs this rollout into <b>{_plural(len(view.rows), 'training row')}</b>: "
            f"{int(t.get('clean', 0))} clean, {int(t.get('realign', 0))} realigned, {int(t.get('fork', 0))} forked "
            f"of {int(t.get('transitions', 0))} turn boundaries; drift {int(t.get('drift_tokens', 0))} tokens in total, "
            f"at most {int(t.get('drift_max', 0))}. Only the tokens of TRL's completion mask get a loss.</p>{rule}"
            f"{_other_calls(view)}{TERMS}"
            f"<table class='tv-table'><tr><th>row</th><th>tokens</th><th title='tokens in TRL&#39;s completion mask'>"
            f"{'in mask' if fates is not None else 'trained'}</th><th>turns</th>{trainer}</tr>{rows}</table>"
            f"{_more(len(view.rows), 'rows')}</div>")
