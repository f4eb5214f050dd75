"""The records the collection index receives from Python: one `IndexPage` per shown page.

Sibling of viewer/contract.py (the token view's records). The index page
(viewer/assets/src/collection_index.js) gets an `IndexPage` as the value of its component, or from the
`index` server function when the visitor sorts, filters or pages. The table itself arrives as
`table_html`, built and escaped by viewer/index/render.py from `IndexRow`s; the page never assembles
markup from collection text. Everything else is plain typed data the page writes with textContent.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from ..contract import Initial
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
    first: int = 0  # 1-based number of the first row shown (0 when none)
    shown: int = 0
    invalid: int = 0  # invalid rows in the collection
    kind: str = ""  # folder | zip | hub
    models: list[str] = []  # choices for the model and tool filters (bounded)
    tools: list[str] = []
    table_html: str = ""
    notes_html: str = ""
    row: str | None = None  # mode "row": the opened row's path
    row_html: str = ""  # mode "row": what the back bar says about it
    error_html: str | None = None
    group_html: str = ""  # mode "group": the group map (viewer/render/group_map.py); row is the group's path
    rollout: int | None = None  # mode "row" opened from a group map: the rollout's index (back returns to the map)
    goto: str | None = None  # a recorded run's row was opened: the page opens this source (the run page) instead
    findings_known: bool = False  # the source's findings are computed (its search index is built): the column and filter work
    finding_rules: list[str] = []  # the rules with a finding in this source: the finding filter's choices
    # The URL's parameter names the page keeps or drops, as Python defines them (the page repeats none).
    query_keys: tuple[str, ...] = QUERY_KEYS + (FINDING_KEY,)  # the filters' (viewer/index/filters.py) and the finding filter's
    view_keys: tuple[str, ...] = VIEW_KEYS
