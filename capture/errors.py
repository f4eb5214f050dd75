"""The one error a capture reports to its user, naming the setting at fault the way the user's front end does.

The CLI calls a setting by its flag (`--task-index`), the Capture tab by its label ("Task index"). An
error about one setting keeps that setting's `CaptureConfig` name apart from the rest of its sentence,
so each front end names it its own way: `str(error)` uses the flag, `error.naming(labels.get)` the label.
"""

from __future__ import annotations

from typing import Callable

from rollout_trace.artifact.errors import RolloutTraceError


def flag(field: str) -> str:
    """The CLI flag of a `CaptureConfig` field (every flag is the field name with dashes)."""
    return "--" + field.replace("_", "-")


class CaptureError(RolloutTraceError, RuntimeError):
    """A capture that could not start or finish; the message is for the user.

    With `field`, `message` is the rest of a sentence whose subject is that setting ("is required
    with the local backend"); without, it is the whole sentence.
    """

    def __init__(self, message: str, field: str | None = None):
        self.field, self.detail = field, message
        super().__init__(self.naming(flag))

    def naming(self, name: Callable[[str], str | None]) -> str:
        """The message with the setting called `name(field)` (falling back to its flag)."""
        if self.field is None:
            return self.detail
        return f"{name(self.field) or flag(self.field)} {self.detail}"


class RescoreFailed(CaptureError):
    """The rollout is captured and written, but re-scoring it failed (`reason`, without the folder: a group
    says it its own way, as the folder is left out of the group)."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason
