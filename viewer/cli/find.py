"""`python -m viewer find SOURCE PATTERN`: search what the model generated, its tool calls and the tool outputs.

SOURCE is anything the viewer opens (an artifact, a collection, a recorded run; a folder, a zip, a Hub dataset id
or a bundled example). Each hit is printed on one line: the rollout (path, and in a run v<version> g<group>
r<rollout>), the turn, the field, the token where the match starts and an excerpt with the match in [brackets];
then the counts (rollouts, and per version in a run). `--json` prints one document instead.

Exit status: 0 searched (with or without hits), 1 the source cannot be read, 2 a bad pattern or option.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import msgspec

from rollout_trace.analysis.texts import FIELDS
from rollout_trace.artifact import ArtifactError, open_artifact, open_run

from ..find.build import artifact_items, index_collection
from ..find.columns import RunFind
from ..find.query import QueryError, parse_query
from ..find.text_index import FindIndex, Hit, Search, SearchResult
from ..index import open_index
from ..source_kinds import classify
from .collection import write_all


def add_find_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="an artifact, collection or run: folder, .zip, Hub dataset id or bundled example")
    p.add_argument("pattern", help="text to find (case-insensitive), or /regex/ (flags after the slash: i, s, m)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--in", dest="fields", action="append", choices=FIELDS, default=None,
                   help="look only in this field (repeatable): generated, tool-call or tool-output")
    p.add_argument("--versions", default=None, metavar="A:B", help="a run's policy versions, inclusive (A:, :B, A)")
    p.add_argument("--status", action="append", default=None, metavar="STATUS",
                   help="a run's rollout status (repeatable): ok, timed-out, unscorable, failed")
    p.add_argument("--limit", type=int, default=50, help="hits listed (at most 200; counts cover every match)")


def open_index_of(source: str) -> Search:
    """The search of every rollout `source` holds (raises ArtifactError when it cannot be read): a run's from its
    columns (viewer/find/columns.py), a collection's or a rollout's a text index built here."""
    kind = classify(source)
    if kind == "run":
        return RunFind(open_run(source).table)
    if kind == "collection":
        c = open_index(source)
        try:
            return index_collection(c)
        finally:
            c.close()
    index = FindIndex()
    index.add(artifact_items(open_artifact(source)))
    return index


def hit_line(h: Hit) -> str:
    where = h.path or "."
    if h.version is not None:
        where += f"  v{h.version}" + (f" r{h.rollout}" if h.rollout is not None else "")
    a, b = h.mark
    excerpt = (h.excerpt[:a] + "[" + h.excerpt[a:b] + "]" + h.excerpt[b:]).replace("\n", "⏎")
    return f"{where}  turn {h.turn} {h.field} token {h.token}: {excerpt}"


def result_doc(source: str, pattern: str, r: SearchResult) -> dict:
    return {"source": source, "pattern": pattern, "rollouts": r.rollouts, "pieces": r.pieces,
            "per_version": {str(k): v for k, v in sorted(r.per_version.items())}, "partial": r.partial,
            "notes": r.notes, "hits": msgspec.to_builtins(r.hits)}


def find(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        q = parse_query(args.pattern, args.fields or (), args.versions, args.status or (), limit=args.limit)
    except QueryError as e:
        print(f"ERROR find: {e}", file=err)
        return 2
    try:
        index = open_index_of(args.source)
    except ArtifactError as e:
        print(f"ERROR {args.source}: cannot be read", file=err)
        for p in e.problems:
            print(f"  - {p}", file=err)
        return 1
    try:
        r = index.search(q)
    finally:
        index.close()
    if args.json:
        write_all(out, msgspec.json.encode(result_doc(args.source, args.pattern, r)).decode() + "\n")
        return 0
    write_all(out, "".join(hit_line(h) + "\n" for h in r.hits))
    per = ", ".join(f"v{v}: {n}" for v, n in sorted(r.per_version.items()))
    print(f"{r.rollouts} rollout(s) match ({r.pieces} piece(s)); {len(r.hits)} hit(s) listed"
          + (f"; per version {per}" if per else ""), file=err)
    for n in r.notes:
        print(f"note: {n}", file=err)
    return 0
