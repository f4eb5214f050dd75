"""A GRPO group as the viewer shows it: the group map's records, and two siblings compared turn by turn.

Plain typed records, no markup: they cross to the page as they are (an `IndexPage`'s `group`, the compare server
functions' answers), and viewer/assets/src/group_map.js draws them. The map
lines the K rollouts up turn by turn (one cell per turn: its tool calls and whether one failed), so
a reader sees where siblings parted; rows are sorted by advantage, best first, because that is the
direction GRPO pushes. `compare` puts two siblings' generated tokens of one turn side by side from their
first generated token, with the first one where they differ, and says separately where (if anywhere)
their prompts differ: siblings share the task prompt, so at turn 0 only the answers should differ.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np

from rollout_trace.analysis.tokens import token_texts
from rollout_trace.artifact.collection import Record

from .contract import Fate
from .rollout import Rollout

MAX_TURN_CELLS = 60  # per row; longer rollouts show the first ones and say how many more
BEFORE = 24  # tokens of shared context shown before a prompt difference
AFTER = 160  # tokens of the prompt shown from its difference on
MAX_OUTPUT = 4096  # generated tokens shown per side; the rest is counted


class GroupCell(msgspec.Struct, frozen=True):
    """One turn of one rollout: what it called and how that went."""

    turn: int
    tools: list[str]
    failed: bool  # a tool call of this turn failed (TRL's rule: error/failed/traceback/exception in its result)
    trained: bool  # TRL trains a token of it (rollout_trace/analysis/training.py)
    output_tokens: int
    fate: Fate | None = None  # a recorded run's turn: whether the trainer trained the row that trains it


class GroupRow(msgspec.Struct, frozen=True, kw_only=True):
    """One rollout of the group, as the map shows it. None = not known (a rollout without an artifact)."""

    rollout: int
    path: str | None  # its row in the collection; None when it failed before writing an artifact
    status: str
    reward: float | None
    advantage: float | None  # TRL's; None when TRL gave none (a failed rollout of a recorded run)
    trained_turns: int | None = None  # turns TRL's mask would train
    tokens: int | None = None
    drifting: int | None = None  # turn boundaries where the context drifts
    cells: list[GroupCell] = []
    more_turns: int = 0
    problem: str | None = None  # why it could not be read
    fate: Fate | None = None  # a recorded run's rollout: whether the trainer took it (viewer/fate.py)
    findings: list[str] | None = None  # the rules it has findings of (the index's column); None: not known


class RunPlace(msgspec.Struct, frozen=True, kw_only=True):
    """Where a recorded run's group sits: the map's heading names it."""

    run: str
    segment: str
    version: int
    group_id: int
    steps: list[int]  # global steps any of its rollouts was trained at
    never: dict[str, int]  # rollouts none of whose rows was trained, by cause
    partly: int = 0  # rollouts some of whose rows were trained and some never


class GroupMap(msgspec.Struct, frozen=True, kw_only=True):
    """A group's map: its rollouts lined up turn by turn, best advantage first."""

    path: str  # the group's row in the collection ("" = the collection is the group)
    title: str
    model: str
    k: int
    max_abs_advantage: float
    max_turns: int
    rows: list[GroupRow]  # sorted by advantage, best first (rollouts without one last)
    place: RunPlace | None = None
    findings_known: bool = False  # the source's findings are computed (a collection's once its search index is built)


class CompareSide(msgspec.Struct, frozen=True, kw_only=True):
    """One of two compared rollouts at one turn: its generated tokens, the prompt around a difference, its tool calls."""

    rollout: int
    turn: int
    turns: int  # how many agent turns this rollout has
    start: int  # absolute position of text[0] (the prompt strip around a prompt difference)
    text: list[str]
    mask: str  # one digit per token
    prompt_tokens: int
    length: int  # prompt + output of the turn
    out_text: list[str]  # the turn's generated tokens from the first (at most MAX_OUTPUT)
    out_mask: str  # their mask digits, as the artifact records them
    out_total: int  # generated tokens in the turn
    tools: list[str]
    failed: bool
    label: str = ""  # what heads the side when "rollout N" is not enough (a run's compare across versions)
    fate: str = ""  # a run's rollout: whether the trainer trained this turn's row (viewer/fate.py)


class Compare(msgspec.Struct, frozen=True, kw_only=True):
    """Two siblings' turn side by side, and where they part."""

    turn: int
    diverge_at: int | None  # the first position where the two turns (prompt + output) differ; None = identical
    output_diverge_at: int | None = None  # the first generated token (0 = the first one) where the outputs differ
    prompt_diverge_at: int | None = None  # the first prompt position where the prompts differ; None = the same
    a: CompareSide
    b: CompareSide
    note: str = ""


def _cells(r: Rollout, fates: list[Fate] | None) -> list[GroupCell]:
    failed = {c.turn for c in r.tool_calls if c.failed}
    return [GroupCell(turn=t.index, tools=[(n or "?")[:40] for n in t.tool_calls[:6]], failed=t.index in failed,
                      trained=r.training.trained(t.index), output_tokens=t.n_output,
                      fate=fates[k] if fates is not None and k < len(fates) else None)
            for k, t in enumerate(r.artifact.turns[:MAX_TURN_CELLS])]


def group_row(i: int, status: str, reward: float | None, advantage: float | None, member: Record | None,
              rollout: Rollout | None, problem: str | None = None, fate: Fate | None = None,
              turn_fates: list[Fate] | None = None, findings: Sequence[str] | None = None) -> GroupRow:
    """One map row from group.json's entry, the rollout's index row and, when it loaded, the rollout; a run's
    rollout with its fate and each turn's (viewer/fate.py); the rules it has findings of, when known."""
    if reward is not None and not math.isfinite(reward):
        reward = None
    base: dict[str, Any] = {"rollout": i, "path": member.path if member else None, "status": status, "reward": reward,
            "advantage": advantage, "problem": problem, "fate": fate,
            "findings": list(findings) if findings is not None else None}
    if rollout is None:
        return GroupRow(**base, trained_turns=member.trained_turns if member else None,
                        tokens=member.tokens if member else None)
    rep, turns = rollout.report, rollout.artifact.turns
    return GroupRow(**base, trained_turns=rep.trained_turns, tokens=sum(t.n_prompt + t.n_output for t in turns),
                    drifting=sum(1 for b in rep.boundaries if not b.continuous), cells=_cells(rollout, turn_fates),
                    more_turns=max(0, len(turns) - MAX_TURN_CELLS))


def group_map(group: Record, rows: list[GroupRow], place: RunPlace | None = None,
              findings_known: bool = False) -> GroupMap:
    ordered = sorted(rows, key=lambda r: (r.advantage is None, -(r.advantage or 0.0), r.rollout))
    return GroupMap(path=group.path, title=group.title, model=(group.model or "-").rsplit("/", 1)[-1], k=group.k or len(rows),
                    max_abs_advantage=max((abs(r.advantage) for r in rows if r.advantage is not None), default=0.0),
                    max_turns=max((len(r.cells) for r in rows), default=0), rows=ordered, place=place,
                    findings_known=findings_known)


def _turn_ids(r: Rollout, turn: int) -> np.ndarray:
    t = r.artifact.turns[turn]
    return np.concatenate([t.prompt_ids, t.output_ids])


def first_difference(a: np.ndarray, b: np.ndarray) -> int | None:
    """The first position where the two token sequences differ (the shorter one's end counts); None if equal."""
    n = min(a.size, b.size)
    diff = np.flatnonzero(a[:n] != b[:n])
    if diff.size:
        return int(diff[0])
    return None if a.size == b.size else n


def _args(value: object) -> str:
    """A tool call's arguments on one short line (the map only needs enough to tell two calls apart)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:159] + "…"


def _side(r: Rollout, rollout: int, turn: int, lo: int, hi: int) -> CompareSide:
    t = r.artifact.turns[turn]
    ids = _turn_ids(r, turn)
    hi = min(hi, ids.size)
    lo = min(lo, hi)
    out = t.output_ids[:MAX_OUTPUT]
    calls = [c for c in r.tool_calls if c.turn == t.index][:12]
    failed = any(c.failed for c in calls)
    tools = [f"{c.name or '?'}({_args(c.arguments)})" + (" ✗ failed" if c.failed else "") for c in calls] or \
        [(n or "?")[:40] for n in t.tool_calls[:12]]
    return CompareSide(rollout=rollout, turn=t.index, turns=len(r.artifact.turns), start=lo,
                       text=token_texts(r.vocab, ids[lo:hi]).text.tolist(),
                       mask="".join(map(str, t.mask[lo:hi].tolist())), prompt_tokens=t.n_prompt, length=int(ids.size),
                       out_text=token_texts(r.vocab, out).text.tolist(),
                       out_mask="".join(map(str, t.mask[t.n_prompt:t.n_prompt + out.size].tolist())),
                       out_total=t.n_output, tools=tools, failed=failed)


def _clamp_note(turn: int, ia: int, na: int, ib: int, nb: int) -> str:
    """What the comparison says when `turn` is past the end of one rollout or both (it compares their last turns)."""
    short = [(i, n) for i, n in ((ia, na), (ib, nb)) if turn >= n]
    if not short:
        return ""
    if len(short) == 2:
        same = na == nb
        return (f"neither has a turn {turn} (both have {_turns(na)}): comparing their last turns" if same else
                f"neither has a turn {turn} (rollout {ia} has {_turns(na)}, rollout {ib} {_turns(nb)}): comparing "
                "their last turns")
    (i, n), = short
    return f"rollout {i} has {_turns(n)}, no turn {turn}: comparing its last turn"


def _turns(n: int) -> str:
    return f"{n} turn" + ("" if n == 1 else "s")


def compare(ra: Rollout, ia: int, rb: Rollout, ib: int, turn: int) -> Compare:
    """Turn `turn` (a position in each rollout's turn list, clamped) of two siblings: both generated parts from
    their first token, and where their prompts part (with a strip of the prompt around it)."""
    na, nb = len(ra.artifact.turns), len(rb.artifact.turns)
    if not na or not nb:
        raise ValueError("a rollout without agent turns has nothing to compare")
    turn = max(turn, 0)
    ta, tb = min(turn, na - 1), min(turn, nb - 1)
    at = first_difference(_turn_ids(ra, ta), _turn_ids(rb, tb))
    pa, pb = ra.artifact.turns[ta].prompt_ids, rb.artifact.turns[tb].prompt_ids
    prompt_at = first_difference(pa, pb)
    pivot = prompt_at if prompt_at is not None else min(pa.size, pb.size)
    lo, hi = max(0, pivot - BEFORE), pivot + AFTER
    out_at = first_difference(ra.artifact.turns[ta].output_ids, rb.artifact.turns[tb].output_ids)
    return Compare(turn=turn, diverge_at=at, output_diverge_at=out_at, prompt_diverge_at=prompt_at,
                   a=_side(ra, ia, ta, lo, hi), b=_side(rb, ib, tb, lo, hi), note=_clamp_note(turn, ia, na, ib, nb))
