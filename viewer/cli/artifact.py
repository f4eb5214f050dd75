"""`viewer check` and `viewer export` of one rollout artifact: validate it and print what it holds, or write it
as one self-contained HTML file (of the rollout, or of one turn). Messages, never tracebacks."""

from __future__ import annotations

import sys
from typing import TextIO

from rollout_trace.analysis.report import fmt_reward, report
from rollout_trace.analysis.trainer_view import summary
from rollout_trace.analysis.training import TRL, TRL_VERSION, record, training
from rollout_trace.artifact import Artifact, ArtifactError, open_artifact

from .collection import shown
from .exits import CANNOT_WRITE, INVALID, OK, USAGE


def _open(source: str, out: TextIO) -> Artifact | None:
    """The validated artifact, or None after printing every problem."""
    try:
        return open_artifact(source)
    except ArtifactError as e:
        print(f"INVALID {shown(source)}", file=out)
        for p in e.problems:
            print(f"  - {p}", file=out)
        return None


def check(source: str, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up per call, so redirections apply
    a = _open(source, out)
    if a is None:
        return INVALID
    tr = training(a)
    r = report(a, tr)
    rc = r.reward
    reward_line = f"{fmt_reward(rc.recorded)} (verifier {fmt_reward(a.summary.env_reward)}; "
    reward_line += f"{rc.by} agree{'' if rc.by.endswith('s') else 's'})" if rc.matches else \
        f"{rc.by} give{'' if rc.by.endswith('s') else 's'} {fmt_reward(rc.recomputed)}: MISMATCH)"
    # A recorded run's rollout has no capture script behind its turns.json: no count of that script's rule
    script = "" if a.summary.run is not None else f" (the capture script's rule: {r.seed_trained_turns})"
    lines = [
        f"OK {source}",
        f"  model        {r.model}",
        f"  turns        {r.turns} agent turns, {r.trained_turns} trained by {r.trained_by}{script}, "
        f"of {r.captured_calls} captured calls",
        f"  training     {tr.rule}",
        f"  tokens       {r.prompt_tokens:,} prompt + {r.output_tokens:,} output ({r.trained_tokens:,} trained by {TRL}); "
        f"longest context {r.max_context:,}",
        f"  continuity   {r.continuity.text}",
        f"  reward       {reward_line}",
    ]
    if a.summary.produced_by:
        lines.append(f"  produced by  {a.summary.produced_by}")
    for name, part in a.rescores.items():
        s = summary(a, part, tr)
        mean, top = (("n/a" if x is None else f"{x:.2g}") for x in (s["mean_abs_log_ratio"], s["max_abs_log_ratio"]))
        lines.append(f"  rescore      {name}: mean |log ratio| {mean}, max {top}, "
                     f"{s['outside_clip']} of {s['tokens']} tokens outside [0.8, 1.2]")
    recorded = a.summary.trl_training
    if recorded is not None and recorded.trl == TRL_VERSION and recorded != record(tr):
        lines.append(f"  MISMATCH     summary.json's trl_training says {recorded.trained_turns} trained turns, "
                     f"{recorded.trained_tokens:,} tokens, {recorded.rows} rows; {TRL} gives {tr.trained_turns}, "
                     f"{tr.total_trained_tokens:,}, {len(tr.rows)}")
    print("\n".join(lines), file=out)
    if a.notices:
        print("notices:", file=out)
        for n in a.notices:
            print(f"  - {n}", file=out)
    return OK


def export(source: str, out_path: str, turn: int | None, tokenizer: str | None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    from ..export import ExportRefused, size_label, write_to
    from ..rollout import Rollout

    a = _open(source, out)
    if a is None:
        return INVALID
    if turn is not None and not 0 <= turn < len(a.turns):
        print(f"ERROR --turn {turn}: this rollout has turns 0..{len(a.turns) - 1}", file=out)
        return USAGE
    try:
        got = write_to(Rollout.load(a, tokenizer), out_path, turn=turn)
    except ExportRefused as e:
        print(f"ERROR {source}: {e} (--turn N)", file=out)
        return USAGE
    except OSError as e:
        print(f"ERROR cannot write {out_path}: {e.strerror or type(e).__name__}", file=sys.stderr)
        return CANNOT_WRITE
    said = sys.stderr if out_path == "-" else out  # the page itself is on standard output
    print(f"wrote {'standard output' if out_path == '-' else out_path} ({size_label(got.bytes)})", file=said)
    if got.note:
        print(f"note: {got.note}", file=said)
    return OK
