"""A Hub revision is a branch, tag or commit name, never a path.

huggingface_hub 2.4.0 joins a revision into its cache as `refs/<revision>` (and then the commit a ref
file holds as `snapshots/<commit>`), so `org/name@/some/server/folder` once listed that folder offline,
and online `org/name@<an uploaded file holding a path>` opened the artifact at that path. These tests
play both attacks against a public app: offline from the page link, the Load button and the `index`
server function; online against the loopback Hub stand-in. Real cached datasets still open."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLE
from rollout_trace.artifact import ArtifactError, open_artifact
from rollout_trace.artifact.collection import open_collection
from rollout_trace.artifact.sources import parse_hub_id, revision_ok
from support.collection_data import build
from support.hub_standin import SHA, HubStandIn
from viewer.ui.collection_view import CollectionView
from viewer.ui.service import Service
from viewer.ui.view_tab import ViewTab

COMMIT = "c" * 40


@pytest.mark.parametrize("rev", ["main", "v1.0", "refs/pr/3", "refs/convert/parquet", "feature/x-1", "_a", SHA])
def test_branch_tag_and_commit_names_are_revisions(rev):
    assert revision_ok(rev)
    ref = parse_hub_id(f"org/name@{rev}:runs/7")
    assert ref is not None and (ref.revision, ref.subfolder) == (rev, "runs/7")


@pytest.mark.parametrize("rev", ["/etc", "/tmp/gradio/x/ref.txt", "..", "a/../b", "a//b", "a/", ".hidden",
                                 "x.lock", "x.", "a/./b", "ü", "a\\b", "a b"])
def test_paths_are_not_revisions(rev):
    assert not revision_ok(rev)
    assert parse_hub_id(f"org/name@{rev}") is None


@pytest.mark.parametrize("text", ["org/name:../x", "org/name:a//b", "org/name:./a", "org--x/name", "org/na..me",
                                  "org/name.git", "o/" + "n" * 97])
def test_hub_ids_follow_huggingface_hubs_rules(text):
    assert parse_hub_id(text) is None


def secret_collection(tmp_path: Path) -> Path:
    """A server folder a visitor must never see: a collection of two rollouts."""
    return build(tmp_path / "server-only" / "runs")


@pytest.fixture
def offline_cache(tmp_path, monkeypatch) -> Path:
    from huggingface_hub import constants

    cache = tmp_path / "hub-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return cache


def errors_of(value: str) -> str:
    """The words a token view value (a `Failed`) says, or "" for a rollout."""
    problems = json.loads(value).get("problems") or {}
    return " ".join(problems.get("items", []))


def test_public_offline_revision_never_lists_a_server_folder(tmp_path, offline_cache):
    secret = secret_collection(tmp_path)
    service = Service("scripted-smollm2", public=True)
    cv, rows = CollectionView(service), service.rows
    for src in (f"a/b@{secret}", f"a/b@{secret}/a", "a/b@/etc", "a/b@/no/such/folder"):
        # the index server function, the Load button, the page link
        page = cv.index({"src": src, "query": ""})
        assert page.get("total", 0) == 0 and not page.get("table") and "not found" in " ".join(page["problems"]["items"]), src
        view, _, index = rows.open_source(src)
        assert "not found" in errors_of(view) and json.loads(index).get("total", 0) == 0, src
        view, _, loaded, index = rows.page_link({"src": src})
        assert loaded == "" and json.loads(index).get("total", 0) == 0, src
        assert "cannot be used" in errors_of(view) or "not found" in errors_of(view) or "neither" in errors_of(view)
    # no existence oracle: an existing folder and a missing one answer the same words
    e1 = json.dumps(cv.index({"src": "a/b@/etc", "query": ""})["problems"]).replace("/etc", "X")
    e2 = json.dumps(cv.index({"src": "a/b@/nope", "query": ""})["problems"]).replace("/nope", "X")
    assert e1 == e2 and "IsADirectoryError" not in e1
    assert service.store.loads == 0


def test_a_ref_file_in_the_cache_cannot_point_outside_it(tmp_path, offline_cache):
    """Even a hand-made ref file holding a path (not a commit) opens nothing outside the cache."""
    secret = secret_collection(tmp_path)
    base = offline_cache / "datasets--org--rollouts"
    (base / "refs").mkdir(parents=True)
    (base / "refs" / "main").write_text(str(secret))
    with pytest.raises(ArtifactError, match="not found"):
        open_collection("org/rollouts", allow_local=False)
    with pytest.raises(ArtifactError, match="not found"):
        open_artifact("org/rollouts", allow_local=False)


def test_cached_datasets_still_open_offline_by_branch_tag_and_commit(tmp_path, offline_cache):
    base = offline_cache / "datasets--org--rollouts"
    (base / "refs" / "refs" / "pr").mkdir(parents=True)
    for ref in ("main", "v1.0", "refs/pr/3"):
        (base / "refs" / ref).write_text(COMMIT)
    shutil.copytree(EXAMPLE, base / "snapshots" / COMMIT / "runs" / "7")
    for src in ("org/rollouts:runs/7", "org/rollouts@v1.0:runs/7", "org/rollouts@refs/pr/3:runs/7",
                f"org/rollouts@{COMMIT}:runs/7"):
        c = open_collection(src, allow_local=False)
        assert [r.path for r in c.records] == [""] and c.records[0].valid, src
    tab = ViewTab(Service("scripted-smollm2", public=True))
    assert "outline" in json.loads(tab.service.values.source_value("org/rollouts@v1.0:runs/7")[0])
    with pytest.raises(ArtifactError, match="not found"):
        open_collection("org/rollouts@v2", allow_local=False)


def test_public_online_revision_naming_an_uploaded_file_opens_nothing(tmp_path, monkeypatch):
    """The online attack: a visitor's upload (in Gradio's cache) holds a server path; the revision names it."""
    target = tmp_path / "server-only" / "artifact"
    shutil.copytree(EXAMPLE, target)
    upload = tmp_path / "gradio" / "0123abcd" / "ref.txt"  # where Gradio keeps an uploaded text file
    upload.parent.mkdir(parents=True)
    upload.write_text(str(target))
    with HubStandIn({"org/rollouts": tmp_path / "empty"}) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        tab = ViewTab(Service("scripted-smollm2", public=True))
        for src in (f"nobody/repo@{upload}", f"org/rollouts@{upload}", f"nobody/repo@{upload}:x"):
            view, _, index = tab.service.rows.open_source(src)
            assert "not found" in errors_of(view) and "outline" not in json.loads(view), src
            assert CollectionView(tab.service).index({"src": src, "query": ""}).get("total", 0) == 0
        assert tab.service.store.loads == 0
        # nothing of the typed revision reached the Hub either: it was refused before any request
        assert not [p for p in hub.paths() if str(upload) in p]
        # an unknown revision the Hub itself refuses is "not found" too
        view, _, _ = tab.service.rows.open_source("org/rollouts@v9")
        assert "not found" in errors_of(view)
