"""`python -m viewer check RUN`: validate a recorded TRL run, every row of it, and what joins them.

Beyond what reading the run finds (rollout_trace/artifact/run_table.py: shards that cannot be read, columns of
another type, rollouts recorded twice, names that do not fit their place, text that is not UTF-8) and reading each
rollout's files (every file, the trl part: rollout_trace/artifact/read.py), it checks that:
- each row and its files agree: the files say the same segment, version, group id, rollout id, reward, advantage
  and rows as the row's columns; a group has one row per rollout, as many as TRL's num_generations;
- the rows TRL queued are what TRL's own functions build from the rollout's trace.json
  (rollout_trace/analysis/training.py), token for token, and the turns the index line says each row trains are
  the turns its arrays train (a turn's fate is its row's: viewer/fate.py);
- the consumption log names only recorded rows, each once, with the same fingerprint, trained steps
  in queue order, and a line for every row the trainer says it took; a row the trainer trained that has
  nothing recorded behind it is named with its step, group and version (the recorder lost it);
- and it says what the recorder itself reported: write errors and the first failure (segments' end
  files), a recorder that could not start, rollouts recorded without their artifact (`problem`).
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import TextIO

import numpy as np

from rollout_trace.analysis.training import TRL_VERSION, queued_rows_train, training
from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.problems import Problem
from rollout_trace.artifact.run import Run, RunRow, open_run


def _rollout_problems(run: Run, row: RunRow) -> list[Problem]:
    assert row.path is not None
    try:
        a = run.open(row.path)
    except ArtifactError as e:
        return [Problem(f"{row.path}/{p.file}", p.message, p.turn, p.field, p.expected, p.found) for p in e.problems]
    out: list[Problem] = []

    def bad(file: str, message: str, **kw) -> None:
        out.append(Problem(f"{row.path}/{file}", message, **kw))

    info, part = a.summary.run, a.trl
    if info is None or part is None:
        bad("summary.json", "a recorded rollout carries its run extra and its trl part", found="none")
        return out
    mine = (row.segment, row.policy_version, row.group_id, row.rollout, row.rollout_id, row.advantage, row.reward)
    theirs = (info.segment, info.policy_version, info.group_id, info.rollout_index, info.rollout_id, info.advantage,
              info.reward)
    if mine != theirs:
        bad("summary.json", "names another rollout than its index line", field="run", expected=str(mine), found=str(theirs))
    entry_rows = _refs(run).get((row.segment, row.group_id, row.rollout), [])
    if entry_rows != [(r.ordinal, r.fingerprint) for r in part.sample.rows]:
        bad("trl/sample.json", "its rows are not the run row's", field="rows", expected=str(entry_rows[:4]),
            found=str([(r.ordinal, r.fingerprint) for r in part.sample.rows][:4]))
    named = [q.turns for q in row.queued]
    trains = queued_rows_train(a) or []
    if any(t is not None for t in named) and named != trains:
        bad("trl/rows.safetensors", "the run row names other turns for its rows than the rows train",
            field="row_turns", expected=str(trains[:4]), found=str(named[:4]))
    if part.sample.trl == TRL_VERSION and a.trace is not None:
        out += _rows_against_trl(row.path, a, part)
    return out


def _refs(run: Run) -> dict[tuple[str, int, int], list[tuple[int, str]]]:
    """Each rollout's TRL rows as its row names them: (ordinal, fingerprint), by (segment, group_id, rollout)."""
    got = run.__dict__.get("_check_refs")
    if got is None:
        t = run.table
        cols = t.take(np.arange(len(t)), ["segment", "group_id", "rollout", "row_ordinal", "row_fingerprint"])
        got = run.__dict__["_check_refs"] = {
            (x["segment"], x["group_id"], x["rollout"]): list(zip(x["row_ordinal"], x["row_fingerprint"], strict=True))
            for x in cols.to_pylist()}
    return got


def _rows_against_trl(path: str, a, part) -> list[Problem]:
    """The rows TRL queued equal the rows TRL's own functions build from trace.json."""
    tr = training(a)
    if tr.error:
        return [Problem(f"{path}/trace.json", f"TRL refuses the recorded trace: {tr.error}")]
    if len(tr.rows) != part.n_rows:
        return [Problem(f"{path}/trl/rows.safetensors", "TRL builds another number of rows from trace.json",
                        expected=str(len(tr.rows)), found=str(part.n_rows))]
    for i, ours in enumerate(tr.rows):
        ids, mask, logps = part.row(i)
        if not (np.array_equal(ours.input_ids, ids) and np.array_equal(ours.completion_mask, mask)
                and np.array_equal(ours.old_log_probs.astype(np.float32), logps)):
            return [Problem(f"{path}/trl/rows.safetensors", "row differs from what TRL builds from trace.json",
                            field=f"row {i}", expected=f"{ours.input_ids.size} tokens, {ours.n_trained} trained",
                            found=f"{ids.size} tokens, {int(mask.sum())} trained")]
    return []


def _group_problems(run: Run, path: str, rows: list[RunRow]) -> list[Problem]:
    """A group has one row per rollout 0..K-1, K being TRL's num_generations of its segment."""
    first = rows[0]
    want_k = next((s.start.num_generations for s in run.segments if s.start.segment == first.segment), len(rows))
    indices = sorted(r.rollout for r in rows)
    if indices != list(range(want_k)):
        return [Problem(path, "one row per rollout of the group, as many as TRL's num_generations", field="rollout",
                        expected=f"0..{want_k - 1}", found=", ".join(map(str, indices[:12])))]
    return []


def consumption_problems(run: Run) -> list[Problem]:
    recorded = {(k[0], o): f for k, refs in _refs(run).items() for o, f in refs}
    seen = Counter((c.segment, c.ordinal) for c in run.consumed)
    out = []
    for c in run.consumed:
        file = f"consumed/{c.segment}"
        fp = recorded.get((c.segment, c.ordinal))
        if fp is None and c.fate == "trained":
            out.append(Problem(file, f"a row the trainer trained at step {c.step} has nothing recorded behind it (no "
                               f"rollout row: the recorder lost group {c.group_id} at policy version {c.model_version})",
                               field=f"ordinal {c.ordinal}"))
        elif fp is None:
            out.append(Problem(file, f"a row the trainer took ({c.fate}) that the worker did not record (group "
                               f"{c.group_id}, policy version {c.model_version})", field=f"ordinal {c.ordinal}"))
        elif fp != c.fingerprint:
            out.append(Problem(file, "the row the trainer took is not the row the worker recorded",
                               field=f"ordinal {c.ordinal}", expected=fp, found=c.fingerprint))
        if seen[(c.segment, c.ordinal)] > 1:
            out.append(Problem(file, "a row has one fate", field=f"ordinal {c.ordinal}", found=f"{seen[(c.segment, c.ordinal)]} rows"))
            seen[(c.segment, c.ordinal)] = 1  # say it once
    for s in run.segments:
        mine = sorted((c for c in run.consumed if c.segment == s.start.segment), key=lambda c: c.ordinal)
        steps = [c.step for c in mine if c.fate == "trained" and c.step is not None]
        if steps != sorted(steps):
            out.append(Problem(f"consumed/{s.start.segment}", "rows are trained in the order they were queued",
                               field="step", expected="non-decreasing steps by ordinal", found=str(steps[:12])))
        if s.consumption is not None:
            missing = set(range(s.consumption.taken)) - {c.ordinal for c in mine}
            if missing:
                out.append(Problem(f"consumed/{s.start.segment}", "every row the trainer took has a fate",
                                   expected=f"{s.consumption.taken} rows", found=f"{len(missing)} without one, e.g. "
                                   f"ordinal {min(missing)}"))
    return out


def recorder_notes(run: Run) -> list[str]:
    """What the recorder said of itself: its end files' errors, and the rollouts it recorded without an artifact."""
    notes = []
    for s in run.segments:
        e, seg = s.end, s.start.segment
        if e is None:
            continue
        if e.start_error:
            notes.append(f"segment {seg}: the recorder could not start, nothing was recorded: {e.start_error}")
        if e.write_errors or e.groups_lost:
            notes.append(f"segment {seg}: {e.write_errors} group(s) could not be written and {e.groups_lost} were "
                         f"still queued when the writer had to stop" + (f"; first: {e.first_error}" if e.first_error else ""))
        elif e.first_error:
            notes.append(f"segment {seg}: the recorder failed: {e.first_error}")
    misfits = [r for r in run.rows if r.problem]
    if misfits:
        r = misfits[0]
        notes.append(f"{len(misfits)} rollout(s) recorded without all of their files (TRL's rows, reward and advantage "
                     f"kept): e.g. {r.group} rollout {r.rollout}: {r.problem}")
    return notes


def check_run(source: str, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        run = open_run(source)
    except ArtifactError as e:
        print(f"INVALID {source}", file=out)
        for p in e.problems:
            print(f"  - {p}", file=out)
        return 1
    try:
        bad = _report(run, out)
    finally:
        run.close()
    return 1 if bad else 0


def _report(run: Run, out: TextIO) -> int:
    bad = 0

    def report(label: str, problems: list[Problem]) -> None:
        nonlocal bad
        if problems:
            bad += 1
            print(f"INVALID {label}", file=out)
            for p in problems:
                print(f"  - {p}", file=out)
        else:
            print(f"OK {label}", file=out)

    report("run.json, segments, rollouts and consumption tables", list(run.problems))
    by_group: dict[str, list[RunRow]] = {}
    for r in run.rows:
        by_group.setdefault(r.group, []).append(r)
    for path, rows in by_group.items():
        problems = _group_problems(run, path, rows)
        for r in rows:
            if r.path is not None:
                problems += _rollout_problems(run, r)
        report(path, problems)
    report("consumption log", consumption_problems(run))
    for n in run.notes + recorder_notes(run):
        print(f"note: {n}", file=out)
    recorded = {(k[0], o) for k, refs in _refs(run).items() for o, _ in refs}
    lost = [c for c in run.consumed if c.fate == "trained" and (c.segment, c.ordinal) not in recorded]
    if lost:
        print(f"{len(lost)} trained row(s) have nothing recorded behind them, at step(s) "
              f"{', '.join(str(s) for s in sorted({c.step for c in lost if c.step is not None}))}", file=out)
    whole = sum(bool(r.queued) and all(q.fate == "trained" for q in r.queued) for r in run.rows)
    partly = sum(r.trained_step is not None for r in run.rows) - whole
    queued = [q for r in run.rows for q in r.queued]
    print(f"{len(run.groups)} groups, {len(run.rows)} rollouts at policy versions {_span(run.versions())} in "
          f"{len(run.segments)} segment(s); {sum(q.fate == 'trained' for q in queued)} of {len(queued)} training rows "
          f"trained: {whole} rollouts whole" + (f", {partly} partly (rows of different fates)" if partly else "") + "; "
          + ("all valid" if not bad else f"{bad} invalid"), file=out)
    return bad


def _span(versions: list[int]) -> str:
    return f"{versions[0]}..{versions[-1]}" if versions else "none"
