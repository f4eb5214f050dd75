"""Who may use the Capture tab of a public server: a visitor who types the owner's capture password,
or a Hugging Face user the owner listed (sign-in works on Spaces with `hf_oauth: true`).

Every Capture event handler asks here on the server, so a visitor who calls the API directly gets
the same answer as one who uses the page. A public server whose owner set neither refuses everyone.
Off a public deployment (your own machine) there is no gate.
"""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass, field

import gradio as gr

SECRET_ENV = "ROLLOUT_VIEWER_CAPTURE_SECRET"
USERS_ENV = "ROLLOUT_VIEWER_CAPTURE_USERS"  # comma-separated Hugging Face usernames


@dataclass(frozen=True)
class Gate:
    secret: str = field(default="", repr=False)
    users: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls) -> Gate:
        users = frozenset(u.strip().lower() for u in os.environ.get(USERS_ENV, "").split(",") if u.strip())
        return cls(os.environ.get(SECRET_ENV, ""), users)

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
        # compare_digest: the time taken does not tell how much of a guess was right
        if self.secret and typed and hmac.compare_digest(typed.encode(), self.secret.encode()):
            return None
        if self.users and profile is not None and str(profile.get("preferred_username", "")).lower() in self.users:
            return None
        return self.how()
