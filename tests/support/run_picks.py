"""One rollout of each fate in the bundled run, found by asking its reader, never by name: the fate tests
(tests/test_fate.py, tests/test_fate_browser.py) need a trained, a read-ahead, an in-queue, an unscorable and a
failed rollout, and one whose training rows met different fates (a drift fork split it into rows, and training
stopped between them), whatever the bundled run's counts are."""

from __future__ import annotations

from rollout_trace.artifact.run import Run, RunRow

RUN = "trl-run"  # the bundled run
KINDS = {
    "trained": lambda r: r.path is not None and r.queued and all(q.fate == "trained" for q in r.queued),
    "partly": lambda r: r.path is not None and {q.fate == "trained" for q in r.queued} == {True, False},
    "read-ahead": lambda r: r.path is not None and r.dropped == "read-ahead",
    "in-queue": lambda r: r.path is not None and r.dropped == "in-queue",
    "unscorable": lambda r: r.path is not None and r.status == "unscorable",
    "failed": lambda r: r.status == "failed",
}


def pick_each(run: Run) -> dict[str, RunRow]:
    """The first rollout of each kind in `run`; fails naming the kinds the run lacks."""
    got = {k: next((r for r in run.rows if want(r)), None) for k, want in KINDS.items()}
    missing = [k for k, v in got.items() if v is None]
    assert not missing, f"the bundled run has no {missing} rollout: the fate tests need one of each"
    return got  # type: ignore[return-value]
