"""A run's rollout named as the pages name it, read back to its path: "v3 g2 r1", "v3 · group 2 · rollout 1",
"v3 › group 2 › rollout 1", with the segment in front when two segments of a run share a version, group and
rollout ("20261203T090858Z-506fa9 v3 g2 r1"). Tools accept what a person copies from a page or a search hit."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow.compute as pc

from rollout_trace.artifact.run_table import RunTable

_SEP = r"(?:\s*[·›,/]\s*|\s+)"
_SHORT = re.compile(rf"^\s*(?:(?P<segment>[A-Za-z0-9][\w.:-]{{0,80}}){_SEP})?v(?:ersion)?\s*(?P<v>\d{{1,15}}){_SEP}"
                    rf"g(?:roup)?\s*(?P<g>\d{{1,15}}){_SEP}r(?:ollout)?\s*(?P<r>\d{{1,15}})\s*$", re.IGNORECASE)
MAX_NAMED = 5  # segments an ambiguous name lists


@dataclass(frozen=True)
class ShortId:
    version: int
    group: int
    rollout: int
    segment: str | None = None

    def __str__(self) -> str:
        return (f"{self.segment} " if self.segment else "") + f"v{self.version} g{self.group} r{self.rollout}"


def parse(text: str) -> ShortId | None:
    """The short id `text` spells, or None when it is not one (it may be a path)."""
    m = _SHORT.match(text or "")
    if m is None:
        return None
    return ShortId(int(m["v"]), int(m["g"]), int(m["r"]), m["segment"])


def path_of(t: RunTable, short: ShortId) -> str:
    """The path of the rollout `short` names in run `t`; ValueError saying what is wrong when none or several
    rollouts answer to it (several: the segments to put in front)."""
    where = (pc.field("policy_version") == short.version) & (pc.field("group_id") == short.group) \
        & (pc.field("rollout") == short.rollout)
    if short.segment:
        where &= pc.field("segment") == short.segment
    total, rows = t.page(where, columns=["segment", "path"], limit=MAX_NAMED + 1)
    found = [r for r in rows if r["path"] is not None]
    if not found:
        return _none(short, total)
    if len(found) > 1:
        named = ", ".join(f"{r['segment']} {short}" for r in found[:MAX_NAMED])
        raise ValueError(f"{total} rollouts of this run are {short} (one per segment): name one with its segment, "
                         f"e.g. {named}")
    return str(found[0]["path"])


def _none(short: ShortId, total: int) -> str:
    if total:  # the row stands but its artifact was never written
        raise ValueError(f"{short} has no recorded artifact in this run")
    raise ValueError(f"no rollout {short} in this run")
