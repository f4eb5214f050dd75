"""Progress of a capture as it runs: the stage, agent turns so far, log lines, elapsed time.

The CLI prints these; the Capture tab streams them. Nothing secret is ever put in a line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Progress:
    stage: str
    line: str
    turns: int
    elapsed_s: float


Callback = Callable[[Progress], None]


class Reporter:
    def __init__(self, callback: Callback | None):
        self._callback = callback
        self._start = time.monotonic()
        self.stage = "task"
        self.turns = 0

    def __call__(self, line: str, stage: str | None = None, turns: int | None = None) -> None:
        if stage:
            self.stage = stage
        if turns is not None:
            self.turns = turns
        self.emit(line, round(time.monotonic() - self._start, 1))

    def emit(self, line: str, elapsed_s: float) -> None:
        """Hand one line, with the stage and turns so far, to whoever listens (a group tags its rollout)."""
        if self._callback:
            self._callback(Progress(self.stage, line, self.turns, elapsed_s))


def print_progress(p: Progress) -> None:
    print(f"[{p.elapsed_s:6.1f}s {p.stage:>9}] {p.line}", flush=True)
