"""What one request may cost while it opens a source: files listed, bytes read, index rows, time, and whether
its visitor is still there.

A public server opens sources named by strangers; a run or a collection on the Hub can hold a 100 MB line or
a million versions. The stores and readers below this module charge what they list and read to the budget of
the request that runs them (a context variable: set once where the viewer opens a source, seen by every
reader on that thread, and by the Hub store's download threads it hands a copy of the context to), and a
bound crossed is an ArtifactError naming the file, the count and the limit, raised before the bytes behind a
listed size are read where the size is known. Without a budget (the command line, a local server) nothing is
bounded here.

    with bounded(Budget(max_bytes=32 * 2**20, seconds=20, abandoned=visitor_left)):
        open_collection(source)     # raises Refused (an ArtifactError) past a bound, Abandoned when the visitor left

The mechanism only: the bounds, who sets them (`where`) and whether the visitor left (`abandoned`, any
callable) are the caller's. The viewer's per-visitor policy (its numbers, Gradio's queue asked whether the
visitor left, where a source is opened under it) is viewer/ui/visitor.py.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .problems import ArtifactError, Problem


class Refused(ArtifactError, RuntimeError):
    """A bound of the request's budget was crossed: the message names what, how much and the limit."""


class Abandoned(ArtifactError, RuntimeError):
    """The visitor who asked is gone (or the time bound passed): the work stopped, nothing was kept."""


def _mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


@dataclass
class Budget:
    """One request's bounds. `abandoned()` says the visitor left; it is asked at every charge."""

    max_bytes: int
    max_files: int
    max_rows: int
    seconds: float
    abandoned: Callable[[], bool] = lambda: False
    where: str = "this server"  # who sets the bounds, as the messages say
    # bytes the Parquet data read decompresses to (a value of one letter repeated 100 MB is a few KB on disk)
    max_decoded: int = 1 << 62
    used: int = 0  # bytes read so far
    decoded_used: int = 0
    started: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self, what: str) -> None:
        """Raise Abandoned when the visitor left or the time bound passed."""
        if self.abandoned():
            raise Abandoned([Problem(what, "the visitor left: opening it stopped")])
        spent = time.monotonic() - self.started
        if spent > self.seconds:
            raise Abandoned([Problem(what, f"opening it takes longer than {self.where} allows one request",
                                     expected=f"at most {self.seconds:g} s", found=f"{spent:.1f} s")])

    def files(self, what: str, count: int, cut: bool = False) -> None:
        """A listing of `count` files under `what` (`cut`: the listing stopped there, there are more)."""
        self.check(what)
        if count > self.max_files:
            raise Refused([Problem(what, f"holds more files than {self.where} opens",
                                   expected=f"at most {self.max_files:,} files",
                                   found=f"more than {self.max_files:,} files" if cut else f"{count:,} files")])

    def expect(self, what: str, nbytes: int) -> None:
        """About to read `nbytes` (listed sizes): refused before a byte is read when they would cross the bound."""
        self.check(what)
        if self.used + nbytes > self.max_bytes:
            raise Refused([Problem(what, f"too much to read for one request on {self.where}",
                                   expected=f"at most {_mib(self.max_bytes)} read per request",
                                   found=f"{_mib(self.used + nbytes)}")])

    def read(self, what: str, nbytes: int) -> None:
        """`nbytes` were read from `what`."""
        with self._lock:
            self.used += nbytes
            used = self.used
        self.check(what)
        if used > self.max_bytes:
            raise Refused([Problem(what, f"too much to read for one request on {self.where}",
                                   expected=f"at most {_mib(self.max_bytes)} read per request", found=_mib(used))])

    def decoded(self, what: str, nbytes: int) -> None:
        """Data read from `what` decompresses to `nbytes` (a Parquet footer says so before it is read): refused
        before it is decompressed when the request's total would cross the bound."""
        with self._lock:
            self.decoded_used += nbytes
            used = self.decoded_used
        self.check(what)
        if used > self.max_decoded:
            raise Refused([Problem(what, f"decompresses to more than {self.where} reads per request",
                                   expected=f"at most {_mib(self.max_decoded)} decompressed per request",
                                   found=_mib(used))])

    def rows(self, what: str, count: int) -> None:
        """`what` holds `count` index rows (lines)."""
        self.check(what)
        if count > self.max_rows:
            raise Refused([Problem(what, f"holds more index rows than {self.where} opens",
                                   expected=f"at most {self.max_rows:,} rows", found=f"{count:,} rows")])


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("rollout_trace_budget", default=None)


def current() -> Budget | None:
    """The budget of the request running on this thread, or None (nothing is bounded)."""
    return _current.get()


@contextmanager
def bounded(budget: Budget | None) -> Iterator[Budget | None]:
    """Charge what is listed and read inside the block to `budget` (None: unbounded, as before)."""
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def check(what: str) -> None:
    if (b := _current.get()) is not None:
        b.check(what)


def files(what: str, count: int, cut: bool = False) -> None:
    if (b := _current.get()) is not None:
        b.files(what, count, cut)


def expect(what: str, nbytes: int) -> None:
    if (b := _current.get()) is not None:
        b.expect(what, nbytes)


def read(what: str, nbytes: int) -> None:
    if (b := _current.get()) is not None:
        b.read(what, nbytes)


def decoded(what: str, nbytes: int) -> None:
    if (b := _current.get()) is not None:
        b.decoded(what, nbytes)


def rows(what: str, count: int) -> None:
    if (b := _current.get()) is not None:
        b.rows(what, count)


def max_files(default: int) -> int:
    """The most files a listing should walk: the budget's bound (one more, to tell "more than"), else `default`."""
    b = _current.get()
    return default if b is None else min(default, b.max_files + 1)
