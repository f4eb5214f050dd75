"""Turn the raw bytes of a JSON number array into a numpy array without building Python lists.

Token id arrays are most of an artifact's bytes. Decoding them into Python ints costs about 36 bytes
and tens of nanoseconds per id; numpy's C text parser reads the same bytes straight into an int32
array at a fraction of that (see bench/). The fast path cannot report *where* a malformed array
goes wrong, so on any doubt we decode that one array again with msgspec to name the bad element.
"""

from __future__ import annotations

import re
import warnings
from types import GenericAlias

import msgspec
import numpy as np

from .errors import RolloutTraceError

_INT32_MAX = 2**31 - 1


class ArrayError(RolloutTraceError, ValueError):
    """A raw array is not what its field requires; the message says what was found and where.

    `expected` and `found` (when set) are the exact requirement and the value as written in the file,
    so a reader can put them in a Problem without re-parsing the message."""

    def __init__(self, message: str, expected: str | None = None, found: str | None = None):
        super().__init__(message)
        self.expected, self.found = expected, found


def _fallback(raw: bytes, kind: type) -> list:
    try:
        return msgspec.json.decode(raw, type=GenericAlias(list, (kind,)))  # list[kind]
    except msgspec.ValidationError as e:
        m = re.match(r"Expected `(\w+)`, got `(\w+)`(?: - at `\$\[(\d+)\]`)?", str(e))
        if not m:
            raise ArrayError(str(e)) from None
        where = f" at element {m.group(3)}" if m.group(3) else ""
        raise ArrayError(f"expected {'an array' if m.group(1) == 'array' else 'a JSON ' + m.group(1)}, "
                         f"found {m.group(2)}{where}") from None
    except msgspec.DecodeError as e:
        raise ArrayError(f"not a JSON array: {e}") from None


def _parse(raw, dtype: type) -> np.ndarray | None:
    """The fast path; None when the bytes need the careful decoder."""
    view = memoryview(raw)
    if len(view) < 2 or view[0] != 0x5B or view[-1] != 0x5D:  # a msgspec.Raw spans exactly the value
        return None
    inner = view[1:-1].tobytes()  # the one copy: np.fromstring takes bytes, not a memoryview
    if not inner.strip():
        return np.empty(0, dtype=dtype)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # numpy < 2.3 only warns on a partial parse
            return np.fromstring(inner, dtype=dtype, sep=",")
    except (ValueError, DeprecationWarning):  # numpy >= 2.3 raises on unparsed data
        return None


def _literal(raw, k: int) -> str:
    """Element k exactly as the file writes it (numpy saturates 2**64 to 2**63-1; the file does not)."""
    inner = memoryview(raw)[1:-1].tobytes()
    text = inner.split(b",")[k].strip().decode("utf-8", "replace")
    return text if len(text) <= 40 else text[:40] + "…"


def _integers(raw, what: str, hi: int) -> np.ndarray:
    """Integers in 0..hi as int64; the first one outside is named with its exact text and position."""
    expected = f"an integer in 0..{hi}"
    arr = _parse(raw, np.int64)
    if arr is None:
        values = _fallback(raw, int)  # Python ints: exact however large, so check before numpy sees them
        bad = next((k for k, v in enumerate(values) if not 0 <= v <= hi), None)
        if bad is not None:
            found = str(values[bad]) if len(str(values[bad])) <= 40 else str(values[bad])[:40] + "…"
            raise ArrayError(f"{what} at element {bad} is out of range", expected, found)
        return np.asarray(values, dtype=np.int64)
    outside = np.flatnonzero((arr < 0) | (arr > hi)) if arr.size else arr
    if outside.size:
        k = int(outside[0])
        found = _literal(raw, k)
        raise ArrayError(f"{what} at element {k} is out of range", expected, found)
    return arr


def token_ids(raw: bytes) -> np.ndarray:
    """Token ids as int32; each must be a JSON integer in 0..2**31-1."""
    return _integers(raw, "token id", _INT32_MAX).astype(np.int32)


def mask_values(raw: bytes) -> np.ndarray:
    """A 0/1 mask as int8."""
    return _integers(raw, "mask value", 1).astype(np.int8)


def logprobs(raw: bytes) -> np.ndarray:
    """Log-probabilities as float64; each must be a finite number <= 0 (small rounding above 0 allowed)."""
    arr = _parse(raw, np.float64)
    if arr is None or not np.isfinite(arr).all():
        arr = np.asarray(_fallback(raw, float), dtype=np.float64)
    if arr.size:
        if not np.isfinite(arr).all():
            i = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ArrayError(f"non-finite logprob {arr[i]} at element {i}")
        if arr.max() > 1e-3:
            i = int(np.argmax(arr))
            raise ArrayError(f"logprob {arr[i]} at element {i} is above 0; a log-probability is at most 0")
    return arr


def safetensors_file(path, file: str, findings, missing: str) -> dict[str, np.ndarray] | None:
    """The arrays of a safetensors file (read with numpy, no torch), or None with the problem in `findings`
    (`missing` says why the file should be there)."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    if not path.is_file():
        findings.add(file, missing)
        return None
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError) as e:
        findings.add(file, f"not a readable safetensors file: {e}")
        return None
