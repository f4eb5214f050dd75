"""Command line for collections: `python -m viewer ls SOURCE` and `viewer check` on a collection.

`ls` prints the index (an aligned table, or one JSON document with --json) built from the small
files only; exit 0 when the index was built (invalid rows are rows, marked INVALID), 1 when the
source cannot be listed. What the reader skipped (an index line naming a folder outside the run, a
file that is not what it should be) is said on standard error, as `check` says it. `check` on a collection reads every artifact fully and every group.json
against its rollouts; exit 0 when all are valid, 1 naming each invalid one.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

import msgspec

from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.collection import Collection, Record, failed_records
from rollout_trace.artifact.group import load_group
from rollout_trace.artifact.run import Run
from rollout_trace.artifact.run_table import QueuedRow

from ..fate import brief
from ..index import open_index
from ..index.facts import RowFacts
from ..index.filters import QUERY_KEYS, Filters, apply, from_query, to_query
from ..index.page import model_choices
from ..numbers import count

MAX_PROBLEM_LINES = 20  # `ls` is a listing: past this many, `check` names the rest
_WIDTH = {"title": 40, "model": 24, "path": 40, "tools": 20}


def add_ls_arguments(p: argparse.ArgumentParser) -> None:
    """`ls` flags: one per query key (--reward-min 0.5 is reward_min=0.5), parsed by the same lenient reader."""
    p.add_argument("source", help="a folder, a .zip or a Hub dataset id (org/name[@rev][:sub/folder])")
    p.add_argument("--json", action="store_true", help="print one JSON document (records, problems, notes)")
    p.add_argument("--trained", action="store_true",
                   help="ask TRL which turns it trains where summary.json does not say (as the page does; slower)")
    for key in QUERY_KEYS:
        flags = ["--" + key.replace("_", "-")] + (["--search"] if key == "q" else [])
        p.add_argument(*flags, dest="q_" + key, default=None, metavar="VALUE", help=_HELP.get(key))


_HELP = {"sort": "any column; -COLUMN sorts descending (write --sort=-reward)", "q": "text search over titles",
         "tool": "rows that used this tool", "no_tool": "rows that never used this tool",
         "drift": "none, drift or unknown", "timed_out": "yes or no", "valid": "yes or no",
         "kind": "artifact, group or run"}


def filters_from_args(args: argparse.Namespace) -> tuple[Filters, list[str]]:
    return from_query({k: getattr(args, "q_" + k) for k in QUERY_KEYS if getattr(args, "q_" + k) is not None})


def shown(name: str) -> str:
    """A name as a message shows it: a 5,000-character one would fill the screen."""
    return name if len(name) <= 200 else name[:200] + f"… ({len(name):,} characters)"


def _open(source: str, err: TextIO) -> Collection | None:
    try:
        return open_index(source)
    except ArtifactError as e:
        print(f"ERROR {shown(source)}: cannot list this collection", file=err)
        for p in e.problems:
            print(f"  - {p}", file=err)
        return None


def _fmt(v, column: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.3g}"
    if isinstance(v, tuple):
        return ",".join(_fmt(x, column) for x in v) if v else "-"
    text = str(v)
    width = _WIDTH.get(column)
    return text if width is None or len(text) <= width else text[: width - 1] + "…"


def _row(r: Record) -> dict[str, str]:
    spread = f"{_fmt(r.reward_min, '')}..{_fmt(r.reward_max, '')}" if r.kind == "group" else ""
    return {
        "path": _fmt(r.path or ".", "path"),
        "kind": r.kind if r.kind in ("group", "run") else (f"r{r.rollout}" if r.group is not None else "art"),
        "model": _fmt(r.model.rsplit("/", 1)[-1] if r.model else None, "model"),
        "task": (r.task_id or "-")[:8],
        "title": _fmt(r.title or None, "title"),
        "reward": _fmt(r.reward, "") + (f" [{spread}] k={r.k}" if spread else ""),
        "env": _fmt(r.env_reward, ""),
        "turns": f"{_fmt(r.agent_turns, '')}/{_fmt(r.trained_turns, '')}",
        "tokens": count(r.tokens),
        "drift": r.drift,
        "timeout": _fmt(r.timed_out, ""),
        "tools": _fmt(r.tools, "tools"),
        "captured": (r.captured or "-")[:10],
        "status": "ok" if r.valid else f"INVALID: {r.problem}",
    }


def _run_row(r: Record, rows: list[QueuedRow] | None = None) -> dict[str, str]:
    """A row of a recorded TRL run: where it sits (version, group, rollout), what TRL did with it. Two token
    columns, never one: `mask` is what TRL's mask WOULD train over the rows it queued, `trained` what the trainer
    DID train (the rows it took into a step)."""
    return {
        "version": _fmt(r.policy_version, ""),
        "group": _fmt(r.group_id, ""),
        "rollout": "group" if r.kind == "group" else _fmt(r.rollout, ""),
        "status": r.status or ",".join(sorted(set(r.statuses))) or "-",
        "reward": _fmt(r.reward, "") + (f" [{_fmt(r.reward_min, '')}..{_fmt(r.reward_max, '')}]" if r.kind == "group" else ""),
        "advantage": _fmt(r.advantage, ""),
        "tokens": count(r.tokens),
        "mask": count(r.trained_tokens),
        "trained": count(r.trainer_tokens),
        "fate": "-" if rows is None else brief(rows, r.dropped),
        "tools": _fmt(r.tools, "tools"),
        "path": r.path or "(no folder: failed)",
    }


def queued_rows(run: Run, records: list[Record]) -> dict[str, list[QueuedRow]]:
    """Each run row's TRL rows with their fates, by its path ("" for a rollout without a folder: by its place):
    a rollout's own, a group's its rollouts' together."""
    by_place = {(r.segment, r.group_id, r.rollout): r for r in run.rows}
    by_group: dict[tuple[str, int], list[QueuedRow]] = {}
    for r in run.rows:
        by_group.setdefault((r.segment, r.group_id), []).extend(r.queued)
    out: dict[str, list[QueuedRow]] = {}
    for rec in records:
        if rec.kind == "group":
            out[_key(rec)] = by_group.get((rec.segment or "", rec.group_id or 0), [])
        else:
            row = by_place.get((rec.segment or "", rec.group_id or 0, rec.rollout or 0))
            if row is not None:
                out[_key(rec)] = list(row.queued)
    return out


def _key(rec: Record) -> str:
    return f"{rec.kind}|{rec.path}|{rec.segment}|{rec.group_id}|{rec.rollout}"


def table(records: list[Record], run: Run | None = None) -> str:
    """An aligned text table, one line per row; the last column is not padded."""
    if run is not None:
        queued = queued_rows(run, records)
        rows = [_run_row(r, queued.get(_key(r))) for r in records]
        heads = list(_run_row(Record(kind="artifact", path="", valid=True)).keys())
    else:
        rows = [_row(r) for r in records]
        heads = list(_row(Record(kind="artifact", path="", valid=True)).keys())
    widths = {h: max([len(h)] + [len(r[h]) for r in rows]) for h in heads}
    lines = ["  ".join(h.ljust(widths[h]) if h != heads[-1] else h for h in heads)]
    for r in rows:
        lines.append("  ".join(r[h].ljust(widths[h]) if h != heads[-1] else r[h] for h in heads))
    return "\n".join(line.rstrip() for line in lines)


def write_all(out: TextIO, text: str) -> None:
    """All of `text`, or BrokenPipeError when the reader went away (`| head -1`).

    One big `write` to a pipe whose reader exits midway ends short without an error (CPython's buffered
    writer returns the short count, and TextIO drops it): the rest was lost and the exit status said 0.
    Writing to the file descriptor in a loop sees EPIPE."""
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a StringIO): nothing can end short
        out.write(text)
        return
    out.flush()
    view = memoryview(text.encode(getattr(out, "encoding", None) or "utf-8"))
    while view:
        view = view[os.write(fd, view):]


def ls(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr  # looked up per call, so redirections apply
    filters, notes = filters_from_args(args)
    c = _open(args.source, err)
    if c is None:
        return 1
    try:
        # The facts the page shows once it reads a row's turns.json (tokens, drift, TRL's trained turns), filled
        # in by the page's own code for every row, so the command line and the page say the same.
        all_records = RowFacts().fill(c, c.records, identity=lambda path: path, trained=args.trained)
        if c.run is not None:  # rollouts that failed before producing a folder are rows of the run too
            all_records = all_records + failed_records(c.run)
        rows = apply(all_records, filters)
        if c.run is not None and filters.sort == "path":  # a run's own order: a folderless row sits in its group
            rows.sort(key=lambda r: (r.segment or "", r.policy_version or 0, r.group_id or 0, r.kind != "group",
                                     r.rollout or 0))
        if args.json:
            records, found_notes = with_findings(c, rows)
            if c.run is not None:  # each run row's TRL rows: the turns each trains, its fate (a fate is a row's)
                queued = queued_rows(c.run, rows)
                for rec, doc_row in zip(rows, records, strict=True):
                    got = queued.get(_key(rec))
                    doc_row["rows"] = None if got is None else [
                        {"ordinal": q.ordinal, "turns": None if q.turns is None else list(q.turns), "tokens": q.tokens,
                         "trained_tokens": q.trained_tokens, "fate": q.fate, "step": q.step} for q in got]
                    doc_row["fate"] = None if got is None else brief(got, rec.dropped)
            doc = {"source": c.source, "kind": c.kind, "query": to_query(filters), "total": len(all_records),
                   "shown": len(rows), "records": records, "problems": [str(p) for p in c.problems],
                   "models": model_choices(r.model for r in c.records if r.model),  # each model once, as the page's filter
                   "notes": c.notes + notes + found_notes}
            if c.run is not None:  # a recorded TRL run: what it is, beside its rows
                doc["run"] = {"model": c.run.manifest.model, "versions": c.run.versions(), "live": c.run.live,
                              "segments": [s.start.segment for s in c.run.segments], "trl": c.run.manifest.versions.get("trl")}
            write_all(out, msgspec.json.encode(doc).decode() + "\n")
        else:
            write_all(out, table(rows, run=c.run) + "\n")
            n_bad = sum(not r.valid for r in c.records)
            unlisted = _unlisted(c)
            skipped = f"; {len(unlisted)} problem(s), what they name is skipped:" if unlisted else ""
            print(f"{len(rows)} of {len(all_records)} rows shown; {n_bad} invalid{skipped}", file=err)
            for p in unlisted[:MAX_PROBLEM_LINES]:
                print(f"problem: {p}", file=err)
            if len(unlisted) > MAX_PROBLEM_LINES:
                print(f"problem: ... and {len(unlisted) - MAX_PROBLEM_LINES:,} more (`viewer check` names every one)",
                      file=err)
            if c.run is not None:
                print("mask: tokens TRL's mask would train over the rows it queued; trained: tokens the trainer "
                      "trained (rows it took into a step); fate: the steps its rows were trained at, or why never "
                      "(a rollout whose rows met different fates says both)", file=err)
            for n in c.notes + notes:
                print(f"note: {n}", file=err)
    finally:
        c.close()
    return 0


def _unlisted(c: Collection) -> list[str]:
    """The reader's problems that no INVALID row already says: what it skipped (an index line naming a folder
    outside the run, a run file that is not JSON lines), which a listing of rows alone would hide."""
    shown = [r.path for r in c.records if not r.valid]
    return [str(p) for p in c.problems
            if not any(p.file == f"{path}" or p.file.startswith(f"{path}/" if path else "") for path in shown)]


def with_findings(c: Collection, rows: list[Record]) -> tuple[list[dict], list[str]]:
    """`rows` as JSON objects, each rollout's with its `findings` (rollout_trace/analysis/findings.py; each
    rollout read once). A Hub collection's stay null: that would download every rollout (`find` reads them)."""
    out = [msgspec.to_builtins(r) for r in rows]
    if c.kind == "hub":
        for r in out:
            r["findings"] = None
        return out, ["findings are not computed for a Hub collection by ls: each rollout would be downloaded"]
    from viewer.find.build import index_collection

    shown = {r.path for r in rows if r.kind == "artifact"}
    index = index_collection(Collection(c.source, c.kind, [r for r in c.records if r.path in shown], store=c.store,
                                        run=c.run))
    try:
        found = index.all_findings()
    finally:
        index.close()
    for r in out:
        r["findings"] = ([msgspec.structs.asdict(_FindingRecord(**f.__dict__)) for f in found.get(r["path"], [])]
                         if r["kind"] == "artifact" else None)
    return out, []


class _FindingRecord(msgspec.Struct):
    rule: str
    turn: int
    start: int
    end: int
    sentence: str


def check_collection(source: str, out: TextIO | None = None) -> int:
    """Read every artifact of the collection fully and every group against its rollouts; name each invalid one."""
    out = out or sys.stdout
    c = _open(source, out)
    if c is None:
        return 1
    bad: list[str] = []
    try:
        for r in c.records:
            problems = _check_one(c, r)
            label = r.path or "."
            if problems:
                bad.append(label)
                print(f"INVALID {label}", file=out)
                for p in problems:
                    print(f"  - {p}", file=out)
            else:
                print(f"OK {label}", file=out)
    finally:
        c.close()
    for n in c.notes:
        print(f"note: {n}", file=out)
    print(f"{len(c.records) - len(bad)} of {len(c.records)} valid" + (f"; invalid: {', '.join(bad)}" if bad else ""),
          file=out)
    return 1 if bad or not c.records else 0


def _check_one(c: Collection, r: Record) -> list[str]:
    if r.kind == "group":
        return _group_problems(c, r)
    try:
        c.open(r.path)
        return []
    except ArtifactError as e:
        return [str(p) for p in e.problems]


def _group_problems(c: Collection, r: Record) -> list[str]:
    """Every problem of group.json on its own (k, advantages by TRL's formula, seeds, folders) and against
    its rollouts (rewards and statuses against their summary.json, their task); a rollout's own problems
    are listed on its own row."""
    prefix = f"{r.path}/" if r.path else ""
    mine = {prefix + "group.json", prefix + "task.json"}
    problems = [p for p in c.problems if p.file in mine]
    try:  # the folder itself: a rollout folder a partial listing could not see
        load_group(c.folder(r.path))
    except ArtifactError as e:
        seen = {(p.field, p.message) for p in problems}  # the index already ran the same group.json checks
        problems += [p for p in e.problems if (p.field, p.message) not in seen]
    found = [str(p) for p in problems]
    return found or ([] if r.valid else [r.problem or "invalid"])


def check_source(source: str, single, out: TextIO | None = None) -> int:
    """`viewer check`: a run is checked whole (viewer/cli/run_check.py), a collection row by row; a single artifact
    goes to `single` exactly as before (viewer/source_kinds.py decides which)."""
    from viewer.source_kinds import classify

    from .run_check import check_run

    try:
        kind = classify(source)
    except ArtifactError:
        return single(source)  # the single-artifact reader's messages for what cannot be opened
    if kind == "run":
        return check_run(source, out)
    if kind == "collection":
        return check_collection(source, out)
    return single(source)
