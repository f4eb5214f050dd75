"""A self-contained HTML file of a rollout (or one turn) that opens offline in any browser.

The page carries the view's CSS and JavaScript inline and every token chunk it can show as embedded
JSON, so it makes no request at all. A whole-rollout export embeds each turn's new tokens (what the
turn adds) and TRL's training rows; a one-turn export also embeds that turn's full context. With
rescore parts it carries the trainer's numbers of every part (at the clip band and advantage that were
on screen), and a rollout opened from its group keeps the group's advantage. It opens on the turn,
mode, scope and part it was exported from.

An export is bounded by what a browser opens comfortably: at most `MAX_TOKENS` tokens (the largest
turn bench/bench_paint.py paints, about 15 MB of HTML). A bigger rollout folds: each scope keeps the
chunks nearest its story (the drift, else the first generated token), the budget shared fairly, and the
page says how much it holds; a whole rollout whose turns cannot each keep one chunk is refused with a
message (export the turn on screen). The file is written as it is built, one chunk at a time, never
held whole in memory. The embedded JSON escapes every character that could end or restructure the
script element, so no string from a trace can change the document.
"""

from __future__ import annotations

import math
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import msgspec

from rollout_trace.artifact.atomic import replacing
from rollout_trace.artifact.errors import RolloutTraceError

from . import assets
from .contract import Initial, Mode, Opened, RunContext, Scope, encode
from .render import panels
from .render.outline import outline, training, with_run
from .render.safe import text
from .rollout import CHUNK, Rollout
from .trainer_records import trainer_summary, trainer_turn

MAX_TOKENS = 500_000  # tokens embedded in one file, every scope together
MAX_TRAINER_TOKENS = 50_000  # generated tokens whose trainer numbers are embedded, every part together (~17 MB)
ADVANTAGE_CHOICES = ("group", "+1", "-1")  # the trainer panel's advantage buttons (viewer/assets/src/trace_view/trainer.js)

# Inside <script>, the HTML parser looks for "</script" and, after "<!--", for "<script" (the
# "script data escaped" states), so either can end or swallow the element whatever JSON says. With
# no "<", ">" or "&" in the text no tag, comment or entity can begin; U+2028/9 are escaped so the
# same text is also safe as a JavaScript literal. Each escape decodes to the same character in JSON.
_EMBED = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}


class ExportRefused(RolloutTraceError, ValueError):
    """The export cannot be written as asked; the message says why and what to do instead."""


def embed_json(value: object) -> str:
    """JSON text safe inside a <script type="application/json"> element: no string can end it."""
    return msgspec.json.encode(value).decode("utf-8").translate(_EMBED)


@dataclass(frozen=True)
class TrainerChoice:
    """The trainer panel's settings on screen: which part opens, and the band and advantage the numbers use."""

    part: str
    eps: int = 0  # index into EPS_CHOICES
    adv: str = "+1"  # one of ADVANTAGE_CHOICES


@dataclass(frozen=True)
class Written:
    """What an export holds: bytes written, tokens embedded of the tokens its scopes have, and its note."""

    bytes: int
    tokens: int
    of_tokens: int
    note: str | None


@dataclass(frozen=True)
class _Scope:
    scope: str  # new | full | row
    key: str  # the turn's position in the exported outline, or the row's number
    turn: int  # the artifact turn (0 for rows)
    row: int
    size: int  # tokens
    start: int  # first absolute position
    story: int  # the chunk a reader lands on

    @property
    def n_chunks(self) -> int:
        return -(-self.size // CHUNK)

    def chunk_tokens(self, k: int) -> int:
        return min(CHUNK, self.size - k * CHUNK)

    def by_distance(self) -> list[int]:
        """Chunk indices nearest the story first; after it before before it (the output follows the story)."""
        out, n = [self.story], self.n_chunks
        for d in range(1, n):
            out += [k for k in (self.story + d, self.story - d) if 0 <= k < n]
        return out


def _scopes(r: Rollout, turns: list[int], one_turn: bool, with_rows: bool) -> tuple[list[_Scope], list[_Scope]]:
    """(the turns' scopes, the training rows' scopes) an export embeds."""
    own = []
    for pos, t in enumerate(turns):
        for scope in ("new", "full") if one_turn else ("new",):
            start, size = r.scope_size(t, scope)
            own.append(_Scope(scope, str(pos), t, 0, size, start, r.story_chunk(t, scope)))
    rows = [_Scope("row", str(k), 0, k, int(row.input_ids.size), 0, 0)
            for k, row in enumerate(r.training.rows)] if with_rows else []
    return own, rows


def _share(scopes: list[_Scope], budget: int) -> tuple[dict[int, list[int]], int]:
    """The chunks each scope keeps (by position in `scopes`) within `budget` tokens: first every scope's
    story chunk while they fit, then the rest shared fairly (the smallest scopes whole, the others
    splitting what is left), each scope growing outward from its story."""
    kept: dict[int, list[int]] = {i: [] for i in range(len(scopes))}
    left = budget
    for i, s in enumerate(scopes):
        if s.size and s.chunk_tokens(s.story) <= left:
            kept[i].append(s.story)
            left -= s.chunk_tokens(s.story)
    order = sorted(range(len(scopes)), key=lambda i: scopes[i].size)
    for n, i in enumerate(order):
        s = scopes[i]
        if not kept[i]:
            continue
        allowance = left // (len(order) - n)
        for k in s.by_distance()[1:]:
            if s.chunk_tokens(k) > allowance:
                break
            kept[i].append(k)
            allowance -= s.chunk_tokens(k)
            left -= s.chunk_tokens(k)
        kept[i].sort()
    return kept, budget - left


def _trainer(r: Rollout, turns: list[int], choice: TrainerChoice | None, advantage: float | None) -> dict | None:
    """Every part's numbers for the exported turns at the chosen band and advantage (None without parts)."""
    if not r.artifact.rescores:
        return None
    from rollout_trace.analysis.trainer_view import EPS_CHOICES

    choice = choice or TrainerChoice(next(iter(r.artifact.rescores)))
    lo, hi = EPS_CHOICES[choice.eps]
    adv = advantage if choice.adv == "group" and advantage is not None else -1.0 if choice.adv == "-1" else 1.0
    left = MAX_TRAINER_TOKENS
    per_part: dict[str, dict] = {}
    summaries: dict[str, object] = {}
    for part in r.artifact.rescores:
        per_turn: dict[str, object] = {}
        for pos, t in enumerate(turns):
            n = r.artifact.turns[t].n_output
            if n > left:
                per_turn[str(pos)] = {"error": f"the trainer's numbers for this turn ({n:,} generated tokens) are "
                                               "beyond this export's limit: open the rollout in the app"}
                continue
            left -= n
            per_turn[str(pos)] = trainer_turn(r, t, part, lo, hi, adv)
        per_part[part] = per_turn
        s = trainer_summary(r, part, lo, hi, adv)
        summaries[part] = msgspec.structs.replace(s, turns=[s.turns[t] for t in turns])
    return {"turns": per_part, "summary": summaries}


def _outline(r: Rollout, turns: list[int], one_turn: bool, choice: TrainerChoice | None,
             advantage: float | None, run: RunContext | None = None) -> bytes:
    o = outline(r)
    o = with_run(o, r, run) if run is not None else msgspec.structs.replace(o, advantage=advantage)
    if one_turn:  # the run's turn fates stay beside their turns
        o = msgspec.structs.replace(o, turns=[o.turns[t] for t in turns], run=None if o.run is None else
                                    msgspec.structs.replace(o.run, turns=[o.run.turns[t] for t in turns]))
    if o.trainer is not None:  # the picker offers what the file carries: every part, the band and advantage on screen
        c = choice or TrainerChoice(o.trainer.parts[0].name)
        eps = o.trainer.eps_choices[c.eps]
        o = msgspec.structs.replace(o, trainer=msgspec.structs.replace(o.trainer, part=c.part, eps_choices=[eps],
                                                                       advantages=[c.adv]))
    return encode(o)


class _Out:
    """Counts what it writes (characters of ASCII-only JSON and the page around it)."""

    def __init__(self, f: IO[str]):
        self.f, self.chars = f, 0

    def __call__(self, s: str) -> None:
        self.f.write(s)
        self.chars += len(s.encode("utf-8")) if not s.isascii() else len(s)


def write_export(r: Rollout, f: IO[str], turn: int | None = None, mode: Mode = "mask", scope: Scope = "new",
                 at_turn: int = 0, trainer: TrainerChoice | None = None, advantage: float | None = None,
                 max_tokens: int = MAX_TOKENS, run: RunContext | None = None) -> Written:
    """Write the page to `f`; `turn` exports that turn alone, else the whole rollout opens on `at_turn`.
    `run`: a recorded run's rollout carries its place in the run and the trainer's fate (and TRL's advantage).

    Raises ValueError for a turn the rollout does not have, ExportRefused when it cannot fit."""
    n = len(r.artifact.turns)
    if turn is not None and not 0 <= turn < n:
        raise ValueError(f"there is no turn {turn}: this rollout has turns 0 to {n - 1}" if n else
                         "this rollout has no agent turn to export")
    one_turn = turn is not None
    turns = [turn] if turn is not None else list(range(n))
    if not one_turn and scope == "full":
        scope = "new"  # a whole-rollout export carries each turn's new tokens, not every full context
    total = sum(t.n_prompt + t.n_output for t in r.artifact.turns)
    # TRL's rows hold every token of the rollout again; past the budget they would only be folded away, and
    # packing them costs memory in proportion to the rollout, so a rollout that large leaves them out.
    with_rows = total <= max_tokens
    own, rows = _scopes(r, turns, one_turn, with_rows)
    if not one_turn and sum(s.chunk_tokens(s.story) for s in own) > max_tokens:
        raise ExportRefused(f"this rollout is too large to export whole ({n:,} turns, {total:,} tokens; an export "
                            f"holds at most {max_tokens:,} tokens): export one turn instead")
    kept_own, used = _share(own, max_tokens)
    kept_rows, used_rows = _share(rows, max_tokens - used)
    wanted = sum(s.size for s in own) + sum(s.size for s in rows)
    embedded = used + used_rows
    note = None
    if embedded < wanted or not with_rows:
        note = (f"This export holds {embedded:,} of this {'turn' if one_turn else 'rollout'}'s {wanted if with_rows else total:,} "
                f"tokens: an export holds at most {max_tokens:,}. Each turn opens on its story; the rest is in the app.")
    if with_rows:
        rows_record = training(r, run)
    else:
        why = (f"TRL's training rows are not in this export: this rollout has {total:,} tokens, more than an export "
               f"holds ({max_tokens:,}). Open it in the app to see them.")
        rows_record = panels.no_rows(omitted=why)
    start_turn = 0 if one_turn else min(max(at_turn, 0), max(n - 1, 0))
    if run is not None:
        advantage = run.advantage
    opened = Opened("export", None, msgspec.Raw(_outline(r, turns, one_turn, trainer, advantage, run)),
                    Initial(start_turn, mode, scope), None)
    title = (f"run {' › '.join(run.crumbs[1:])}" if run is not None else f"rollout {r.artifact.summary.task_id[:12]}") + \
        (f" turn {turn}" if turn is not None else "")
    out = _Out(f)
    out(f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="color-scheme" content="light dark">
<title>{text(title)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:0}}.dark{{background:#0b0f19}}#root{{padding:16px}}
#root {{ {assets.read("trace_view.css")} }}</style></head>
<body><div id="root"></div>
<script type="application/json" id="tv-data">""")
    out('{"opened":' + embed_json(opened) + ',"chunks":{')
    for name, scopes, kept in (("new", own, kept_own), ("full", own, kept_own), ("row", rows, kept_rows)):
        out(("," if name != "new" else "") + f'"{name}":{{')
        first = True
        for i, s in enumerate(scopes):
            if s.scope != name:
                continue
            out(("" if first else ",") + f'"{s.key}":{{')
            first = False
            for j, k in enumerate(kept.get(i, [])):
                out(("," if j else "") + f'"{k}":' + embed_json(r.chunk(s.turn, s.scope, k, s.row)))
            out("}")
        out("}")
    out('},"training":' + embed_json(rows_record) + ',"trainer":' + embed_json(_trainer(r, turns, trainer, advantage)))
    out(',"note":' + embed_json(note) + "}")
    out(f"""</script>
<script>{assets.read("trace_view.js")}
TraceView.mountExport(document.getElementById("tv-data"), document.getElementById("root"));
</script></body></html>
""")
    return Written(out.chars, embedded, wanted if with_rows else total, note)


def export_file(r: Rollout, path: Path, **kw) -> Written:
    """The page written to `path` atomically (rollout_trace/artifact/atomic.py): renamed into place when complete.

    Raises NotReplaceable (an OSError) when `path` is a FIFO, a device or a symlink: `write_to` writes through those."""
    with replacing(path, "w") as f:
        return write_export(r, f, **kw)


def write_to(r: Rollout, target: str, **kw) -> Written:
    """The page written where a command line's `-o TARGET` says, as a shell redirection would write it:
    `-` is standard output; a FIFO, a device or a symlink to one is opened and written through; a regular
    file (a symlink to one included: its target) or a new path is replaced atomically, never half written."""
    if target == "-":
        return write_export(r, sys.stdout, **kw)
    path = Path(target)
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        special = False
    if special:
        with open(path, "w", encoding="utf-8") as f:
            return write_export(r, f, **kw)
    return export_file(r, Path(os.path.realpath(path)), **kw)


def size_label(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{math.ceil(n / 1e3):,} kB"
