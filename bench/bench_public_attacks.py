"""What an attacker costs a public Space: hostile Hub runs, opened as a visitor opens them, against the app
running as its own process in public mode (SPACE_ID set), the Hub a loopback stand-in (tests/support/hub_standin.py).

    (a) a run whose rollouts table holds a shard with a 100 MB title: of 100 MB of one letter (a shard of a few
        KB that decompresses to 100 MB), and of 100 MB of base64 noise (a shard of about 75 MB)
    (b) a run of 100,000 versions (one group of one rollout each: 100,000 rows)
    (c) ten followers of one Hub run that has not ended

and, for scale, the largest run a public visitor may open (19,200 rollouts, just inside viewer/ui/visitor.py's
MAX_ROWS): what a visitor who is let in costs.

The runs are bench/make_run.py's (format 2: real bundled rollouts written through the recorder's shard writer);
the hostile shard of (a) is one more shard of the same segment, written by the same writer: a copy of the run's
first rollout at a new version and group, its title replaced.

For (a) and (b) a visitor presses Load with the run's id (every event the Load button fires: the collection
index, the run page, the search panel, through Gradio's queue as the page sends them), one at a time: the
server process's CPU seconds (utime + stime) and its peak resident memory above what it held before are that
visitor's cost; the reply's bytes are summed. Then the attack repeats on two attacker threads while three
other visitors open the bundled run and page its index: their request latencies' p95 against the same
visitors' p95 with no attacker (quiet), measured in the same run. For (c) ten sessions open the live run and
their timers tick (every POLL_S, as the page's gr.Timer does) for `--follow-s` seconds; the stand-in counts
the Hub requests for that run. Visitors are told apart as the Space tells them (viewer/ui/in_flight.py): each
sends its own X-Forwarded-For address (documentation addresses; every request goes to 127.0.0.1), and an event
the app refuses to queue for its visitor (429: too many of theirs in flight) is counted, not timed.

Targets: (a), (b) at most 2 s of server CPU and 100 MB of server memory per visitor; others' p95 at most 1.5x
quiet while the attack runs; (c) at most one Hub request per 5 s per run.

Measured on the 2-core machine (2 rounds, 20 s of following): (a) 0.12-0.14 s and +1-2 MB for the first visitor
(the title named and read as missing), 0.03-0.04 s after; (b) 1.65 s and +183 MB for the first visitor (the
snapshot, 100,000 versions' numbers as Python objects and a 1.9 MB reply: the memory is over its target; 2.06 s
before a version's few rewards were summarised as Python floats), 0.18 s and +6 MB after; inside the bounds
(19,200 rollouts) 1.07 s and +80 MB, then 0.06 s; others' p95 0.96-1.01x quiet under (a), 1.09-1.33x under
(b); (c) one Hub request per 10 s.

    .venv/bin/python bench/bench_public_attacks.py [--rounds 3] [--follow-s 30] [--versions 100000] [--title-mb 100]
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

TITLE_BYTES = 100 * 10**6
VERSIONS = 100_000
FOLLOWERS = 10
VISITORS = ("198.51.100.1", "198.51.100.2", "198.51.100.3")
ATTACKERS = ("203.0.113.66", "203.0.113.67")
TARGETS = {"cpu_s": 2.0, "memory_mb": 100.0, "p95_ratio": 1.5, "hub_s_per_request": 5.0}


def hostile_title(root: Path, title: str) -> None:
    """One more shard in the run at `root`: a copy of one bundled rollout at a new version and group of the run's
    segment whose title is `title`, appended and sealed by the recorder's one writer (RolloutWriter: its files into
    the files table, its row into the rollouts table)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from bench.make_run import SEGMENT
    from rollout_trace.artifact.run_format import ROLLOUTS_DIR
    from rollout_trace.artifact.run_schema import ROLLOUTS
    from rollout_trace.artifact.run_shards import RolloutWriter
    from support.run_places import placed
    from support.run_tables import bundled_rows

    keys = pa.concat_tables(pq.read_table(s, columns=["policy_version", "group_id"])
                            for s in sorted((root / ROLLOUTS_DIR).glob("*.parquet")))
    rows = bundled_rows()
    one = rows.filter(pc.is_valid(rows["path"])).slice(0, 1)
    row = placed(one, version=pc.max(keys["policy_version"]).as_py() + 1, group_id=pc.max(keys["group_id"]).as_py() + 1,
                 segment=SEGMENT)
    row = row.set_column(row.schema.get_field_index("title"), ROLLOUTS.field("title"), pa.array([title], pa.string()))
    writer = RolloutWriter(root, SEGMENT)
    writer.append(row)
    writer.close()


def make_repos(tmp: Path, versions: int = VERSIONS, title_bytes: int = TITLE_BYTES) -> dict[str, Path]:
    """The hostile runs (and nothing else) as Hub dataset folders."""
    import base64

    from bench.bench_run_page import make_run
    from rollout_trace.artifact.sources import EXAMPLES_DIR

    title, noise = tmp / "title", tmp / "noise"
    for root, text in ((title, "a" * title_bytes),
                       (noise, base64.b64encode(os.urandom(title_bytes * 3 // 4)).decode())):
        make_run(root, versions=2, groups=1, k=2)
        hostile_title(root, text)
    many = tmp / "versions"
    make_run(many, versions=versions, groups=1, k=1)
    inside = tmp / "inside"  # the largest a public visitor may open: just inside MAX_ROWS
    make_run(inside, versions=2_400, groups=1, k=8)
    live = tmp / "live"
    shutil.copytree(EXAMPLES_DIR / "trl-run", live)
    for end in (live / "segments").glob("*.end.json"):
        end.unlink()  # a segment that has not ended: the page follows it
    return {"attack/title": title, "attack/noise": noise, "attack/versions": many, "attack/inside": inside,
            "attack/live": live}


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


def visitor_client(app: App, address: str) -> httpx.Client:
    """A visitor's connection: the Space's proxy names them by the address it appends to X-Forwarded-For."""
    return httpx.Client(base_url=app.url, timeout=600, headers={"X-Forwarded-For": address})


def refused(e: httpx.HTTPStatusError) -> bool:
    """The app declined to queue the event: too many of this visitor's in flight (viewer/ui/in_flight.py)."""
    return e.response.status_code == 429


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
    with visitor_client(app, ATTACKERS[0]) as client:
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


def others_p95(app: App, seconds: float, attacker: str | None) -> tuple[float, int, dict[str, int]]:
    """Three visitors opening the bundled run and paging its index for `seconds`, while two attackers (when
    `attacker` names a source) open it again and again: the visitors' p95 latency and request count, and the
    events the app refused to queue (429), the visitors' and the attackers'."""
    stop = threading.Event()
    lat: list[float] = []
    said_no = {"visitors": 0, "attackers": 0}
    lock = threading.Lock()

    def visitor(address: str) -> None:
        with visitor_client(app, address) as c:
            while not stop.is_set():
                try:
                    got = [open_source(c, app, "trl-run")[0], index_page(c, app, "trl-run")]
                except httpx.HTTPStatusError as e:
                    if not refused(e):
                        raise
                    with lock:
                        said_no["visitors"] += 1
                    continue
                with lock:
                    lat.extend(got)

    def attack(address: str) -> None:
        with visitor_client(app, address) as c:
            while not stop.is_set():
                try:
                    open_source(c, app, attacker)  # type: ignore[arg-type]
                except httpx.HTTPStatusError as e:
                    if not refused(e):
                        raise
                    with lock:
                        said_no["attackers"] += 1

    threads = [threading.Thread(target=visitor, args=(a,)) for a in VISITORS]
    threads += [threading.Thread(target=attack, args=(a,)) for a in (ATTACKERS if attacker else ())]
    _run_for(threads, stop, seconds)
    p95 = statistics.quantiles(lat, n=20)[18] if len(lat) > 1 else (lat[0] if lat else float("nan"))
    return p95, len(lat), said_no


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
    for k, s in enumerate(sessions):  # ten visitors, each of an address of their own
        with visitor_client(app, f"192.0.2.{k + 1}") as client:
            open_source(client, app, src, session=s)
    repo = src.split("/", 1)
    before = len([p for p in hub.paths() if f"/{repo[0]}/{repo[1]}" in p])
    stop = threading.Event()
    ticks = [0]

    def ticker(session: str, address: str) -> None:
        with visitor_client(app, address) as c:
            while not stop.is_set():
                call(c, app.tick_fns, [None], session)
                ticks[0] += 1
                stop.wait(POLL_S)

    threads = [threading.Thread(target=ticker, args=(s, f"192.0.2.{k + 1}")) for k, s in enumerate(sessions)]
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
    ap.add_argument("--versions", type=int, default=VERSIONS, help="versions of the run of (b)")
    ap.add_argument("--title-mb", type=float, default=TITLE_BYTES / 1e6, help="the title of (a), in MB")
    args = ap.parse_args()
    from support.hub_standin import HubStandIn

    with tempfile.TemporaryDirectory(prefix="bench-attacks-") as tmp:
        t = time.perf_counter()
        repos = make_repos(Path(tmp), args.versions, int(args.title_mb * 1e6))
        print(f"hostile runs written in {time.perf_counter() - t:.1f} s: " + ", ".join(
            f"{k} {sum(f.stat().st_size for f in v.rglob('*') if f.is_file()) / 1e6:.0f} MB" for k, v in repos.items()))
        with HubStandIn(repos) as hub:
            app = App(hub.url, Path(tmp) / "cache")
            try:
                with visitor_client(app, VISITORS[0]) as c:  # warm: the bundled run, once
                    open_source(c, app, "trl-run")
                print(f"app up (pid {app.proc.pid}), rss {app.rss_mb():.0f} MB; Load fires {len(app.load_fns)} events")
                results = {}
                for name, src in ((f"a: a shard holding a {args.title_mb:g} MB title of one letter", "attack/title"),
                                  (f"a: a shard holding a {args.title_mb:g} MB title of noise", "attack/noise"),
                                  (f"b: {args.versions:,} versions", "attack/versions"),
                                  ("inside the bounds: 2,400 versions x 8 rollouts", "attack/inside")):
                    got = attack_alone(app, src, args.rounds)
                    cpu = max(r["cpu_s"] for r in got["rounds"])
                    mem = max(r["memory_mb"] for r in got["rounds"])
                    print(f"({name}) per visitor: server CPU " + ", ".join(f"{r['cpu_s']:.2f}" for r in got["rounds"])
                          + " s; server memory +" + ", ".join(f"{r['memory_mb']:.0f}" for r in got["rounds"])
                          + " MB; replies " + ", ".join(f"{r['reply_bytes'] / 1e3:.1f} kB" for r in got["rounds"])
                          + f"; wall {statistics.median(r['wall_s'] for r in got['rounds']):.2f} s; server rss after "
                          f"{got['rounds'][-1]['rss_mb']:.0f} MB")
                    print(f"    the visitor is told: …{got['message'][-300:]}" if got["message"] else
                          "    the visitor is told no bound: the run opened")
                    results[name] = (cpu, mem)
                quiet, n_quiet, no = others_p95(app, args.load_s, None)
                print(f"others, quiet: p95 {quiet * 1000:.0f} ms over {n_quiet} requests ({no['visitors']} refused)")
                ratios = {}
                for name, src in (("a", "attack/title"), ("b", "attack/versions")):
                    loud, n_loud, no = others_p95(app, args.load_s, src)
                    ratios[name] = loud / quiet
                    print(f"others, under attack ({name}, two attackers): p95 {loud * 1000:.0f} ms over {n_loud} "
                          f"requests: {loud / quiet:.2f}x quiet (target <= {TARGETS['p95_ratio']}x); refused (429): "
                          f"{no['visitors']} of the visitors' loads, {no['attackers']} of the attackers'")
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
