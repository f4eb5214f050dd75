"""The page contract is typed on both sides: the pages' JavaScript reads only fields the records have.

viewer/page_types.py turns msgspec's JSON schema of viewer/contract.py (and viewer/index/contract.py)
into TypeScript declarations; `tsc --checkJs` (npm `typescript`, installed by scripts/setup.sh from
package.json) checks viewer/assets/ against them. A field renamed in Python fails here, not on screen.
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
    shutil.copytree(assets.HERE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.css"))
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


RENAMES = [  # (record, field, the page file that reads it)
    ("TurnOutline", "drift_at", "trace_view/navigator.js"),
    ("TrainerTurn", "log_ratio", "trace_view/trainer.js"),
    ("ModeChoice", "not_in_rows", "trace_view/toolbar.js"),
    ("Chunk", "logprob", "trace_view/token_pane.js"),
    ("IndexPage", "query_keys", "collection_index.js"),
    ("VersionStats", "reward_mean", "run_charts.js"),
    ("RunHead", "notes", "run_page.js"),
    ("TaskTrack", "pass_rates", "run_charts.js"),
]
STRICT = "tsconfig.json"  # the pages checked in tsc's strict mode
LOOSE = "tsconfig.loose.json"  # the pages not yet typed for it


def _config(reader: str) -> str:
    """The project that checks `reader`."""
    return STRICT if reader in json.loads((assets.HERE / STRICT).read_text(encoding="utf-8"))["files"] else LOOSE


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
    # first as written: the batch finds nothing, in strict mode (tsconfig.json) and in the rest (tsconfig.loose.json)
    checks = [("", "", STRICT), ("loose", "", LOOSE), *((r, f, _config(reader)) for r, f, reader in RENAMES)]
    for record, field, config in checks:
        copy = tmp_path_factory.mktemp(f"{record}-{field}") / "assets"
        shutil.copytree(assets.HERE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.css"))
        text = _renamed(record, field) if field else page_types.declarations()
        (copy / "contract.d.ts").write_text(text, encoding="utf-8")
        projects[(record, field)] = str(copy / config)
    got = subprocess.run(["node", str(ROOT / "tests" / "support" / "tsc_batch.js"), *projects.values()],
                         capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr
    said = json.loads(got.stdout)
    for clean in (("", ""), ("loose", "")):
        assert said[projects[clean]]["errors"] == 0, said[projects[clean]]["text"]
    return {key: said[project]["text"] if said[project]["errors"] else "" for key, project in projects.items()}


@needs_tsc
@pytest.mark.parametrize(("record", "field", "reader"), RENAMES)
def test_a_renamed_field_fails_the_check(renamed_checks, record, field, reader):
    """What a rename in viewer/contract.py does to the declarations, and tsc naming the file that reads it."""
    said = renamed_checks[(record, field)]
    assert said, f"tsc found nothing wrong after renaming {record}.{field}"
    assert reader in said and f"'{field}'" in said, said


def test_the_bundle_holds_every_part_once():
    js = assets.read("trace_view.js")
    assert js.startswith("const TraceView = (() => {")
    for part in assets.parts("trace_view.js"):
        assert js.count(f"// -- {part.relative_to(assets.HERE)}\n") == 1
    assert sorted(p.name for p in (assets.HERE / "trace_view").glob("*.js")) == \
        sorted(p.name for p in assets.parts("trace_view.js")), "a part is missing from viewer/assets BUNDLES"


@needs_tsc
def test_the_pages_type_check_strictly(renamed_checks):
    """The pages in tsconfig.json are checked in tsc's strict mode: the batch asserts it finds nothing as written,
    and every page is checked by one of the two projects."""
    assert renamed_checks[("", "")] == ""
    projects = [json.loads((assets.HERE / c).read_text(encoding="utf-8")) for c in (STRICT, LOOSE)]
    pages = {p.relative_to(assets.HERE).as_posix() for p in assets.HERE.rglob("*.js") if "vendor" not in p.parts}
    checked = {p for p in pages for c in projects if p in c["files"] or any(fnmatch(p, g) for g in c["include"])}
    assert pages == checked, pages - checked
