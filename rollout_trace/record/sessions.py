"""Watch each OpenEnv session TRL runs, without changing a single call: what one rollout showed us.

TRL's `_HarnessRolloutLoop` makes its session factory once per worker child and, per rollout, calls
`create(prompt, seed=group_id, episode_id=rollout_id)`, then (loop-owning mode) `wait_for_completion()`,
`fetch_training_trace()`, `verify(completion)` and `close()`, on a `harness-session` pool thread; it
closes the session when the call returns, and the training trace goes with it. The recorder hands TRL a
factory that forwards `create` with the same arguments and returns a pass-through proxy of the session
the user's factory made: every call goes to the real session, its result (or exception) is noted in the
thread's `SessionRecord` and handed back unchanged. The proxy is a `TrainableSession` exactly when the
real session is one, so TRL's `isinstance` check answers as before.

When TRL scores a rollout unscorable on its own (it catches the exception and logs a warning), the
warning's exception is noted too, from TRL's logger, so the recorded cause is TRL's.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from openenv.core.harness import ResourceSession, TrainableSession

MAX_CAUSE = 400  # characters of an exception kept as a rollout's cause


def one_line(text: object, n: int = MAX_CAUSE) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= n else line[: n - 1] + "…"


def describe(exc: BaseException) -> str:
    return one_line(f"{type(exc).__name__}: {exc}")


@dataclass
class SessionRecord:
    """What one `_run_session` call showed, filled from its pool thread."""

    started_at: float = field(default_factory=time.time)
    rollout_id: str | None = None  # TRL's episode_id (uuid4 hex)
    seed: int | None = None  # TRL passes group_id
    created: bool = False
    create_error: str | None = None
    timed_out: bool = False
    training_trace: Any = None  # OpenEnv's TrainingTrace, as fetched
    fetch_error: str | None = None
    verify: Any = None  # OpenEnv's VerifyResult
    verify_error: str | None = None
    trl_failure: str | None = None  # the exception TRL logged when it scored the rollout unscorable
    ended_at: float | None = None
    session_metrics: dict = field(default_factory=dict)  # TRL's own per-rollout metrics (plain fields)


class RecordingSession(ResourceSession):
    """Every call goes to the real session; results are noted, never altered."""

    def __init__(self, inner: ResourceSession, rec: SessionRecord):
        self._inner, self._rec = inner, rec

    def __getattr__(self, name: str) -> Any:  # anything else a harness-specific session exposes
        return getattr(self._inner, name)

    def initial_messages(self):
        return self._inner.initial_messages()

    def list_tools(self):
        return self._inner.list_tools()

    def call_tool(self, name, arguments):
        return self._inner.call_tool(name, arguments)

    def verify(self, transcript, final_state=None):
        try:
            result = (self._inner.verify(transcript) if final_state is None
                      else self._inner.verify(transcript, final_state))
        except Exception as e:
            self._rec.verify_error = describe(e)
            raise
        self._rec.verify = result
        return result

    def close(self) -> None:
        return self._inner.close()


class RecordingTrainableSession(RecordingSession):
    """The proxy of a real `TrainableSession` (and only of one)."""

    def wait_for_completion(self, *args, **kwargs):
        try:
            return self._inner.wait_for_completion(*args, **kwargs)
        except TimeoutError:
            self._rec.timed_out = True
            raise

    def fetch_training_trace(self):
        try:
            trace = self._inner.fetch_training_trace()
        except Exception as e:
            self._rec.fetch_error = describe(e)
            raise
        self._rec.training_trace = trace
        return trace


class RecordingFactory:
    """Stands in for the user's `ResourceSessionFactory`: `create` is forwarded with the same arguments."""

    def __init__(self, inner: Any, current: threading.local):
        self._inner, self._current = inner, current

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def create(self, task, seed=None, episode_id=None):
        rec: SessionRecord | None = getattr(self._current, "record", None)
        if rec is not None:
            rec.rollout_id, rec.seed = episode_id, seed
        try:
            session = self._inner.create(task, seed=seed, episode_id=episode_id)
        except Exception as e:
            if rec is not None:
                rec.create_error = describe(e)
            raise
        if rec is None:  # a create outside _run_session: nothing to record
            return session
        rec.created = True
        cls = RecordingTrainableSession if isinstance(session, TrainableSession) else RecordingSession
        return cls(session, rec)


def recording_factory(user_factory: Any, current: threading.local, **kwargs: Any) -> RecordingFactory:
    """What TRL calls as `harness_session_factory(sampling=...)` in the child (through functools.partial)."""
    return RecordingFactory(user_factory(**kwargs), current)


class FailureNotes(logging.Handler):
    """Notes the exception of each warning TRL's harness logger emits on a session thread ("scoring as
    unscorable"): a handler added beside the others, so what TRL logs and where it goes are unchanged."""

    def __init__(self, current: threading.local):
        super().__init__(level=logging.WARNING)
        self._current = current

    def emit(self, record: logging.LogRecord) -> None:
        rec: SessionRecord | None = getattr(self._current, "record", None)
        exc = record.exc_info[1] if record.exc_info else None
        if rec is None or exc is None or rec.trl_failure is not None:
            return  # only failures carry an exception (a timeout warning does not)
        rec.trl_failure = one_line(f"{record.getMessage()}: {describe(exc)}")
