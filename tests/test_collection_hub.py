"""Collections on the Hub, through the real huggingface_hub client talking to a loopback stand-in.

huggingface_hub reads HF_ENDPOINT into `constants.ENDPOINT` (and the resolve URL template) once, at
import, so the tests point those constants at the stand-in instead of setting the variable; the
cache folder and offline switch are read per call from `constants` too, and are patched the same way.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from test_collection import PATHS

from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.collection import open_collection
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support.collection_data import build
from support.hub_standin import SHA, HubStandIn


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    repo = build(tmp_path / "repo" / "runs")
    (repo.parent / "README.md").write_text("a dataset card, not a rollout")
    with HubStandIn({"org/rollouts": repo.parent}, page_size=25) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        yield hub, repo


def test_hub_index_lists_once_and_fetches_only_small_files(hub_env):
    hub, repo = hub_env
    c = open_collection("org/rollouts")
    assert c.kind == "hub" and [r.path for r in c.records] == ["runs/" + p for p in PATHS]
    local = {r.path: r for r in open_collection(str(repo)).records}
    for r in c.records:  # the same rows as the folder they came from
        twin = local[r.path.removeprefix("runs/")]
        assert (r.valid, r.model, r.reward, r.trained_turns, r.tools, r.k, r.rewards, r.turns_bytes) == (
            twin.valid, twin.model, twin.reward, twin.trained_turns, twin.tools, twin.k, twin.rewards, twin.turns_bytes)
    trees = [p for p in hub.paths("GET") if "/tree/" in p]
    assert len(trees) > 1 and all(p.endswith(f"/tree/{SHA}") for p in trees)  # one listing, several pages, one commit
    fetched = {p.rsplit("/", 1)[-1] for p in hub.paths() if "/resolve/" in p}
    assert fetched == {"summary.json", "task.json", "group.json"}  # never turns.json, trace.json, tokenizer files
    assert not [p for p in hub.paths() if "/resolve/" in p and f"/resolve/{SHA}/" not in p]


def test_hub_second_open_uses_the_cache_then_works_offline(hub_env):
    from huggingface_hub import constants

    hub, _ = hub_env
    first = open_collection("org/rollouts")
    hub.requests.clear()
    again = open_collection("org/rollouts")
    assert [r for r in again.records] == [r for r in first.records]
    assert [p for p in hub.paths() if "/resolve/" in p] == []  # pinned to a commit: cached files need no request
    hub.requests.clear()
    constants.HF_HUB_OFFLINE = True  # restored by monkeypatch
    offline = open_collection("org/rollouts")
    assert hub.requests == []
    assert {r.path for r in offline.records} == {r.path for r in first.records}
    assert {r.path: r.reward for r in offline.records} == {r.path: r.reward for r in first.records}
    assert any("offline" in n for n in offline.notes)


def test_hub_subfolder_revision_and_open(hub_env):
    hub, _ = hub_env
    c = open_collection("org/rollouts@main:runs/grp")
    assert [r.path for r in c.records] == ["", "rollout-00", "rollout-01", "rollout-02", "rollout-03"]
    assert c.records[0].kind == "group" and c.records[0].valid
    assert c.source_of("rollout-01") == f"org/rollouts@{SHA}:runs/grp/rollout-01"
    art = c.open("rollout-01")  # the full read downloads that rollout's files only
    assert len(art.turns) == 3 and art.summary.reward_after_penalties == 0.3
    turns = [p for p in hub.paths("GET") if p.endswith("turns.json")]
    assert turns == [f"/datasets/org/rollouts/resolve/{SHA}/runs/grp/rollout-01/turns.json"]


def test_hub_errors_are_messages(hub_env):
    with pytest.raises(ArtifactError, match="no such dataset repo"):
        open_collection("org/missing")
    with pytest.raises(ArtifactError, match="has no revision 'v9'"):
        open_collection("org/rollouts@v9")


def test_hub_invalid_rows_and_cli_json(hub_env, capfd):
    from viewer.cli import main

    hub, repo = hub_env
    (repo / "a" / "summary.json").write_text("{")
    assert main(["ls", "org/rollouts", "--json", "--valid", "no"]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert [r["path"] for r in doc["records"]] == ["runs/a", "runs/broken/c"]
    assert doc["records"][0]["problem"].startswith("runs/a/summary.json: the file is truncated")
    assert not [p for p in hub.paths() if p.endswith(("turns.json", "trace.json"))]


def test_hub_check_collection_and_single(hub_env, capfd):
    from viewer.cli import main

    assert main(["check", "org/rollouts"]) == 1
    out = capfd.readouterr().out
    assert "INVALID runs/broken/c\n" in out and "INVALID runs/broken/d\n" in out and "OK runs/grp/rollout-03\n" in out
    assert out.rstrip().endswith("7 of 9 valid; invalid: runs/broken/c, runs/broken/d")
    assert main(["check", "org/rollouts:runs/a"]) == 0  # one artifact: today's single check


def test_a_hub_run_opens_asking_for_its_commit_once_and_each_folder_once(tmp_path, monkeypatch):
    """Opening a run on the Hub as the app does (`open_collection`) resolves its revision once and lists each of its
    folders once before its first shard is read: the store that found the run's run.json opens the run, and a
    folder at a commit never changes; its small files are read side by side. Each of these requests is a round
    trip before the page can be made."""
    with HubStandIn({"org/run": EXAMPLES_DIR / "trl-run"}) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        c = open_collection("org/run")
        assert c.run is not None and len(c.run.table) == 52
        gets = hub.paths("GET")
        # up to the first shard's read (huggingface_hub's file system, which asks for the commit and the shard's
        # folder on its own first)
        before = gets[:next(i for i, p in enumerate(gets) if "/revision/" in p or p.endswith(".parquet"))]
        assert [p for p in before if p.rstrip("/") == "/api/datasets/org/run"] == ["/api/datasets/org/run"], before
        folders = Counter(p.split("/tree/", 1)[1] for p in before if "/tree/" in p)
        assert {f"{SHA}", f"{SHA}/rollouts", f"{SHA}/consumed", f"{SHA}/segments"} <= set(folders), folders
        assert max(folders.values()) == 1, folders
        assert not {f"{SHA}/index", f"{SHA}/rescored"} & set(folders)  # not in the repo's listing: not asked for
        # its small files (run.json, the segments' and the consumption's) read side by side once listed
        first_file = next(i for i, p in enumerate(before) if "/resolve/" in p)
        assert not [p for p in before[first_file:] if "/tree/" in p], before


def test_a_hub_stores_files_read_on_several_threads_list_their_folder_once(tmp_path, monkeypatch):
    """A run's shards are read several at once (run_table.in_order: the first alone, then the rest on threads),
    each through huggingface_hub's file system, which lists a file's folder before its first read. Its instances
    are one per thread, a new one starting from the main thread's state, and the app reads on its request threads:
    each reading thread listed the folder again. The store reads through one file system: the first read lists
    the folder for every thread."""
    import threading

    from bench.make_run import make as make_run
    from rollout_trace.artifact.stores import store_for

    repo = tmp_path / "repo"
    make_run(repo, versions=20, groups=2, k=4, rare_every=0, seal_rows=16)
    names = sorted(p.name for p in (repo / "rollouts").glob("*.parquet"))
    assert len(names) >= 5
    with HubStandIn({"org/run": repo}) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        store = store_for("org/run")
        together = threading.Barrier(len(names) - 1)  # the others on threads alive at once (each its own ident)
        got: list[bytes] = []

        def read(name: str, wait: bool = True) -> None:
            if wait:
                together.wait()
            with store.open(f"rollouts/{name}") as f:
                got.append(f.read(4))

        def request() -> None:  # as a request's handler does, on a thread of its own
            read(names[0], wait=False)  # the first, alone
            threads = [threading.Thread(target=read, args=(n,)) for n in names[1:]]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        handler = threading.Thread(target=request)
        handler.start()
        handler.join()
        assert got == [b"PAR1"] * len(names)
        listed = [p for p in hub.paths("GET") if p.endswith(f"/tree/{SHA}/rollouts")]
        assert len(listed) == 1, listed


def test_a_hub_runs_problems_come_in_the_order_of_its_shards_whichever_read_ends_first(tmp_path, monkeypatch):
    """A Hub run's shards are read several at once, and its consumption table beside its rollouts: what each read
    finds is said in the shards' order, rollouts before consumption, as the same run read from its folder (one
    shard after another) says it, however the reads interleave. Here the first bad shard's read ends last."""
    import time

    from bench.make_run import make as make_run
    from rollout_trace.artifact import run_shards, run_table
    from rollout_trace.artifact.run import open_run

    repo = tmp_path / "repo"
    make_run(repo, versions=20, groups=2, k=4, rare_every=0, seal_rows=16)
    shards = sorted((repo / "rollouts").glob("*.parquet"))
    consumed = sorted((repo / "consumed").glob("*.parquet"))
    assert len(shards) >= 5 and consumed
    for bad in (shards[1], shards[3], consumed[0]):
        bad.write_bytes(b"PAR1" + b"not a table" * 100)
    local = [str(p) for p in open_run(str(repo)).problems]
    assert len(local) == 3 and "rollouts/" + shards[1].name in local[0] and "consumed/" in local[2]
    real = run_table.read_columns

    def slow(open_file, path, *args, **kwargs):  # the first bad shard's read, and the consumption's, end last
        if path.endswith((shards[1].name, consumed[0].name)):
            time.sleep(0.3)
        return real(open_file, path, *args, **kwargs)

    monkeypatch.setattr(run_table, "read_columns", slow)
    assert run_shards.read_columns is not slow
    with HubStandIn({"org/run": repo}) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        assert [str(p) for p in open_run("org/run").problems] == local
