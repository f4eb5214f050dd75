"""Open an artifact from whatever a user names or uploads, and leave nothing behind on disk.

`open_artifact` (a source: example, folder, zip, Hub id) and `open_upload` (files a visitor uploaded:
one .zip or the loose artifact files) both return an `Artifact` that needs no file afterwards. When
the files were unpacked or copied into a temporary folder, that folder is deleted before returning,
accepted or refused: the arrays are already numpy (rollout_trace/artifact/read.py copies them out of the mapped
turns.json), and the tokenizer, the one thing the viewer would read later, is brought into memory
first (`Artifact.tokenizer_json`). The caller therefore has no cleanup to forget.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Sequence
from pathlib import Path

from .model import Artifact
from .problems import ArtifactError, Problem
from .read import load_artifact
from .schema import FILES
from .sources import artifact_root, resolved
from .unpack import MAX_UNZIPPED_BYTES, UPLOAD_MAX_UNZIPPED_BYTES, extract_zip, scratch


def open_artifact(source: str | Path, token: str | None = None, allow_local: bool = True,
                  max_unzipped_bytes: int = MAX_UNZIPPED_BYTES) -> Artifact:
    """Resolve a source (example, folder, zip, Hub id), then read and validate it."""
    label = str(source)
    with resolved(label, token=token, allow_local=allow_local, max_unzipped_bytes=max_unzipped_bytes) as (root, temp):
        return _detached(load_artifact(root, source=label)) if temp else load_artifact(root, source=label)


def open_upload(files: Sequence[str | Path], label: str = "the upload",
                max_unzipped_bytes: int = UPLOAD_MAX_UNZIPPED_BYTES) -> Artifact:
    """Read uploaded files: a single .zip, or the artifact files themselves (names as in schema.FILES).

    The default cap is the public one; the unpacked (or copied) files are deleted before returning."""
    paths = [Path(f) for f in files]
    if not paths:
        raise ArtifactError([Problem(label, "no file was uploaded")])
    with scratch("rollout-upload-") as folder:
        if len(paths) == 1 and paths[0].suffix.lower() == ".zip":
            extract_zip(paths[0], folder, label=paths[0].name, max_bytes=max_unzipped_bytes)
        else:
            total = 0
            for p in paths:
                if p.name not in FILES:
                    raise ArtifactError([Problem(p.name, "not an artifact file",
                                                 expected="a .zip or the artifact files (" + ", ".join(FILES) + ")",
                                                 found=p.name)])
                try:
                    total += p.stat().st_size
                    if total > max_unzipped_bytes:
                        raise ArtifactError([Problem(label, "too large", expected=f"at most {max_unzipped_bytes:,} bytes",
                                                     found=f"more than {max_unzipped_bytes:,} bytes")])
                    shutil.copyfile(p, folder / p.name)
                except OSError as e:
                    raise ArtifactError([Problem(p.name, f"cannot be read: {e.strerror or type(e).__name__}")]) from None
        return _detached(load_artifact(artifact_root(folder, label), source=label))


def _detached(a: Artifact) -> Artifact:
    """The artifact with nothing left to read from its folder, which is about to be deleted."""
    tokenizer_json, notices = None, list(a.notices)
    if a.tokenizer_dir is not None:
        tokenizer_json = _tokenizer_json(a.tokenizer_dir)
        if tokenizer_json is None:
            notices.append("tokenizer/ has no tokenizer.json that could be read, so this unpacked artifact is shown "
                           "without its tokenizer")
    return dataclasses.replace(a, root=None, tokenizer_dir=None, tokenizer_json=tokenizer_json, notices=notices)


def _tokenizer_json(folder: Path) -> bytes | None:
    """tokenizer.json's bytes; for a folder of slow-tokenizer files only, transformers' conversion."""
    f = folder / "tokenizer.json"
    try:
        if f.is_file():
            return f.read_bytes()
    except OSError:
        return None
    try:
        from transformers import AutoTokenizer

        # an artifact's tokenizer is data: never its code (auto_map), and never a prompt asking to run it
        return AutoTokenizer.from_pretrained(str(folder), local_files_only=True,
                                             trust_remote_code=False).backend_tokenizer.to_str().encode()
    except Exception:  # any failure only costs the text view; the notice says so
        return None
