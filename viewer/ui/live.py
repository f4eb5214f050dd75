"""Captures being watched while they run: each one's newest snapshot, and what a page asking about it gets.

The Capture tab hands every `LiveUpdate` of its capture (capture/live.py) to `LiveRuns.update` and every
progress stage to `stage`. The token view of the page that started the capture asks `answer({run,
rollout, version})` about twice a second (a server function: it skips Gradio's queue) and gets the
small `Live` record (viewer/contract.py), plus a whole `Opened` value only when the rollout itself
changed. Each snapshot is a `Rollout` in the shared store under one key per (run, rollout), so the
page's token-chunk requests work as for any artifact. When the capture ends, `finish` records how
(done, cancelled, failed) and, when it wrote one, the artifact that replaces the live snapshot: the page
gets its key and outline as one more change and swaps it in place. A run id is unguessable; only the
newest few runs are kept, and a page stops asking once a run has ended.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from capture.live import LiveUpdate
from rollout_trace.analysis.tokens import Vocab, vocab_from_tokenizer
from rollout_trace.artifact.bounded import Bounded
from viewer import server_api as api
from viewer.contract import Initial, Live, LiveSibling
from viewer.rollout import Rollout

from .store import RolloutStore

STAGE_WORDS = {"task": "preparing the task", "preflight": "checking the endpoint", "sandbox": "opening the sandbox",
               "agent": "agent working", "verify": "verifying", "write": "writing the artifact",
               "rescore": "re-scoring", "push": "pushing to the Hub", "done": "done", "failed": "failed",
               "cancelled": "cancelled", "cancelling": "cancelling: stopping the agent and the sandbox"}
MAX_RUNS = 8  # runs remembered; a page still watching an older one is told it is gone

# (store key, src, initial, live record, advantage) -> the token view's value (TokenValues.opened_value)
OpenedFn = Callable[[str, str | None, Initial, Live, float | None], str]


@dataclass
class _Watched:
    """One rollout of a watched run: its newest snapshot, or the artifact that replaced it."""

    key: str | None = None  # the store key of what the page should show
    src: str | None = None  # the final artifact's source, for the page's URL (None while live)
    advantage: float | None = None  # the final rollout's GRPO advantage (a group)
    changed: int = 0  # the run's version when `key` or its content last changed
    stage: str = "task"
    turns: int = 0
    recorded_at: float | None = None


@dataclass
class _Run:
    started: float = field(default_factory=time.monotonic)
    rollouts: dict[int | None, _Watched] = field(default_factory=dict)
    version: int = 0
    state: str = "running"
    message: str = ""
    ended: float | None = None
    requests: int = 0  # answers given: the tests check a page stops asking when the run ends
    cancel: Callable[[], None] | None = None  # stops the capture (the Capture tab's cancel)
    vocab: tuple[int, Vocab | None, list[str]] | None = None  # (id of the tokenizer, its display table, why not)


LIVE_SOURCE = "live capture · "  # the source box while a capture is watched: it names no source to load


def live_source_name(task_id: str) -> str:
    """What the source box says while the view shows a capture being recorded."""
    return f"{LIVE_SOURCE}task {task_id[:8]} (being recorded; it opens here by name when it ends)"

class LiveRuns:
    def __init__(self, store: RolloutStore, opened: OpenedFn):
        self.store, self._opened = store, opened
        self._runs: Bounded[str, _Run] = Bounded(MAX_RUNS)  # the oldest watched run forgotten first
        self._lock = threading.Lock()  # a run's state and snapshots change under it

    def start(self, rollouts: int | None = None, cancel: Callable[[], None] | None = None) -> str:
        """A new run: one rollout (`rollouts` None) or a group of that many; `cancel` stops it. Returns its id."""
        run_id = secrets.token_hex(16)
        run = _Run(rollouts={None: _Watched()} if rollouts is None else {k: _Watched() for k in range(rollouts)},
                   cancel=cancel)
        self._runs.put(run_id, run)
        return run_id

    def _run(self, run_id: str) -> _Run | None:
        return self._runs.get(run_id)

    def update(self, run_id: str, u: LiveUpdate) -> None:
        """A new snapshot of one rollout: it becomes what the page shows next."""
        run = self._run(run_id)
        if run is None or run.state != "running":
            return
        w = run.rollouts.get(u.rollout)
        if w is None:
            return
        vocab, why = self._vocab(run, u.tokenizer)
        r = Rollout(u.artifact, vocab, why, pending="running")
        key = self.store.put(f"live|{run_id}|{u.rollout}", r)
        with self._lock:
            run.version += 1
            w.key, w.changed, w.turns = key, run.version, len(u.artifact.turns)
            w.recorded_at = u.recorded_at if u.recorded_at is not None else w.recorded_at

    def _vocab(self, run: _Run, tokenizer) -> tuple[Vocab | None, list[str]]:
        """The display table of the capture's tokenizer, built once per run (it takes a moment)."""
        if run.vocab is None or run.vocab[0] != id(tokenizer):
            if tokenizer is None:
                run.vocab = (id(None), None, ["the capture has no tokenizer: showing ids"])
            else:
                try:
                    run.vocab = (id(tokenizer), vocab_from_tokenizer(tokenizer, "the capture's tokenizer"), [])
                except Exception as e:  # a tokenizer problem must never stop the view
                    run.vocab = (id(tokenizer), None, [f"the capture's tokenizer: {type(e).__name__}"])
        return run.vocab[1], run.vocab[2]

    def stage(self, run_id: str, stage: str, rollout: int | None = None) -> None:
        run = self._run(run_id)
        if run is None or rollout not in run.rollouts:
            return
        with self._lock:
            if run.rollouts[rollout].stage != stage:
                run.rollouts[rollout].stage = stage
                run.version += 1

    def finish(self, run_id: str, state: str, message: str = "",
               finals: dict[int | None, tuple[str, str | None, float | None]] | None = None) -> None:
        """The run ended (`state` done, cancelled or failed). `finals`: for each rollout that wrote an
        artifact, (its store key, its source, its advantage): it replaces the live snapshot in place."""
        run = self._run(run_id)
        if run is None:
            return
        finals = finals or {}
        stopped = {}  # what was seen of a rollout that wrote nothing: its panels say the tests never ran
        for k, w in run.rollouts.items():
            r = self.store.get(w.key) if w.key is not None and k not in finals else None
            if r is not None and r.pending == "running":
                stopped[k] = self.store.put(f"live|{run_id}|{k}", replace(r, pending=state if state != "done" else "failed"))
        with self._lock:
            run.version += 1
            run.state, run.message, run.ended = state, message, time.monotonic()
            for k, key in stopped.items():
                run.rollouts[k].key, run.rollouts[k].changed = key, run.version
            for k, (key, src, advantage) in finals.items():
                if k in run.rollouts:
                    w = run.rollouts[k]
                    w.key, w.src, w.advantage, w.changed = key, src, advantage, run.version

    def record(self, run_id: str, rollout: int | None = None) -> Live | None:
        run = self._run(run_id)
        if run is None:
            return None
        with self._lock:
            if rollout not in run.rollouts:
                rollout = next(iter(run.rollouts))
            w = run.rollouts[rollout]
            stage = w.stage if run.state == "running" else run.state
            siblings = [LiveSibling(k, STAGE_WORDS.get(s.stage, s.stage), s.turns)
                        for k, s in run.rollouts.items() if k is not None]
            return Live(run=run_id, version=run.version, changed=w.changed, state=run.state,  # type: ignore[arg-type]
                        stage=STAGE_WORDS.get(stage, stage), elapsed_s=round((run.ended or time.monotonic()) - run.started, 1),
                        calls=w.turns, recorded_at=w.recorded_at, message=run.message, rollout=rollout, siblings=siblings)

    def value(self, run_id: str, rollout: int | None = None) -> str | None:
        """The token view's value for the run (its newest snapshot or final artifact), None before the first."""
        live = self.record(run_id, rollout)
        return self._value(live) if live is not None else None

    def _value(self, live: Live) -> str | None:
        run = self._run(live.run)
        w = run.rollouts.get(live.rollout) if run is not None else None
        if w is None or w.key is None:
            return None
        last = max(0, w.turns - 1)  # land on the newest turn: the view follows it
        return self._opened(w.key, w.src, Initial(turn=last), live, w.advantage)

    def answer(self, data: object) -> dict:
        """The page's question {run, rollout, version}: the run's record, and the value when it changed since."""
        req = api.read(data, api.LiveRequest)
        if req is None:
            return api.refused("a live request is an object with run, rollout and version")
        run = self._run(req.run)
        if run is None:
            return api.refused("this capture is no longer watched here: it ended long ago or the server restarted")
        rollout = req.rollout if req.rollout in run.rollouts else next(iter(run.rollouts))
        with self._lock:
            run.requests += 1
        live = self.record(req.run, rollout)
        assert live is not None
        value = self._value(live) if live.changed > req.version else None
        return api.answer(api.LiveAnswer(live=live, opened=value))

    def stop(self, data: object) -> dict:
        """The page's "cancel" on a running capture ({run}): the same as the Capture tab's Cancel. Whoever
        holds the run id started the capture (it is only sent to that page)."""
        req = api.read(data, api.LiveCancel)
        run = self._run(req.run) if req is not None else None
        if run is None or run.cancel is None:
            return api.refused("this capture is not watched here")
        if run.state == "running":
            run.cancel()
            self.stage_all(run, "cancelling")
        return api.answer(api.Cancelling())

    def stage_all(self, run: _Run, stage: str) -> None:
        with self._lock:
            for w in run.rollouts.values():
                w.stage = stage
            run.version += 1

    def requests(self, run_id: str) -> int:
        run = self._run(run_id)
        return run.requests if run is not None else 0
