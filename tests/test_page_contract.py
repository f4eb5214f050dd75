"""The page contract is typed on both sides: the pages' JavaScript reads only fields the records have.

viewer/page_types.py turns msgspec's JSON schema of viewer/contract.py (and viewer/index/contract.py)
into TypeScript declarations; `tsc --checkJs` (npm `typescript`, installed by scripts/setup.sh from
package.json) checks the pages' sources (viewer/assets/src/) against them. A field renamed in Python fails here, not on screen.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from fnmatch import fnmatch
from pathlib import Path

import pytest

from conftest import requires
from viewer import assets, page_types

ROOT = Path(__file__).resolve().parents[1]
TSC = ROOT / "node_modules" / ".bin" / "tsc"
needs_tsc = requires(TSC.exists(), "typescript is not installed (bash scripts/setup.sh runs npm install)")


def _check(tmp_path: Path, declarations: str) -> subprocess.CompletedProcess:
    """tsc over a copy of the assets with `declarations` as contract.d.ts (the written file stays as it is)."""
    copy = tmp_path / "assets"
    shutil.copytree(assets.HERE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.css", "built"))
    (copy / "contract.d.ts").write_text(declarations, encoding="utf-8")
    return subprocess.run([str(TSC), "-p", str(copy / "tsconfig.json")], capture_output=True, text=True, timeout=300)


def test_written_declarations_match_the_records():
    written = page_types.OUT.read_text(encoding="utf-8")
    assert written == page_types.declarations(), "viewer/assets/contract.d.ts is stale: run python -m viewer.page_types"


def test_every_record_is_declared():
    text = page_types.declarations()
    for root in page_types.ROOTS:
        assert f"interface {root.__name__} {{" in text


@needs_tsc
def test_pages_type_check_against_the_records(tmp_path):
    got = _check(tmp_path, page_types.declarations())
    assert got.returncode == 0, got.stdout + got.stderr


def test_no_page_writes_markup():
    """Every page (the token view and its panels, the collection index, the group map, the run page, the search
    panel) draws its records with elements (dom.js `el`): nothing of theirs is parsed as HTML."""
    sources = sorted((ROOT / "viewer" / "assets" / "src").rglob("*.js"))
    assert any(p.parent.name == "trace_view" for p in sources)
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "DOMParser", "createContextualFragment"):
            assert sink not in text, f"{path.name} uses {sink}"


RENAMES = [  # (record, field, the page file that reads it)
    ("TurnOutline", "drift_at", "trace_view/navigator.js"),
    ("TrainerTurn", "log_ratio", "trace_view/trainer.js"),
    ("ModeChoice", "not_in_rows", "trace_view/toolbar.js"),
    ("Chunk", "logprob", "trace_view/token_pane.js"),
    ("IndexPage", "query_keys", "collection_index.js"),
    ("VersionStats", "reward_mean", "run_charts.js"),
    ("RunHead", "notes", "run_page.js"),
    ("TaskTrack", "pass_rates", "run_charts.js"),
    ("IndexPage", "finding_rules", "collection_index.js"),
    ("RunCompare", "tasks", "run_versus.js"),
    ("RunSide", "reward_mean", "run_versus.js"),
    ("HitRow", "token_end", "find_panel.js"),
    ("RuleCount", "per_version", "find_panel.js"),
    ("TurnOutline", "shared", "trace_view/place.js"),
    ("Outline", "tests", "trace_view/panels.js"),
    ("ToolCall", "arguments_ok", "trace_view/panels.js"),
    ("IndexRow", "fate_why", "collection_index.js"),
    ("BackBar", "crumbs", "collection_index.js"),
    ("GroupRow", "more_turns", "group_map.js"),
    ("CompareSide", "out_mask", "group_map.js"),
]
PROJECT = "tsconfig.json"  # every page, checked in tsc's strict mode


def _renamed(record: str, field: str) -> str:
    """The declarations as a rename of `record.field` in viewer/contract.py makes them."""
    text = page_types.declarations()
    head, body = text.split(f"interface {record} {{\n", 1)
    assert f"  {field}: " in body.split("}", 1)[0]
    return head + f"interface {record} {{\n" + body.replace(f"  {field}: ", f"  {field}_renamed: ", 1)


@pytest.fixture(scope="module")
def renamed_checks(tmp_path_factory) -> dict[tuple[str, str], str]:
    """Every rename checked by tsc in one node process (tests/support/tsc_batch.js: the same compiler, its
    standard library parsed once): (record, field) -> what tsc said."""
    projects = {}
    # first every page as written, in the one project: the batch finds nothing; then each rename, checked in the
    # file that reads the field (with what it imports: tsc checks a type where it is read)
    checks = [("", "", ""), *RENAMES]
    for record, field, reader in checks:
        copy = tmp_path_factory.mktemp(f"{record}-{field}") / "assets"
        shutil.copytree(assets.HERE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.css", "built"))
        text = _renamed(record, field) if field else page_types.declarations()
        (copy / "contract.d.ts").write_text(text, encoding="utf-8")
        projects[(record, field)] = str(copy / PROJECT) + (f"::src/{reader}" if reader else "")
    got = subprocess.run(["node", str(ROOT / "tests" / "support" / "tsc_batch.js"), *projects.values()],
                         capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr
    said = json.loads(got.stdout)
    assert said[projects[("", "")]]["errors"] == 0, said[projects[("", "")]]["text"]
    return {key: said[project]["text"] if said[project]["errors"] else "" for key, project in projects.items()}


@needs_tsc
@pytest.mark.parametrize(("record", "field", "reader"), RENAMES)
def test_a_renamed_field_fails_the_check(renamed_checks, record, field, reader):
    """What a rename in viewer/contract.py does to the declarations, and tsc naming the file that reads it."""
    said = renamed_checks[(record, field)]
    assert said, f"tsc found nothing wrong after renaming {record}.{field}"
    assert reader in said and f"'{field}'" in said, said


@needs_tsc
def test_the_pages_type_check_strictly(renamed_checks):
    """Every page is checked in tsc's strict mode, by the one project: the batch asserts it finds nothing as written."""
    assert renamed_checks[("", "")] == ""
    project = json.loads((assets.HERE / PROJECT).read_text(encoding="utf-8"))
    assert project["compilerOptions"]["strict"] is True
    assert sorted(p.name for p in assets.HERE.glob("tsconfig*.json")) == [PROJECT], "a second project checks pages apart"
    pages = {p.relative_to(assets.HERE).as_posix() for p in (assets.HERE / "src").rglob("*.js")}
    checked = {p for p in pages if p in project["files"] or any(fnmatch(p, g) for g in project["include"])}
    assert pages == checked, pages - checked
