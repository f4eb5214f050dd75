"""A recorded run of a million rollouts (format 2: Parquet shards, rollout_trace/artifact/run_format.py) as the
viewer reads it, each part in a child process of its own so its peak memory (ru_maxrss) and CPU seconds (all
threads, beside the wall time: on a machine other work loads, the wall time grows and the CPU time is what the
part itself costs) are its own:

    stats   the per-version numbers (viewer/run_stats.py `version_stats` of rollout_trace/artifact/run_table.py
            `run_table(folder)`) from a cold process: target <= 1 s, <= 400 MB above the process's imports
    page    the run page's server handlers as a page load calls them (viewer/ui/run_view.py `on_page_load`, then
            viewer/ui/rows.py `page_link`: the run's index page) for a first visitor and later ones, against a
            single rollout's page load (the bundled default example, `?src=scripted-smollm2`) through the same
            handlers in the same process, alternately: targets a first visit <= 5 s, a later visit <= 1.3x a
            rollout's (a fresh visitor's: the server has the rollout already, as the run's snapshot). The
            rollout's handlers answer from the shared store in milliseconds, so this is the server's side only;
            in a browser both pages' first paint is mostly the page's own start-up (bench/bench_run_page.py)
    search  a rare word over every rollout (viewer/find/columns.py `searched(t).search(parse_query(word))`): the
            word bench/make_run.py's `rare_word` holds about once per `--rare-every` rollouts, asked as the
            search panel asks: its first hits (`first`: the answer comes once a shard with a hit has been read
            and 0.3 s have passed), then the rest of the run from where that stopped. Targets: first hits <= 1 s,
            the full count (both answers) <= 5 s. Then the findings query of the run's first rule (the rollouts
            with it, counted per version, the first 200 findings listed: viewer/find/answers.py `search`)
    public  a public visitor opening the run served as a Hub dataset by the loopback stand-in
            (tests/support/hub_standin.py, in this process, answering each request `--hub-latency-ms` late: the
            Hub is not loopback; the visitor in a child): the run page's handlers of a public Service and the
            search panel's chart, which the panel asks for once it is on the page (its opening and each
            computation of the whole run under a budget of viewer/ui/visitor.py's): CPU seconds, wall
            seconds, peak memory, the bytes and requests the Hub served and the bytes each budget counted, and what
            the visitor is told: target <= 2 s CPU, <= 100 MB. Then the same with the search panel's request
            answered first (a browser sends both at once: either may reach a fresh snapshot first)
    table   the snapshot itself: first open, a cached reopen, filters and sorts, ten visitors' memory
    drill   the index's queries and the drill-down from the run page (a group's map, a rollout, Back, another
            group), which read one group's rows, never the whole run into Python rows (counted)

The run is `--run` (default /work/bench-runs/run-1m); when it has no run.json one is written there by
bench/make_run.py (`--versions 2000 --groups 8 --k 64`: 1,024,000 real rollouts, a few minutes, about 1 GB).

`--baseline-ref REF` measures `stats` and `page` with another commit's code too (main before format 2: 26d0a46),
alternately with this checkout's, on runs of one shape (`--baseline-shape`, default 2000x8x8 = 128,000 rollouts):
REF is checked out into a temporary git worktree (removed at the end), its own bench/bench_run_page.py `make_run`
writes its run (a format-1 JSONL index, run as a subprocess with that checkout on sys.path), bench/make_run.py
writes this checkout's, and each child imports the code of the checkout it measures. Ratios are this checkout's
median over the baseline's. (That make_run picks its 8 rewards by `(r + v + g) % k`: k above 8 fails there.)

Prints a short table and a JSON summary (`--json FILE` writes it too).

Measured on the 2-core machine at 1,024,000 rollouts (bench/make_run.py 2000x8x64 from today's bundled run), on a
quiet hour (load 0.6-1.0): stats 0.73-0.88 s (as much CPU: one core), 277 MB above imports (290 MB while the
per-version numbers read whole columns, 331 MB while every rollout's training rows were held for the fates); the run
page's first visitor 1.7-1.95 s with the search panel's chart (1.45-1.7 s without it), later ones 57-60 ms against a
rollout's 3 ms; a word's first hits 0.34 s, its full count 2.3 s; the
rollouts with a finding found in 543,349 of them 0.3-0.8 s (naming every rollout and filtering the findings once
per rollout, 05199e8: 164 s); following a task scored in 160,000 of them 72-80 ms (listing its 16,000 groups: 2.0 s);
the public visitor 2.65-2.95 s CPU, 233 MB without the search panel's chart (275 MB before the per-version numbers
were a reduction of their own and the consumption table was held narrow: alternately against e28a702, medians of
3, 0.85x memory, 1.01x CPU; 347 MB before the fates were made shard by shard), 2.9-3.1 s and 237 MB with it (3.44 s
and 401 MB while the chart's counts read every finding with its sentence), the stand-in serving 27.6 MiB in 328-332 requests (the opening 6.4 MiB,
the per-version numbers and fates 9.5, the index and tasks 11.1); at 30 ms a request, 3.7 s wall. Opening a group
of 64 (drill) 0.53-0.58 s, another 0.21-0.24 s, the same again 7 ms (against e28a702, alternately, medians of 3: 1.19
and 0.78 s). The run page's first visit of this local run 259 MB above imports, the per-version numbers 238 MB
(480 and 277 while an ended local run kept what its reductions read for a next snapshot). With the search panel's
request answered first, the public visitor's budgets read the same 6.4, 9.5 and 11.1 MiB (20.6 MiB under one
budget and 36.6 MiB served before the per-version numbers' pass made the fates first). Against the same run stored as before the ordinals were delta-encoded (the same rows),
the Hub served 36.8 MiB; against the code before a search read a shard's other text lists only where a piece
matched (51da869, alternately, 3 rounds): the full count 0.74x wall, 0.62x CPU. Before the tasks, fates and local
reads were made in numbers on one thread (4f8d121, medians of 6 and 3): stats 0.84x wall, 0.66x CPU, 0.91x memory;
the public visitor 0.83x CPU, 0.75x memory. Before a
read's column chunks came in one range and eight shards at once, that visitor took 4.3-5.1 s CPU, 438 MB and 728
requests (29 s wall at 30 ms); before every reduction of the page was made in one pass over the shards
(`RunTable.reduced`), 6.6-7.5 s CPU and 917 requests; before they were read shard by shard at all, 777 MB.
The visitor's handlers answered on worker threads, as Gradio's are, against c470b2e (before a Hub run's opening
asked for its commit and each folder once, read its small files side by side and read its shards through one file
system for all threads), alternately, medians of 3: 363 -> 321 requests, CPU 3.17 -> 3.16 s, 233 -> 226 MB; at 60 ms
a request 6.31 -> 5.19 s wall; sixteen shards read at once instead of eight (alternately, medians of 3, at 60 ms a
request): 5.37 -> 4.56 s wall, 230 -> 231 MB. Against 26d0a46 at 128,000 rollouts (medians of 5): stats 0.18x
(CPU 0.13x, memory 0.81x), first visit 0.41x, later visits 1.02x, page memory 0.77x.

    .venv/bin/python bench/bench_run_table.py [--run /work/bench-runs/run-1m] [--parts stats page search public]
        [--rounds 3] [--baseline-ref 26d0a46 --baseline-shape 2000x8x8] [--hub-latency-ms 30]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

TARGETS = {"stats_s": 1.0, "stats_mb": 400.0, "first_visit_s": 5.0, "later_visit_ratio": 1.3, "first_hits_s": 1.0,
           "search_count_s": 5.0, "public_cpu_s": 2.0, "public_mb": 100.0, "first_open_s": 10.0, "reopen_s": 1.0,
           "query_s": 0.3, "peak_mb": 1024.0}
PARTS = ("stats", "page", "search", "public", "table", "drill")
DEFAULT_RUN = "/work/bench-runs/run-1m"
HUB_REPO = "bench/run"
SINGLE = "scripted-smollm2"  # the single rollout a page load opens by default (a bundled example)


# -- measuring, in a child process ---------------------------------------------------------------------------


def _mb() -> float:
    """The process's peak resident memory so far (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _now_mb() -> float:
    """The process's resident memory now (MB): what a part's peak is counted above (the imports' own peak may
    have been higher than what they keep)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class _Clock:
    """Wall and CPU seconds (every thread of the process) of a block."""

    def __enter__(self) -> _Clock:
        self.t, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self.t, time.process_time() - self.c


def child_stats(folder: str) -> dict:
    """(a) The per-version numbers of the run from a cold process."""
    from rollout_trace.artifact.run_table import run_table
    try:
        from viewer.run_stats import version_stats
    except ImportError:  # a baseline commit's code, which named the module viewer/run_page.py
        from viewer.run_page import version_stats  # type: ignore[no-redef]

    base = _now_mb()
    with _Clock() as c:
        stats = version_stats(run_table(folder))
    return {"stats_s": c.wall, "stats_cpu_s": c.cpu, "stats_mb": _mb() - base, "rss_mb": _mb(), "imports_mb": base,
            "versions": len(stats), "rollouts": sum(s.rollouts for s in stats)}


def _page_load(rv: Any, service: Any, src: str) -> dict:
    """What a page load of `?src=SRC` runs on the server (viewer/ui/app.py `ViewPage.load`): the run page's
    handler, then the token view's and index's, and the search panel's chart it asks for once it is on the page;
    their wall and CPU seconds and the bytes of what they answer."""
    from viewer.ui.find_panel import FindPanel

    params = {"src": src}
    with _Clock() as c:
        shown = rv.on_page_load(params)
        linked = service.rows.page_link(params)
        FindPanel(service).summary(params)
    size = sum(len(v) for v in (*shown.values(), *linked) if isinstance(v, str))
    return {"s": c.wall, "cpu_s": c.cpu, "bytes": size, "run_shown": bool(shown.get(rv.column, {}).get("visible"))}


def _app(public: bool) -> tuple[Any, Any]:
    """A Service and RunView as the app makes them (TRL imported first, as the app does at start-up)."""
    import gradio as gr

    from rollout_trace.analysis.training import import_trl
    from viewer.memory_pool import settle_startup
    from viewer.ui.run_view import RunView
    from viewer.ui.service import Service

    import_trl()  # seconds, once, whatever the run
    service = Service(SINGLE, public=public)
    rv = RunView(service)
    with gr.Blocks():
        rv.render()
    settle_startup()  # as app.py does before it serves
    return service, rv


def child_page(folder: str, rounds: int) -> dict:
    """(b) The run page's handlers for a first visitor and later ones, alternating with a single rollout's."""
    service, rv = _app(public=False)
    base = _now_mb()
    one_first = _page_load(rv, service, SINGLE)
    run_first = _page_load(rv, service, folder)
    runs, ones = [], []
    for _ in range(rounds):
        runs.append(_page_load(rv, service, folder))
        ones.append(_page_load(rv, service, SINGLE))
    med = statistics.median
    return {"first_visit_s": run_first["s"], "first_visit_cpu_s": run_first["cpu_s"], "run_shown": run_first["run_shown"],
            "first_visit_bytes": run_first["bytes"], "later_visit_s": med(r["s"] for r in runs),
            "later_visit_cpu_s": med(r["cpu_s"] for r in runs), "later_visit_bytes": runs[-1]["bytes"],
            "rollout_first_s": one_first["s"], "rollout_later_s": med(r["s"] for r in ones),
            "rollout_later_cpu_s": med(r["cpu_s"] for r in ones), "rollout_bytes": ones[-1]["bytes"],
            "later_visits": [r["s"] for r in runs], "rollout_visits": [r["s"] for r in ones],
            "page_mb": _mb() - base, "rss_mb": _mb()}


def child_search(folder: str, word: str) -> dict:
    """(c) A rare word over every rollout: open, then the search as the panel runs it (its time budget each): its
    first hits (`first`), then the rest of the run from where that stopped; when cut short, the same two without a
    budget for the full count."""
    import dataclasses

    from rollout_trace.artifact.run_table import run_table
    from viewer.find.columns import searched
    from viewer.find.query import parse_query

    base = _now_mb()
    with _Clock() as opened:
        t = run_table(folder)
        find = searched(t)
        find._allowed(parse_query(word))  # the columns every search reads first (path, version, status)
    out: dict = {"open_s": opened.wall, "open_cpu_s": opened.cpu, "word": word, "rollouts_in_run": len(t)}
    for name, budget in (("search", None), ("unbounded", 1e18)):
        q = parse_query(word)
        with _Clock() as c1:
            first = find.search(dataclasses.replace(q, first=True),
                                deadline=None if budget is None else time.monotonic() + budget)
        rest, c2 = None, None
        if first.resume is not None:
            with _Clock() as c2:
                rest = find.search(dataclasses.replace(q, start=first.resume),
                                   deadline=None if budget is None else time.monotonic() + budget)
        partial = first.partial or (rest is not None and rest.partial)
        out[name] = {"first_s": c1.wall, "first_cpu_s": c1.cpu, "first_hits": len(first.hits),
                     "first_rollouts": first.rollouts, "s": c1.wall + (c2.wall if c2 else 0.0),
                     "cpu_s": c1.cpu + (c2.cpu if c2 else 0.0),
                     "rollouts": first.rollouts + (rest.rollouts if rest else 0),
                     "pieces": first.pieces + (rest.pieces if rest else 0),
                     "hits_listed": len(first.hits) + (len(rest.hits) if rest else 0), "partial": partial,
                     "budget_s": q.budget_s, "notes": first.notes + (rest.notes if rest else [])}
        if not partial:
            break
    rules = find.present()  # the findings query: the rollouts with the run's first rule, as the panel asks
    if rules:
        from viewer.find import answers

        with _Clock() as c:
            got = answers.search(find, {"rule": rules[0]}, public=False)
        out["rule"] = {"rule": rules[0], "s": c.wall, "cpu_s": c.cpu, "rollouts": got.rollouts, "rows": len(got.hits)}
    out["search_mb"] = _mb() - base
    out["rss_mb"] = _mb()
    return out


def child_public(src: str, panel_first: bool = False) -> dict:
    """(d) A public visitor's page load of the Hub run `src`: the run page's and index's handlers of a public
    Service, its opening and each computation of the whole run under a budget of the visitor's
    (viewer/ui/visitor.py), whose bytes are kept to report. `panel_first`: the search panel's request is answered
    first (a browser sends it beside the page's own: either may reach a fresh snapshot first)."""
    import msgspec

    from viewer.index.contract import IndexPage
    from viewer.ui import visitor
    from viewer.ui.find_panel import FindPanel

    budgets: list = []
    real = visitor.public_budget

    def recorded() -> Any:
        b = real()
        budgets.append(b)
        return b

    visitor.public_budget = recorded  # what open_bounded calls for each opening
    service, rv = _app(public=True)
    panel = FindPanel(service)
    base = _now_mb()

    def handled(fn: Any, arg: Any) -> Any:
        """`fn(arg)` on a thread of its own, as Gradio answers a request on a worker thread (a Hub client's per-thread
        state starts from the main thread's, which then holds nothing of the run's)."""
        with ThreadPoolExecutor(1) as worker:
            return worker.submit(fn, arg).result()

    with _Clock() as c:
        if panel_first:
            found = handled(panel.summary, {"src": src})
        shown = handled(rv.on_page_load, {"src": src})
        linked = handled(service.rows.page_link, {"src": src})
        if not panel_first:
            found = handled(panel.summary, {"src": src})  # the search panel asks for its chart's data once it is on the page
    run, why = service.run_or_why(src)  # the shared collection's answer: from the cache, or opened again
    page = str(linked.page or "")
    problems = msgspec.json.decode(page, type=IndexPage).problems if page else None
    told = " ".join(problems.items)[:600] if problems is not None else ""
    return {"public_s": c.wall, "public_cpu_s": c.cpu, "public_mb": _mb() - base, "rss_mb": _mb(),
            "run_shown": bool(shown.get(rv.column, {}).get("visible")), "opened": run is not None, "why": why,
            "findings_answer": sorted(found)[:4], "findings_error": found.get("error"),
            "index_told": told, "budgets": [{"used": b.used, "decoded": b.decoded_used, "max_bytes": b.max_bytes, "max_rows": b.max_rows,
                                             "seconds": round(time.monotonic() - b.started, 1)} for b in budgets]}


def child_table(folder: str) -> dict:
    """The snapshot: first open, a cached reopen, filters and sorts, ten visitors' memory."""
    import pyarrow.compute as pc

    from rollout_trace.artifact.run_table import run_table

    base = _now_mb()
    out: dict = {}
    columns = ("reward", "trained_tokens", "timed_out", "trained")
    with _Clock() as c:
        table = run_table(folder)
        for col in columns:
            table.per_version(col)
    out.update(first_open_s=c.wall, first_open_cpu_s=c.cpu, rollouts=len(table),
               versions=table.per_version("reward").num_rows)
    with _Clock() as c:
        again = run_table(folder)
        for col in columns:
            again.per_version(col)
    out["reopen_s"] = c.wall
    top = out["versions"]
    task = pc.unique(pc.cast(again.column("task_id"), "string"))[0].as_py()
    queries = {
        "filter reward>0.5, first page": dict(where=pc.field("reward") > 0.5),
        "sort by reward desc, page 3": dict(sort=[("reward", "descending")], offset=100),
        "filter a tenth of the versions + sort by tokens": dict(
            where=(pc.field("policy_version") >= top // 4) & (pc.field("policy_version") < top // 4 + top // 10),
            sort=[("trained_tokens", "descending")]),
        "filter task + sort by version": dict(where=pc.field("task_id") == task, sort=[("policy_version", "ascending")]),
    }
    out["queries"] = {}
    for name, q in queries.items():
        t = time.perf_counter()
        total, _ = again.page(limit=50, **q)
        out["queries"][name] = (time.perf_counter() - t, total)
    again.page(sort=[("reward", "descending")], offset=200)  # the order is kept: a later page is a slice
    t = time.perf_counter()
    total, _ = again.page(sort=[("reward", "descending")], offset=400)
    out["queries"]["sort by reward desc, a later page"] = (time.perf_counter() - t, total)
    out["query_s"] = max(v[0] for v in out["queries"].values())
    one = _mb()
    threads = [threading.Thread(target=lambda: (run_table(folder).per_version("reward"),
                                                run_table(folder).page(sort=[("reward", "ascending")])))
               for _ in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    out["peak_mb"] = one - base
    out["ten_visitors_ratio"] = (_mb() - base) / max(1.0, one - base)
    return out


def child_drill(folder: str) -> dict:
    """The index's queries, following a task, and the drill-down from the run page; how many times the whole run
    was read into Python rows (rollout_trace/artifact/run.py `rows_of` of every row)."""
    from types import SimpleNamespace

    import msgspec
    import pyarrow.compute as pc

    import rollout_trace.artifact.run as run_module
    import viewer.run_part as part_module
    from rollout_trace.artifact.run_table import run_table
    from viewer.contract import Initial
    from viewer.index.contract import IndexPage

    service, rv = _app(public=False)
    base = _now_mb()
    out: dict = {"index": {}, "drill": {}}
    with _Clock() as c:
        rv.on_page_load({"src": folder})
        service.rows.page_link({"src": folder})
    out["page_s"] = c.wall
    t = run_table(folder)
    task = pc.unique(pc.cast(t.column("task_id"), "string"))[0].as_py()
    for query in ({"sort": "-reward"}, {"kind": "group", "sort": "-policy_version", "page": "3"},
                  {"task": task[:12]}, {"q": "task 1]", "sort": "tokens"}, {"timed_out": "no", "tool": "bash"}):
        with _Clock() as c:
            got = service.rows.index_page(folder, query)
        out["index"]["&".join(f"{k}={v}" for k, v in query.items())] = (c.wall, got.matched)
    with _Clock() as c:
        rv.on_task(SimpleNamespace(_data={"action": "task", "src": folder, "task": task, "version": "7"}))
    out["index"]["follow a task (body with its track)"] = (c.wall, 0)
    out["page_query_s"] = max(v[0] for v in out["index"].values())

    whole: list[int] = []
    real = run_module.rows_of

    def counted(table: Any, at: Any = None) -> Any:
        if at is None:
            whole.append(1)
        return real(table, at)

    run_module.rows_of = part_module.rows_of = counted  # type: ignore[assignment]
    versions = t.per_version("reward")["version"].to_pylist()
    group, other = (t.page(pc.field("policy_version") == versions[len(versions) * k // 16], limit=1,
                           columns=["group"])[1][0]["group"] for k in (7, 12))
    steps = {
        "open a group (its map)": lambda: service.rows.open_row(folder, group, {}, Initial()),
        "open a rollout of it (token view)": lambda: service.rows.open_row(folder, group, {}, Initial(), 1),
        "back to the run's index": lambda: service.rows.index_page(folder, {}),
        "open another group": lambda: service.rows.open_row(folder, other, {}, Initial()),
        "the same group again": lambda: service.rows.open_row(folder, other, {}, Initial()),
    }
    for name, step in steps.items():
        with _Clock() as c:
            got = step()
        view, page = getattr(got, "view", None), getattr(got, "page", None)
        ok = not (page and msgspec.json.decode(page, type=IndexPage).problems) and \
            not (isinstance(view, str) and view.startswith('{"problems":{'))  # a Failed with problems, not CLEARED
        out["drill"][name] = (c.wall, c.cpu, ok)
    out["drill_whole_reads"] = len(whole)
    out["drill_mb"] = _mb() - base
    return out


def child(part: str, folder: str, rounds: int, word: str) -> dict:
    try:  # Arrow's pool as the app and the command line set it (a checkout from before it keeps Arrow's default)
        from viewer.memory_pool import use_returning_pool
        use_returning_pool()
    except ImportError:
        pass
    if part == "stats":
        return child_stats(folder)
    if part == "page":
        return child_page(folder, rounds)
    if part == "search":
        return child_search(folder, word)
    if part in ("public", "public-panel-first"):
        return child_public(folder, panel_first=part == "public-panel-first")
    if part == "table":
        return child_table(folder)
    return child_drill(folder)


# -- the parent: runs, children, baseline, report ----------------------------------------------------------


def run_child(part: str, folder: str, code: Path = ROOT, rounds: int = 5, word: str = "",
              env: dict[str, str] | None = None) -> dict:
    """`part` measured in a child process importing the code of the checkout at `code`; its usage beside."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = Path(f.name)
    try:
        cmd = [sys.executable, __file__, "--child", part, "--code", str(code), "--run", folder, "--rounds", str(rounds),
               "--word", word, "--out", str(out)]
        t = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode:
            raise SystemExit(f"{part} ({code}) failed:\n{done.stderr[-3000:]}")
        got = json.loads(out.read_text())
        got["process_s"] = time.perf_counter() - t
        return got
    finally:
        out.unlink(missing_ok=True)


def ensure_run(folder: Path, versions: int, groups: int, k: int, rare_every: int) -> None:
    if (folder / "run.json").exists():
        return
    sys.path.insert(0, str(ROOT))
    from bench.make_run import make

    print(f"writing {versions} x {groups} x {k} rollouts into {folder} (bench/make_run.py)", flush=True)
    print(json.dumps(make(folder, versions, groups, k, rare_every)), flush=True)


def the_rare_word() -> str:
    sys.path.insert(0, str(ROOT))
    from bench.make_run import rare_word, templates

    return rare_word(templates())[0]


def hub_env(url: str, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_TOKEN")}
    return {**env, "HF_ENDPOINT": url, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "0",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}


def measure_public(folder: Path, latency_ms: float = 0.0, code: Path = ROOT, part: str = "public") -> dict:
    """(d): the run served as a Hub dataset by the stand-in in this process (each request answered after
    `latency_ms`), the visitor in a child (importing the code at `code`; `part`: "public-panel-first" for the
    search panel's request answered first)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from support.hub_standin import HubStandIn

    with tempfile.TemporaryDirectory(prefix="bench-hub-") as tmp, \
            HubStandIn({HUB_REPO: folder}, latency=latency_ms / 1000) as hub:
        got = run_child(part, HUB_REPO, code=code, env=hub_env(hub.url, Path(tmp) / "cache"))
        got["hub_latency_ms"] = latency_ms
        paths = hub.paths("GET")
        got["hub_bytes"] = sum(hub.served.values())
        got["hub_requests"] = len(hub.requests)
        got["hub_range_reads"] = {d: len([p for p in paths if f"/{d}/" in p]) for d in ("rollouts", "files", "consumed")}
        got["hub_shards_read"] = len({p for p in hub.served if p.startswith("rollouts/")})
    return got


def baseline(ref: str, shape: tuple[int, int, int], rounds: int) -> dict:
    """`stats` and `page` with REF's code on its own format-1 run and with this checkout's on a format-2 run of
    the same shape, alternately; medians and ratios (this checkout / REF)."""
    v, g, k = shape
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as tmp:
        tree, old_run, new_run = Path(tmp) / "tree", Path(tmp) / "run-format1", Path(tmp) / "run-format2"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], check=True,
                       capture_output=True)
        try:
            t = time.perf_counter()
            made = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; sys.path.insert(0, "
                                   "sys.argv[1]); from bench.bench_run_page import make_run; "
                                   "print(make_run(Path(sys.argv[2]), *map(int, sys.argv[3:])))",
                                   str(tree), str(old_run), str(v), str(g), str(k)],
                                  cwd=tree, check=True, capture_output=True, text=True)
            old_s = time.perf_counter() - t
            ensure_run(new_run, v, g, k, 0)
            print(f"baseline {ref}: {int(made.stdout.split()[-1]):,} rollouts written by its own make_run in "
                  f"{old_s:.0f} s; this checkout's run of the same shape by bench/make_run.py", flush=True)
            got: dict[str, dict[str, list[dict]]] = {"baseline": {"stats": [], "page": []}, "new": {"stats": [], "page": []}}
            for _ in range(rounds):  # alternately: REF, this checkout, REF, ...
                for side, code, run in (("baseline", tree, old_run), ("new", ROOT, new_run)):
                    for part in ("stats", "page"):
                        got[side][part].append(run_child(part, str(run), code))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
            subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)
    med = statistics.median
    out: dict = {"ref": ref, "shape": f"{v}x{g}x{k}", "rollouts": v * g * k, "rounds": rounds}
    keys = {"stats": ("stats_s", "stats_cpu_s", "stats_mb"),
            "page": ("first_visit_s", "first_visit_cpu_s", "later_visit_s", "later_visit_cpu_s", "rollout_later_s",
                     "page_mb")}
    for part, names in keys.items():
        for name in names:
            old, new = (med(x[name] for x in got[side][part]) for side in ("baseline", "new"))
            out[name] = {"baseline": old, "new": new, "ratio": new / old if old else None}
    return out


def _pass(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _vs(key: str, value: float, unit: str = "s", ok: bool = True) -> str:
    """`value` against its target: "[<= 1 s PASS]"."""
    return f"[<= {TARGETS[key]:g}{'x' if unit == 'x' else ' ' + unit} {_pass(ok and value <= TARGETS[key])}]"


def report(s: dict) -> None:
    """The short table."""
    print(f"\nrun {s['run']}" + (f": {s['rollouts']:,} rollouts" if "rollouts" in s else "")
          + f"; load average while measuring {s['load']}")
    if "stats" in s:
        r = s["stats"]
        print(f"(a) per-version numbers, cold process (median of {len(r['all'])}): {r['stats_s']:.2f} s wall "
              f"{_vs('stats_s', r['stats_s'])}, {r['stats_cpu_s']:.2f} s CPU, {r['stats_mb']:.0f} MB above imports "
              f"{_vs('stats_mb', r['stats_mb'], 'MB')} ({r['rss_mb']:.0f} MB peak resident), {r['versions']:,} versions")
    if "page" in s:
        r = s["page"]
        ratio = r["later_visit_s"] / r["rollout_later_s"]
        print(f"(b) run page handlers: first visitor {r['first_visit_s']:.2f} s ({r['first_visit_cpu_s']:.2f} s CPU) "
              f"{_vs('first_visit_s', r['first_visit_s'])}; later {r['later_visit_s'] * 1000:.0f} ms "
              f"({r['later_visit_cpu_s'] * 1000:.0f} ms CPU, {r['later_visit_bytes'] / 1e3:.0f} kB) against a rollout's "
              f"{r['rollout_later_s'] * 1000:.0f} ms (its first {r['rollout_first_s']:.2f} s): {ratio:.2f}x the "
              f"handlers' (no verdict: the <= {TARGETS['later_visit_ratio']:g}x target is the browser's first paint, "
              f"bench/bench_run_page.py); {r['page_mb']:.0f} MB above imports")
    if "search" in s:
        r = s["search"]
        print(f"(c) search for {r['word']!r} (opening the run's columns first: {r['open_s']:.2f} s):")
        if r["search"]["rollouts"] > r["rollouts_in_run"] // 100:
            print("    (not rare in this run: it was written before bench/make_run.py drew the text holding it rarely)")
        for name in ("search", "unbounded"):
            if name in r:
                x = r[name]
                cut = f" (cut short by its {x['budget_s']:g} s budget)" if x["partial"] else ""
                print(f"    {'as the panel runs it' if name == 'search' else 'without a time budget':<22} "
                      f"first answer {x['first_s']:.2f} s ({x['first_cpu_s']:.2f} s CPU, {x['first_hits']} hits of "
                      f"{x['first_rollouts']:,} rollouts) {_vs('first_hits_s', x['first_s'])}; full count "
                      f"{x['s']:.2f} s ({x['cpu_s']:.2f} s CPU): {x['rollouts']:,} rollouts{cut} "
                      f"{_vs('search_count_s', x['s'], ok=not x['partial'])}")
        if "rule" in r:
            x = r["rule"]
            print(f"    the rollouts with finding {x['rule']!r}: {x['s']:.2f} s ({x['cpu_s']:.2f} s CPU), "
                  f"{x['rollouts']:,} rollouts, {x['rows']} listed")
    if "public" in s:
        r = s["public"]
        print(f"(d) public visitor of the run on the Hub stand-in: {r['public_cpu_s']:.2f} s CPU "
              f"{_vs('public_cpu_s', r['public_cpu_s'])}, {r['public_s']:.1f} s wall ({r['hub_latency_ms']:g} ms a "
              f"request), {r['public_mb']:.0f} MB above "
              f"imports {_vs('public_mb', r['public_mb'], 'MB')}; the Hub served {r['hub_bytes'] / 2**20:.1f} MiB in "
              f"{r['hub_requests']} requests ({r['hub_shards_read']} rollouts shards read; range reads "
              f"{r['hub_range_reads']})")
        used = ", ".join(f"{b['used'] / 2**20:.1f}" for b in r["budgets"] if b["used"])
        most = max((b["max_bytes"] for b in r["budgets"]), default=0) / 2**20
        print(f"    {'opened' if r['opened'] else 'not opened'}; {len(r['budgets'])} budgets (the opening, then each "
              f"computation of the whole run), read {used} of {most:.0f} MiB each; the visitor is told: "
              f"{r['why'] or '(nothing)'}")
    if "public_panel_first" in s:
        r = s["public_panel_first"]
        used = ", ".join(f"{b['used'] / 2**20:.1f}" for b in r["budgets"] if b["used"])
        print(f"    the search panel's request first: {r['public_cpu_s']:.2f} s CPU, {r['public_mb']:.0f} MB, the Hub "
              f"served {r['hub_bytes'] / 2**20:.1f} MiB in {r['hub_requests']} requests; budgets read {used} MiB; the "
              f"run page {'shown' if r['run_shown'] else 'hidden'}, its search panel "
              f"{'answered' if not r['findings_error'] else 'refused: ' + r['findings_error'][:300]}")
    if "table" in s:
        r = s["table"]
        print(f"snapshot: first open {r['first_open_s']:.2f} s ({r['first_open_cpu_s']:.2f} s CPU) "
              f"{_vs('first_open_s', r['first_open_s'])}, reopen {r['reopen_s']:.3f} s {_vs('reopen_s', r['reopen_s'])}, "
              f"slowest query {r['query_s']:.3f} s {_vs('query_s', r['query_s'])}, {r['peak_mb']:.0f} MB "
              f"{_vs('peak_mb', r['peak_mb'], 'MB')}, ten visitors' memory {r['ten_visitors_ratio']:.2f}x one's")
        for name, (sec, total) in r["queries"].items():
            print(f"    {name:<48} {sec * 1000:7.1f} ms  ({total:,} rows match)")
    if "drill" in s:
        r = s["drill"]
        print(f"index queries and drill-down (after a page load of {r['page_s']:.2f} s; {r['drill_mb']:.0f} MB):")
        for name, (sec, total) in r["index"].items():
            print(f"    {name:<48} {sec * 1000:7.1f} ms  ({total:,} rows match)")
        for name, (sec, cpu, ok) in r["drill"].items():
            print(f"    {name:<48} {sec * 1000:7.1f} ms  [{cpu:.2f} s CPU]{'' if ok else '  (an error value)'}")
        print(f"    the whole run read into Python rows: {r['drill_whole_reads']} times (target 0) "
              f"{_pass(r['drill_whole_reads'] == 0)}")
    if "baseline" in s:
        b = s["baseline"]
        print(f"against {b['ref']} at {b['shape']} ({b['rollouts']:,} rollouts), medians of {b['rounds']} "
              "alternating cold processes each (this checkout / baseline):")
        for name, x in b.items():
            if isinstance(x, dict):
                unit, k = ("MB", 1) if name.endswith("_mb") else ("ms", 1000)
                ratio = "-" if x["ratio"] is None else f"{x['ratio']:.2f}x"
                print(f"    {name:<20} {x['baseline'] * k:9.0f} {unit} -> {x['new'] * k:9.0f} {unit}  {ratio}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default=DEFAULT_RUN)
    ap.add_argument("--versions", type=int, default=2000, help="of the run written when --run holds none")
    ap.add_argument("--groups", type=int, default=8)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--rare-every", type=int, default=100_000)
    ap.add_argument("--parts", nargs="*", choices=PARTS, default=list(PARTS), help="none: the baseline only")
    ap.add_argument("--rounds", type=int, default=3, help="cold processes of stats (and of each baseline part)")
    ap.add_argument("--baseline-ref", help="measure stats and page with this commit's code too (26d0a46: main "
                                           "before format 2)")
    ap.add_argument("--baseline-shape", default="2000x8x8", help="VERSIONSxGROUPSxK of the baseline's runs")
    ap.add_argument("--json", type=Path, help="write the summary here too")
    ap.add_argument("--hub-latency-ms", type=float, default=0.0,
                    help="public: the Hub stand-in answers each request this much later (the Hub is not loopback)")
    ap.add_argument("--child", choices=[*PARTS, "public-panel-first"], help=argparse.SUPPRESS)
    ap.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--word", default="", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        sys.path.insert(0, str(args.code))  # the checkout whose code this child measures
        args.out.write_text(json.dumps(child(args.child, args.run, args.rounds, args.word)))
        return
    folder = Path(args.run)
    ensure_run(folder, args.versions, args.groups, args.k, args.rare_every)
    summary: dict = {"run": str(folder), "targets": TARGETS}
    loads: list[float] = []

    def load() -> None:
        loads.append(os.getloadavg()[0])

    load()
    if "stats" in args.parts:
        runs = [run_child("stats", str(folder)) for _ in range(args.rounds)]
        load()
        mid = sorted(runs, key=lambda r: r["stats_s"])[len(runs) // 2]
        summary["stats"] = {**mid, "all": [r["stats_s"] for r in runs]}
        summary["rollouts"] = mid["rollouts"]
    if "page" in args.parts:
        summary["page"] = run_child("page", str(folder))
        load()
    if "search" in args.parts:
        summary["search"] = run_child("search", str(folder), word=the_rare_word())
        summary["rollouts"] = summary["search"]["rollouts_in_run"]
        load()
    if "public" in args.parts:
        summary["public"] = measure_public(folder, args.hub_latency_ms)
        load()
        summary["public_panel_first"] = measure_public(folder, args.hub_latency_ms, part="public-panel-first")
        load()
    for part in ("table", "drill"):
        if part in args.parts:
            summary[part] = run_child(part, str(folder))
            load()
    if args.baseline_ref:
        v, g, k = (int(x) for x in args.baseline_shape.lower().split("x"))
        summary["baseline"] = baseline(args.baseline_ref, (v, g, k), args.rounds)
        load()
    summary["load"] = f"{min(loads):.1f}-{max(loads):.1f} (1-minute, {os.cpu_count()} cores)"
    report(summary)
    print(json.dumps(summary, default=str))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, default=str))


if __name__ == "__main__":
    main()
