"""Hostile inputs, round 4: exports that would replace what they write to, readers that hide what they skip,
names the system refuses, zip bombs, deep links that name nothing. Each is a message, a documented exit code or
a write that lands where a shell redirection would, never a traceback or a destroyed file."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from conftest import EXAMPLE
from viewer.cli import main

# -- export -o: through FIFOs, devices and symlinks; "-" is standard output -------------------------------------


def _export(target: str | Path) -> int:
    return main(["export", str(EXAMPLE), "-o", str(target)])


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


# -- one atomic write: fsync of file and folder, cleanup on failure, never over a special file ------------------


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


# -- ls says what the reader skipped ------------------------------------------------------------------------------


@pytest.fixture
def hostile_run(tmp_path) -> Path:
    """The example run with an open tail holding two rows whose place is `../../etc` and one whose path column
    names `../../etc`, and a shard that is a symlink to /etc/passwd."""
    import shutil

    import pyarrow.ipc as ipc

    from rollout_trace.artifact.run_schema import ROLLOUTS
    from support.run_tables import bundled_rows, changed

    run = tmp_path / "run"
    shutil.copytree(EXAMPLE.parent / "trl-run", run)
    rows = bundled_rows().slice(0, 3)
    segment = rows["segment"][0].as_py()
    rows = changed(rows, segment=["../../etc", "../../etc", segment], group_id=[0, 0, 99],
                   path=[None, None, "../../etc"], group=["../../etc"] * 3)
    with ipc.new_stream(str(run / "rollouts" / f"{segment}-00001.arrows"), ROLLOUTS) as w:
        w.write_table(rows)
    (run / "rollouts" / "evil-00000.parquet").symlink_to("/etc/passwd")
    return run


def test_ls_says_what_the_run_reader_skipped(hostile_run, capsys):
    assert main(["ls", str(hostile_run)]) == 0
    out, err = capsys.readouterr()
    assert "3 problem(s), what they name is skipped" in err, err
    assert "rollouts/evil-00000.parquet: cannot be read as a Parquet file: [Errno 40] a symbolic link, not followed" \
        in err
    assert err.count("a rollout's place in the run is not one the recorder writes; left out") == 2
    assert err.count("../../etc") == 2  # each row named once, never as a segment to look for
    assert "root:" not in err + out  # nothing of the file the link points at
    # the row whose path column names ../../etc stands under the name its place gives it
    assert "../../etc" not in out and "-g000099/rollout-02" in out


def test_ls_lists_at_most_a_screen_of_problems(hostile_run, capsys, monkeypatch):
    from viewer.index import cli

    monkeypatch.setattr(cli, "MAX_PROBLEM_LINES", 1)
    assert main(["ls", str(hostile_run)]) == 0
    err = capsys.readouterr().err
    assert err.count("problem: ") == 2 and "... and 2 more (`viewer check` names every one)" in err, err


def _shard_run(tmp_path: Path, case: str) -> tuple[Path, str]:
    """The example run with one more shard of its rollouts table, hostile as `case` says; returns the run and the
    shard's name. Each hostile group is the run's first group placed at group 900 (a place of its own)."""
    import shutil

    import pyarrow as pa
    import pyarrow.ipc as ipc

    from rollout_trace.artifact.run_format import group_path
    from rollout_trace.artifact.run_schema import ROLLOUTS
    from support.run_tables import bundled_rows, changed, groups

    run = tmp_path / "run"
    shutil.copytree(EXAMPLE.parent / "trl-run", run)
    g = groups(bundled_rows())[0]
    segment, version = g["segment"][0].as_py(), g["policy_version"][0].as_py()
    name = group_path(segment, version, 900)
    moved = changed(g, group_id=[900] * g.num_rows, group=[name] * g.num_rows,
                    path=[f"{name}/rollout-{i:02d}" for i in range(g.num_rows)])
    if case == "not parquet":
        shard = f"{segment}-00001.parquet"
        (run / "rollouts" / shard).write_bytes(b"PAR1" + b"not a table, whatever its name says" * 100)
        return run, shard
    if case == "wrong type":  # a policy version no int64 holds, as text
        at = moved.schema.get_field_index("policy_version")
        moved = moved.set_column(at, pa.field("policy_version", pa.string()), pa.array([str(10**30)] * g.num_rows))
    elif case == "float limits":
        moved = changed(moved, reward=[1.7976931348623157e308, 1.7976931348623157e308, float("inf"), float("nan")],
                        advantage=[1e308, -1e308, float("nan"), 0.0])
    elif case == "not utf-8":
        at = moved.schema.get_field_index("title")
        bad = pa.array([b"ok", b"\xff\xfe<b>x</b>", b"x", b"y"], pa.binary()).view(pa.string())  # unchecked bytes
        moved = moved.set_column(at, moved.schema.field("title"), bad)
    elif case == "recorded twice":
        moved = g
    shard = f"{segment}-00001.arrows"
    with ipc.new_stream(str(run / "rollouts" / shard), moved.schema if case == "wrong type" else ROLLOUTS) as w:
        w.write_table(moved)
    return run, shard


@pytest.mark.parametrize("case, said", [
    ("not parquet", "cannot be read as a Parquet file"),
    ("wrong type", "field `policy_version`: a column's values do not fit the run table's type"),
    ("float limits", None),
    ("not utf-8", "field `title`: text that is not UTF-8, shown with replacement characters"),
    ("recorded twice", "a rollout is recorded once; the first one stands"),
])
def test_a_hostile_shard_costs_only_its_rows_and_is_named(tmp_path, capsys, case, said):
    """A shard is data: one that is not Parquet, holds a column of another type, numbers at the float limits,
    bytes that are not UTF-8 or rollouts recorded already is named (file, field, expected, found) and the rest of the
    run lists as before, in `viewer ls --json` as strict JSON (no NaN or Infinity), never a traceback."""
    import json

    from support.run_tables import bundled_rows

    run, shard = _shard_run(tmp_path, case)
    assert main(["ls", str(run), "--json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in ls --json"))
    listed = {r["path"] for r in doc["records"] if r["kind"] == "artifact" and r["path"]}
    assert {p for p in bundled_rows()["path"].to_pylist() if p} <= listed  # the run's own rollouts, every one
    hostile = [r for r in doc["records"] if r.get("group_id") == 900]
    if said is None:
        assert doc["problems"] == [] and len([r for r in hostile if r["kind"] == "artifact"]) == 4
        group = next(r for r in hostile if r["kind"] == "group")
        assert group["reward"] == group["reward_max"] == 1.7976931348623157e308  # a mean at the limit, not inf
        assert [r["reward"] for r in hostile if r["kind"] == "artifact"][2:] == [None, None]  # inf and NaN: none
    else:
        assert any(p.startswith(f"rollouts/{shard if case != 'recorded twice' else ''}") and said in p
                   for p in doc["problems"]), doc["problems"]
        if case == "not utf-8":
            titles = [r["title"] for r in hostile if r["kind"] == "artifact"]
            assert "\ufffd\ufffd<b>x</b>" in titles  # replaced, and the row kept
        else:
            assert not [r for r in hostile if r["kind"] == "artifact"]  # its rows left out
    assert "Traceback" not in err and "internal error" not in err
    assert main(["check", str(run)]) in (0, 1)  # check names the same, and exits as documented
    assert "Traceback" not in capsys.readouterr().out


# -- names the system refuses: a message, not "a bug" ------------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "ls"])
def test_a_name_too_long_is_a_message(command, capsys):
    assert main([command, "a" * 5000]) == 1
    out = capsys.readouterr()
    assert "cannot use this path: File name too long" in out.out + out.err
    assert "internal error" not in out.out + out.err


def test_ls_skips_what_it_may_not_read_and_says_so(tmp_path, capsys):
    import shutil

    shutil.copytree(EXAMPLE, tmp_path / "r1")
    (tmp_path / "loop").symlink_to("loop")  # what /proc/1/cwd is to a reader without the right: a stat that fails
    assert main(["ls", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "r1" in out.out and "note: loop: cannot be read (Too many levels of symbolic links); skipped" in out.err


# -- a zipped run bomb: every zip reader bounds what a member may expand to --------------------------------------


@pytest.fixture(scope="module")
def run_bomb(tmp_path_factory) -> Path:
    """The example run zipped with one more shard of its rollouts table: 64 MB of blank lines, packed into about
    64 kB."""
    import zipfile

    dest = tmp_path_factory.mktemp("bomb") / "run.zip"
    run = EXAMPLE.parent / "trl-run"
    segment = sorted(p.name for p in (run / "segments").glob("*.end.json"))[0].removesuffix(".end.json")
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in run.rglob("*"):
            if f.is_file():
                zf.write(f, Path("run") / f.relative_to(run))
        with zf.open(f"run/rollouts/{segment}-00001.arrows", "w", force_zip64=True) as out:
            block = b"\n" * (1 << 20)
            for _ in range(64):
                out.write(block)
    assert dest.stat().st_size < 8 << 20
    return dest


def test_ls_of_a_zipped_run_bomb_refuses_the_member_unread(run_bomb, capsys, monkeypatch):
    import zipfile

    opened: list[str] = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda self, name, *a, **kw: (
        opened.append(getattr(name, "filename", name)), real_open(self, name, *a, **kw))[1])
    assert main(["ls", str(run_bomb)]) == 0
    out, err = capsys.readouterr()
    assert "-00001.arrows" in err and "a zip bomb, not read" in err and "its rows are left out" in err, err
    assert not any(n.endswith("-00001.arrows") for n in opened)  # refused from the central directory alone
    assert "/rollout-" in out  # the run's other shards are listed


def test_unpacking_a_zip_bomb_is_refused_before_it_is_written(run_bomb, tmp_path):
    from rollout_trace.artifact import ArtifactError
    from rollout_trace.artifact.unpack import extract_zip

    with pytest.raises(ArtifactError, match="a zip bomb, not read"):
        extract_zip(run_bomb, tmp_path)
    assert not list(tmp_path.rglob("*-00001.arrows"))


# -- bad run deep links say what was not found -------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_view():
    """The run page's handlers over the bundled run, in Blocks of their own (no app, no browser)."""

    import gradio as gr

    from viewer.ui.run_view import RunView
    from viewer.ui.service import Service

    rv = RunView(Service("trl-run", public=False))
    with gr.Blocks():
        rv.render()
    return rv


def _head(rv, params) -> dict:
    import json

    return json.loads(rv.show("trl-run", params)[rv.head_html])


@pytest.mark.parametrize("params, said", [
    ({"version": "3", "group": "-1"}, "the link's group is not a group id (a whole number)"),
    ({"group": "0", "segment": "../../etc"}, "this run has no segment '../../etc'"),
    ({"version": "99999999999"}, "the link's version is not a policy version (a whole number)"),
    ({"version": "99999999999", "group": "0"}, "the link's version is not a policy version (a whole number)"),
    ({"version": "77"}, "this run has no policy version 77 (it has versions 1 to 4)"),
    ({"version": "3", "group": "999"}, "this run has no group 999 at version 3"),
])
def test_a_bad_run_link_says_what_was_not_found_and_opens_nothing(run_view, params, said):
    head = _head(run_view, params)
    assert head["notes"][0].startswith(said) and head["notes"][0].endswith("showing the whole run"), head["notes"]
    assert "row" not in run_view.service.rows.link_params({"src": "trl-run", **params})


def test_a_good_run_link_says_nothing_more(run_view):
    plain = _head(run_view, {})["notes"]
    assert _head(run_view, {"version": "3", "group": "2"})["notes"] == plain
    assert run_view.service.rows.link_params({"src": "trl-run", "version": "3", "group": "2"})["row"].endswith("v000003-g000002")


# -- what a killed instance of the app left in the temp folder is reclaimed at the next start --------------------


def _dead_pid() -> int:
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_the_next_start_reclaims_a_killed_instances_gradio_folder(tmp_path, monkeypatch):
    import subprocess
    import sys

    from viewer.ui import cache_folder

    base = tmp_path / "gradio"
    base.mkdir()
    # a real killed instance: a child makes its private folder (and a partial upload in it), then is SIGKILLed
    child = subprocess.Popen([sys.executable, "-c", "import sys, os, signal\n"
                              "from rollout_trace.artifact.unpack import temporary_folder\n"
                              f"f = temporary_folder('rollout-viewer-gradio-', dir={str(base)!r})\n"
                              "(f / 'tmpupload').write_bytes(b'x' * 1000)\nprint(f, flush=True)\n"
                              "os.kill(os.getpid(), signal.SIGKILL)"], stdout=subprocess.PIPE, text=True)
    left = Path(child.communicate()[0].strip())
    assert (left / "tmpupload").is_file()
    not_ours = base / "rollout-viewer-gradio-x"  # no owner in its name
    not_ours.mkdir()
    link = base / f"rollout-viewer-gradio-{_dead_pid()}.1-abcdefgh"  # a link named like ours: never followed
    target = tmp_path / "elsewhere"
    target.mkdir()
    link.symlink_to(target)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(base))
    monkeypatch.setattr(cache_folder, "_folder", None)
    mine = cache_folder.private_cache()
    assert not left.exists()
    assert mine.is_dir() and not_ours.is_dir() and link.is_symlink() and target.is_dir()


def test_a_live_or_foreign_folder_is_never_reclaimed(tmp_path):
    import subprocess
    import sys

    from rollout_trace.artifact.unpack import _started, reclaim_dead, temporary_folder

    mine = temporary_folder("rollout-zip-", dir=tmp_path)  # this process: alive
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        alive = tmp_path / f"rollout-zip-{sleeper.pid}.{_started(sleeper.pid)}-abcdefgh"
        alive.mkdir()
        reused = tmp_path / f"rollout-zip-{sleeper.pid}.1-abcdefgh"  # the pid reused by another process: dead
        reused.mkdir()
        dead = tmp_path / f"rollout-zip-{_dead_pid()}.1-abcdefgh"
        dead.mkdir()
        assert sorted(reclaim_dead(tmp_path)) == sorted([dead, reused])
        assert mine.is_dir() and alive.is_dir()
        if os.getuid() == 0:  # a folder of another user is theirs, whatever its name
            other = tmp_path / f"rollout-zip-{_dead_pid()}.1-zzzzzzzz"
            other.mkdir()
            os.chown(other, 65534, 65534)
            assert reclaim_dead(tmp_path) == [] and other.is_dir()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_reading_with_trl_leaves_no_torchinductor_folder_in_the_temp_folder(tmp_path):
    """Importing TRL imports torch._dynamo, which made `torchinductor_<user>` in the temp folder for good."""
    import subprocess
    import sys

    from conftest import ROOT

    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env.update(TMPDIR=str(tmp_path), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TRL_EXPERIMENTAL_SILENCE="1")
    probe = ("import os, sys\nfrom viewer.cli import main\ncode = main(['check', 'scripted-smollm2'])\n"
             "import torch._dynamo\nprint(os.environ['TORCHINDUCTOR_CACHE_DIR'])\nsys.exit(code)")
    r = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert Path(r.stdout.strip().splitlines()[-1]).parent == tmp_path  # ours while it ran...
    assert list(tmp_path.iterdir()) == []  # ...and gone with the process


# -- DNS rebinding of the capture endpoint: the address checked is the address connected to ----------------------


@pytest.fixture
def rebinding(monkeypatch):
    """vllm.example.org answers the documentation fixture's public address once, then 127.0.0.1 (a rebinding
    DNS server's trick); every answer the process asked for is recorded."""
    import socket

    from conftest import PUBLIC_ADDRESS

    documented, answers = socket.getaddrinfo, []

    def getaddrinfo(host, port, *args, **kw):
        if str(host).startswith("vllm.example.org"):
            address = PUBLIC_ADDRESS if not answers else "127.0.0.1"
            answers.append(address)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port or 0))]
        return documented(host, port, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers


def test_a_public_capture_connects_to_the_address_it_checked(rebinding, monkeypatch, tmp_path):
    import socket
    from types import SimpleNamespace

    import capture.run as run
    from capture import CaptureConfig, CaptureError
    from capture.preflight import Verdict
    from conftest import PUBLIC_ADDRESS

    connected: list[str] = []

    def probe(url, model, **kw):  # what openenv's urllib probe does first: resolve the host, connect there
        connected.extend(info[4][0] for info in socket.getaddrinfo("vllm.example.org", 443, type=socket.SOCK_STREAM))
        return Verdict(False, False, False, False, "", "stopped by the test")

    monkeypatch.setattr(run, "check_endpoint", probe)
    monkeypatch.setattr(run, "task_for", lambda cfg: SimpleNamespace(index=0, task_id="t" * 12, held_out=[]))
    monkeypatch.setattr(run.hub, "unreachable", lambda: None)
    cfg = CaptureConfig(backend="hf-sandbox", sandbox_vllm_url="https://vllm.example.org/v1", model="Qwen/Qwen3-8B",
                        dataset="org/tasks", out_dir=str(tmp_path / "out"))
    with pytest.raises(CaptureError, match="stopped by the test"):
        run.capture(cfg, public=True)
    assert rebinding[0] == PUBLIC_ADDRESS  # the policy's check saw a public address...
    assert connected == [PUBLIC_ADDRESS]  # ...and the probe connected there, not to 127.0.0.1
    assert socket.getaddrinfo("vllm.example.org", 443)[0][4][0] == "127.0.0.1"  # the pin ends with the capture


def test_a_pinned_endpoint_is_refused_when_its_checked_answer_is_private(monkeypatch):
    from capture.policy import PolicyError, pinned_endpoint

    with pytest.raises(PolicyError, match="Endpoint URL"), pinned_endpoint("http://127.0.0.1:8000/v1"):
        pass
