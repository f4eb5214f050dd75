"""One classifier (viewer/source_kinds.py): the same files are the same kind in a folder, a zip and on the Hub.

The Hub is the real huggingface_hub client against the loopback stand-in (tests/support/hub_standin.py).
The summary-only case is the one the four old deciders disagreed on (a collection on the Hub, a single
invalid artifact locally).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from rollout_trace.artifact import ArtifactError
from support.hub_standin import HubStandIn
from viewer.source_kinds import classify

EXAMPLES = ROOT / "examples"


def _layouts(base: Path) -> dict[str, tuple[Path, str]]:
    """name -> (folder, expected kind)."""
    one = base / "one"
    shutil.copytree(EXAMPLES / "scripted-smollm2", one)
    many = base / "many"
    for name in ("a", "b"):
        shutil.copytree(EXAMPLES / "scripted-smollm2", many / "nested" / name)
    summaries = base / "summaries"
    for name in ("a", "b"):
        (summaries / name).mkdir(parents=True)
        shutil.copy(EXAMPLES / "scripted-smollm2" / "summary.json", summaries / name)
    group = base / "group"
    shutil.copytree(EXAMPLES / "smollm2-group", group)
    run = base / "run"
    shutil.copytree(EXAMPLES / "trl-run", run)
    return {"one": (one, "rollout"), "many": (many, "collection"), "summaries": (summaries, "collection"),
            "group": (group, "collection"), "run": (run, "run")}


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    return _layouts(tmp_path_factory.mktemp("kinds"))


@pytest.mark.parametrize("name", ["one", "many", "summaries", "group", "run"])
def test_folder_and_zip_are_the_same_kind(layouts, tmp_path, name):
    folder, kind = layouts[name]
    assert classify(str(folder)) == kind
    zipped = shutil.make_archive(str(tmp_path / name), "zip", root_dir=folder.parent, base_dir=folder.name)
    assert classify(zipped) == kind
    if (folder / "turns.json").is_file():
        assert classify(str(folder / "turns.json")) == "rollout"


def test_the_hub_agrees_with_the_folder(layouts, tmp_path, monkeypatch):
    repos = {f"org/{name}": folder for name, (folder, _) in layouts.items()}
    with HubStandIn(repos) as hub:
        hub.patch(monkeypatch, tmp_path / "cache")
        for name, (_, kind) in layouts.items():
            assert classify(f"org/{name}") == kind, name


def test_bundled_names_and_what_is_nothing():
    assert [classify(n) for n in ("scripted-smollm2", "smollm2-group", "trl-run")] == ["rollout", "collection", "run"]
    with pytest.raises(ArtifactError, match="no source named"):
        classify("  ")
    with pytest.raises(ArtifactError, match="cannot find"):
        classify("no such thing at all")
    with pytest.raises(ArtifactError):  # a visitor of a public Space never reaches server folders
        classify(str(EXAMPLES / "scripted-smollm2"), allow_local=False)
