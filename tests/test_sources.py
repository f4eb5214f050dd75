"""Where artifacts come from: bundled examples, folders, zips, Hub dataset repos (exercised offline
through huggingface_hub's own cache), and the `python -m viewer check` command around them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT
from rollout_trace.artifact import ArtifactError, bundled_examples, open_artifact
from rollout_trace.artifact.sources import parse_hub_id
from support.viewer_cli import viewer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def run_check(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "viewer", "check", *args], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=600)


# `viewer check` of each source in turn, in one fresh process (the Hub's cache location is read at import)
CHECKS = """import json, sys
sys.path.insert(0, "tests")
from support.viewer_cli import viewer
print(json.dumps([[r.returncode, r.stdout] for r in (viewer("check", s) for s in sys.argv[1:])]))"""


def run_checks(*sources: str, env: dict) -> tuple[list[tuple[int, str]], str]:
    """Each source's exit code and what its check printed, and the process's standard error."""
    r = subprocess.run([sys.executable, "-c", CHECKS, *sources], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, **env}, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return [tuple(x) for x in json.loads(r.stdout.splitlines()[-1])], r.stderr


def test_bundled_examples_listed():
    assert "scripted-smollm2" in bundled_examples()


def test_the_examples_folder_is_listed_once_per_state(tmp_path, monkeypatch):
    """Whether a source is a bundled example is asked of every source a visitor names (twice for each rollout of
    a group map): examples/ is listed once while it stays as it is, and again once a folder is added to it."""
    from rollout_trace.artifact import sources

    examples = tmp_path / "examples"
    shutil.copytree(EXAMPLE, examples / "one")
    (examples / "runs").mkdir()
    (examples / "runs" / "run.json").write_text("{}")
    monkeypatch.setattr(sources, "EXAMPLES_DIR", examples)
    listed: list[Path] = []
    real = Path.iterdir
    monkeypatch.setattr(Path, "iterdir", lambda self: listed.append(self) or real(self))
    for _ in range(3):
        assert sources.bundled_examples() == ["one"] and sources.bundled_runs() == ["runs"]
        assert sources.bundled_groups() == []
    assert listed == [examples]
    st = examples.stat()
    shutil.copytree(EXAMPLE, examples / "two")  # a new folder: examples/ changed
    os.utime(examples, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a clock coarser than the test: still newer
    assert sources.bundled_examples() == ["one", "two"] and listed == [examples, examples]


def test_zip_of_a_folder(tmp_path):
    z = tmp_path / "rollout.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in EXAMPLE.rglob("*"):
            if f.is_file():
                zf.write(f, Path("my-rollout") / f.relative_to(EXAMPLE))
    a = open_artifact(z)
    # unpacked, read and deleted: the tokenizer came along in memory
    assert len(a.turns) == 3 and a.tokenizer_dir is None and a.root is None and a.tokenizer_json


def test_zip_that_escapes_its_folder_is_refused(tmp_path):
    z = tmp_path / "evil.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("../../outside.txt", "x")
    with pytest.raises(ArtifactError, match="outside its folder"):
        open_artifact(z)
    assert not (tmp_path.parent / "outside.txt").exists()


def test_corrupt_zip(tmp_path):
    z = tmp_path / "broken.zip"
    z.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ArtifactError, match="not a readable zip"):
        open_artifact(z)


def test_hub_ids_parse():
    assert parse_hub_id("org/name@v2:runs/7") == parse_hub_id("hf://datasets/org/name@v2:runs/7")
    ref = parse_hub_id("org/name@v2:runs/7")
    assert (ref.repo_id, ref.revision, ref.subfolder) == ("org/name", "v2", "runs/7")
    assert parse_hub_id("../etc/passwd") is None and parse_hub_id("a/b/../c") is None


def test_local_paths_refused_when_not_allowed(example_copy):
    with pytest.raises(ArtifactError, match="bundled example or a Hub dataset id"):
        open_artifact(str(example_copy / "nested" / "x y"), allow_local=False)
    # a public Space must not read server folders even when they exist
    with pytest.raises(ArtifactError):
        open_artifact(str(example_copy), allow_local=False)


def _fake_hub_cache(cache: Path, repo: str, sub: str | None = None) -> None:
    """The layout huggingface_hub itself writes: refs/main -> snapshots/<commit>/files."""
    base = cache / f"datasets--{repo.replace('/', '--')}"
    (base / "refs").mkdir(parents=True)
    (base / "refs" / "main").write_text(COMMIT)
    snap = base / "snapshots" / COMMIT
    shutil.copytree(EXAMPLE, snap / sub if sub else snap)


def test_hub_dataset_read_offline_through_huggingface_hub(tmp_path):
    cache = tmp_path / "hub"
    _fake_hub_cache(cache, "someone/rollouts", sub="runs/7")
    env = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HOME": str(tmp_path / "home")}
    checked, err = run_checks("someone/rollouts:runs/7", f"someone/rollouts@{COMMIT}:runs/7", "someone/missing", env=env)
    (code, out), (at_commit, _), (missing, said) = checked
    assert code == 0 and at_commit == 0, out + err
    assert out.startswith("OK someone/rollouts:runs/7") and "3 agent turns, 3 trained by TRL 1.16.0 (the capture script's rule: 2)" in out
    assert missing == 1 and "not in the local cache" in said and "Traceback" not in err


def test_check_accepts_valid_and_summarises():
    r = run_check("scripted-smollm2")
    assert r.returncode == 0 and r.stderr == ""
    assert "turns        3 agent turns, 3 trained by TRL 1.16.0 (the capture script's rule: 2), of 4 captured calls" in r.stdout
    assert "(138 trained by TRL 1.16.0)" in r.stdout and "MISMATCH" not in r.stdout
    assert "continuity   1 of 2 boundaries drift" in r.stdout
    assert "reward       +0.800 (verifier +0.800; recipe agrees)" in r.stdout


def test_check_rejects_malformed_with_messages(example_copy):
    p = example_copy / "summary.json"
    p.write_text(p.read_text()[:40])
    r = viewer("check", str(example_copy))
    assert r.returncode == 1 and "Traceback" not in r.stdout + r.stderr
    assert "summary.json: the file is truncated" in r.stdout


def test_check_unknown_source():
    r = viewer("check", "definitely not a source")
    assert r.returncode == 1 and "cannot find this artifact" in r.stdout


@pytest.mark.parametrize("name", bundled_examples())
def test_every_bundled_example_is_valid(name):
    import io

    from viewer.cli import check

    out = io.StringIO()
    assert check(name, out) == 0, out.getvalue()
    assert "recipe agrees" in out.getvalue()
