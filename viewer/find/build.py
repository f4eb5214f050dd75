"""Reading a source's rollouts into a text index: each rollout opened once, its text and findings computed once.

A collection's or a run's rollouts are its valid artifact rows (rollout_trace/artifact/collection.py); one
artifact is a source of one rollout. The vocabulary is resolved once per tokenizer folder (a run's rollouts share
the run's). A rollout that cannot be read is indexed without text, so the index says it holds it and does not read
it again; `MAX_ROLLOUTS` bounds what one source costs. No Gradio here.
"""

from __future__ import annotations

from collections.abc import Iterator

from rollout_trace.analysis.findings import Finding, findings
from rollout_trace.analysis.texts import RolloutText, rollout_text
from rollout_trace.analysis.tokens import Vocab, resolve_vocab
from rollout_trace.artifact import Artifact, ArtifactError
from rollout_trace.artifact.collection import Collection, Record

from .text_index import FindIndex, RolloutRow

MAX_ROLLOUTS = 20_000  # rollouts one source's index reads (a collection's index holds as many rows)

Item = tuple[RolloutRow, RolloutText | None, list[Finding]]


def row_of(r: Record) -> RolloutRow:
    return RolloutRow(path=r.path, version=r.policy_version, group=r.group, rollout=r.rollout,
                      status=r.status or ("ok" if r.valid else "invalid"), title=r.title)


class Vocabs:
    """Vocabularies by tokenizer folder and model: one build per run, not one per rollout."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], Vocab | None] = {}

    def of(self, a: Artifact) -> Vocab | None:
        key = (str(a.tokenizer_dir) if a.tokenizer_dir is not None else f"mem:{id(a.tokenizer_json)}"
               if a.tokenizer_json else "", a.summary.model or "")
        if key not in self._known or key[0].startswith("mem:"):
            self._known[key] = resolve_vocab(a.tokenizer_dir, a.summary.model, None, a.tokenizer_json)[0]
        return self._known[key]


def item_of(row: RolloutRow, a: Artifact, vocabs: Vocabs) -> Item:
    text = rollout_text(a, vocabs.of(a))
    return row, text, findings(text)


def collection_items(c: Collection, skip: FindIndex | None = None, limit: int = MAX_ROLLOUTS) -> Iterator[Item]:
    """Each valid rollout of `c` not yet in `skip`, opened, read and released."""
    vocabs = Vocabs()
    done = 0
    for r in c.records:
        if r.kind != "artifact" or not r.valid or (skip is not None and r.path in skip):
            continue
        if done >= limit:
            return
        done += 1
        try:
            a = c.open(r.path)
        except (ArtifactError, OSError):
            yield row_of(r), None, []
            continue
        try:
            yield item_of(row_of(r), a, vocabs)
        finally:
            if c.kind == "zip" and a.root is not None and c.run is None:
                c.release(a.root)


def artifact_items(a: Artifact) -> Iterator[Item]:
    yield item_of(RolloutRow(path="", status="ok", title=(a.task.instruction.splitlines() or [""])[0] if a.task else ""),
                  a, Vocabs())


def index_collection(c: Collection, into: FindIndex | None = None, limit: int = MAX_ROLLOUTS) -> FindIndex:
    """`into` (or a new in-memory index) with every rollout of `c` it does not hold yet."""
    index = into if into is not None else FindIndex()
    index.add(collection_items(c, index, max(0, limit - len(index))))
    return index
