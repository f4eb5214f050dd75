"""`python -m viewer compare-runs A B [--task ID] [--json]`: two recorded runs' numbers per policy version side by
side, the tasks both ran, and with `--task` (a task id of A) that task's rollouts in both (viewer/run_compare.py).

Exit status: 0 compared, 1 a source is not a recorded run or cannot be read (named), 2 a bad option.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import msgspec

from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.run import Run, open_run

from ..numbers import number, percent
from ..run_compare import RunCompare, by_version, compare
from ..run_stats import version_stats
from .collection import shown, write_all


def add_compare_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="run A: a recorded run's folder, .zip, Hub dataset id or bundled example")
    p.add_argument("other", help="run B, named the same ways")
    p.add_argument("--task", default=None, help="a task id of run A (as the listing names it): its rollouts in both")
    p.add_argument("--json", action="store_true", help="print one JSON document (RunCompare, with `by_version`)")


def _open(source: str, err: TextIO) -> Run | None:
    try:
        return open_run(source)
    except ArtifactError as e:
        print(f"INVALID {shown(source)}: not a recorded run that can be read", file=err)
        for p in e.problems[:10]:
            print(f"  - {p}", file=err)
        return None


def text(c: RunCompare) -> str:
    lines = [f"A: {c.a.src} ({c.a.model}): {len(c.a.versions)} versions, {c.a.rollouts} rollouts, reward mean "
             f"{number(c.a.reward_mean, '.3f')}, pass rate {percent(c.a.pass_rate)}",
             f"B: {c.b.src} ({c.b.model}): {len(c.b.versions)} versions, {c.b.rollouts} rollouts, reward mean "
             f"{number(c.b.reward_mean, '.3f')}, pass rate {percent(c.b.pass_rate)}",
             "version  rollouts A/B  reward mean A/B  pass rate A/B  zero-spread groups A/B  trained tokens A/B"]
    for p in by_version(c):
        a, b = p.a, p.b
        lines.append(f"v{p.version:<7} {a.rollouts if a else '-'}/{b.rollouts if b else '-'}  "
                     f"{number(a.reward_mean, '.3f') if a else '-'}/{number(b.reward_mean, '.3f') if b else '-'}  "
                     f"{percent(a.pass_rate) if a else '-'}/{percent(b.pass_rate) if b else '-'}  "
                     f"{a.zero_spread if a else '-'}/{b.zero_spread if b else '-'}  "
                     f"{a.trained_tokens if a else '-'}/{b.trained_tokens if b else '-'}")
    lines.append(f"{len(c.tasks)} task(s) in both runs" + (":" if c.tasks else ""))
    lines += [f"  {t.task_id}  {t.title[:80]}  (A: {t.a_versions} versions, B: {t.b_versions}"
              + (", matched by title" if t.by == "title" else "") + ")" for t in c.tasks[:20]]
    for name, track in (("A", c.a_task), ("B", c.b_task)):
        if track is None:
            continue
        cut = f" (its latest {len(track.groups)} of {track.group_count} groups)" \
            if track.group_count > len(track.groups) else ""
        lines.append(f"task in {name}: {track.title[:80]}{cut}")
        for g in track.groups:
            rs = ", ".join(f"r{r.rollout} {number(r.reward)} {r.status}"
                           f"{' passed' if r.passed else ''}" for r in g.rollouts)
            lines.append(f"  v{g.version} g{g.group_id}: {rs}")
    lines += [f"note: {n}" for n in c.notes]
    return "\n".join(lines) + "\n"


def compare_runs(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    a = _open(args.source, err)
    b = _open(args.other, err) if a is not None else None
    if a is None or b is None:
        return 1
    c = compare(args.source, a, version_stats(a), args.other, b, version_stats(b), args.task)
    if args.json:
        doc = msgspec.to_builtins(c) | {"by_version": msgspec.to_builtins(by_version(c))}
        write_all(out, msgspec.json.encode(doc).decode() + "\n")
    else:
        write_all(out, text(c))
    return 0
