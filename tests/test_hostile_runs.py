"""Hostile recorded runs: the reader names what it skipped (a hostile shard costs only its rows), a zipped
run bomb is refused unread, and a deep link into a run that names nothing says what was not found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import EXAMPLE
from viewer.cli import main

# -- ls says what the reader skipped -------------------------------------------------------------------------

@pytest.fixture
def hostile_run(tmp_path) -> Path:
    """The example run with an open tail holding two rows whose place is `../../etc` and one whose path column
    names `../../etc`, and a shard that is a symlink to /etc/passwd."""

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
    from viewer.cli import collection

    monkeypatch.setattr(collection, "MAX_PROBLEM_LINES", 1)
    assert main(["ls", str(hostile_run)]) == 0
    err = capsys.readouterr().err
    assert err.count("problem: ") == 2 and "... and 2 more (`viewer check` names every one)" in err, err


def _shard_run(tmp_path: Path, case: str) -> tuple[Path, str]:
    """The example run with one more shard of its rollouts table, hostile as `case` says; returns the run and the
    shard's name. Each hostile group is the run's first group placed at group 900 (a place of its own)."""

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


# -- a zipped run bomb: every zip reader bounds what a member may expand to ----------------------------------

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


# -- bad run deep links say what was not found ---------------------------------------------------------------

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
