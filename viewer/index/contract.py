"""The records the collection index receives from Python: one `IndexPage` per shown page.

Sibling of viewer/contract.py (the token view's records). The index page
(viewer/assets/src/collection_index.js) gets an `IndexPage` as the value of its component, or from the
`index` server function when the visitor sorts, filters or pages. Everything in it is plain typed data: the
table as its columns and `IndexRow`s (viewer/index/render.py formats every value), the notes as strings, the
back bar's facts as a `BackBar`, a group's map as viewer/group.py's `GroupMap`, why a source cannot be shown as a
`Problems`. The page draws them with elements and writes collection text only as textContent or attribute values.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from ..contract import Initial, Problems
from ..group import GroupMap
from .filters import QUERY_KEYS

FINDING_KEY = "finding"  # the finding filter's URL key: a rule name, "any" or "none" (viewer/index/page.py)
# The token view's place in a link (turn, mode, scope): not part of the index's filters.
VIEW_KEYS: tuple[str, ...] = Initial.__struct_fields__

IndexMode = Literal["index", "row", "group", "none"]  # the table; a back bar over an opened row; a group map; nothing


class IndexRow(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the table as shown: every value already formatted, None/"-" where not known."""

    path: str  # where it lives in the collection ("" = the collection itself)
    kind: Literal["artifact", "group", "rollout", "run"]  # "rollout": rollout i of a group; "run": a recorded run
    valid: bool
    problem: str | None
    model: str  # the model's short name (after the last "/"); the full name is `model_full`
    model_full: str
    task: str  # the first 8 characters of the task id
    title: str
    reward: str
    reward_sign: Literal["pos", "neg", "zero", "none"]
    spread: str  # groups: "min..max"
    k: int | None
    env_reward: str
    agent_turns: str
    trained_turns: str
    tokens: str
    drift: str
    timed_out: str
    tools: str
    captured: str  # the date part of the ISO time
    group: str | None
    rollout: int | None
    advantage: str
    findings: list[str] | None = None  # the rules it (a group: any of its rollouts) has findings of; None: not known
    # A recorded run's row: where it sits, TRL's status, and what the trainer did with its rows (viewer/fate.py)
    version: int | None = None
    group_id: int | None = None
    status: str | None = None  # TRL's: ok | timed-out | unscorable | failed (a group: its rollouts', each once)
    fate: str | None = None  # "step 5", "never: read-ahead", "step 5 + never: read-ahead (1 of 2 rows)"
    fate_kind: str = ""  # trained | partly | never ("" outside a run)
    fate_why: str = ""  # the whole sentence (a rollout: by its turns when its rows name them)


class IndexColumn(msgspec.Struct, frozen=True):
    """One heading of the table: what it sorts by (viewer/index/filters.py; "" = a plain heading), its words and its
    tooltip ("" = "sort by <label>")."""

    sort: str
    label: str
    tip: str


class IndexTable(msgspec.Struct, frozen=True, kw_only=True):
    """One page of the table: its headings in order and its rows. `run`: a recorded run's rows (their place in the
    run, TRL's status and the trainer's fate in place of the model and the timeout)."""

    run: bool
    columns: list[IndexColumn]
    rows: list[IndexRow]


class BackBar(msgspec.Struct, frozen=True, kw_only=True):
    """What the back bar says about the opened row, by `kind`:
    "row": a row of the index (`what` it is, `path`, the `matched` rows the index has and its `filters`);
    "rollout": rollout `rollout` of the `k` in the group at `path`, with TRL's `advantage`;
    "run": a recorded run's rollout, by its `crumbs` and the group's `k` (its status, TRL's advantage and its fate
    are the token view's headline, shown below the bar)."""

    kind: Literal["row", "rollout", "run"]
    what: Literal["group", "rollout"] = "rollout"
    path: str = ""  # "" = the collection itself
    matched: int = 0
    filters: list[tuple[str, str]] = []  # the index's filter state, key and value
    rollout: int | None = None
    k: int = 0
    advantage: float | None = None
    crumbs: list[str] = []  # ["run", "v1", "group 4", "rollout 0"]


class IndexPage(msgspec.Struct, frozen=True, kw_only=True):
    """What the index shows: one page of the filtered, sorted rows, the filter state and the counts."""

    serial: int  # changes on every value the server sends, so the page re-renders even for the same rows
    mode: IndexMode
    src: str = ""  # the collection's source as the visitor named it
    query: str = ""  # the filter state as a query string (viewer/index/filters.py `to_query`)
    filters: dict[str, str] = {}  # the same, key by key, for the form
    sort: str = "path"
    page: int = 0
    pages: int = 1
    page_size: int = 200
    total: int = 0  # rows in the collection
    matched: int = 0  # rows passing the filters
    matched_groups: int = 0  # of them, the rows that are a group (the rest are rollouts)
    first: int = 0  # 1-based number of the first row shown (0 when none)
    shown: int = 0
    invalid: int = 0  # invalid rows in the collection
    unlisted: int = 0  # a run's rollouts without an artifact (failed before one): in their groups' k, not rows
    kind: str = ""  # folder | zip | hub
    models: list[str] = []  # choices for the model and tool filters (bounded)
    tools: list[str] = []
    table: IndexTable | None = None  # mode "index": the page of rows
    notes: list[str] = []  # on the index (cuts, offline, ignored filter values), bounded
    row: str | None = None  # mode "row": the opened row's path
    back: BackBar | None = None  # mode "row": what the back bar says about it
    problems: Problems | None = None  # why the source (or the row asked for) cannot be shown
    group: GroupMap | None = None  # mode "group": the group's map (viewer/group.py); row is the group's path
    rollout: int | None = None  # mode "row" opened from a group map: the rollout's index (back returns to the map)
    goto: str | None = None  # a recorded run's row was opened: the page opens this source (the run page) instead
    findings_known: bool = False  # the source's findings are computed (its search index is built): the column and filter work
    finding_rules: list[str] = []  # the rules with a finding in this source: the finding filter's choices
    # The URL's parameter names the page keeps or drops, as Python defines them (the page repeats none).
    query_keys: tuple[str, ...] = QUERY_KEYS + (FINDING_KEY,)  # the filters' (viewer/index/filters.py) and the finding filter's
    view_keys: tuple[str, ...] = VIEW_KEYS
