"""`python -m viewer ARGS` in this process: its exit code and what it printed.

A test that checks what a command says runs it here; the suite keeps a few cold-process runs of the same
commands (the user's `python -m viewer check` after a capture) where the first import is the point."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def viewer(*args: str) -> Ran:
    from viewer.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors
            code = e.code if isinstance(e.code, int) else 2
    return Ran(code, out.getvalue(), err.getvalue())
