"""The collection index as escaped HTML: rows formatted from `Record`s, the table, the notes.

Every string of a row (paths, model names, titles, problems, tool names) comes from the collection
and is untrusted: it goes through `safe.text`, in element bodies and attribute values alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qsl

from rollout_trace.artifact.collection import Record
from rollout_trace.artifact.run_table import QueuedRow

from ..fate import brief, kind, rollout_fate
from ..numbers import count, number, sign
from ..render.safe import middle, short, text
from .contract import IndexRow

MAX_NOTES = 20
# (sort column, heading, tooltip); the table's columns in order. Sorting goes through viewer/index/filters.py.
HEADINGS: tuple[tuple[str, str, str], ...] = (
    ("path", "where", "the folder in the collection"),
    ("valid", "status", "invalid rows show their first problem"),
    ("model", "model", ""),
    ("task_id", "task", "task id and the first line of its statement"),
    ("reward", "reward", "reward after penalties; a group shows its mean, spread and K"),
    ("env_reward", "env", "the environment's reward before penalties"),
    ("agent_turns", "turns", "agent turns"),
    ("trained_turns", "trained", "agent turns TRL trains (summary.json's trl_training, else asked of TRL when the row is shown)"),
    ("tokens", "tokens", "prompt + output tokens over the agent turns (summary.json's count, or counted from "
                         "turns.json when it records none)"),
    ("drift", "drift", "does any turn boundary drift (summary.json's, or checked in turns.json when it records none)? "
                       "unknown only when the token file cannot be read here"),
    ("", "findings", "the finding rules a rollout (a group: any of its rollouts) trips (rollout_trace/analysis/findings.py; "
                     "docs/find.md); … while the search panel computes them"),
    ("timed_out", "timed out", ""),
    ("tools", "tools", "tools the agent used"),
    ("captured", "captured", "when the capture finished, as the artifact (or its group) records it; - when nothing "
                             "records it (a file's date is not a capture date)"),
)


# A recorded run's table: where each row sits in the run, TRL's status, and two facts never one: the turns TRL's
# mask would train, and what the trainer did with the rows.
RUN_HEADINGS: tuple[tuple[str, str, str], ...] = (
    ("path", "where", "version, group and rollout in the run (the folder on hover)"),
    ("status", "status", "TRL's: ok, timed-out, unscorable (no reward) or failed (TRL built no row); a group: its "
                         "rollouts'"),
    ("trained_step", "trainer", "what the trainer did with its training rows: the global steps they were trained at, or "
                                "why never (the run's consumption log, row by row: a rollout whose rows met different "
                                "fates says both)"),
    ("task_id", "task", "task id and the first line of its statement"),
    ("reward", "reward", "TRL's reward; a group shows its mean, spread and K"),
    ("env_reward", "env", "the environment's verify() reward"),
    ("agent_turns", "turns", "agent turns"),
    ("trained_turns", "in mask", "agent turns TRL's completion mask would train a token of, were their rows in the loss "
                                 "(the trainer column says whether they were)"),
    ("tokens", "tokens", "prompt + output tokens over the agent turns"),
    ("drift", "drift", "does any turn boundary drift?"),
    ("", "findings", "the finding rules a rollout (a group: any of its rollouts) trips (rollout_trace/analysis/findings.py; "
                     "docs/find.md); … while the search panel computes them"),
    ("tools", "tools", "tools the agent used"),
    ("captured", "recorded", "when the recorder wrote its group"),
)


def index_row(r: Record, rows: Sequence[QueuedRow] | None = None) -> IndexRow:
    """The row as shown: formatted values, "-" where the small files do not tell. `rows`: a recorded run's row, its
    TRL rows with their fates (a group's: its rollouts')."""
    spread = f"{number(r.reward_min)}..{number(r.reward_max)}" if r.kind == "group" and r.reward_min is not None else ""
    return IndexRow(
        path=r.path, kind=r.kind if r.kind in ("group", "run") else "rollout" if r.group is not None else "artifact",
        valid=r.valid, problem=r.problem, model=(r.model or "-").rsplit("/", 1)[-1], model_full=r.model or "",
        task=(r.task_id or "-")[:8], title=r.title, reward=number(r.reward), reward_sign=sign(r.reward),
        spread=spread, k=r.k, env_reward=number(r.env_reward), agent_turns=count(r.agent_turns),
        trained_turns=count(r.trained_turns), tokens=count(r.tokens), drift=r.drift,
        timed_out="-" if r.timed_out is None else "yes" if r.timed_out else "no",
        tools=", ".join(r.tools) if r.tools else "-", captured=(r.captured or "-")[:10], group=r.group,
        rollout=r.rollout, advantage="" if r.advantage is None else f"{r.advantage:+.3f}",
        **(_run_fields(r, rows) if rows is not None else {}),
    )


def _run_fields(r: Record, rows: Sequence[QueuedRow]) -> dict:
    status = r.status if r.kind != "group" else ", ".join(dict.fromkeys(r.statuses)) or None
    why = rollout_fate(rows, r.dropped).why if r.kind != "group" else \
        f"{sum(q.fate == 'trained' for q in rows)} of {len(rows)} training rows of its rollouts trained"
    return {"version": r.policy_version, "group_id": r.group_id, "status": status, "fate": brief(rows, r.dropped),
            "fate_kind": kind(rows) or "never", "fate_why": why}


def _heading(column: str, label: str, tip: str, sort: str) -> str:
    if not column:  # not a sort of viewer/index/filters.py: a plain heading
        return f"<th scope='col' title='{text(tip)}'>{text(label)}</th>"
    desc = sort.startswith("-")
    on = sort.lstrip("-") == column
    aria = ("descending" if desc else "ascending") if on else "none"
    arrow = ("▼" if desc else "▲") if on else ""
    return (f"<th scope='col' aria-sort='{aria}'><button type='button' class='ci-sort{' on' if on else ''}' "
            f"data-sort='{text(column)}' title='{text(tip or ('sort by ' + label))}'>{text(label)}"
            f"<span class='ci-arrow' aria-hidden='true'>{arrow}</span></button></th>")


def _run_where(r: IndexRow) -> str:
    """A run's row by its place (version, group, rollout), the folder on hover: a cut path hides exactly those."""
    place = f"v{r.version} · group {r.group_id}" + (" · group" if r.kind == "group" else f" · rollout {r.rollout}")
    badge = (f"<span class='ci-kind group'>K={r.k if r.k is not None else '?'}</span>" if r.kind == "group" else
             f"<span class='ci-kind rollout'>adv {text(r.advantage or '-')}</span>")
    return (f"<td class='ci-where'><button type='button' class='ci-open ci-place' data-path='{text(r.path)}' "
            f"title='open {text(r.path)}' data-testid='run-place'>{text(place)}</button>{badge}</td>")


def _where(r: IndexRow) -> str:
    label = r.path or "(the collection itself)"
    if r.kind == "group":
        badge = f"<span class='ci-kind group'>group · K={r.k if r.k is not None else '?'}</span>"
    elif r.kind == "run":
        badge = f"<span class='ci-kind run' data-testid='run-row'>recorded run · {r.k if r.k is not None else '?'} groups</span>"
    elif r.kind == "rollout":
        badge = f"<span class='ci-kind rollout'>rollout {r.rollout} · adv {text(r.advantage or '-')}</span>"
    else:
        badge = ""
    return (f"<td class='ci-where'><button type='button' class='ci-open' data-path='{text(r.path)}' "
            f"title='open {text(label)}'>{text(middle(label, 34))}</button>{badge}</td>")


def _row(r: IndexRow) -> str:
    reward = f"<span class='ci-reward {r.reward_sign}'>{text(r.reward)}</span>"
    if r.spread:
        reward += f"<div class='ci-spread' title='lowest..highest reward in the group'>{text(r.spread)}</div>"
    status = ("<span class='ci-ok'>ok</span>" if r.valid else
              f"<span class='ci-bad' title='{text(r.problem or '')}'>invalid</span>")
    # An invalid row's first problem gets a line of its own under the row: too long for a cell.
    problem = ("" if r.valid else f"<tr class='ci-problem-row' data-path='{text(r.path)}'><td colspan='{len(HEADINGS)}'>"
               f"<span class='ci-problem'>first problem: {text(short(r.problem or 'invalid', 300))}</span></td></tr>")
    drift = f"<span class='ci-drift {text(r.drift)}'>{text(r.drift)}</span>"
    timed = "<span class='ci-timeout'>yes</span>" if r.timed_out == "yes" else text(r.timed_out)
    if r.findings is None:
        found = ("<span class='ci-dim' title='not computed yet: the search panel computes the findings'>…</span>"
                 if r.kind != "run" else "-")
    else:
        found = "".join(f"<span class='ci-finding' data-rule='{text(x)}'>{text(x)}</span>" for x in r.findings) or "-"
    classes = " ".join(c for c in ("ci-row", r.kind, "" if r.valid else "invalid") if c)
    return (f"<tr class='{classes}' data-path='{text(r.path)}' data-testid='index-row'>"
            f"{_where(r)}<td class='ci-status'>{status}</td>"
            f"<td class='ci-model' title='{text(r.model_full)}'>{text(short(r.model, 32))}</td>"
            f"<td class='ci-task' title='{text(r.title)}'><code>{text(r.task)}</code> "
            f"<span class='ci-title'>{text(r.title)}</span></td>"
            f"<td class='ci-num'>{reward}</td><td class='ci-num'>{text(r.env_reward)}</td>"
            f"<td class='ci-num'>{text(r.agent_turns)}</td><td class='ci-num'>{text(r.trained_turns)}</td>"
            f"<td class='ci-num'>{text(r.tokens)}</td><td>{drift}</td>"
            f"<td class='ci-findings' data-testid='index-findings'>{found}</td><td>{timed}</td>"
            f"<td class='ci-tools'>{text(short(r.tools, 80))}</td><td class='ci-date'>{text(r.captured)}</td></tr>{problem}")


def _run_row(r: IndexRow) -> str:
    """A recorded run's row: its place, TRL's status, the trainer's fate beside what the mask would train."""
    reward = f"<span class='ci-reward {r.reward_sign}'>{text(r.reward)}</span>"
    if r.spread:
        reward += f"<div class='ci-spread' title='lowest..highest reward in the group'>{text(r.spread)}</div>"
    status = r.status or "-"
    drift = f"<span class='ci-drift {text(r.drift)}'>{text(r.drift)}</span>"
    found = ("<span class='ci-dim' title='not computed yet: the search panel computes the findings'>…</span>"
             if r.findings is None else
             "".join(f"<span class='ci-finding' data-rule='{text(x)}'>{text(x)}</span>" for x in r.findings) or "-")
    return (f"<tr class='ci-row {r.kind}' data-path='{text(r.path)}' data-testid='index-row'>{_run_where(r)}"
            f"<td class='ci-status run-status {text(status.split(',')[0])}' data-testid='run-status'>{text(status)}</td>"
            f"<td class='ci-fate {text(r.fate_kind)}' data-testid='index-fate' title='{text(r.fate_why)}'>"
            f"{text(r.fate or '-')}</td>"
            f"<td class='ci-task' title='{text(r.title)}'><code>{text(r.task)}</code> "
            f"<span class='ci-title'>{text(r.title)}</span></td>"
            f"<td class='ci-num'>{reward}</td><td class='ci-num'>{text(r.env_reward)}</td>"
            f"<td class='ci-num'>{text(r.agent_turns)}</td><td class='ci-num'>{text(r.trained_turns)}</td>"
            f"<td class='ci-num'>{text(r.tokens)}</td><td>{drift}</td>"
            f"<td class='ci-findings' data-testid='index-findings'>{found}</td>"
            f"<td class='ci-tools'>{text(short(r.tools, 80))}</td><td class='ci-date'>{text(r.captured)}</td></tr>")


def table(rows: list[IndexRow], sort: str, run: bool = False) -> str:
    """The table of one page of rows; headings are sort buttons (click again to reverse). `run`: a recorded run's
    rows (RUN_HEADINGS)."""
    headings = RUN_HEADINGS if run else HEADINGS
    head = "".join(_heading(c, label, tip, sort) for c, label, tip in headings)
    body = "".join((_run_row if run else _row)(r) for r in rows)
    if not rows:
        body = f"<tr><td class='ci-empty' colspan='{len(headings)}'>no row matches these filters</td></tr>"
    return (f"<table class='ci-table' data-testid='index-table'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def notes(items: list[str]) -> str:
    """Notes on the index (cuts, offline, ignored filter values), escaped, bounded."""
    if not items:
        return ""
    lis = "".join(f"<li>{text(short(n, 300))}</li>" for n in items[:MAX_NOTES])
    more = f"<li>… and {len(items) - MAX_NOTES} more</li>" if len(items) > MAX_NOTES else ""
    return f"<ul class='ci-notes' data-testid='index-notes'>{lis}{more}</ul>"


def opened_row(r: Record | None, path: str, matched: int, query: str, note: str = "") -> str:
    """What the back bar says about the opened row: its kind, where it lives, how many rows the index shows."""
    what = "group" if r is not None and r.kind == "group" else "rollout"
    shown = " · ".join(f"{k}={v}" for k, v in parse_qsl(query))
    filt = f" matching {text(short(shown, 160))}" if shown else ""
    return (f"<span class='ci-here'>{what} <code>{text(short(path or '(the collection itself)', 120))}</code></span>"
            f"<span class='ci-dim'>{text(note)} · the index has {matched:,} row{'' if matched == 1 else 's'}{filt}</span>")
