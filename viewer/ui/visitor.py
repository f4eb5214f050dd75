"""What one public visitor's request may cost while it opens a source or reads a run, and whether that visitor is
still there.

On a public Space every source a visitor names is opened under a budget (rollout_trace/artifact/budget.py):
at most MAX_FILES files listed, MAX_BYTES read, MAX_ROWS index rows, MAX_DECODED decompressed, MAX_SECONDS of
time; a bound crossed is a message naming the file, the count and the limit. A run opened so keeps the same
bounds for what its pages compute of the whole run later (its per-version numbers, its index, its findings:
rollout_trace/artifact/run_table.py `RunTable.bounds`), each computation under a budget of its own. The work
runs on the request's own thread, under no lock but the one its source's cache entry (or the computation) holds
(viewer/index/cache.py: visitors of other sources never wait for it), and stops at the next file or row block
once Gradio says the visitor is gone:

- the page closed or its connection dropped: Gradio's queue sees its `/queue/data` stream disconnect and
  calls `Queue.clean_events(session_hash=...)`, which sets `alive = False` on the session's running events;
- the event was cancelled (`/cancel`): the event id leaves the session's pending ids.

Gradio gives a handler its event id and Blocks in `gradio.context.LocalContext` (set on the handler's thread
by `utils.get_function_with_locals`); `abandoned` reads the event's state there. Outside an event (a test
calling a handler, the command line) the visitor is taken to be there.
"""

from __future__ import annotations

from collections.abc import Callable

from rollout_trace.artifact import budget
from rollout_trace.artifact.budget import Budget
from rollout_trace.artifact.collection import Collection
from viewer.index import open_index

MAX_FILES = 20_000  # files listed in one source (a collection's rows; a run's segment, index and log files)
# read per request: a run of a million rollouts from the Hub reads ~6.4 MiB to open (its rollouts' places, its
# consumption table), then ~9.5 MiB for its per-version numbers and ~11 MiB for its index and tasks, each under a
# budget of its own (bench/bench_run_table.py `public`)
MAX_BYTES = 24 * 2**20
# rollouts of one run: a million rollouts' snapshot (shared by every visitor of the run) costs ~4.5 s of CPU and
# ~360 MB while its first page is made (bench/bench_run_table.py `public`); the bound keeps columns that
# decompress far beyond their bytes from costing more
MAX_ROWS = 1_100_000
MAX_SECONDS = 30.0  # wall time of one request's opening, or of one computation (Hub reads included)
# what the Parquet data a request reads may decode to (its values counted at their width at least): a million
# rollouts' run page decodes ~68 MiB to open, ~52 MiB for its per-version numbers, ~88 MiB for its index and tasks;
# a value of one letter repeated 100 MB (a few KB on disk) is refused before it is decompressed
MAX_DECODED = 512 * 2**20
WHERE = "a public Space"  # who sets these bounds, as a refusal says


def abandoned_check() -> Callable[[], bool]:
    """A callable saying whether the visitor of the running Gradio event left (always False outside one)."""
    from gradio.context import LocalContext

    blocks, event_id = LocalContext.blocks.get(None), LocalContext.event_id.get(None)
    queue = getattr(blocks, "_queue", None)
    if queue is None or event_id is None:
        return lambda: False
    event = next((e for job in queue.active_jobs if job for e in job if e._id == event_id), None)
    if event is None:  # not a queued event (a server function skips the queue): nothing says it left
        return lambda: False
    session = event.session_hash

    def gone() -> bool:
        return not event.alive or event_id not in queue.pending_event_ids_session.get(session, ())

    return gone


def public_budget() -> Budget:
    return Budget(max_bytes=MAX_BYTES, max_files=MAX_FILES, max_rows=MAX_ROWS, seconds=MAX_SECONDS, max_decoded=MAX_DECODED,
                  abandoned=abandoned_check(), where=WHERE)


def open_bounded(source: str, allow_local: bool, public: bool) -> Collection:
    """`open_index(source)`, under a public visitor's budget when `public`; raises ArtifactError (Refused,
    Abandoned) past a bound."""
    if not public:
        return open_index(source, allow_local=allow_local)
    with budget.bounded(public_budget()):
        c = open_index(source, allow_local=allow_local)
    if c.run is not None:  # what its pages compute of the whole run later is bounded as its opening was
        c.run.table.bounds = public_budget
    return c
