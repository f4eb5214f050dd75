"""An artifact's tokenizer is data: the command line and the app load it without running code it names, and
never ask whether they may."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import EXAMPLE, ROOT, zip_folder

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TRL_EXPERIMENTAL_SILENCE": "1"}


def cli(*args: str, stdin: str | None = None, tmp: Path | None = None, **kw) -> subprocess.CompletedProcess:
    env = {**ENV, **({"TMPDIR": str(tmp)} if tmp else {})}
    return subprocess.run([sys.executable, "-m", "viewer", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, input=stdin, timeout=300, **kw)


# -- an artifact's tokenizer is data, never code -------------------------------------------------------------

def code_tokenizer_artifact(dest: Path, marker: Path) -> Path:
    """The example with a tokenizer/ that names its own Python class (auto_map) and has no tokenizer.json."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("rescore"))
    tok = dest / "tokenizer"
    shutil.rmtree(tok)
    tok.mkdir()
    (tok / "tokenizer_config.json").write_text(
        '{"tokenizer_class": "EvilTokenizer", "auto_map": {"AutoTokenizer": ["tok.EvilTokenizer", null]}}')
    (tok / "tok.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                                "from transformers import PreTrainedTokenizer\n"
                                "class EvilTokenizer(PreTrainedTokenizer):\n    pass\n")
    return dest


def test_cli_never_runs_or_offers_to_run_an_artifacts_tokenizer_code(tmp_path):
    marker = tmp_path / "tokenizer-code-ran"
    art = code_tokenizer_artifact(tmp_path / "art", marker)
    r = cli("export", str(art), "-o", str(tmp_path / "x.html"), stdin="y\ny\n")  # a user who would say yes
    assert r.returncode == 0, r.stdout + r.stderr
    assert not marker.exists(), "the artifact's tokenizer code ran"
    assert "custom code" not in r.stdout + r.stderr and "[y/N]" not in r.stdout + r.stderr


def test_app_never_runs_an_artifacts_tokenizer_code(tmp_path, monkeypatch):
    from rollout_trace.artifact import open_artifact, open_upload

    monkeypatch.setattr("builtins.input", lambda *a: "y")  # a server started from a terminal, an operator saying yes
    from viewer.rollout import Rollout

    marker = tmp_path / "tokenizer-code-ran"
    art = code_tokenizer_artifact(tmp_path / "art", marker)
    r = Rollout.load(open_artifact(art))  # a folder: its tokenizer/ is loaded in place
    assert r.vocab is None or r.vocab.origin != "the artifact's tokenizer/ files"
    up = open_upload([zip_folder(art, tmp_path / "art.zip")])  # an upload: converted to tokenizer.json first
    assert up.tokenizer_json is None and any("tokenizer" in n for n in up.notices)
    assert not marker.exists(), "the artifact's tokenizer code ran"
