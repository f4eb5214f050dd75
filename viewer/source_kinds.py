"""What a source is: one rollout, a collection (many artifacts, or a GRPO group), or a recorded TRL run.

The one place that decides, for a bundled example, a local folder or .zip and a Hub dataset id alike, from
the store's files (rollout_trace/artifact/stores.py) rather than from how the source is spelled, so the same
files are the same kind wherever they live. The CLI (viewer/cli/collection.py) and the View tab ask here, then
open the kind with its own reader: `open_artifact`, `open_collection` or `open_run`.

Rules, in order: a run.json (at the root or in a zip's one folder) makes a run; a turns.json at the root a
rollout; a group.json at the root a collection; otherwise a collection when the listing holds a group or
more than one artifact folder (a folder with a turns.json or a summary.json: a summary-only artifact
counts, as the index counts it), else a rollout, whose reader then says what is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from rollout_trace.artifact.collection import row_folders
from rollout_trace.artifact.group import GROUP_FILE
from rollout_trace.artifact.problems import ArtifactError, Problem
from rollout_trace.artifact.run import find_run
from rollout_trace.artifact.run_format import MANIFEST
from rollout_trace.artifact.sources import EMPTY_HINT, bundled_examples, bundled_groups, bundled_runs, is_zip
from rollout_trace.artifact.stores import FolderStore, Store, store_for

Kind = Literal["rollout", "collection", "run"]

# a first look lists this many files: a rollout folder holds about ten, so two rows show up early in a
# collection; only a listing cut short before it found two rows is taken again in full
FIRST_LOOK = 256


def classify(source: str, token: str | None = None, allow_local: bool = True) -> Kind:
    """The kind of what `source` names; raises ArtifactError when it names nothing that can be opened."""
    text = source.strip()
    if not text:
        raise ArtifactError([Problem("(empty)", "no source named", expected=EMPTY_HINT, found="an empty name")])
    if text in bundled_examples():
        return "rollout"
    if text in bundled_groups():
        return "collection"
    if text in bundled_runs():
        return "run"
    if allow_local and _loose_file(text):
        return "rollout"  # a turns.json named directly; the single-artifact reader explains anything else
    store = store_for(text, token=token, allow_local=allow_local)
    try:
        return kind_of(store)
    finally:
        if store.kind == "zip":
            store.close()


def kind_of(store: Store) -> Kind:
    """The kind of the files `store` holds (see the module docstring for the rules)."""
    if find_run(store) is not None:
        return "run"
    if isinstance(store, FolderStore) and (store.root / MANIFEST).is_dir():  # a broken run, not a collection
        raise ArtifactError([Problem(MANIFEST, "a recorded run's manifest is not a file", expected="run.json, a file "
                                     "written by rollout_trace.record", found="a folder")])
    top = store.list_dir("")
    if "turns.json" in top:
        return "rollout"
    if GROUP_FILE in top:
        return "collection"
    listing = store.list(max_entries=FIRST_LOOK)
    artifacts, groups = row_folders(listing)
    if not groups and len(artifacts) < 2 and len(listing.files) >= FIRST_LOOK:
        artifacts, groups = row_folders(store.list())
    return "collection" if groups or len(artifacts) > 1 else "rollout"


def _loose_file(text: str) -> bool:
    """A local file that is not a zip (a turns.json, or something the single reader will refuse)."""
    path = Path(text).expanduser()
    try:
        return path.is_file() and not is_zip(path)
    except OSError:  # a name too long, a loop of symlinks: not a file we can use
        return False
