"""OpenEnv sessions that replay the repo's recorded traces: the session stand-in for TRL's real harness worker.

No sandbox, agent or vLLM can run in a test, so `ReplayFactory` stands in for the user's session factory.
It is a real `openenv.core.harness.ResourceSessionFactory`, and its sessions are real `TrainableSession`s:
`fetch_training_trace()` returns OpenEnv's own `TrainingTrace.from_entries(...)` of a trace.json that the
repo's capture recorded (examples/scripted-smollm2: a zero-mask title call and three agent calls, two
training rows; examples/smollm2-group: one 4.5k-token call each), so OpenEnv validates ids, logprobs and
masks exactly as it does a live capture proxy's. `verify()` returns a reward that differs inside a group.
TRL's real `_HarnessRolloutLoop._run_session` drives them in the worker's real child process.

Determinism, for runs compared with and without the recorder: rollout k of group g (k counts `create`
calls per seed, and TRL passes seed=group_id) always gets the same trace and reward, with
`max_inflight_tasks=1`. The optional *gate* makes the policy version TRL stamps on each group
deterministic too: the last rollout of group g waits until the version published in `gate_path`
reaches the highest version the consumer can reach without group g (`trainer_version`, `consumer_version`),
so the next group is created at exactly that version. Without a gate, versions follow timing, as in any async run.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from openenv.core.harness import ResourceSession, ResourceSessionFactory, TrainingTrace
from openenv.core.harness.rollout import ToolResult, VerifyResult

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPTED_TRACE = ROOT / "examples" / "scripted-smollm2" / "trace.json"
GROUP_TRACES = [ROOT / "examples" / "smollm2-group" / f"rollout-{i:02d}" / "trace.json" for i in range(4)]
REWARDS = (1.0, 0.0, 0.5, -0.1)  # by rollout position (shifted by group): never all equal in a group
TESTS = 4  # the held-out tests a replayed session's verify() says it ran


def verify_metrics(reward: float | None) -> dict[str, Any]:
    """What a replayed session's verify() reports beside its reward, as a coding environment's verifier would:
    how many of its TESTS passed and failed (the reward's share of them; a negative reward is a penalty over
    none passed), or that the tests never ran (no reward)."""
    if reward is None:
        return {"tests_passed": 0, "tests_failed": 0, "error": "the tests did not run: the sandbox gave no result"}
    passed = round(max(reward, 0.0) * TESTS)
    return {"tests_passed": passed, "tests_failed": TESTS - passed}


def trainer_version(g: int, samples_before: int, *, batch: int = 8, weight_sync_steps: int = 1, start: int = 1) -> int:
    """The highest policy version TRL's trainer reaches without group g, given the samples of groups 0..g-1:
    step t needs micro-batch t+1 collated too (accelerate reads one ahead), so t steps need batch * (t + 1)
    samples; weights sync (version + 1) every `weight_sync_steps` steps, from `start` (the cold sync)."""
    steps = max(0, samples_before // batch - 1)
    return start + steps // weight_sync_steps


def consumer_version(g: int, samples_before: int, *, groups_per_version: int = 2) -> int:
    """The highest version a bare queue consumer (trl_runs.consume) reaches without group g: it moves to
    version v when it takes the first sample of group v * groups_per_version."""
    return max(0, g - 1) // groups_per_version


def write_gate(path: str | Path, version: int) -> None:
    tmp = Path(f"{path}.tmp")
    tmp.write_text(str(version))
    tmp.replace(path)


def _read_gate(path: str) -> int:
    try:
        return int(Path(path).read_text() or 0)
    except (FileNotFoundError, ValueError):
        return -1


def load_trace(spec: str | Path) -> list[dict]:
    """A trace.json's entries; "PATH:N" keeps the first N calls."""
    text = str(spec)
    path, _, n = text.rpartition(":") if text.rsplit(":", 1)[-1].isdigit() else (text, "", "")
    entries = json.loads(Path(path).read_text())["turns"]
    return entries[: int(n)] if n else entries


class ReplaySession(ResourceSession):
    def __init__(self, entries: list[dict], reward: float | None, wait_for: int | None, gate_path: str | None,
                 session_s: float = 0.0, timeout: bool = False):
        self._entries, self._reward, self._session_s, self._timeout = entries, reward, session_s, timeout
        self._wait_for, self._gate_path = wait_for, gate_path
        self._closed = threading.Event()

    def initial_messages(self) -> list[dict]:
        return list(self._entries[-1]["request"]["messages"][:2])

    def list_tools(self) -> list:
        return []

    def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(error="a replayed session has no live tools")

    def verify(self, transcript, final_state=None) -> VerifyResult:
        return VerifyResult(env_reward=self._reward, done=True, metrics=verify_metrics(self._reward))

    def close(self) -> None:
        self._closed.set()

    def wait_for_completion(self, timeout_s: float | None = None) -> int:
        self._closed.wait(self._session_s)  # the agent's time in the sandbox
        if self._wait_for is not None and self._gate_path:
            while not self._closed.is_set() and _read_gate(self._gate_path) < self._wait_for:
                time.sleep(0.02)
        if self._timeout:
            raise TimeoutError("replayed agent timed out")
        return 0

    def fetch_training_trace(self) -> TrainingTrace:
        if self._closed.is_set():  # as a capture proxy torn down by TRL's stop(): nothing to fetch
            raise RuntimeError("session closed before its trace was fetched")
        return TrainingTrace.from_entries(self._entries)


class ReplayFactory(ResourceSessionFactory[ReplaySession]):
    """TRL calls it in the child as `harness_session_factory(sampling=...)`: pass it through functools.partial.

    `traces`: trace.json paths, each optionally with ":N" (replay only its first N calls: the same session
    ending earlier); rollout k of group g replays traces[(g + k) % len]. `fail`, `no_reward`,
    `timeout`: (group, rollout) pairs whose sandbox fails to start, whose verify() has no reward, whose agent
    times out. `gate_path` + `gate` (the version group g waits for, from g and the samples of the groups before
    it: `trainer_version`, the default, or `consumer_version`, bound with functools.partial): see the module
    docstring."""

    def __init__(self, traces: list[str], num_generations: int, *, gate_path: str | None = None,
                 gate: Callable[[int, int], int] | None = None, session_s: float = 0.0,
                 fail: tuple = (), no_reward: tuple = (), timeout: tuple = (), sampling: Any = None):
        self._traces = [load_trace(t) for t in traces]
        self._n = num_generations
        self._gate_path, self._gate = gate_path, gate or trainer_version
        self._rows = [len(_rows_of(t)) for t in self._traces]  # TRL's rows per trace, from TRL's own functions
        self._fail, self._no_reward, self._timeout = {tuple(x) for x in fail}, {tuple(x) for x in no_reward}, {tuple(x) for x in timeout}
        self._session_s = session_s
        self._count: dict[int, int] = defaultdict(int)
        self._lock = threading.Lock()
        self.sampling = sampling  # what TRL's training policy asked for; a replay has no use for it

    def create(self, task: Any, seed: int | None = None, episode_id: str | None = None) -> ReplaySession:
        g = int(seed or 0)
        with self._lock:
            k = self._count[g]
            self._count[g] += 1
        if (g, k) in self._fail:
            raise RuntimeError(f"stand-in: the sandbox for group {g} rollout {k} failed to start")
        entries = self._traces[(g + k) % len(self._traces)]
        reward = None if (g, k) in self._no_reward else REWARDS[(g + k) % len(REWARDS)]
        wait_for = self._gate(g, self._samples_before(g)) if k == self._n - 1 and self._gate_path else None
        return ReplaySession(entries, reward, wait_for, self._gate_path, self._session_s, timeout=(g, k) in self._timeout)

    def _samples_before(self, g: int) -> int:
        """How many samples TRL queues for groups 0..g-1 (a failed rollout has none)."""
        return sum(0 if (h, k) in self._fail else self._rows[(h + k) % len(self._rows)]
                   for h in range(g) for k in range(self._n))


def _rows_of(entries: list[dict]) -> list:
    from trl.experimental.async_grpo.async_rollout_worker import _chain_to_sequences
    from trl.experimental.async_grpo.openenv_harness import _turns_from_training_trace

    return _chain_to_sequences(_turns_from_training_trace(TrainingTrace.from_entries(entries)), "replay", 0)[0]


def brevity_reward(completions: list, **_: Any) -> list[float | None]:
    """A user reward function as a training script passes one (`reward_funcs=[brevity_reward]`): a small
    bonus for a transcript of at most 6 messages, None for a longer one (nothing to score, as TRL lets a
    reward function say for an answer it cannot parse). TRL calls it on every rollout of a group, a failed
    one's empty completion included (the largest bonus), so a failed rollout gets a reward and counts in
    TRL's baseline; a long rollout whose verify() gave no reward stays unscorable (every column NaN).
    Module-level, so TRL's spawned child can unpickle it."""
    return [None if len(c) > 6 else round(0.1 - 0.01 * len(c), 4) for c in completions]
