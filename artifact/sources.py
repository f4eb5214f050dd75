"""Turn what a user names (a folder, a .zip, a Hub dataset id, a bundled example) into a local folder.

Hub artifacts are fetched with `huggingface_hub.snapshot_download`, which caches them and honours
`HF_HUB_OFFLINE`; private repos use the caller's token, which is passed through and never stored.
Zips are unpacked (artifact/unpack.py) into a temporary folder that `resolved` removes when its
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

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"
# org/name, then optional @revision and :sub/folder; names as the Hub allows them.
HUB_ID = re.compile(r"^(?:hf://datasets/)?(?P<repo>[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96})"
                    r"(?:@(?P<rev>[\w./-]{1,200}))?(?::(?P<sub>[\w./-]{1,300}))?$")


@dataclass(frozen=True)
class HubRef:
    repo_id: str
    revision: str | None = None
    subfolder: str | None = None


def bundled_examples() -> list[str]:
    """Names of the example artifacts shipped under examples/."""
    return sorted(p.name for p in EXAMPLES_DIR.iterdir() if (p / "turns.json").is_file()) if EXAMPLES_DIR.is_dir() else []


def bundled_groups() -> list[str]:
    """Names of the GRPO groups shipped under examples/ (a folder with group.json); they open as a group map."""
    return sorted(p.name for p in EXAMPLES_DIR.iterdir() if (p / "group.json").is_file()) if EXAMPLES_DIR.is_dir() else []


def bundled_runs() -> list[str]:
    """Names of the recorded TRL runs shipped under examples/ (a folder with run.json, artifact/run.py)."""
    return sorted(p.name for p in EXAMPLES_DIR.iterdir() if (p / "run.json").is_file()) if EXAMPLES_DIR.is_dir() else []


def parse_hub_id(text: str) -> HubRef | None:
    m = HUB_ID.match(text.strip())
    if not m or ".." in text:
        return None
    sub = m.group("sub")
    return HubRef(m.group("repo"), m.group("rev"), sub.strip("/") if sub else None)


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
    )

    try:
        yield
    except RevisionNotFoundError:
        raise ArtifactError([Problem(where, f"the dataset has no revision {revision!r}")]) from None
    except GatedRepoError:
        raise ArtifactError([Problem(where, "the dataset is gated: accept its terms on the Hub and pass a token")]) from None
    except RepositoryNotFoundError:
        raise ArtifactError([Problem(where, "no such dataset repo, or it is private: check the id, or pass "
                                            "a token (HF_TOKEN) that can read it")]) from None
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):
        raise ArtifactError([Problem(where, "not in the local cache and the Hub cannot be reached "
                                            "(offline, or HF_HUB_OFFLINE=1 is set)")]) from None
    except OSError as e:  # network failures surface as httpx OSErrors
        raise ArtifactError([Problem(where, f"could not download from the Hub: {type(e).__name__}")]) from None


def download(ref: HubRef, token: str | None = None) -> Path:
    """Fetch (or reuse from cache) the artifact files of a Hub dataset repo."""
    from huggingface_hub import snapshot_download

    patterns = None
    if ref.subfolder:
        patterns = [f"{ref.subfolder}/*", f"{ref.subfolder}/**"]
    where = f"{ref.repo_id}" + (f"@{ref.revision}" if ref.revision else "")
    with hub_errors(where, ref.revision):
        local = snapshot_download(ref.repo_id, repo_type="dataset", revision=ref.revision,
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
            if path.suffix.lower() == ".zip" or _is_zip(path):
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
        raise ArtifactError([Problem(text[:200] or "(empty)", "cannot find this artifact", expected=hint,
                                     found="none of these")])
    yield download(ref, token=token), False


def _is_zip(path: Path) -> bool:
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
            zipped = path.is_file() and (path.suffix.lower() == ".zip" or _is_zip(path))
        except OSError:
            zipped = False
        if zipped:
            st = path.stat()
            return f"zip|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    with resolved(text, token=token, allow_local=allow_local) as (root, _):
        return f"dir|{_stamp(root)}"
