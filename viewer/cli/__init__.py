"""The command line, `python -m viewer COMMAND`: `main` here reads the arguments and hands each command to its
module. `check SOURCE` (an artifact here, a collection in viewer/cli/collection.py, a recorded run in
viewer/cli/run_check.py), `export SOURCE -o out.html` and `publish RUN org/name` (here), `ls SOURCE` for
collections (viewer/cli/collection.py), `find SOURCE PATTERN` (viewer/cli/find.py), `compare-runs RUN OTHER`
(viewer/cli/compare.py), `rescore SOURCE --model M` (viewer/cli/rescore.py) and `convert OLD NEW`
(viewer/cli/convert.py). Of the viewer, only viewer/__main__.py imports this package; it imports the pages, never the app's
wiring (tests/test_layers.py).

`check` validates an artifact and prints what it holds, for pipelines. `export` writes a
self-contained HTML file of the rollout (or of one turn with --turn). `rescore` scores every output
token with a training model as TRL's trainer does and stores the result in the artifact
(viewer/cli/rescore.py). Messages, never tracebacks. A zip is unpacked into a temporary folder that
is deleted before the command ends.

Exit status (also in `--help`):
    0    valid (check) / written (export, rescore)
    1    the artifact is invalid or cannot be read: every problem printed, one a line, naming the
         file, turn and field (unreadable files, bad zips, too-deep JSON included)
    2    usage error (unknown option, --turn outside the rollout)
    4    the output cannot be written (export -o into a missing folder, no permission, disk full)
    5    re-scoring failed (the model cannot be loaded or cannot score these tokens; the message says why)
    130  interrupted (Ctrl-C)
    141  the reader of our output went away (`| head -1`): nothing more is printed
    3    an internal error (a bug in this program): the message says what failed
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

import crash_log
from rollout_trace.analysis.report import fmt_reward, report
from rollout_trace.analysis.trainer_view import summary
from rollout_trace.analysis.training import TRL, TRL_VERSION, record, training
from rollout_trace.artifact import Artifact, ArtifactError, open_artifact

from ..memory_pool import use_returning_pool
from .collection import add_ls_arguments, check_source, ls, shown

OK, INVALID, USAGE, INTERNAL, CANNOT_WRITE, INTERRUPTED, BROKEN_PIPE = 0, 1, 2, 3, 4, 130, 141
EXIT_CODES = """exit status:
  0    valid (check) / written (export)
  1    the artifact is invalid or cannot be read (every problem printed)
  2    usage error
  4    the output file cannot be written
  5    re-scoring failed
  130  interrupted
  141  the output pipe was closed (e.g. | head -1)
  3    internal error (a bug)"""


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


def publish(source: str, repo: str, private: bool) -> int:
    """`viewer publish`: 0 when uploaded, 1 naming what stopped it (never the token)."""
    from huggingface_hub.errors import HfHubHTTPError

    from rollout_trace.artifact.run_publish import publish as upload

    try:
        n = upload(Path(source), repo, private=private or None)
    except ArtifactError as e:
        print(f"ERROR {shown(source)}: not a run this tool can publish", file=sys.stderr)
        for p in e.problems:
            print(f"  - {p}", file=sys.stderr)
        return INVALID
    except (HfHubHTTPError, OSError, ValueError) as e:
        print(f"ERROR {shown(repo)}: the upload failed: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}",
              file=sys.stderr)
        return INVALID
    print(f"uploaded {n} files to https://huggingface.co/datasets/{repo}: `python app.py` then `?src={repo}` opens it; "
          f"datasets.load_dataset({repo!r}) loads its rollouts")
    return OK


def main(argv: list[str] | None = None) -> int:
    use_returning_pool()
    parser = argparse.ArgumentParser(prog="python -m viewer", description="Rollout artifact tools.",
                                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate an artifact and print a short summary", epilog=EXIT_CODES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", help="a folder, a .zip, a Hub dataset id (org/name[@rev][:sub/folder]) or a bundled example")
    e = sub.add_parser("export", help="write a self-contained HTML file of the rollout", epilog=EXIT_CODES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("source")
    e.add_argument("-o", "--output", required=True, help="the .html file to write (replaced atomically); '-' for standard output; a FIFO or a device is "
                   "written through, as a shell redirection would")
    e.add_argument("--turn", type=int, default=None, help="export only this turn (with its full context)")
    e.add_argument("--tokenizer", default=None, help="tokenizer folder or tokenizer.json when the artifact has none")
    add_ls_arguments(sub.add_parser("ls", help="list a collection (folder, .zip or Hub dataset) from its small files"))
    from .find import add_find_arguments
    from .find import find as run_find

    add_find_arguments(sub.add_parser("find", help="search the generated text, tool calls and tool outputs of "
                                      "every rollout of a source"))
    from .compare import add_compare_arguments, compare_runs

    add_compare_arguments(sub.add_parser("compare-runs", help="two recorded runs' numbers per version side by side, "
                                         "the tasks both ran and one task in both"))
    from .rescore import add_parser as add_rescore
    from .rescore import run as run_rescore

    add_rescore(sub)
    c = sub.add_parser("convert", help="convert a run recorded in the folder format (format 1) into format 2 "
                       "(Parquet shards)", epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("source", help="the format-1 run: a folder or a .zip of one (only read)")
    c.add_argument("new", help="a new folder for the format-2 run (built aside, renamed into place)")
    pub = sub.add_parser("publish", help="upload a recorded run to a Hub dataset repo (its tables as Parquet, a card "
                         "declaring them: Data Studio, `datasets` and DuckDB read it)", epilog=EXIT_CODES,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    pub.add_argument("source", help="the run folder")
    pub.add_argument("repo", help="the dataset repo, org/name (made when missing; the token is huggingface_hub's: "
                     "HF_TOKEN or `hf auth login`)")
    pub.add_argument("--private", action="store_true", help="make a new repo private")
    args = parser.parse_args(argv)
    if not str(getattr(args, "source", "x")).strip():  # "" would be the working folder
        print(f"ERROR {args.command}: the source is empty: name a folder, a .zip, a Hub dataset id or a bundled "
              "example", file=sys.stderr)
        return USAGE
    try:
        if args.command == "check":
            code = check_source(args.source, check)
        elif args.command == "ls":
            code = ls(args)
        elif args.command == "find":
            code = run_find(args)
        elif args.command == "compare-runs":
            code = compare_runs(args)
        elif args.command == "export":
            code = export(args.source, args.output, args.turn, args.tokenizer)
        elif args.command == "rescore":
            code = run_rescore(args)
        elif args.command == "convert":
            from .convert import main as run_convert

            code = run_convert(args.source, args.new)
        elif args.command == "publish":
            code = publish(args.source, args.repo, args.private)
        else:
            return USAGE
        sys.stdout.flush()  # here, not at exit, so a closed pipe is caught below
        return code
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        # the reader stopped reading: point stdout at /dev/null so the interpreter's final flush
        # does not raise again, and say nothing (there is nobody to read it)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE
    except Exception as e:  # a bug: still a message, not a traceback
        details = crash_log.unexpected(f"viewer {args.command} {args.source[:200]}")
        print(f"ERROR {shown(args.source)}: internal error (a bug in the viewer), {type(e).__name__}: {str(e)[:300]}"
              f"{details}", file=sys.stderr)
        return INTERNAL
