"""Who may use the Capture tab of a public server: a visitor who types the owner's capture password,
or a Hugging Face user the owner listed (sign-in works on Spaces with `hf_oauth: true`).

Every Capture event handler asks here on the server, so a visitor who calls the API directly gets
the same answer as one who uses the page. A public server whose owner set neither refuses everyone.
Off a public deployment (your own machine) there is no gate. Wrong passwords are throttled for the
whole server (a client can come from any address): after MAX_FAILURES in FAILURE_WINDOW_S no typed
password is even compared until the oldest of them is a window old (59 guesses a second
were possible); signed-in users the owner listed are not held up by it.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import gradio as gr

from viewer.settings import SECRET_ENV, USERS_ENV, settings

MAX_FAILURES = 10
FAILURE_WINDOW_S = 60.0


class Throttle:
    """Failed guesses in the last `window_s`; `wait()` says how long until another may be tried (0: now)."""

    def __init__(self, max_failures: int = MAX_FAILURES, window_s: float = FAILURE_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic):
        self.max_failures, self.window_s, self.clock = max_failures, window_s, clock
        self._failures: deque[float] = deque()
        self._lock = threading.Lock()

    def _trim(self, now: float) -> None:
        while self._failures and now - self._failures[0] >= self.window_s:
            self._failures.popleft()

    def wait(self) -> float:
        with self._lock:
            now = self.clock()
            self._trim(now)
            if len(self._failures) < self.max_failures:
                return 0.0
            return self.window_s - (now - self._failures[0])

    def failed(self) -> None:
        with self._lock:
            self._failures.append(self.clock())


@dataclass(frozen=True)
class Gate:
    secret: str = field(default="", repr=False)
    users: frozenset[str] = frozenset()
    throttle: Throttle = field(default_factory=Throttle, repr=False, compare=False)

    @classmethod
    def from_env(cls) -> Gate:
        s = settings()
        return cls(s.capture_secret, s.capture_users)

    @property
    def configured(self) -> bool:
        return bool(self.secret or self.users)

    def how(self) -> str:
        """How a visitor gets in, in one sentence."""
        ways = (["type the capture password the owner gave you"] if self.secret else []) + \
               (["sign in with Hugging Face as a user the owner listed"] if self.users else [])
        return "Capture on this server is for visitors its owner allows: " + " or ".join(ways) + "."

    def refusal(self, typed: str | None, profile: gr.OAuthProfile | None) -> str | None:
        """None when this visitor may capture; otherwise what stands in the way (never the secret)."""
        if not self.configured:
            return (f"Capture is enabled on this public server but its owner has not said who may use it: the owner "
                    f"sets {SECRET_ENV} (a password) or {USERS_ENV} (Hugging Face usernames).")
        if self.users and profile is not None and str(profile.get("preferred_username", "")).lower() in self.users:
            return None
        if self.secret and typed:
            wait = self.throttle.wait()
            if wait > 0:  # not even compared: guessing gets MAX_FAILURES tries a window, however fast it asks
                return (f"Too many wrong capture passwords on this server in the last {FAILURE_WINDOW_S:.0f} s: "
                        f"try again in {wait:.0f} s.")
            # compare_digest: the time taken does not tell how much of a guess was right
            if hmac.compare_digest(typed.encode(), self.secret.encode()):
                return None
            self.throttle.failed()
        return self.how()
