"""Hostile or broken inputs get a clear message naming the file and a documented exit code, and a
load leaves nothing on disk. The app reads through the same functions
(artifact.open_artifact / open_upload), so it gets the same messages."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT, zip_folder
from rollout_trace.analysis.training import import_trl
from rollout_trace.artifact import ArtifactError, open_artifact, open_upload
from rollout_trace.artifact.unpack import extract_zip
from support.viewer_cli import Ran, viewer


def cli(*args: str, tmp: Path) -> Ran:
    """`python -m viewer ...` in this process with tempfile's folder set to `tmp`, so what it leaves behind can be
    counted (the cold-process run of the same command is tests/test_sources.py's and test_closed_pipe's below).
    TRL is imported first, outside that folder: its import points torch's compile cache into a folder of ours
    that lives as long as the process (rollout_trace/analysis/training.py `own_torch_cache`)."""
    import_trl()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tempfile, "tempdir", str(tmp))
        return viewer(*args)


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """tempfile's folder for this test only: anything left in it was leaked."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


# -- each hostile input is a message and a documented exit code ------------------------------------------

def deep_trace(folder: Path, levels: int) -> None:
    text = (folder / "trace.json").read_text()
    deep = "[" * levels + "]" * levels
    assert '"metadata":{' in text
    (folder / "trace.json").write_text(text.replace('"metadata":{', f'"metadata":{{"deep":{deep},', 1))


@pytest.mark.parametrize("levels", [100_000, 500])
def test_deeply_nested_json_is_named(example_copy, tmp_path, levels):
    deep_trace(example_copy, levels)
    with pytest.raises(ArtifactError) as e:
        open_artifact(example_copy)
    msg = str(e.value)
    assert msg.startswith("trace.json") and "nested too deeply" in msg and "recursion" not in msg
    r = cli("check", str(example_copy), tmp=tmp_path)
    assert r.returncode == 1 and "nested too deeply" in r.stdout and "unexpected" not in r.stdout + r.stderr


def symlink_zip(dest: Path) -> Path:
    with zipfile.ZipFile(dest, "w") as zf:
        link = zipfile.ZipInfo("a")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc")
        zf.writestr("a/turns.json", "{}")
    return dest


def file_as_folder_zip(dest: Path) -> Path:
    with zipfile.ZipFile(dest, "w") as zf:
        zf.writestr("a", "plain file")
        zf.writestr("a/turns.json", "{}")
    return dest


def long_name_zip(dest: Path) -> Path:
    with zipfile.ZipFile(dest, "w") as zf:
        zf.writestr("x" * 300 + "/turns.json", "{}")
    return dest


@pytest.mark.parametrize("make,expect", [
    (symlink_zip, "a member is a symbolic link"),
    (file_as_folder_zip, "both as a file and as a folder"),
    (long_name_zip, "a member name has a part too long"),
])
def test_zip_member_tricks_are_named(tmp_path, private_tmp, make, expect):
    z = make(tmp_path / "bad.zip")
    with pytest.raises(ArtifactError) as e:
        open_artifact(z)
    assert expect in str(e.value) and str(e.value).startswith(str(z)) and "/tmp" not in str(e.value).replace(str(z), "")
    with pytest.raises(ArtifactError, match=expect):
        open_upload([z])
    assert list(private_tmp.iterdir()) == []
    r = cli("check", str(z), tmp=private_tmp)
    assert r.returncode == 1 and expect in r.stdout and "unexpected" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert list(private_tmp.iterdir()) == []


def test_unreadable_file_is_named(example_copy, monkeypatch):
    # we run as root in CI, where chmod 000 does not stop a read: make the read itself fail
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "summary.json":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(ArtifactError) as e:
        open_artifact(example_copy)
    assert str(e.value) == "summary.json: cannot be read: Permission denied"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_cli(example_copy, tmp_path):
    (example_copy / "summary.json").chmod(0)
    r = cli("check", str(example_copy), tmp=tmp_path)
    assert r.returncode == 1 and "summary.json: cannot be read: Permission denied" in r.stdout


def test_closed_pipe_exits_quietly(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(3); "
                             "from viewer.cli import main; sys.exit(main(['check', 'scripted-smollm2']))"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head -1` once it has its line: the pipe is gone before we write
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == 141, err
    assert err == ""


def test_export_to_a_missing_folder(tmp_path):
    r = cli("export", "scripted-smollm2", "-o", "/nonexistent/x.html", tmp=tmp_path)
    assert r.returncode == 4 and r.stderr.strip() == "ERROR cannot write /nonexistent/x.html: No such file or directory"


def test_help_documents_exit_codes(tmp_path):
    for args in (["--help"], ["check", "--help"], ["export", "--help"]):
        out = cli(*args, tmp=tmp_path).stdout
        assert all(f"  {c} " in out for c in ("0", "1", "2", "3", "4", "130", "141")), out


# -- nothing unpacked outlives the load; the cap counts real bytes ---------------------------------------

def test_valid_and_rejected_zips_leave_nothing(tmp_path, private_tmp):
    good = zip_folder(EXAMPLE, tmp_path / "good.zip")
    broken = tmp_path / "broken-folder"
    shutil.copytree(EXAMPLE, broken)
    (broken / "summary.json").write_text("{")
    bad = zip_folder(broken, tmp_path / "bad.zip")
    a = open_artifact(good)
    assert len(a.turns) == 3 and a.root is None and a.tokenizer_dir is None
    with pytest.raises(ArtifactError, match="summary.json"):
        open_artifact(bad)
    a = open_upload([good])
    with pytest.raises(ArtifactError):
        open_upload([bad])
    loose = open_upload([EXAMPLE / "turns.json", EXAMPLE / "summary.json"])
    assert len(loose.turns) == 3
    assert list(private_tmp.iterdir()) == []
    # the CLI too: check and export of a zip, valid and rejected
    assert cli("check", str(good), tmp=private_tmp).returncode == 0
    assert cli("check", str(bad), tmp=private_tmp).returncode == 1
    assert cli("export", str(good), "-o", str(tmp_path / "x.html"), tmp=private_tmp).returncode == 0
    assert list(private_tmp.iterdir()) == []


def test_unpacked_artifact_still_renders_text(tmp_path):
    """Its folder is gone, so the tokenizer must have been read before: the view shows text, not ids."""
    from viewer.rollout import Rollout

    r = Rollout.load(open_artifact(zip_folder(EXAMPLE, tmp_path / "good.zip")))
    assert r.vocab is not None and r.vocab.origin == "the artifact's tokenizer/ files"
    assert "⟨" not in "".join(r.chunk(0, "full", 0).text[:20])


def bomb(dest: Path, size: int, header_size: int | None = None) -> Path:
    """A member that inflates to `size` bytes; `header_size` rewrites what both headers claim."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("rollout/turns.json", b"\0" * size)
    if header_size is not None:
        data = bytearray(dest.read_bytes())
        for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # uncompressed size fields
            i = data.find(sig)
            data[i + off:i + off + 4] = header_size.to_bytes(4, "little")
        dest.write_bytes(bytes(data))
    return dest


def test_cap_counts_unpacked_bytes_while_unpacking(tmp_path, private_tmp):
    z = bomb(tmp_path / "bomb.zip", 5_000_000)
    with pytest.raises(ArtifactError) as e:
        open_upload([z], max_unzipped_bytes=1_000_000)
    assert str(e.value) == ("bomb.zip: too large to unpack (expected at most 1,000,000 bytes unpacked, "
                            "found more than 1,000,000 bytes)")
    assert list(private_tmp.iterdir()) == []
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(ArtifactError, match="too large"):
        extract_zip(z, into, max_bytes=1_000_000)
    # stopped within one chunk of the cap, not after writing the whole member
    assert sum(f.stat().st_size for f in into.rglob("*") if f.is_file()) <= 1_000_000 + (1 << 20)
    # headers that understate the size are not believed either: the member fails its length/CRC check
    with pytest.raises(ArtifactError, match="not a readable zip"):
        open_upload([bomb(tmp_path / "liar.zip", 5_000_000, header_size=10)], max_unzipped_bytes=1_000_000)
    assert list(private_tmp.iterdir()) == []


def test_public_upload_cap_is_a_few_times_the_upload_limit():
    from rollout_trace.artifact import MAX_UNZIPPED_BYTES, UPLOAD_MAX_UNZIPPED_BYTES

    assert UPLOAD_MAX_UNZIPPED_BYTES <= 4 * 200 * 1024**2 < MAX_UNZIPPED_BYTES


# -- rescore/*/meta.json has a size cap ----------------------------------------------------------------------

def test_an_oversized_rescore_meta_is_refused_unread(example_copy):
    from rollout_trace.artifact import ArtifactError, open_artifact
    from rollout_trace.artifact.rescore import meta_cap

    [part, *_] = sorted((example_copy / "rescore").iterdir())
    meta = part / "meta.json"
    text = meta.read_text()
    meta.write_text(text.replace('"device": "cpu"', '"device": "' + "x" * 5_000_000 + '"'))
    with pytest.raises(ArtifactError) as e:
        open_artifact(example_copy)
    cap = meta_cap(3)
    assert f"rescore/{part.name}/meta.json: too large for this file (expected at most {cap:,} bytes for 3 turns" in str(e.value)
