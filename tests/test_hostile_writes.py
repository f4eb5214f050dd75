"""Writes that land where a shell redirection would: `export -o` through FIFOs, devices and symlinks ("-" is
standard output), and the one atomic write (synced, cleaned up on failure, never over a special file)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from conftest import EXAMPLE
from viewer.cli import main


def _export(target: str | Path) -> int:
    return main(["export", str(EXAMPLE), "-o", str(target)])


# -- export -o: through FIFOs, devices and symlinks; "-" is standard output ----------------------------------

def test_export_writes_through_a_fifo_and_leaves_it_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.open("rb").read()), daemon=True)
    reader.start()
    code = _export(fifo)
    reader.join(60)  # returns as soon as the export closes the FIFO; a reader nobody writes to stays blocked
    assert code == 0
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a file"
    assert got and got[0].startswith(b"<!doctype html>") and got[0].rstrip().endswith(b"</html>")


def test_export_to_a_full_device_through_a_symlink_says_so_and_keeps_both(tmp_path, capsys):
    link = tmp_path / "full"
    link.symlink_to("/dev/full")
    assert _export(link) == 4
    err = capsys.readouterr().err
    assert "No space left on device" in err and "Traceback" not in err
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_export_through_a_symlink_to_a_device_writes_to_the_device(tmp_path):
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    assert _export(link) == 0
    assert link.is_symlink() and os.readlink(link) == "/dev/null"


def test_export_through_a_symlink_to_a_file_replaces_the_file_not_the_link(tmp_path):
    target = tmp_path / "real.html"
    target.write_text("old")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    assert _export(link) == 0
    assert link.is_symlink() and target.read_text().startswith("<!doctype html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "real.html"]  # no partial file left


def test_export_dash_writes_the_page_to_standard_output(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _export("-") == 0
    out = capsys.readouterr()
    assert out.out.startswith("<!doctype html>") and out.out.rstrip().endswith("</html>")
    assert "wrote standard output" in out.err
    assert not (tmp_path / "-").exists()


# -- one atomic write: fsync of file and folder, cleanup on failure, never over a special file ---------------

def test_an_atomic_file_is_synced_with_its_folder_and_cleaned_up_on_failure(tmp_path, monkeypatch):
    from rollout_trace.artifact import atomic

    synced: list[str] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real_fsync(fd)))
    dest = tmp_path / "out.json"
    atomic.write_bytes(dest, b"{}")
    assert dest.read_bytes() == b"{}"
    assert any(s.startswith(str(tmp_path / ".out.json.")) for s in synced), synced  # the data, before the rename
    assert str(tmp_path) in synced  # the folder, after it
    with pytest.raises(RuntimeError), atomic.replacing(dest) as f:
        f.write(b"half")
        raise RuntimeError("interrupted")
    assert dest.read_bytes() == b"{}" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_an_atomic_write_never_renames_over_a_special_file(tmp_path):
    from rollout_trace.artifact import atomic

    fifo, link = tmp_path / "fifo", tmp_path / "link"
    os.mkfifo(fifo)
    link.symlink_to("/dev/null")
    for dest in (fifo, link):
        with pytest.raises(atomic.NotReplaceable):
            atomic.write_bytes(dest, b"x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link"]


def test_an_atomic_folder_replaces_the_old_one_only_when_complete(tmp_path):
    from rollout_trace.artifact import atomic

    dest = tmp_path / "part"
    dest.mkdir()
    (dest / "old").write_text("old")
    built = atomic.staging_folder(dest, "partial")
    (built / "new").write_text("new")
    atomic.publish_folder(built, dest, replace=True)
    assert [p.name for p in dest.iterdir()] == ["new"] and [p.name for p in tmp_path.iterdir()] == ["part"]
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
