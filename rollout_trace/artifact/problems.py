"""Problems found in an artifact, and the one exception that carries them to the user.

Every message names the file, the turn (when there is one), the field, what was expected and what
was found, so a person can fix the artifact without reading our code. Nothing here raises a bare
traceback at a user: readers collect `Problem`s and raise one `ArtifactError` at the end.
"""

from __future__ import annotations

import mmap
import re
from dataclasses import dataclass, field

import msgspec

from .errors import RolloutTraceError


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    message: str
    turn: int | None = None
    field: str | None = None
    expected: str | None = None
    found: str | None = None

    def __str__(self) -> str:
        where = self.file
        if self.turn is not None:
            where += f", turn {self.turn}"
        if self.field:
            where += f", field `{self.field}`"
        text = f"{where}: {self.message}"
        if self.expected is not None:
            text += f" (expected {self.expected}"
            text += f", found {self.found})" if self.found is not None else ")"
        return text


class ArtifactError(RolloutTraceError):
    """The artifact cannot be used as it is; `problems` says every reason found."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def first(self, otherwise: str) -> str:
        """The first reason in words (what a page shows where its answer would be), `otherwise` when none is given."""
        return str(self.problems[0]) if self.problems else otherwise


@dataclass
class Findings:
    """Collects problems (fatal) and notices (informational) while reading."""

    problems: list[Problem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def add(self, file: str, message: str, **kw) -> None:
        self.problems.append(Problem(file, message, **kw))

    def raise_if_any(self) -> None:
        if self.problems:
            raise ArtifactError(self.problems)


_PATH = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.S)
_TURN = re.compile(r"^\$\.turns\[(\d+)\]\.?(.*)$")
_EXPECTED = re.compile(r"^Expected `([^`]+)`, got `([^`]+)`$")
_MISSING = re.compile(r"^Object missing required field `([^`]+)`$")
_ENUM = re.compile(r"^Invalid enum value (.+)$")
_BOUND = re.compile(r"^Expected `([^`]+)` ((?:<|>)=? .+)$")  # a constraint (run_format.py's `Whole`)
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _top_level(data: bytes | mmap.mmap, key: str) -> str | None:
    """The value of a small JSON object's top-level `key`, as written (cut at 60 characters); None when unknown."""
    if not _KEY.match(key) or len(data) > 1 << 20:
        return None
    try:
        doc = msgspec.json.decode(bytes(data))
    except msgspec.DecodeError:
        return None
    if not isinstance(doc, dict) or key not in doc:
        return None
    return str(doc[key])[:60]


def from_msgspec(file: str, exc: Exception, data: bytes | mmap.mmap) -> Problem:
    """Translate a msgspec decode/validation error into a Problem that names turn and field."""
    text = str(exc)
    if "truncated" in text.lower():
        return Problem(file, f"the file is truncated: its JSON ends early after {len(data)} bytes")
    m = _PATH.match(text)
    msg, path = (m.group("msg"), m.group("path")) if m else (text, None)
    turn, fld = None, None
    if path:
        tm = _TURN.match(path)
        if tm:
            turn, fld = int(tm.group(1)), tm.group(2) or None
        else:
            fld = path.removeprefix("$").lstrip(".") or None
    if (em := _EXPECTED.match(msg)):
        return Problem(file, "wrong type", turn=turn, field=fld, expected=em.group(1), found=em.group(2))
    if (bm := _BOUND.match(msg)):
        return Problem(file, "out of range", turn=turn, field=fld, expected=f"{bm.group(1)} {bm.group(2)}",
                       found=_top_level(data, fld) if fld else None)
    if (mm := _MISSING.match(msg)):
        name = f"{fld}.{mm.group(1)}" if fld else mm.group(1)
        return Problem(file, "required field is missing", turn=turn, field=name)
    if (nm := _ENUM.match(msg)):
        return Problem(file, "not one of the allowed values", turn=turn, field=fld, expected="one of the values rollout_trace/artifact/ lists for it",
                       found=nm.group(1))
    if "malformed" in msg.lower() or "invalid" in msg.lower():
        return Problem(file, f"not valid JSON: {msg}")
    return Problem(file, msg, turn=turn, field=fld)
