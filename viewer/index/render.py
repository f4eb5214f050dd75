"""The collection index as records the page draws: rows formatted from `Record`s, the table's headings, the notes,
what the back bar says about an opened row.

Every string of a row (paths, model names, titles, problems, tool names) comes from the collection and is
untrusted: the page (viewer/assets/src/collection_index.js) writes it only as textContent or an attribute value.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qsl

from rollout_trace.artifact.collection import Record
from rollout_trace.artifact.run_table import QueuedRow, RowOutcome

from ..contract import RunContext
from ..fate import brief, kind, rollout_fate
from ..numbers import count, number, sign
from ..render.safe import short
from .contract import BackBar, IndexColumn, IndexRow, IndexTable

MAX_NOTES = 20
# (sort column, heading, tooltip); the table's columns in order (`IndexColumn`s). Sorting goes through viewer/index/filters.py.
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


def index_row(r: Record, rows: Sequence[QueuedRow] | Sequence[RowOutcome] | None = None) -> IndexRow:
    """The row as shown: formatted values, "-" where the small files do not tell. `rows`: a recorded run's row, its
    TRL rows with their fates (a group's: what became of its rollouts' rows)."""
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


def _run_fields(r: Record, rows: Sequence[QueuedRow] | Sequence[RowOutcome]) -> dict:
    status = r.status if r.kind != "group" else ", ".join(dict.fromkeys(r.statuses)) or None
    if r.kind == "group":
        why = f"{sum(q.fate == 'trained' for q in rows)} of {len(rows)} training rows of its rollouts trained"
    else:  # a rollout's own rows, with the turns each trains
        why = rollout_fate([q for q in rows if isinstance(q, QueuedRow)], r.dropped).why
    return {"version": r.policy_version, "group_id": r.group_id, "status": status, "fate": brief(rows, r.dropped),
            "fate_kind": kind(rows) or "never", "fate_why": why}


def table(rows: list[IndexRow], run: bool = False) -> IndexTable:
    """The table of one page of rows under its headings (the page makes each sortable heading a sort button: click
    again to reverse). `run`: a recorded run's rows (RUN_HEADINGS)."""
    return IndexTable(run=run, columns=[IndexColumn(*h) for h in (RUN_HEADINGS if run else HEADINGS)], rows=rows)


def notes(items: list[str]) -> list[str]:
    """Notes on the index (cuts, offline, ignored filter values), bounded."""
    more = [f"… and {len(items) - MAX_NOTES} more"] if len(items) > MAX_NOTES else []
    return [short(n, 300) for n in items[:MAX_NOTES]] + more


def opened_row(r: Record | None, path: str, matched: int, query: str) -> BackBar:
    """What the back bar says about the opened row: its kind, where it lives, how many rows the index shows."""
    return BackBar(kind="row", what="group" if r is not None and r.kind == "group" else "rollout", path=path,
                   matched=matched, filters=parse_qsl(query))


def opened_rollout(group_path: str, rollout: int, advantage: float | None, k: int) -> BackBar:
    """What the back bar says over a rollout opened from its group map (`group_path`: where the group is, or the
    source's name when the source is the group)."""
    return BackBar(kind="rollout", path=group_path, rollout=rollout, advantage=advantage, k=k)


def opened_run_rollout(run: RunContext) -> BackBar:
    """The back bar over a recorded run's rollout: "run › v1 › group 4 › rollout 0" and its group's size."""
    return BackBar(kind="run", crumbs=run.crumbs, k=run.k, rollout=run.rollout)
