"""Command line: `python -m viewer check SOURCE`, `export SOURCE -o out.html`, `rescore SOURCE --model M`.

`check` validates an artifact and prints what it holds, for pipelines. `export` writes a
self-contained HTML file of the rollout (or of one turn with --turn). `rescore` scores every output
token with a training model as TRL's trainer does and stores the result in the artifact
(viewer/rescore_cli.py). Messages, never tracebacks. Exit status, every command:
    0  done            1  the artifact is invalid (every problem printed, one a line)
    2  usage error     3  unexpected error (a bug: the message names the exception)
    4  re-scoring failed (the model cannot be loaded or cannot score these tokens; the message says why)
    130 interrupted
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from artifact import Artifact, ArtifactError, open_artifact

from .analysis.report import fmt_reward, report
from .analysis.trainer_view import summary


def _open(source: str, out: TextIO) -> Artifact | None:
    """The validated artifact, or None after printing every problem."""
    try:
        return open_artifact(source)
    except ArtifactError as e:
        print(f"INVALID {source}", file=out)
        for p in e.problems:
            print(f"  - {p}", file=out)
        return None


def check(source: str, out: TextIO = sys.stdout) -> int:
    a = _open(source, out)
    if a is None:
        return 1
    r = report(a)
    rc = r.reward
    reward_line = f"{fmt_reward(rc.recorded)} (verifier {fmt_reward(a.summary.env_reward)}; "
    reward_line += "recipe agrees)" if rc.matches else f"recipe gives {fmt_reward(rc.recomputed)}: MISMATCH)"
    lines = [
        f"OK {source}",
        f"  model        {r.model}",
        f"  turns        {r.turns} agent turns, {r.trained_turns} trained, of {r.captured_calls} captured calls",
        f"  tokens       {r.prompt_tokens:,} prompt + {r.output_tokens:,} output ({r.trained_tokens:,} trained); "
        f"longest context {r.max_context:,}",
        f"  continuity   {r.continuity}",
        f"  reward       {reward_line}",
    ]
    if a.summary.produced_by:
        lines.append(f"  produced by  {a.summary.produced_by}")
    for name, part in a.rescores.items():
        s = summary(a, part)
        mean, top = (("n/a" if x is None else f"{x:.2g}") for x in (s["mean_abs_log_ratio"], s["max_abs_log_ratio"]))
        lines.append(f"  rescore      {name}: mean |log ratio| {mean}, max {top}, "
                     f"{s['outside_clip']} of {s['tokens']} tokens outside [0.8, 1.2]")
    print("\n".join(lines), file=out)
    if a.notices:
        print("notices:", file=out)
        for n in a.notices:
            print(f"  - {n}", file=out)
    return 0


def export(source: str, out_path: str, turn: int | None, tokenizer: str | None, out: TextIO = sys.stdout) -> int:
    from pathlib import Path

    from .export import export_html
    from .rollout import Rollout

    a = _open(source, out)
    if a is None:
        return 1
    if turn is not None and not 0 <= turn < len(a.turns):
        print(f"ERROR --turn {turn}: this rollout has turns 0..{len(a.turns) - 1}", file=out)
        return 2
    page = export_html(Rollout.load(a, tokenizer), turn)
    Path(out_path).write_text(page, encoding="utf-8")
    print(f"wrote {out_path} ({len(page.encode()) / 1e6:.1f} MB)", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m viewer", description="Rollout artifact tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate an artifact and print a short summary")
    p.add_argument("source", help="a folder, a .zip, a Hub dataset id (org/name[@rev][:sub/folder]) or a bundled example")
    e = sub.add_parser("export", help="write a self-contained HTML file of the rollout")
    e.add_argument("source")
    e.add_argument("-o", "--output", required=True, help="the .html file to write")
    e.add_argument("--turn", type=int, default=None, help="export only this turn (with its full context)")
    e.add_argument("--tokenizer", default=None, help="tokenizer folder or tokenizer.json when the artifact has none")
    from .rescore_cli import add_parser as add_rescore, run as run_rescore

    add_rescore(sub)
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            return check(args.source)
        if args.command == "export":
            return export(args.source, args.output, args.turn, args.tokenizer)
        if args.command == "rescore":
            return run_rescore(args)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # the promise is a message, not a traceback
        print(f"ERROR {args.source}: unexpected {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    return 2
