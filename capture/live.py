"""Watch a capture while the agent works: each model call as a turn, moments after the proxy records it.

`ProxyWatch.tick()` runs in the agent's wait loop (capture/agent.py). About once a second it asks the
capture proxy for the session's progress (`GET /sessions/{id}`: a few bytes, including how many calls it
has recorded and how long ago the last one landed), and only when that count grew does it fetch the
trace entries (`GET /sessions/{id}/trace_entries`, every call so far). openenv 0.10's proxy answers both
while the session runs. It never talks to the model endpoint.

`LiveTrace` turns those entries into the in-memory form every viewer consumer already reads: an
`Artifact` with no folder, no test results and no reward yet. Turns are derived by the same function the
final artifact uses (rollout_trace/recipe/turns.py), once per call, so the last live snapshot and the written artifact
hold the same ids and masks. Nothing here writes a file: on disk there is still only the atomic,
validated artifact capture/run.py writes at the end.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from rollout_trace.analysis.training import training
from rollout_trace.artifact import Artifact, Summary, Task, TraceCall, Turn
from rollout_trace.artifact.trace import calls_from_entries
from rollout_trace.recipe.agent_turns import select_agent_calls
from rollout_trace.recipe.turns import derive_turn

POLL_S = 1.0  # one progress request a second while the agent works; entries only when a call landed


@dataclass(frozen=True)
class LiveUpdate:
    """What a capture has recorded so far. `new_turns` are the agent turns this update added."""

    artifact: Artifact  # root None, test_results None, rewards None
    new_turns: list[Turn]
    recorded_at: float | None  # time.time() when the proxy recorded the newest call (None: not known)
    tokenizer: Any = None  # the capture's tokenizer (None when it has none): the viewer shows text with it
    rollout: int | None = None  # the rollout's index in a group; None for a single capture


LiveCallback = Callable[[LiveUpdate], None]


def call_key(call: TraceCall) -> str:
    """What names a recorded call across polls. Not its position: the proxy's entries are the session's
    main chain, so a call off it (opencode's title request) is listed at first and dropped later."""
    node = call.metadata.get("node_id") if isinstance(call.metadata, dict) else None
    return f"node:{node}" if node else f"index:{call.index}"


class LiveTrace:
    """Entries fetched from the proxy -> a partial artifact, deriving each call's turn only once."""

    def __init__(self, model: str, task, tokenizer, produced_by: str):
        self.model, self.task, self.tokenizer, self.produced_by = model, task, tokenizer, produced_by
        self._turns: dict[str, Turn] = {}  # by call_key: a call never changes once recorded
        self.turns: list[Turn] = []
        self.calls: list[TraceCall] = []

    def update(self, entries: list[dict], recorded_at: float | None = None) -> LiveUpdate:
        """The snapshot for `entries` (all calls so far). Raises ArtifactError or TurnError for entries that
        cannot form turns; the caller decides whether that waits for the next poll or fails the capture."""
        calls = calls_from_entries(entries)
        agent = select_agent_calls(calls)
        turns = []
        for n, call in enumerate(agent):
            t = self._turns.get(call_key(call))
            if t is None:
                t = self._turns[call_key(call)] = derive_turn(n, call, self.tokenizer)
            turns.append(t if t.index == n else replace(t, index=n))
        known = len(self.turns)
        self.turns, self.calls = turns, calls
        return LiveUpdate(self.artifact(), turns[known:], recorded_at, self.tokenizer)

    def artifact(self) -> Artifact:
        task = self.task
        turns = self.turns
        summary = Summary(
            model=self.model, task_id=task.task_id, captured_calls=len(self.calls), agent_turns=len(turns),
            trained_turns=sum(t.seed_trained for t in turns),
            tool_calls_by_name=dict(Counter(n for t in turns for n in t.tool_calls if n)),
            held_out_tests=len(task.held_out), n_tests_eval_cap=task.n_tests_eval_cap, env_reward=None,
            reward_after_penalties=None, timed_out=False, produced_by=self.produced_by)
        return Artifact(
            source="live capture", root=None, summary=summary, turns=turns,
            task=Task(task.task_id, task.index, task.instruction), visible_tests=task.visible_tests,
            held_out_tests=list(task.held_out), trace=self.calls)


class ProxyWatch:
    """Polls one proxy session at a steady, bounded rate; hands every grown set of entries to `on_entries`.

    `get(path)` is a GET on the proxy answering JSON. A failed poll is skipped (the proxy is busy, the
    sandbox is slow): the next tick asks again, and the capture's own final read decides what is written.
    `requests` counts what was asked, for the tests and the benchmark."""

    def __init__(self, get: Callable[[str], dict], session_id: str,
                 on_entries: Callable[[list[dict], float | None], None], interval_s: float = POLL_S,
                 clock: Callable[[], float] = time.monotonic):
        self._get, self._sid, self._on, self._interval, self._clock = get, session_id, on_entries, interval_s, clock
        self._seen = 0
        self._next = 0.0
        self.requests = 0
        self.failures = 0

    def tick(self) -> None:
        now = self._clock()
        if now < self._next:
            return
        self._next = now + self._interval
        try:
            self.requests += 1
            status = self._get(f"/sessions/{self._sid}")
            n = int(status.get("n_turns") or 0)
            if n <= self._seen:
                return
            idle = status.get("idle_s")
            recorded_at = time.time() - float(idle) if isinstance(idle, (int, float)) else None
            self.requests += 1
            entries = self._get(f"/sessions/{self._sid}/trace_entries").get("entries") or []
        except Exception:  # a skipped poll, never a failed capture
            self.failures += 1
            return
        self._seen = n
        self._on(entries, recorded_at)


def call_line(call: TraceCall, turn: Turn | None, trained: int = 0, chars: int = 60) -> str:
    """One line for a call as it lands (`python -m capture --follow`): turn, tokens in/out (`trained` of them in
    TRL's loss), tool, output start."""
    prompt = call.engine_prompt_ids.size if call.engine_prompt_ids is not None else None
    out = call.completion_ids.size if call.completion_ids is not None else 0
    names = [(tc.get("function") or tc).get("name") or "?" for tc in call.reply.get("tool_calls") or []]
    said = call.reply.get("content")
    if not isinstance(said, str) or not said.strip():
        said = " ".join(str((tc.get("function") or tc).get("arguments") or "") for tc in call.reply.get("tool_calls") or [])
    said = " ".join(str(said or "").split())
    said = repr(said[:chars] + ("…" if len(said) > chars else ""))
    who = (f"turn {turn.index}" + ("" if trained else " (not trained)") if turn is not None else
           "a call outside the agent's turns")
    tokens = f"in {prompt:,} · out {out:,} tokens" if prompt is not None else f"out {out:,} tokens"
    if turn is not None and trained and trained != out:
        tokens += f" ({trained:,} trained)"
    return f"{who} · {tokens} · {'tool ' + ', '.join(names) if names else 'no tool'} · {said}"


def follow_printer(start: float | None = None) -> LiveCallback:
    """A `live` callback that prints one line per call as it lands (each rollout of a group apart)."""
    start = time.monotonic() if start is None else start
    seen: set[tuple[int | None, str]] = set()

    def on_update(update: LiveUpdate) -> None:
        a = update.artifact
        who = "live" if update.rollout is None else f"rollout {update.rollout}"
        turn_of = {call_key(c): t for c, t in zip(select_agent_calls(a.trace or []), a.turns, strict=False)}
        trl = training(a)
        for call in a.trace or []:
            key = (update.rollout, call_key(call))
            if key not in seen:
                seen.add(key)
                turn = turn_of.get(call_key(call))
                line = call_line(call, turn, trl.trained_tokens(turn.index) if turn is not None else 0)
                print(f"[{time.monotonic() - start:6.1f}s {who:>9}] {line}", flush=True)

    return on_update
