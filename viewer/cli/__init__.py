"""The command line, `python -m viewer COMMAND`: `main` here reads the arguments and hands each command to its
module. `check SOURCE` (an artifact in viewer/cli/artifact.py, a collection in viewer/cli/collection.py, a recorded run in
viewer/cli/run_check.py), `export SOURCE -o out.html` (viewer/cli/artifact.py), `publish RUN org/name` (viewer/cli/publish.py), `ls SOURCE` for
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

import crash_log

from ..memory_pool import use_returning_pool
from .artifact import check, export
from .collection import add_ls_arguments, check_source, ls, shown
from .exits import BROKEN_PIPE, EXIT_CODES, INTERNAL, INTERRUPTED, USAGE
from .publish import publish


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
