"""Token counts, drift and TRL's trained turns for index rows whose summary.json does not record them,
computed once and kept.

The index is built from small files (rollout_trace/artifact/collection.py); a capture of ours writes `n_tokens` and
`drifting_boundaries` into summary.json, but artifacts the original capture script wrote (and ours from
before format 2 gained them) do not. For those in a folder or a zip the index reads the row's turns.json,
once, when a page first needs the row: the rows on screen, or every row when the page filters or sorts by
tokens or drift. A Hub collection's index stays small files only (a token file is a download): its rows
learn their facts when they are opened, as every opened row does. What is found is kept by the row's
source identity (a folder's path and file stamps, a Hub commit, a zip's stamps), so neither another
page, another visitor nor a reopened collection reads it again.

The counting is the artifact's own: tokens are prompt + output over the agent turns (`Artifact.n_tokens`'s
sum), a boundary drifts where rollout_trace/analysis/continuity.py says the next prompt does not start with the
turn before, and the trained turns are what TRL trains (rollout_trace/analysis/training.py, TRL's and OpenEnv's
own functions on trace.json; about 10 ms a row), for artifacts whose summary.json predates `trl_training`
(the original capture script's, the bundled offline captures). A row whose turns.json is larger than `MAX_ROW_BYTES`, or past a page's `MAX_PAGE_BYTES`, or
that cannot be read, keeps "unknown" (the next page goes on where this one stopped). No Gradio here.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from rollout_trace.analysis.continuity import boundaries
from rollout_trace.analysis.training import TRL, training
from rollout_trace.artifact import Artifact, Turn, load_artifact
from rollout_trace.artifact.bounded import Bounded
from rollout_trace.artifact.collection import Collection, Record
from rollout_trace.artifact.problems import Findings
from rollout_trace.artifact.read import decode_turn, load_index

MAX_ROW_BYTES = 64 << 20  # a turns.json larger than this is not read for the index
MAX_PAGE_BYTES = 256 << 20  # turns.json bytes one page build reads at most
MAX_ENTRIES = 100_000  # rows remembered (a few dozen bytes each)


@dataclass(frozen=True)
class Facts:
    tokens: int
    drifting: int  # turn boundaries that drift
    trained: int | None = None  # turns TRL trains; None when the facts came from turns.json alone


def needs_facts(r: Record) -> bool:
    return r.kind == "artifact" and r.valid and (r.tokens is None or r.drifting_boundaries is None
                                                 or r.trained_turns is None)


def facts_of(turns: list[Turn], trained: int | None = None) -> Facts:
    drifting = sum(not b.continuous for b in boundaries(turns, None))
    return Facts(sum(t.n_prompt + t.n_output for t in turns), drifting, trained)


def artifact_facts(a: Artifact, trained: int | None = None) -> Facts:
    """The facts of a loaded artifact; `trained`, when the caller has TRL's answer already."""
    return facts_of(a.turns, training(a).trained_turns if trained is None else trained)


def count(folder: Path, need_trained: bool = True) -> Facts:
    """The facts of the artifact in `folder` (raises ArtifactError when unreadable): from its turns.json alone
    when TRL's trained turns are not needed, else from the whole artifact."""
    if need_trained:
        return artifact_facts(load_artifact(folder))
    findings = Findings()
    turns = [decode_turn(i, h, findings) for i, h in enumerate(load_index(folder))]
    findings.raise_if_any()
    return facts_of([t for t in turns if t is not None])


def with_facts(r: Record, f: Facts | None) -> Record:
    """The record with what `f` tells filled in where summary.json did not say."""
    if f is None or not needs_facts(r):
        return r
    drifting = r.drifting_boundaries if r.drifting_boundaries is not None else f.drifting
    trained = (r.trained_turns, r.trained_by) if r.trained_turns is not None or f.trained is None else (f.trained, TRL)
    return msgspec.structs.replace(r, tokens=r.tokens if r.tokens is not None else f.tokens,
                                   drifting_boundaries=drifting, drift="drift" if drifting else "none",
                                   trained_turns=trained[0], trained_by=trained[1])


def _group(g: Record, members: list[Record]) -> Record:
    """A group's tokens and drift from its rollouts', once those are known (as rollout_trace/artifact/collection.py sums them)."""
    if g.kind != "group" or not members or (g.tokens is not None and g.drift != "unknown"
                                            and g.trained_turns is not None):
        return g
    tokens = None if any(m.tokens is None for m in members) else sum(m.tokens or 0 for m in members)
    drift = "drift" if any(m.drift == "drift" for m in members) else \
        "none" if all(m.drift == "none" for m in members) else "unknown"
    trained = None if any(m.trained_turns is None for m in members) else max(m.trained_turns or 0 for m in members)
    return msgspec.structs.replace(g, tokens=g.tokens if g.tokens is not None else tokens, drift=drift,
                                   trained_turns=g.trained_turns if g.trained_turns is not None else trained,
                                   trained_by=g.trained_by or (TRL if trained is not None else None))


class RowFacts:
    """The shared memory of computed facts, by row identity (thread-safe; bounded, oldest dropped first)."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self._known: Bounded[str, tuple[Facts | None]] = Bounded(max_entries)  # (None,): could not be read
        self.reads = 0  # turns.json files read (the tests count them)

    def _get(self, key: str) -> tuple[bool, Facts | None]:
        got = self._known.get(key)
        return (True, got[0]) if got is not None else (False, None)

    def _put(self, key: str, f: Facts | None) -> None:
        self._known.put(key, (f,))

    def learn(self, key: str, a: Artifact, trained: int) -> None:
        """Keep the facts of a row that was opened (it is in memory anyway, TRL's answer with it)."""
        self._put(key, artifact_facts(a, trained))

    def _compute(self, c: Collection, path: str, need_trained: bool) -> Facts | None:
        self.reads += 1
        folder = None
        try:
            folder = c.folder(path)
            return count(folder, need_trained=need_trained)
        except Exception:  # unreadable here (offline Hub, a bad file): the row says unknown, as before
            return None
        finally:
            if folder is not None and c.kind == "zip":  # what opening the row unpacked
                shutil.rmtree(folder, ignore_errors=True)

    def fill(self, c: Collection, records: Iterable[Record], identity: Callable[[str], str],
             trained: bool = True) -> list[Record]:
        """`records` with tokens and drift filled in where summary.json did not record them and the row can be
        read within this page's budget; a group's from its rollouts'. `trained`: TRL's trained turns too, where
        summary.json predates them (TRL's import and 10 ms a row; the command line asks for it with --trained)."""
        rows = list(records)
        budget = MAX_PAGE_BYTES
        by_path = {r.path: r for r in c.records}
        wanted = {r.path for r in rows if needs_facts(r)}
        wanted |= {m.path for g in rows if g.kind == "group" for m in c.records if m.group == g.path and needs_facts(m)}
        filled: dict[str, Record] = {}
        for path in sorted(wanted):
            r = by_path[path]
            try:
                key = identity(path)
            except Exception:
                continue
            known, f = self._get(key)
            size = r.turns_bytes or 0
            if not known and c.kind != "hub" and size <= min(MAX_ROW_BYTES, budget):
                budget -= size
                f = self._compute(c, path, trained and r.trained_turns is None)
                self._put(key, f)
            filled[path] = with_facts(r, f)
        out = [filled.get(r.path, r) for r in rows]
        members = lambda g: [filled.get(m.path, m) for m in c.records if m.group == g.path]  # noqa: E731
        return [_group(r, members(r)) if r.kind == "group" else r for r in out]
