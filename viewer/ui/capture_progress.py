"""A capture as the Capture tab watches it: the one slot a server runs captures in, the thread a capture runs
in, the status line (a rollout's, or a group's rollouts side by side) and what a finished capture wrote.
The tab (viewer/ui/capture_tab.py) streams these while the capture runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import crash_log
from capture import Cancelled, CaptureError
from capture.group import GroupResult, StageBoard
from rollout_trace.analysis.report import fmt_reward
from rollout_trace.artifact import Artifact
from viewer.render import safe


@dataclass
class Slot:
    """The one capture this server may run at a time."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    cancel: threading.Event = field(default_factory=threading.Event)
    started: float = 0.0
    stage: str = ""
    worker: threading.Thread | None = None  # the capture's thread

    def release(self) -> None:
        """Free the slot once the capture's thread is done. The page that started it may be gone already
        (closed, reloaded): its thread still runs to the end and writes the artifact, and until then no
        second capture may start."""
        worker = self.worker
        if worker is None or not worker.is_alive():
            self.lock.release()
            return

        def later() -> None:
            worker.join()
            self.lock.release()

        threading.Thread(target=later, daemon=True, name="capture-slot").start()

    def describe(self) -> str:
        return f"a capture is already running (stage: {self.stage or 'starting'}, {time.monotonic() - self.started:.0f} s)"


def status_line(stage: str, turns: int, elapsed: float, note: str = "") -> str:
    return (f"<div class='tv-capture-status' data-testid='capture-status'><b>{safe.text(stage)}</b> · "
            f"{turns} agent turn(s) so far · {elapsed:.0f} s{(' · ' + safe.text(note)) if note else ''}</div>")


def group_status(board: StageBoard, elapsed: float, note: str = "") -> str:
    """The K rollouts of a group side by side: one row each with its stage, turns and last line."""
    rows = "".join(f"<tr data-testid='group-progress-row'><td>rollout {p.rollout}</td><td><b>{safe.text(p.stage)}</b></td>"
                   f"<td>{p.turns}</td><td>{p.elapsed_s:.0f} s</td><td>{safe.text(safe.short(p.line, 120))}</td></tr>"
                   for p in board.snapshot())
    g = board.group
    return (f"<div class='tv-capture-status' data-testid='capture-status'><b>group: {safe.text(g.stage)}</b> · "
            f"{elapsed:.0f} s{(' · ' + safe.text(note)) if note else ''}"
            "<table class='tv-group-progress' data-testid='group-progress'><thead><tr><th>rollout</th><th>stage</th>"
            f"<th>turns</th><th>time</th><th>last line</th></tr></thead><tbody>{rows}</tbody></table></div>")


@dataclass
class Written:
    """What a finished capture wrote, as the Capture tab's loop needs it: one rollout or a group."""

    root: Path
    rollouts: Sequence[tuple[int | None, Artifact, float | None]]  # (index in the group or None, artifact, advantage)
    note: str
    turns: int
    problem: str = ""  # a rollout that is written but could not be analysed


def written(result: Artifact | GroupResult) -> Written:
    if isinstance(result, Artifact):
        assert result.root is not None  # a capture's artifact is a folder
        return Written(result.root, [(None, result, None)],
                       f"reward {fmt_reward(result.summary.reward_after_penalties)}; opened in the View tab", len(result.turns))
    ok = sum(1 for r in result.group.rollouts if r.status == "ok")
    rollouts = [(r.index, a, r.advantage) for r, a in zip(result.group.rollouts, result.artifacts, strict=False)
                if a is not None]
    return Written(result.root, rollouts, f"{ok} of {result.group.k} rollouts ok", 0)


def start(job: Callable[[], Any], result: dict, key: str, name: str,
          describe: Callable[[CaptureError], str]) -> threading.Thread:
    """Run `job` in a thread; `result` gets `key` (its value), "cancelled" or "error" (a message, no traceback)."""
    def work() -> None:
        try:
            result[key] = job()
        except Cancelled:
            result["cancelled"] = True
        except CaptureError as e:
            result["error"] = describe(e)
        except Exception as e:  # a message for the page, never a traceback
            crash_log.unexpected("capture tab")  # the traceback, for the operator's log
            result["error"] = f"unexpected {type(e).__name__}: {e}"

    worker = threading.Thread(target=work, daemon=True, name=name)
    worker.start()
    return worker
