"""Collections from folders and zips: the small-files index, groups, invalid rows, bounds, filters, CLI."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from rollout_trace.artifact import ArtifactError, stores
from rollout_trace.artifact.collection import COLUMNS, open_collection
from rollout_trace.artifact.group import grpo_advantages
from rollout_trace.recipe.tasks import title_of
from support.collection_data import GROUP_REWARDS, build, copy_example
from viewer.cli import main
from viewer.index.filters import Filters, apply, from_query, sort_records, to_query

ROOT = Path(__file__).resolve().parent.parent

PATHS = ["a", "broken/c", "broken/d", "deep/nested/b", "grp", "grp/rollout-00", "grp/rollout-01", "grp/rollout-02",
         "grp/rollout-03"]


@pytest.fixture(scope="module")
def coll(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("coll") / "runs")


@pytest.fixture(scope="module")
def coll_zip(coll, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("zip") / "runs.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(coll.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(coll.parent).as_posix())  # members under runs/, as zipping a folder does
    return path


def by_path(c):
    return {r.path: r for r in c.records}


def test_folder_index_rows_and_fields(coll):
    c = open_collection(str(coll), title_of=title_of)
    assert c.kind == "folder" and [r.path for r in c.records] == PATHS
    rows = by_path(c)
    a = rows["a"]
    assert (a.kind, a.valid, a.model, a.reward, a.env_reward, a.agent_turns, a.trained_turns, a.timed_out, a.tools) == (
        "artifact", True, "HuggingFaceTB/SmolLM2-135M-Instruct", 0.8, 0.8, 3, 3, False, ("bash", "write"))
    # trained: what TRL trains (summary.json's trl_training), beside the capture script's own count
    assert (a.trained_by, a.seed_trained_turns) == ("TRL 1.16.0", 2)
    assert a.title == "You are given n integers. Print how many distinct values there are."  # directions skipped
    assert a.drift == "unknown" and a.tokens is None  # not in this summary.json, and turns.json is not read
    assert a.turns_bytes == (coll / "a" / "turns.json").stat().st_size
    b = rows["deep/nested/b"]
    assert (b.model, b.reward, b.drift, b.captured) == ("org/Other-7B", 1.0, "drift", "2026-12-01T10:00:00Z")
    assert b.tokens > 0


def test_invalid_rows_are_shown_with_their_first_problem(coll):
    c = open_collection(str(coll))
    rows = by_path(c)
    bad = rows["broken/c"]
    assert not bad.valid and bad.problem == ("broken/c/summary.json, field `agent_turns`: wrong type "
                                             "(expected int, found str)")
    assert bad.title  # task.json still gives it a title
    assert rows["broken/d"].valid  # a truncated turns.json is for `check` to find: the index does not read it
    assert [str(p) for p in c.problems] == [bad.problem]


def test_group_row_and_its_rollouts(coll):
    rows = by_path(open_collection(str(coll)))
    g = rows["grp"]
    assert (g.kind, g.valid, g.k, g.rewards, g.statuses) == ("group", True, 4, tuple(GROUP_REWARDS),
                                                             ("ok", "ok", "ok", "timed-out"))
    assert (g.reward_min, g.reward_max) == (-0.1, 0.8) and g.reward == pytest.approx(1.0 / 3)
    assert g.advantages == pytest.approx(tuple(grpo_advantages(GROUP_REWARDS)))
    assert g.timed_out is True and g.captured == "2026-12-02T08:00:00Z"
    r3 = rows["grp/rollout-03"]
    assert (r3.group, r3.rollout, r3.advantage, r3.reward) == ("grp", 3, 0.0, None)


def test_group_problems_from_small_files(tmp_path):
    root = build(tmp_path / "runs")
    data = json.loads((root / "grp" / "group.json").read_text())
    data["rollouts"][1]["reward"] = 0.9  # disagrees with rollout-01/summary.json, and the advantages no longer fit
    (root / "grp" / "group.json").write_text(json.dumps(data))
    import shutil

    shutil.rmtree(root / "grp" / "rollout-02")
    g = by_path(open_collection(str(root)))["grp"]
    assert not g.valid and g.problem.startswith("grp/group.json, field `rollouts[")
    c = open_collection(str(root))
    text = [str(p) for p in c.problems]
    assert any("rollouts[2].folder" in p and "missing" in p for p in text)
    assert any("rollouts[1].reward" in p and "disagrees" in p for p in text)


def test_index_reads_only_small_files(coll, monkeypatch):
    asked: list[str] = []
    real = stores.FolderStore.read

    def spy(self, paths):
        paths = list(paths)
        asked.extend(paths)
        return real(self, paths)

    monkeypatch.setattr(stores.FolderStore, "read", spy)
    open_collection(str(coll))
    assert asked and {p.rsplit("/", 1)[-1] for p in asked} <= {"summary.json", "task.json", "group.json"}


def test_zip_matches_folder_and_opens_one_member(coll, coll_zip):
    z = open_collection(str(coll_zip))
    f = open_collection(str(coll))
    assert z.kind == "zip"
    assert [r.path for r in z.records] == ["runs/" + p for p in PATHS]
    def strip(r):  # the same row but for where it lives and the file date
        return {c: getattr(r, c) for c in COLUMNS if c not in ("path", "group", "captured", "problem")}

    assert [strip(r) for r in z.records] == [strip(r) for r in f.records]
    art = z.open("runs/a")
    assert len(art.turns) == 3 and art.summary.reward_after_penalties == 0.8
    with pytest.raises(ArtifactError):
        z.open("runs/broken/d")  # the full read finds the truncation
    z.close()


def test_zip_with_escaping_members_is_noted_not_followed(tmp_path, coll):
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.write(coll / "a" / "summary.json", "../outside/summary.json")
        for f in (coll / "a").iterdir():
            zf.write(f, f"ok/{f.name}")
    c = open_collection(str(path))
    assert [r.path for r in c.records] == ["ok"]
    assert any("outside the zip" in n for n in c.notes)


def test_bounds_are_said(coll, tmp_path):
    listing = stores.FolderStore(coll).list(max_entries=5)
    assert len(listing.files) == 5 and any("stopped listing after 5 files" in n for n in listing.notes)
    big = copy_example(tmp_path / "big" / "x")
    (big / "summary.json").write_text((big / "summary.json").read_text() + " " * (stores.MAX_SMALL_BYTES + 10))
    r = open_collection(str(tmp_path / "big")).records[0]
    assert not r.valid and "too large to index" in r.problem


def test_sources_that_are_not_collections(tmp_path):
    with pytest.raises(ArtifactError, match="cannot find this collection"):
        open_collection(str(tmp_path / "nope"))
    with pytest.raises(ArtifactError, match="cannot find this collection"):
        open_collection(str(tmp_path), allow_local=False)  # a public app: no server paths
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    with pytest.raises(ArtifactError, match="not a readable zip"):
        open_collection(str(tmp_path / "x.zip"))
    empty = open_collection(str(tmp_path))
    assert empty.records == [] and any("no artifact or group here" in n for n in empty.notes)


def test_title_of():
    assert title_of("  \n\nFirst line\nsecond") == "First line"
    assert len(title_of("x" * 500)) == 80


# -- filters and sort ------------------------------------------------------------------------------

def test_filters(coll):
    recs = open_collection(str(coll), title_of=title_of).records  # the recipe's titles skip its directions
    paths = lambda f: [r.path for r in apply(recs, f)]  # noqa: E731
    assert paths(Filters(model="other")) == ["deep/nested/b"]
    assert paths(Filters(reward_min=0.8, kind="artifact")) == ["a", "broken/d", "deep/nested/b", "grp/rollout-00"]
    assert paths(Filters(reward_max=0.0)) == ["grp/rollout-02"]
    assert paths(Filters(drift="drift")) == ["deep/nested/b"]
    assert paths(Filters(timed_out=True)) == ["grp", "grp/rollout-03"]
    assert paths(Filters(valid=False)) == ["broken/c"]
    assert paths(Filters(no_tool="bash")) == ["broken/c"]
    assert paths(Filters(tool="bash", trained_min=2, kind="group")) == ["grp"]
    assert paths(Filters(q="DISTINCT", kind="group")) == ["grp"]
    assert paths(Filters(task="305e08", kind="group")) == ["grp"]
    assert paths(Filters(q="no such words")) == []


def test_sort_any_column_unknown_last(coll):
    recs = open_collection(str(coll)).records
    for column in COLUMNS:  # every column sorts, both ways, without error
        assert len(sort_records(recs, column)) == len(recs) == len(sort_records(recs, "-" + column))
    desc = [r.path for r in sort_records(recs, "-reward")]
    assert desc[0] == "deep/nested/b" and desc[-2:] == ["broken/c", "grp/rollout-03"]  # no reward: last either way
    asc = [r.path for r in sort_records(recs, "reward")]
    assert asc[0] == "grp/rollout-02" and asc[-2:] == ["broken/c", "grp/rollout-03"]


def test_query_round_trip_and_leniency():
    f = Filters(model="smol", reward_min=0.5, reward_max=1.0, drift="none", trained_min=1, timed_out=False,
                tool="bash", no_tool="edit", q="distinct values", kind="artifact", valid=True, sort="-reward")
    q = to_query(f)
    from urllib.parse import parse_qs

    back, notes = from_query(parse_qs(q))
    assert back == f and notes == []
    assert to_query(Filters()) == ""
    bad, notes = from_query({"reward_min": "lots", "drift": "sideways", "timed_out": "maybe", "sort": "nope",
                             "trained_max": "2.5", "reward_max": "inf", "src": "org/x", "tool": ["a", "bash"]})
    assert bad == Filters(tool="bash")
    assert len(notes) == 6 and all(n.startswith("ignored ") for n in notes)
    _, notes = from_query({"reward_min": "1", "reward_max": "0"})
    assert notes == ["reward_min 1.0 is above reward_max 0.0: no row can match"]


# -- command line ----------------------------------------------------------------------------------

def run(argv, capfd) -> tuple[int, str, str]:
    rc = main(argv)
    out = capfd.readouterr()
    return rc, out.out, out.err


def test_cli_ls_table_and_json(coll, capfd):
    rc, out, err = run(["ls", str(coll)], capfd)
    lines = out.splitlines()
    assert rc == 0 and lines[0].split()[:3] == ["path", "kind", "model"] and len(lines) == 1 + len(PATHS)
    assert "INVALID: broken/c/summary.json" in out and "9 of 9 rows shown; 1 invalid" in err
    rc, out, _ = run(["ls", str(coll), "--json", "--sort=-reward", "--kind", "artifact", "--reward-min", "x"], capfd)
    doc = json.loads(out)
    assert rc == 0 and doc["query"] == "kind=artifact&sort=-reward" and doc["total"] == 9
    assert [r["path"] for r in doc["records"]][:2] == ["deep/nested/b", "a"]
    assert any(n.startswith("ignored reward_min") for n in doc["notes"])
    assert doc["problems"] == ["broken/c/summary.json, field `agent_turns`: wrong type (expected int, found str)"]


def test_cli_ls_shows_the_facts_the_page_shows(capfd):
    """`ls examples --json`: the bundled scripted rollout's tokens and drift (its summary.json records neither) as
    the page reads them from turns.json, and each model once, as the page's model filter offers it."""
    from rollout_trace.artifact import open_artifact
    from viewer.index.facts import facts_of

    rc, out, _ = run(["ls", str(ROOT / "examples"), "--json"], capfd)
    doc = json.loads(out)
    row = next(r for r in doc["records"] if r["path"] == "scripted-smollm2")
    known = facts_of(open_artifact(ROOT / "examples" / "scripted-smollm2").turns)
    assert rc == 0 and (row["tokens"], row["drifting_boundaries"], row["drift"]) == (known.tokens, known.drifting, "drift")
    assert (known.tokens, known.drifting) == (1915, 1)
    assert [m for m in doc["models"] if "SmolLM2-135M-Instruct" in m and "tiny" not in m] == ["SmolLM2-135M-Instruct"]
    assert all(r["tokens"] is not None for r in doc["records"] if r["kind"] == "artifact")


def test_cli_ls_unlistable_source(tmp_path, capfd):
    rc, out, err = run(["ls", str(tmp_path / "missing")], capfd)
    assert rc == 1 and out == "" and "cannot list this collection" in err


def test_cli_check_collection_names_each_invalid(coll, coll_zip, capfd):
    rc, out, _ = run(["check", str(coll)], capfd)
    assert rc == 1
    assert "INVALID broken/c\n" in out and "INVALID broken/d\n" in out and "OK grp\n" in out and "OK a\n" in out
    assert "turns.json: the file is truncated" in out
    assert out.rstrip().endswith("7 of 9 valid; invalid: broken/c, broken/d")
    rc, out, _ = run(["check", str(coll_zip)], capfd)
    assert rc == 1 and "INVALID runs/broken/d" in out


def test_cli_check_valid_collection_and_single_artifact(tmp_path, coll, capfd):
    import shutil

    shutil.copytree(coll / "grp", tmp_path / "only" / "grp")
    shutil.copytree(coll / "a", tmp_path / "only" / "a")
    rc, out, _ = run(["check", str(tmp_path / "only")], capfd)
    assert rc == 0 and out.rstrip().endswith("6 of 6 valid")
    for folder, rc, head in ((coll / "a", 0, "OK"), (coll / "broken" / "d", 1, "INVALID")):  # one artifact: as today
        got, out, err = run(["check", str(folder)], capfd)
        assert got == rc and out.startswith(f"{head} {folder}\n"), out + err
