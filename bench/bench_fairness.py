"""Can one visitor freeze or starve a public Space? The app runs as its own process in public mode (SPACE_ID, the
MCP tools on), its Hub a loopback stand-in (tests/support/hub_standin.py) serving the heaviest source we know: the
bundled run whose every rollout's first agent reply also makes the hostile tool calls of
tests/support/hostile_rollouts.py (20 KB each, what made the findings rules quadratic): `hostile_run` changes each
rollout's trace.json in the run's files table and computes its text pieces and findings again from the changed
rollout as the recorder does (rollout_trace/analysis/searchable.py), so the run's search reads the hostile text.
Visitors are told apart as the Space tells them: each simulated visitor sends its own X-Forwarded-For address
(documentation addresses; every request goes to 127.0.0.1).

Phases, in one run, each `--load-s` seconds:

    quiet   three light visitors open the bundled run (every event Load fires, through Gradio's queue) and page
            its index (a server function), again and again: their latencies' p95 is the baseline
    panel   the same, while one attacker loops the search panel's server function (find_search, a regex with no
            literal: every piece read) on the hostile run from 45 threads at once
    mcp     the same, while one attacker loops the MCP tool find_rollouts on the hostile run from 45 threads
    budget  twelve MCP callers (twelve addresses) search the hostile run at once: each answer's time end to end,
            against the search's public budget (2 s)

Reported: the light visitors' p95 under each attack against quiet (goal: at most 3x), how many of the attacker's
requests were answered and refused (429), and the budget phase's slowest answer (goal: within the budget plus a
second). Before the first phase the findings panel's summary of the hostile run is asked for once with `build`
(a collection's text index is built then; a run's findings are read from its columns): what it costs, and whether
it holds the server (the light visitors' p95 during it is reported too).

    .venv/bin/python bench/bench_fairness.py [--load-s 20] [--attackers 45]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402

from bench.bench_public_attacks import App, _run_for, index_page, open_source, visitor_client  # noqa: E402

HOSTILE = "attack/hostile"
VISITORS = ("198.51.100.1", "198.51.100.2", "198.51.100.3")
ATTACKER = "203.0.113.66"
PATTERN = "/x.{0,3}y/"  # no 3-character literal: every piece of every rollout is read
GOAL = {"p95_ratio": 3.0, "budget_slack_s": 1.0}


def hostile_run(dest: Path, n: int) -> Path:
    """The bundled TRL run copied to `dest`, every rollout's first agent reply making every hostile generator's call
    too (at size n): its trace.json changed in the files table, its `text_*` columns and findings computed again
    from the changed rollout (read back through the run's own reader), each shard rewritten in place."""
    import shutil

    import msgspec
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rollout_trace.analysis.searchable import RunVocab, searchable
    from rollout_trace.artifact.run import open_run
    from rollout_trace.artifact.run_format import FILES_DIR, ROLLOUTS_DIR, group_path
    from rollout_trace.artifact.run_schema import TEXT_COLUMNS
    from rollout_trace.artifact.run_shards import FILES_ROW_GROUP, write_parquet
    from rollout_trace.artifact.sources import EXAMPLES_DIR
    from support.hostile_rollouts import GENERATORS

    shutil.copytree(EXAMPLES_DIR / "trl-run", dest)
    calls = [{"id": f"call_{k}", "type": "function",
              "function": {"name": g(n)["name"], "arguments": json.dumps(g(n)["arguments"])}}
             for k, g in enumerate(GENERATORS.values())]
    shards = sorted((dest / ROLLOUTS_DIR).glob("*.parquet"))
    for shard in shards:
        files = pq.read_table(dest / FILES_DIR / shard.name)
        traces = files["file_trace"].to_pylist()
        for i, trace in enumerate(traces):
            if trace is None:
                continue
            doc = json.loads(trace)
            replies = [t["response"]["choices"][0]["message"] for t in doc["turns"] if t.get("response", {}).get("choices")]
            agent = next((m for m in replies if m.get("tool_calls")), None)  # the first agent turn (not the title call)
            if agent is not None:
                agent["tool_calls"] = agent["tool_calls"] + calls
                traces[i] = json.dumps(doc).encode()
        at = files.schema.get_field_index("file_trace")
        write_parquet(files.set_column(at, files.schema.field(at), pa.array(traces, files.schema.field(at).type)),
                      dest / FILES_DIR / shard.name, FILES_ROW_GROUP)
    run = open_run(str(dest))
    vocab = RunVocab(run.tokenizer_dir(), run.manifest.model).get()
    for shard in shards:
        rows = pq.read_table(shard)
        names = (*TEXT_COLUMNS, "findings")
        cols: dict[str, list] = {c: rows[c].to_pylist() for c in names}
        places = rows.select(["segment", "policy_version", "group_id", "rollout"]).to_pylist()
        for i, x in enumerate(places):
            if cols["text"][i]:  # a rollout with an artifact
                path = f"{group_path(x['segment'], x['policy_version'], x['group_id'])}/rollout-{x['rollout']:02d}"
                for c, v in searchable(run.open(path), vocab).items():
                    cols[c][i] = msgspec.to_builtins(v, builtin_types=(bytes,))
        for c in names:
            k = rows.schema.get_field_index(c)
            rows = rows.set_column(k, rows.schema.field(k), pa.array(cols[c], rows.schema.field(k).type))
        write_parquet(rows, shard)  # the recorder's row groups (SEAL_ROWS)
    run.close()
    return dest


def find_panel_component(app: App) -> int:
    cfg = httpx.get(app.url + "/config", timeout=30).json()
    return next(c["id"] for c in cfg["components"] if c.get("props", {}).get("elem_id") == "find-panel")


def panel_search(c: httpx.Client, component: int, src: str) -> httpx.Response:
    return c.post("/gradio_api/component_server", json={
        "session_hash": uuid.uuid4().hex[:12], "component_id": component, "fn_name": "find_search",
        "data": {"src": src, "pattern": PATTERN}})


def mcp_call(c: httpx.Client, tool: str, arguments: dict) -> httpx.Response:
    return c.post("/gradio_api/mcp/", headers={"accept": "application/json, text/event-stream"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})


def light_p95(app: App, seconds: float, attack=None, attackers: int = 0) -> dict:
    """The light visitors' p95 for `seconds` (over both kinds of request, and each kind's), with `attack(client)`
    looped by `attackers` threads meanwhile; the server's CPU seconds over the phase."""
    stop = threading.Event()
    loads: list[float] = []
    pages: list[float] = []
    answered, refused = [0], [0]
    lock = threading.Lock()

    def visitor(address: str) -> None:
        with visitor_client(app, address) as c:
            while not stop.is_set():
                load, page = open_source(c, app, "trl-run")[0], index_page(c, app, "trl-run")
                with lock:
                    loads.append(load)
                    pages.append(page)

    def attacker() -> None:
        with visitor_client(app, ATTACKER) as c:
            while not stop.is_set():
                try:
                    r = attack(c)
                except httpx.HTTPError:
                    continue
                with lock:
                    (refused if r.status_code == 429 else answered)[0] += 1

    threads = [threading.Thread(target=visitor, args=(a,)) for a in VISITORS]
    threads += [threading.Thread(target=attacker) for _ in range(attackers if attack else 0)]
    cpu = app.cpu_s()
    _run_for(threads, stop, seconds)

    def p95(xs: list[float]) -> float:
        return statistics.quantiles(xs, n=20)[18] if len(xs) > 1 else (xs[0] if xs else float("nan"))

    return {"p95": p95(loads + pages), "load_p95": p95(loads), "page_p95": p95(pages), "n": len(loads) + len(pages),
            "answered": answered[0], "refused": refused[0], "server_cpu_s": app.cpu_s() - cpu}


def _said(phase: dict) -> str:
    return (f"p95 {phase['p95'] * 1000:.0f} ms over {phase['n']} requests (Load {phase['load_p95'] * 1000:.0f} ms, "
            f"index page {phase['page_p95'] * 1000:.0f} ms; server CPU {phase['server_cpu_s']:.1f} s)")


def budget_phase(app: App, callers: int = 12) -> list[float]:
    """`callers` MCP callers, each its own address, searching the hostile run at once: each one's seconds."""
    out: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(callers)

    def one(k: int) -> None:
        with visitor_client(app, f"192.0.2.{k + 1}") as c:
            start.wait()
            t = time.perf_counter()
            r = mcp_call(c, "find_rollouts", {"source": HOSTILE, "pattern": PATTERN})
            with lock:
                out.append(time.perf_counter() - t)
                if k == 0:
                    print(f"    caller 1's answer: {r.text[:300]}")

    threads = [threading.Thread(target=one, args=(k,)) for k in range(callers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load-s", type=float, default=20.0, help="seconds of each phase")
    ap.add_argument("--attackers", type=int, default=45, help="the attacker's threads")
    ap.add_argument("--hostile-n", type=int, default=10_000, help="size unit of the hostile commands (2 bytes each)")
    args = ap.parse_args()
    from support.hub_standin import HubStandIn

    os.environ["GRADIO_MCP_SERVER"] = "True"  # the App copies this process's environment
    with tempfile.TemporaryDirectory(prefix="bench-fairness-") as tmp:
        repo = hostile_run(Path(tmp) / "hostile", args.hostile_n)
        with HubStandIn({HOSTILE: repo}) as hub:
            app = App(hub.url, Path(tmp) / "cache")
            try:
                component = find_panel_component(app)
                with visitor_client(app, VISITORS[0]) as c:  # warm: the bundled run, once
                    open_source(c, app, "trl-run")
                print(f"app up (pid {app.proc.pid}), public, MCP on; hostile run: every rollout carries "
                      f"{2 * args.hostile_n / 1e3:.0f} KB commands")
                quiet = light_p95(app, args.load_s)
                print(f"quiet: light visitors' {_said(quiet)}")

                built: dict = {}

                def build() -> None:
                    with visitor_client(app, ATTACKER) as c:
                        t, cpu = time.perf_counter(), app.cpu_s()
                        r = c.post("/gradio_api/component_server", json={
                            "session_hash": "b", "component_id": component, "fn_name": "find_summary",
                            "data": {"src": HOSTILE, "build": True}})
                        built.update(wall=time.perf_counter() - t, cpu=app.cpu_s() - cpu, reply=r.text[:200])

                builder = threading.Thread(target=build)
                builder.start()
                during = light_p95(app, args.load_s)
                builder.join()
                print(f"indexing the hostile run: {built['wall']:.1f} s, server CPU {built['cpu']:.1f} s; light "
                      f"visitors' p95 meanwhile {during['p95'] * 1000:.0f} ms ({during['p95'] / quiet['p95']:.2f}x quiet)")
                check = mcp_call(httpx.Client(base_url=app.url, timeout=60), "find_rollouts",
                                 {"source": HOSTILE, "rule": "tests-touched"})
                print(f"    find_rollouts(rule=tests-touched) on it: {len(check.content):,} bytes: {check.text[:300]}")

                results = {}
                for name, attack in (("panel", lambda c: panel_search(c, component, HOSTILE)),
                                     ("mcp", lambda c: mcp_call(c, "find_rollouts",
                                                               {"source": HOSTILE, "pattern": PATTERN}))):
                    loud = light_p95(app, args.load_s, attack, args.attackers)
                    results[name] = loud["p95"] / quiet["p95"]
                    print(f"{name}: {args.attackers} attacker threads looping ({loud['answered']} answered, "
                          f"{loud['refused']} refused with 429): light visitors' {_said(loud)} = {results[name]:.2f}x "
                          f"quiet (goal <= {GOAL['p95_ratio']}x)")
                took = budget_phase(app)
                from viewer.find.query import BUDGET_S_PUBLIC

                print("budget: 12 MCP callers at once, each answered in " + ", ".join(f"{s:.1f}" for s in took)
                      + f" s (budget {BUDGET_S_PUBLIC:g} s; goal: the slowest within {GOAL['budget_slack_s']:g} s of it)")
                ok = all(r <= GOAL["p95_ratio"] for r in results.values()) and \
                    took[-1] <= BUDGET_S_PUBLIC + GOAL["budget_slack_s"]
                print(json.dumps({"quiet_p95_s": quiet["p95"], "ratios": results, "budget_slowest_s": took[-1]}))
                print("all goals met" if ok else "a goal was missed")
            finally:
                app.close()


if __name__ == "__main__":
    main()
