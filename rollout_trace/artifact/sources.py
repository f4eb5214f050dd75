"""Turn what a user names (a folder, a .zip, a Hub dataset id, a bundled example) into a local folder.

Hub artifacts are fetched with `huggingface_hub.snapshot_download`, which caches them and honours
`HF_HUB_OFFLINE`; private repos use the caller's token, which is passed through and never stored.
A Hub id is checked before anything uses it: the repo id by huggingface_hub's own `validate_repo_id`,
the revision as the Hub names one (a 40-hex commit, or a git ref name: `main`, `v1.0`, `refs/pr/3`),
and the revision is resolved to a commit (`HfApi.resolve_revision`) before any download. huggingface_hub
2.4.0 has no revision validator: it quotes a revision in URLs but joins it as a path in its cache
(`refs/<revision>`), so a revision like `/some/folder` would name a server folder.
Zips are unpacked (rollout_trace/artifact/unpack.py) into a temporary folder that `resolved` removes when its
block ends: nothing a load unpacks outlives the load, whether it was accepted or refused.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .problems import ArtifactError, Problem
from .unpack import MAX_UNZIPPED_BYTES, extract_zip, scratch

NOT_FOUND = "not found"
OFFLINE_NOT_FOUND = f"{NOT_FOUND}: not in the local cache and the Hub cannot be reached (offline, or HF_HUB_OFFLINE=1 is set)"

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"  # the checkout's; none when installed
# org/name, then optional @revision and :sub/folder (each then checked by the rules below).
HUB_ID = re.compile(r"^(?:hf://datasets/)?(?P<repo>[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96})"
                    r"(?:@(?P<rev>[\w./-]{1,200}))?(?::(?P<sub>[\w./-]{1,300}))?$", re.ASCII)
# One part of a git ref name (`git check-ref-format`, restricted to the characters Hub names use):
# never empty, never starting with "." (so never "." or ".."), never ending with "." or ".lock".
_REF_PART = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*", re.ASCII)
_PATH_PART = re.compile(r"[\w.-]+", re.ASCII)


REVISION_HINT = "; a revision is a branch, tag or commit name"
EMPTY_HINT = "a bundled example, a folder, a .zip or a Hub dataset id"


@dataclass(frozen=True)
class HubRef:
    repo_id: str
    revision: str | None = None
    subfolder: str | None = None


_LISTED: dict[tuple[str, int, int], dict[str, list[str]]] = {}  # examples/ listed, per state of the folder


def _bundled(marker: str) -> list[str]:
    """Names of the folders under examples/ holding `marker`, listed once per state of examples/ (its mtime and
    link count: the folder ships with the app; every source a visitor names is asked whether it is one, 3
    listings of ~15 folders each, ~0.5 ms, twice for each rollout of a group map)."""
    try:
        st = EXAMPLES_DIR.stat()
        key = (str(EXAMPLES_DIR), st.st_mtime_ns, st.st_nlink)
        listed = _LISTED.get(key)
        if listed is None:
            folders = [p for p in EXAMPLES_DIR.iterdir() if p.is_dir()]
            listed = {m: sorted(p.name for p in folders if (p / m).is_file())
                      for m in ("turns.json", "group.json", "run.json")}
            _LISTED.clear()
            _LISTED[key] = listed
    except OSError:  # no examples/ folder (an installed package ships none)
        return []
    return list(listed[marker])


def bundled_examples() -> list[str]:
    """Names of the example artifacts shipped under examples/."""
    return _bundled("turns.json")


def bundled_groups() -> list[str]:
    """Names of the GRPO groups shipped under examples/ (a folder with group.json); they open as a group map."""
    return _bundled("group.json")


def revision_ok(revision: str) -> bool:
    """A branch, tag or commit name as the Hub defines them; never something a path join could follow.

    A 40-hex commit (huggingface_hub's own `REGEX_COMMIT_HASH`), or a git ref name: parts joined by
    single "/" (`refs/pr/3`, `refs/convert/parquet`, `feature/x`), each part from letters, digits and
    `_ . -`, not starting with "." and not ending with "." or ".lock"."""
    from huggingface_hub.file_download import REGEX_COMMIT_HASH

    if REGEX_COMMIT_HASH.fullmatch(revision):
        return True
    return 0 < len(revision) <= 200 and all(
        _REF_PART.fullmatch(part) and ".." not in part and not part.endswith((".", ".lock"))
        for part in revision.split("/"))


def subfolder_ok(sub: str) -> bool:
    """A relative path inside the repo: parts of letters, digits and `_ . -`, none empty, "." or ".."."""
    return all(_PATH_PART.fullmatch(part) and part not in (".", "..") for part in sub.split("/"))


def bundled_runs() -> list[str]:
    """Names of the recorded TRL runs shipped under examples/ (a folder with run.json, rollout_trace/artifact/run.py)."""
    return _bundled("run.json")


def parse_hub_id(text: str) -> HubRef | None:
    """`org/name[@revision][:sub/folder]` checked by the Hub's rules, or None when it is not one."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    m = HUB_ID.match(text.strip())
    if not m:
        return None
    try:
        validate_repo_id(m.group("repo"))
    except HFValidationError:
        return None
    rev, sub = m.group("rev"), m.group("sub")
    sub = sub.strip("/") if sub else None
    if (rev is not None and not revision_ok(rev)) or (sub and not subfolder_ok(sub)):
        return None
    return HubRef(m.group("repo"), rev, sub or None)


def commit_of(ref: HubRef, token: str | None = None) -> str:
    """The commit `ref`'s revision names, from the Hub or (offline, unreachable) the local cache's refs.

    Everything after this gets the commit, so no download or cache lookup sees the revision as typed.
    Raises ArtifactError ("not found") when it cannot be resolved."""
    from huggingface_hub import HfApi
    from huggingface_hub.file_download import REGEX_COMMIT_HASH

    where = ref.repo_id + (f"@{ref.revision}" if ref.revision else "")
    if ref.revision is not None and not revision_ok(ref.revision):  # a HubRef built by hand: same rules
        raise ArtifactError([Problem(where, NOT_FOUND, expected="a branch, tag or commit name")])
    with hub_errors(where, ref.revision):
        commit = str(HfApi(token=token).resolve_revision(ref.repo_id, repo_type="dataset", revision=ref.revision,
                                                         token=token).resolved).strip()
    if not REGEX_COMMIT_HASH.fullmatch(commit):  # a cache ref file that does not hold a commit
        raise ArtifactError([Problem(where, f"{NOT_FOUND}: the local cache has no commit for this revision")])
    return commit


def artifact_root(folder: Path, label: str | None = None) -> Path:
    """The folder itself, or its single sub-folder holding turns.json (how zips of a folder unpack).

    Messages name `label` (how the user named the source) and paths relative to the folder, so a
    temporary folder's server path never reaches a visitor."""
    label = label or str(folder)
    if (folder / "turns.json").is_file():
        return folder
    found = [p.parent for p in folder.rglob("turns.json")]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ArtifactError([Problem(label, "no turns.json here or below: this is not a rollout artifact")])
    names = ", ".join(str(p.relative_to(folder)) or "." for p in found[:5])
    raise ArtifactError([Problem(label, f"{len(found)} artifacts inside; name one of them",
                                 expected="one turns.json", found=names)])


@contextmanager
def hub_errors(where: str, revision: str | None = None) -> Iterator[None]:
    """Turn huggingface_hub's exceptions into an ArtifactError that says what to do next."""
    from huggingface_hub.errors import (
        GatedRepoError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
        RevisionResolutionError,
    )

    try:
        yield
    except RevisionNotFoundError:
        raise ArtifactError([Problem(where, f"{NOT_FOUND}: the dataset has no revision {revision!r}")]) from None
    except GatedRepoError:
        raise ArtifactError([Problem(where, "the dataset is gated: accept its terms on the Hub and pass a token")]) from None
    except RepositoryNotFoundError:
        raise ArtifactError([Problem(where, f"{NOT_FOUND}: no such dataset repo, or it is private: check the id, "
                                            "or pass a token (HF_TOKEN) that can read it")]) from None
    except (LocalEntryNotFoundError, OfflineModeIsEnabled, RevisionResolutionError):
        raise ArtifactError([Problem(where, OFFLINE_NOT_FOUND)]) from None
    except OSError as e:  # network failures surface as httpx OSErrors
        raise ArtifactError([Problem(where, f"could not download from the Hub: {type(e).__name__}")]) from None


def download(ref: HubRef, token: str | None = None) -> Path:
    """Fetch (or reuse from cache) the artifact files of a Hub dataset repo."""
    from huggingface_hub import snapshot_download

    patterns = None
    if ref.subfolder:
        patterns = [f"{ref.subfolder}/*", f"{ref.subfolder}/**"]
    where = f"{ref.repo_id}" + (f"@{ref.revision}" if ref.revision else "")
    commit = commit_of(ref, token)
    with hub_errors(where, ref.revision):
        local = snapshot_download(ref.repo_id, repo_type="dataset", revision=commit,
                                  allow_patterns=patterns, token=token)
    root = Path(local) / ref.subfolder if ref.subfolder else Path(local)
    if not root.is_dir():
        raise ArtifactError([Problem(where, "the dataset has no such sub-folder", field=ref.subfolder)])
    return artifact_root(root)


@contextmanager
def resolved(source: str, token: str | None = None, allow_local: bool = True,
             max_unzipped_bytes: int = MAX_UNZIPPED_BYTES) -> Iterator[tuple[Path, bool]]:
    """(local folder holding the artifact that `source` names, whether that folder is temporary).

    A temporary folder (an unpacked zip) is removed when the block ends, so read everything needed
    inside it (artifact.open_artifact does, tokenizer included).

    Order: a bundled example's name; a local folder or .zip (only when `allow_local`, which a public
    Space turns off so visitors cannot read server paths); a Hub dataset id.
    """
    text = source.strip()
    if not text:  # Path("") is the working folder: an empty name must not open it
        raise ArtifactError([Problem("(empty)", "no source named", expected=EMPTY_HINT, found="an empty name")])
    if text in bundled_examples():
        yield EXAMPLES_DIR / text, False
        return
    if allow_local:
        path = Path(text).expanduser()
        try:
            is_dir, is_file = path.is_dir(), path.is_file()
        except OSError as e:  # a name too long, a loop of symlinks...
            raise ArtifactError([Problem(text[:200], f"cannot use this path: {e.strerror or type(e).__name__}")]) from None
        if is_dir:
            yield artifact_root(path), False
            return
        if is_file:
            if path.suffix.lower() == ".zip" or is_zip(path):
                with scratch("rollout-zip-") as folder:
                    extract_zip(path, folder, label=text, max_bytes=max_unzipped_bytes)
                    yield artifact_root(folder, text), True
                return
            if path.name == "turns.json":
                yield path.parent, False
                return
            raise ArtifactError([Problem(str(path), "not a folder, a .zip or a turns.json")])
    ref = parse_hub_id(text)
    if ref is None:
        hint = "a bundled example, a folder, a .zip or a Hub dataset id (org/name[@revision][:sub/folder])"
        if not allow_local:
            hint = "a bundled example or a Hub dataset id (org/name[@revision][:sub/folder])"
        raise ArtifactError([Problem(text[:200] or "(empty)", f"{NOT_FOUND}: cannot find this artifact",
                                     expected=hint + REVISION_HINT, found="none of these")])
    yield download(ref, token=token), False


def is_zip(path: Path) -> bool:
    """Whether `path` is a zip archive (False for what cannot be read)."""
    try:
        return zipfile.is_zipfile(path)
    except OSError:
        return False


def _stamp(folder: Path) -> str:
    """The folder and each artifact file's size and modification time: changes whenever a file is rewritten."""
    parts = [str(folder.resolve())]
    for name in sorted(p.name for p in folder.iterdir()):
        st = (folder / name).stat()
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)


def identify(source: str, token: str | None = None, allow_local: bool = True) -> str:
    """What stays the same for every visitor of the same artifact version and changes when it changes.

    A folder's is its path and file stamps (a Hub snapshot's folder name carries the commit); a zip's is
    its own stamp, so naming a zip does not unpack it."""
    text = source.strip()
    if allow_local and text not in bundled_examples():
        path = Path(text).expanduser()
        try:
            zipped = path.is_file() and (path.suffix.lower() == ".zip" or is_zip(path))
        except OSError:
            zipped = False
        if zipped:
            st = path.stat()
            return f"zip|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    with resolved(text, token=token, allow_local=allow_local) as (root, _):
        return f"dir|{_stamp(root)}"
