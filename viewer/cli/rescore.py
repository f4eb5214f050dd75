"""`python -m viewer rescore SOURCE --model M`: score every output token as TRL's trainer would, store it, report.

Where the part is written: into SOURCE itself when it is a folder on disk (a bundled example
included); a zip or a Hub artifact is copied to `-o OUT` first, since writing into a cache or a
temporary folder would be lost. Progress goes to stderr; the report to stdout, human-readable or,
with `--json`, exactly one JSON object (`{"ok": false, "error": ..., "exit_code": n}` on failure).
Exit codes are those of viewer/cli/__init__.py.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path
from typing import TextIO

import crash_log
from rollout_trace.analysis.trainer_view import EPS_CHOICES, summary
from rollout_trace.analysis.training import training
from rollout_trace.artifact import Artifact, ArtifactError, bundled_examples, load_artifact, open_artifact
from rollout_trace.artifact.errors import RolloutTraceError
from rollout_trace.artifact.run_format import MANIFEST, RESCORED_DIR, Rescored, encode_line
from rollout_trace.artifact.schema import TOKENIZER_DIR

EXIT_INVALID, EXIT_USAGE, EXIT_UNEXPECTED, EXIT_RESCORE = 1, 2, 3, 5


class UsageError(RolloutTraceError, ValueError):
    pass


def add_parser(sub) -> None:
    r = sub.add_parser("rescore", help="score every output token with a training model, as TRL's trainer does")
    r.add_argument("source", help="a folder, a .zip, a Hub dataset id or a bundled example")
    m = r.add_mutually_exclusive_group(required=True)
    m.add_argument("--model", help="the training model: a folder or a Hub id of a causal LM")
    m.add_argument("--local-model", action="store_true",
                   help="the offline SmolLM2-135M-Instruct (`scripts/local_model.sh dir`; converted first if missing)")
    r.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    r.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    r.add_argument("--temperature", type=float, default=None,
                   help="divide the logits by this (default: what the rollout was sampled at, else 1.0)")
    r.add_argument("--top-k", type=int, default=5, help="alternatives kept per token (default 5)")
    r.add_argument("-o", "--output", default=None,
                   help="write a copy of the artifact with the new part here (required for a zip or Hub source)")
    r.add_argument("--json", action="store_true", help="print exactly one JSON object")


def _is_local_folder(source: str) -> bool:
    return Path(source).is_dir() or source in bundled_examples()


def _target(source: str, a: Artifact, output: str | None) -> Artifact:
    """The artifact to write into: SOURCE itself, or a fresh copy at OUTPUT."""
    if output is None:
        if not _is_local_folder(source):
            raise UsageError(f"{source} is not a folder on disk: pass -o OUT to write a copy with the scores")
        return a
    out = Path(output)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"-o {out} already exists and is not empty: choose another, or re-score it as SOURCE")
    if out.exists():
        out.rmdir()
    assert a.root is not None  # read from a folder, never an upload
    shutil.copytree(a.root, out)
    tok = a.tokenizer_dir
    if tok is not None and not (out / TOKENIZER_DIR).exists() and not tok.resolve().is_relative_to(a.root.resolve()):
        shutil.copytree(tok, out / TOKENIZER_DIR)  # a run's rollout renders with its run's tokenizer: the copy keeps it
    return load_artifact(out, source=str(out))


def _fmt(x: float | None, spec: str = ".2g") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def human(s: dict, where: Path, out: TextIO) -> None:
    lo, hi = EPS_CHOICES[0]
    _, hi2 = EPS_CHOICES[1]
    lines = [
        f"rescored with {s['model']} ({s['dtype']}, {s['device']}, temperature {s['temperature']:g} from "
        f"{s['temperature_source']}) in {s['duration_s']:.1f} s",
        f"  wrote        {where}",
        f"  tokens       {s['tokens']:,} output tokens scored ({s['trained_tokens']:,} trained), "
        f"{s['with_engine_logprob']:,} with an engine logprob",
        f"  log ratio    mean |trainer - engine| {_fmt(s['mean_abs_log_ratio'])}, max {_fmt(s['max_abs_log_ratio'])}",
        f"  k3 KL        mean {_fmt(s['mean_kl_k3'])}",
        f"  entropy      mean {_fmt(s['mean_entropy'], '.3f')} nats; {s['top1']:,} of {s['tokens']:,} tokens are "
        "the trainer's top-1",
        f"  outside clip {s['outside_clip']} tokens outside [{1 - lo:g}, {1 + hi:g}], "
        f"{s['outside_clip_dapo']} outside [{1 - lo:g}, {1 + hi2:g}]",
    ]
    for t in s["turns"]:
        how = f"row {t['row']}" if t["row"] is not None else "alone"
        lines.append(f"  turn {t['turn']:<3}     {'trained' if t['trained'] else 'untrained'}, {how}: {t['tokens']} tokens, "
                     f"max |log ratio| {_fmt(t['max_abs_log_ratio'])}, mean k3 {_fmt(t['mean_kl_k3'])}, "
                     f"entropy {_fmt(t['mean_entropy'], '.3f')}, {t['outside_clip']} outside")
    print("\n".join(lines), file=out)


def _rescore(args: argparse.Namespace, say) -> tuple[dict, Path]:
    from rescore import RescoreConfig, local_model, rescore

    if args.top_k < 0:
        raise UsageError(f"--top-k {args.top_k}: give 0 or more")
    a = _target(args.source, open_artifact(args.source), args.output)
    model, label = (local_model(say) if args.local_model else (args.model, None))
    cfg = RescoreConfig(model, args.dtype, args.device, args.temperature, args.top_k,
                        local_files_only=args.local_model, label=label,
                        slug="smollm2-135m-instruct" if args.local_model else None)
    part = rescore(a, cfg, progress=say)
    assert a.root is not None  # _target read it from a folder
    s = summary(a, part, training(a))
    note_in_run(a, part.name, s)
    return s, a.root / "rescore" / part.name


def note_in_run(a: Artifact, part: str, s: dict) -> Path | None:
    """A rollout of a recorded run, re-scored where it sits in the run: one line in the run's rescored/ log, so
    the run page shows the trainer mismatch per version without opening a folder. Returns the log written."""
    info = a.summary.run
    if info is None or a.root is None:
        return None
    run = a.root.resolve().parent.parent.parent  # <run>/groups/<group>/<rollout>
    if not (run / MANIFEST).is_file():
        return None  # a copy (-o OUT) is no longer in its run
    line = Rescored(segment=info.segment, group_id=info.group_id, rollout=info.rollout_index, part=part,
                    tokens=s["tokens"], with_engine=s["with_engine_logprob"], max_abs_log_ratio=s["max_abs_log_ratio"],
                    outside_clip=s["outside_clip"],
                    written_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    log = run / RESCORED_DIR / f"{info.segment}.jsonl"
    log.parent.mkdir(exist_ok=True)
    with log.open("ab") as f:  # one whole line per write: a reader skips a last line cut short
        f.write(encode_line(line))
    return log


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    from rescore import RescoreError

    out, err = out or sys.stdout, err or sys.stderr  # looked up now: tests and callers may swap them

    def say(line: str) -> None:
        print(line, file=err, flush=True)

    def fail(code: int, message: str) -> int:
        say(f"ERROR {args.source}: {message}")
        if args.json:
            print(json.dumps({"ok": False, "source": args.source, "error": message, "exit_code": code}), file=out)
        return code

    try:
        s, where = _rescore(args, say)
    except ArtifactError as e:
        return fail(EXIT_INVALID, "the artifact is invalid:\n" + "\n".join(f"  - {p}" for p in e.problems))
    except UsageError as e:
        return fail(EXIT_USAGE, str(e))
    except RescoreError as e:
        return fail(EXIT_RESCORE, str(e))
    except KeyboardInterrupt:
        return fail(130, "interrupted; the artifact is unchanged")
    except Exception as e:  # the promise is a message, not a traceback
        details = crash_log.unexpected(f"rescore {args.source[:200]}")
        return fail(EXIT_UNEXPECTED, f"unexpected {type(e).__name__}: {e}{details}")
    if args.json:
        print(json.dumps({"ok": True, "source": args.source, "written": str(where), **s}), file=out)
    else:
        human(s, where, out)
    return 0
