"""What an attacker costs a public Space: three hostile Hub runs, opened as a visitor opens them, against the app
running as its own process in public mode (SPACE_ID set), the Hub a loopback stand-in (tests/support/hub_standin.py).

    (a) a run whose index holds one 100 MB line
    (b) a run of 100,000 versions (one group of one rollout each: 100,000 index lines)
    (c) ten followers of one Hub run that has not ended

and, for scale, the largest run a public visitor may open (19,200 rollouts, just inside viewer/ui/visitor.py's
MAX_ROWS): what a visitor who is let in costs.

For (a) and (b) a visitor presses Load with the run's id (every event the Load button fires: the collection
index, the run page, the search panel, through Gradio's queue as the page sends them), one at a time: the
server process's CPU seconds (utime + stime) and its peak resident memory above what it held before are that
visitor's cost; the reply's bytes are summed. Then the attack repeats on two attacker threads while three
other visitors open the bundled run and page its index: their request latencies' p95 against the same
visitors' p95 with no attacker (quiet), measured in the same run. For (c) ten sessions open the live run and
their timers tick (every POLL_S, as the page's gr.Timer does) for `--follow-s` seconds; the stand-in counts
the Hub requests for that run.

Targets: (a), (b) at most 2 s of server CPU and 100 MB of server memory per visitor; others' p95 at most 1.5x
quiet while the attack runs; (c) at most one Hub request per 5 s per run.

    .venv/bin/python bench/bench_public_attacks.py [--rounds 3] [--follow-s 30]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
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
import psutil  # noqa: E402

from processes import free_port  # noqa: E402

LINE_BYTES = 100 * 10**6
VERSIONS = 100_000
FOLLOWERS = 10
TARGETS = {"cpu_s": 2.0, "memory_mb": 100.0, "p95_ratio": 1.5, "hub_s_per_request": 5.0}


def make_repos(tmp: Path) -> dict[str, Path]:
    """The three hostile runs (and nothing else) as Hub dataset folders."""
    from bench.bench_run_page import make_run
    from rollout_trace.artifact.sources import EXAMPLES_DIR

    line = tmp / "line"
    make_run(line, versions=2, groups=1, k=2)
    index = next((line / "index").iterdir())
    with open(index, "ab") as f:  # one line of 100 MB: a JSON object whose title is the whole line
        f.write(b'{"title":"')
        chunk = b"a" * 2**20
        left = LINE_BYTES - 12
        while left > 0:
            f.write(chunk[:left])
            left -= len(chunk)
        f.write(b'"}\n')
    versions = tmp / "versions"
    make_run(versions, versions=VERSIONS, groups=1, k=1)
    inside = tmp / "inside"  # the largest a public visitor may open: just inside MAX_ROWS
    make_run(inside, versions=2_400, groups=1, k=8)
    live = tmp / "live"
    shutil.copytree(EXAMPLES_DIR / "trl-run", live)
    for end in (live / "segments").glob("*.end.json"):
        end.unlink()  # a segment that has not ended: the page follows it
    return {"attack/line": line, "attack/versions": versions, "attack/inside": inside, "attack/live": live}


class App:
    """The app as its own process, public (SPACE_ID), its Hub the stand-in at `hub_url`."""

    def __init__(self, hub_url: str, cache: Path):
        self.port = free_port()
        env = {**os.environ, "SPACE_ID": "bench/public-attacks", "HF_ENDPOINT": hub_url, "HF_HUB_CACHE": str(cache),
               "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRL_EXPERIMENTAL_SILENCE": "1",
               "GRADIO_ANALYTICS_ENABLED": "False"}
        env.pop("HF_TOKEN", None)
        self.proc = subprocess.Popen([sys.executable, "app.py", "--port", str(self.port), "scripted-smollm2"],
                                     cwd=ROOT, env=env, start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.url = f"http://127.0.0.1:{self.port}"
        self.ps = psutil.Process(self.proc.pid)
        for _ in range(600):
            try:
                if httpx.get(self.url + "/config", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                raise SystemExit("the app exited: " + self.proc.stderr.read().decode()[-2000:])
            time.sleep(0.5)
        cfg = httpx.get(self.url + "/config", timeout=30).json()
        ids = {c.get("props", {}).get("elem_id"): c["id"] for c in cfg["components"]}
        deps = cfg["dependencies"]
        self.load_fns = [d["id"] for d in deps if [ids["load"], "click"] in d["targets"]]
        self.tick_fns = [d["id"] for d in deps if any(t[1] == "tick" for t in d["targets"])]
        self.index_component = ids.get("collection-index") or next(
            (c["id"] for c in cfg["components"] if "index" in (c.get("props", {}).get("elem_id") or "")), None)

    def cpu_s(self) -> float:
        t = self.ps.cpu_times()
        return t.user + t.system + t.children_user + t.children_system

    def rss_mb(self) -> float:
        return self.ps.memory_info().rss / 2**20

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def call(client: httpx.Client, fns: list[int], data: list, session: str) -> tuple[float, int, str]:
    """Events through Gradio's queue as the page sends them (joined at once, one event stream for the session):
    (seconds until the last completed, reply bytes, the completed messages' text)."""
    t = time.perf_counter()
    waiting = set()
    for fn in fns:
        r = client.post("/gradio_api/queue/join", json={"data": data, "fn_index": fn, "session_hash": session,
                                                        "event_data": None, "trigger_id": None})
        r.raise_for_status()
        waiting.add(r.json()["event_id"])
    size, texts = 0, []
    with client.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            size += len(line)
            if not line.startswith("data:"):
                continue
            msg = json.loads(line[5:])
            if msg.get("msg") == "process_completed":
                waiting.discard(msg.get("event_id"))
                texts.append(line[:200_000])
            if not waiting or msg.get("msg") == "close_stream":
                break
    return time.perf_counter() - t, size, " ".join(texts)


def open_source(client: httpx.Client, app: App, src: str, session: str | None = None) -> tuple[float, int, str]:
    """A visitor pressing Load with `src`: every event the button fires, as the page sends them at once."""
    return call(client, app.load_fns, [src], session or uuid.uuid4().hex[:12])


def index_page(client: httpx.Client, app: App, src: str) -> float:
    """A server function the index calls to page and sort (skips the queue)."""
    t = time.perf_counter()
    client.post("/gradio_api/component_server", json={"session_hash": uuid.uuid4().hex[:12], "component_id":
                app.index_component, "fn_name": "index", "data": {"src": src, "query": "page=2&sort=-reward"}})
    return time.perf_counter() - t


def attack_alone(app: App, src: str, rounds: int) -> dict:
    """One attacker visitor at a time: server CPU, peak memory above the start, reply bytes, the message."""
    out = []
    with httpx.Client(base_url=app.url, timeout=600) as client:
        for _ in range(rounds):
            before_cpu, before_rss = app.cpu_s(), app.rss_mb()
            peak = [before_rss]
            stop = threading.Event()

            def sample(stop: threading.Event = stop, peak: list[float] = peak) -> None:
                while not stop.is_set():
                    peak[0] = max(peak[0], app.rss_mb())
                    time.sleep(0.02)

            th = threading.Thread(target=sample)
            th.start()
            wall, size, text = open_source(client, app, src)
            stop.set()
            th.join()
            out.append({"wall_s": wall, "cpu_s": app.cpu_s() - before_cpu, "memory_mb": peak[0] - before_rss,
                        "reply_bytes": size, "rss_mb": app.rss_mb()})
    said = next((m for m in ("at most", "more than", "too much") if m in text), None)
    snippet = ""
    if said is not None:
        i = text.find(said)
        snippet = text[max(0, i - 300):i + 120].replace("\\n", " ")
    return {"rounds": out, "message": snippet}


def others_p95(app: App, seconds: float, attacker: str | None) -> tuple[float, int]:
    """Three visitors opening the bundled run and paging its index for `seconds`, while two attackers (when
    `attacker` names a source) open it again and again: the visitors' p95 latency and request count."""
    stop = threading.Event()
    lat: list[float] = []
    lock = threading.Lock()

    def visitor() -> None:
        with httpx.Client(base_url=app.url, timeout=600) as c:
            while not stop.is_set():
                got = [open_source(c, app, "trl-run")[0], index_page(c, app, "trl-run")]
                with lock:
                    lat.extend(got)

    def attack() -> None:
        with httpx.Client(base_url=app.url, timeout=600) as c:
            while not stop.is_set():
                open_source(c, app, attacker)  # type: ignore[arg-type]

    threads = [threading.Thread(target=visitor) for _ in range(3)]
    threads += [threading.Thread(target=attack) for _ in range(2 if attacker else 0)]
    _run_for(threads, stop, seconds)
    return statistics.quantiles(lat, n=20)[18], len(lat)


def _run_for(threads: list[threading.Thread], stop: threading.Event, seconds: float) -> None:
    """Start `threads`, let them run `seconds`, then set `stop` and wait for each."""
    for th in threads:
        th.start()
    time.sleep(seconds)
    stop.set()
    for th in threads:
        th.join()


def follow(app: App, hub, src: str, seconds: float) -> dict:
    """Ten followers of a live Hub run: each opens it, then its timer ticks every POLL_S."""
    from viewer.ui.run_view import POLL_S

    sessions = [uuid.uuid4().hex[:12] for _ in range(FOLLOWERS)]
    with httpx.Client(base_url=app.url, timeout=600) as client:
        for s in sessions:
            open_source(client, app, src, session=s)
    repo = src.split("/", 1)
    before = len([p for p in hub.paths() if f"/{repo[0]}/{repo[1]}" in p])
    stop = threading.Event()
    ticks = [0]

    def ticker(session: str) -> None:
        with httpx.Client(base_url=app.url, timeout=600) as c:
            while not stop.is_set():
                call(c, app.tick_fns, [None], session)
                ticks[0] += 1
                stop.wait(POLL_S)

    threads = [threading.Thread(target=ticker, args=(s,)) for s in sessions]
    t = time.perf_counter()
    _run_for(threads, stop, seconds)
    span = time.perf_counter() - t
    asked = len([p for p in hub.paths() if f"/{repo[0]}/{repo[1]}" in p]) - before
    return {"followers": FOLLOWERS, "seconds": span, "ticks": ticks[0], "hub_requests": asked,
            "s_per_request": span / asked if asked else float("inf")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--load-s", type=float, default=20.0, help="seconds of each latency phase")
    ap.add_argument("--follow-s", type=float, default=30.0)
    args = ap.parse_args()
    from support.hub_standin import HubStandIn

    with tempfile.TemporaryDirectory(prefix="bench-attacks-") as tmp:
        t = time.perf_counter()
        repos = make_repos(Path(tmp))
        print(f"hostile runs written in {time.perf_counter() - t:.1f} s: " + ", ".join(
            f"{k} {sum(f.stat().st_size for f in v.rglob('*') if f.is_file()) / 1e6:.0f} MB" for k, v in repos.items()))
        with HubStandIn(repos) as hub:
            app = App(hub.url, Path(tmp) / "cache")
            try:
                with httpx.Client(base_url=app.url, timeout=600) as c:  # warm: the bundled run, once
                    open_source(c, app, "trl-run")
                print(f"app up (pid {app.proc.pid}), rss {app.rss_mb():.0f} MB; Load fires {len(app.load_fns)} events")
                results = {}
                for name, src in (("a: one 100 MB index line", "attack/line"),
                                  (f"b: {VERSIONS:,} versions", "attack/versions"),
                                  ("inside the bounds: 2,400 versions x 8 rollouts", "attack/inside")):
                    got = attack_alone(app, src, args.rounds)
                    cpu = max(r["cpu_s"] for r in got["rounds"])
                    mem = max(r["memory_mb"] for r in got["rounds"])
                    print(f"({name}) per visitor: server CPU " + ", ".join(f"{r['cpu_s']:.2f}" for r in got["rounds"])
                          + " s; server memory +" + ", ".join(f"{r['memory_mb']:.0f}" for r in got["rounds"])
                          + " MB; replies " + ", ".join(f"{r['reply_bytes'] / 1e3:.1f} kB" for r in got["rounds"])
                          + f"; wall {statistics.median(r['wall_s'] for r in got['rounds']):.2f} s; server rss after "
                          f"{got['rounds'][-1]['rss_mb']:.0f} MB")
                    print(f"    the visitor is told: …{got['message'][-300:]}")
                    results[name] = (cpu, mem)
                quiet, n_quiet = others_p95(app, args.load_s, None)
                print(f"others, quiet: p95 {quiet * 1000:.0f} ms over {n_quiet} requests")
                ratios = {}
                for name, src in (("a", "attack/line"), ("b", "attack/versions")):
                    loud, n_loud = others_p95(app, args.load_s, src)
                    ratios[name] = loud / quiet
                    print(f"others, under attack ({name}, two attackers): p95 {loud * 1000:.0f} ms over {n_loud} "
                          f"requests: {loud / quiet:.2f}x quiet (target <= {TARGETS['p95_ratio']}x)")
                f = follow(app, hub, "attack/live", args.follow_s)
                print(f"(c) {f['followers']} followers, {f['ticks']} timer ticks in {f['seconds']:.0f} s: "
                      f"{f['hub_requests']} Hub requests for the run, one per {f['s_per_request']:.1f} s "
                      f"(target: at most one per {TARGETS['hub_s_per_request']:.0f} s)")
                ok = all(c <= TARGETS["cpu_s"] and m <= TARGETS["memory_mb"] for c, m in results.values()) and \
                    all(r <= TARGETS["p95_ratio"] for r in ratios.values()) and \
                    f["s_per_request"] >= TARGETS["hub_s_per_request"]
                print("all targets met" if ok else "a target was missed")
            finally:
                app.close()


if __name__ == "__main__":
    main()
