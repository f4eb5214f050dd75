"""The pages' server functions, declared once: what each one is asked and what it answers, as records.

A page calls its component's server functions (Gradio's `server_functions`, which skip the queue) with one JSON
object and gets one back. Here each function has a request record and an answer type; viewer/page_types.py writes
the page's TypeScript from them (the `ViewServer`, `IndexServer`, `FindServer` and `RunServer` interfaces of
viewer/assets/contract.d.ts), and the handlers in viewer/ui/ read every request through `read`, so a field renamed
here is renamed for both, and `tsc` finds the page code that still sends the old name.

A request is untrusted JSON (the API accepts anything): `read` takes it field by field, and a field that is
missing, or of another type, or out of its bounds, takes its default, as a page's link does. Handlers then
answer with a record, or `Refused` saying in words why not. No Gradio here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from . import contract as c
from . import group as g
from . import run_compare as rc
from . import run_stats as rs
from .find import answers as fa
from .index import contract as ic
from .requests import lenient
from .requests import read as read  # the handlers read their requests through this module
from .untrusted import MOST

Key = Annotated[str, msgspec.Meta(max_length=64)]  # a rollout's key in the shared store, a capture's run id
Src = Annotated[str, msgspec.Meta(max_length=1000)]  # a source as a visitor names it, or a rollout's path
Word = Annotated[str, msgspec.Meta(max_length=40)]
Count = Annotated[int, msgspec.Meta(ge=0, le=MOST)]


class Refused(msgspec.Struct, frozen=True):
    """Why a server function cannot answer the request, in words (the page shows it where the answer would be)."""

    error: str


# -- the token view (viewer/ui/view_tab.py) --------------------------------------------------------------------


class ChunkRequest(msgspec.Struct, frozen=True, kw_only=True):
    """Tokens of one scope of a turn (or of TRL's training row `row`), chunk `index` of them."""

    key: Key | None = None  # None: no rollout is on screen (answered as one never opened)
    turn: Count = 0
    scope: Word = ""
    index: Count = 0
    row: Count = 0


class TrainingRequest(msgspec.Struct, frozen=True, kw_only=True):
    key: Key | None = None  # None: no rollout is on screen (answered as one never opened)
    run: c.RunContext | None = None  # the run context the page was given: each row's fate beside it


class TrainerRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One turn's trainer numbers, or with `summary` the rollout's and every turn's, for one rescore part, clip
    band and advantage (viewer/trainer_records.py checks them against the rollout)."""

    key: Key | None = None  # None: no rollout is on screen (answered as one never opened)
    part: Word = ""
    eps: tuple[float, float] | None = None  # None: TRL's default band
    advantage: float | None = None  # the group's; null outside a group
    turn: Count | None = None
    summary: bool = False


class ExportTrainer(msgspec.Struct, frozen=True, kw_only=True):
    """The trainer panel's settings an export carries (each checked against the rollout; a bad one falls back)."""

    part: Word = ""
    eps: Count = 0  # an index into viewer/trainer_records.py EPS_CHOICES
    adv: Word = "+1"  # "group" | "+1" | "-1"


class ExportRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A self-contained page of the rollout, or of one turn, at the view's place."""

    key: Key | None = None  # None: no rollout is on screen (answered as one never opened)
    what: Literal["rollout", "turn"] = "rollout"
    turn: Count = 0
    mode: Word = ""
    scope: Word = ""
    trainer: ExportTrainer | None = None
    advantage: float | None = None
    run: c.RunContext | None = None


class LiveRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A watched capture's record, and its value when it changed since `version` (viewer/ui/live.py)."""

    run: Key = ""
    rollout: Count | None = None  # the group's rollout followed; None: the first
    version: Count = 0


class LiveCancel(msgspec.Struct, frozen=True, kw_only=True):
    run: Key = ""


class LiveAnswer(msgspec.Struct, frozen=True, kw_only=True):
    live: c.Live
    opened: str | None = None  # an encoded `Opened` when the rollout changed since the version asked about


class Cancelling(msgspec.Struct, frozen=True):
    ok: bool = True


# -- the collection index (viewer/ui/collection_view.py) -----------------------------------------------------


class IndexRequest(msgspec.Struct, frozen=True, kw_only=True):
    src: Src = ""
    query: Annotated[str, msgspec.Meta(max_length=8000)] = ""  # the filters, sort and page as a query string


class GroupCompareRequest(msgspec.Struct, frozen=True, kw_only=True):
    """Two rollouts of a group map (`row`, the group's path), side by side at one turn."""

    src: Src = ""
    row: Src | None = None
    a: Count = 0  # rollout indices in the group
    b: Count = 0
    turn: Count = 0


class CompareAnswer(msgspec.Struct, frozen=True):
    compare: g.Compare


# -- the search panel (viewer/ui/find_panel.py) --------------------------------------------------------------


class FindSummaryRequest(msgspec.Struct, frozen=True, kw_only=True):
    src: Src = ""
    build: bool = False  # a Hub source is indexed only when the visitor asks (it downloads every rollout)


class FindPending(msgspec.Struct, frozen=True, kw_only=True):
    """A Hub source not indexed yet: how many rollouts indexing it would download."""

    pending: Literal[True] = True
    rollouts: int = 0


# -- the run page (viewer/ui/run_view.py) ---------------------------------------------------------------------


class RunVersionRequest(msgspec.Struct, frozen=True, kw_only=True):
    src: Src | None = None
    version: Count | None = None


class RunVersionAnswer(msgspec.Struct, frozen=True):
    groups: list[rs.RunGroupRow]


class RunCompareRequest(msgspec.Struct, frozen=True, kw_only=True):
    """Two rollouts of one task from anywhere in the run (their paths: other versions or groups), at one turn."""

    src: Src | None = None
    a: Src = ""
    b: Src = ""
    turn: Count = 0


class RunVersusRequest(msgspec.Struct, frozen=True, kw_only=True):
    """This run beside another (`vs`), with `task` (a task id of `src`) followed in both."""

    src: Src = ""
    vs: Src = ""
    task: Annotated[str, msgspec.Meta(max_length=64)] = ""


class RunVersusAnswer(msgspec.Struct, frozen=True):
    compare: rc.RunCompare


# What each page's component offers: its server functions by the name the page calls, each with its request
# record and its answer type (`Refused` among them: the page tells them apart by `error`).
SERVERS: dict[str, dict[str, tuple[type, Any]]] = {
    "ViewServer": {
        "chunk": (ChunkRequest, c.Chunk | Refused),
        "training": (TrainingRequest, c.Training),
        "trainer": (TrainerRequest, c.TrainerTurn | c.TrainerSummary | Refused),
        "export": (ExportRequest, c.Exported | Refused),
        "live": (LiveRequest, LiveAnswer | Refused),
        "live_cancel": (LiveCancel, Cancelling | Refused),
    },
    "IndexServer": {
        "index": (IndexRequest, ic.IndexPage),
        "compare": (GroupCompareRequest, CompareAnswer | Refused),
    },
    "FindServer": {
        "find_summary": (FindSummaryRequest, fa.FindSummary | FindPending | Refused),
        "find_search": (fa.FindRequest, fa.SearchAnswer | Refused),
    },
    "RunServer": {
        "run_version": (RunVersionRequest, RunVersionAnswer | Refused),
        "run_compare": (RunCompareRequest, CompareAnswer | Refused),
        "run_versus": (RunVersusRequest, RunVersusAnswer | Refused),
    },
}

def request_records() -> set[type]:
    """The records `read` takes field by field: every request, and the parts of them whose fields all have
    defaults (a record the page sends back whole, such as a run context, is not one)."""
    out: set[type] = set()

    def walk(t: msgspec.inspect.Type) -> None:
        if isinstance(t, msgspec.inspect.StructType) and lenient(t) and t.cls not in out:
            out.add(t.cls)
            for f in t.fields:
                walk(f.type)
        for x in getattr(t, "types", ()):
            walk(x)

    for fns in SERVERS.values():
        for req, _ in fns.values():
            walk(msgspec.inspect.type_info(req))
    return out


def answer(record: msgspec.Struct) -> dict:
    """A record as a server function returns it (Gradio encodes the dict)."""
    out = msgspec.to_builtins(record)
    assert isinstance(out, dict)
    return out


def refused(why: str) -> dict:
    return answer(Refused(why))
