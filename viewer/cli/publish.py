"""`viewer publish RUN org/name`: a recorded run uploaded as a Hub dataset repo
(rollout_trace/artifact/run_publish.py), with a message naming what stopped it, never the token."""

from __future__ import annotations

import sys
from pathlib import Path

from rollout_trace.artifact import ArtifactError

from .collection import shown
from .exits import INVALID, OK


def publish(source: str, repo: str, private: bool) -> int:
    """`viewer publish`: 0 when uploaded, 1 naming what stopped it (never the token)."""
    from huggingface_hub.errors import HfHubHTTPError

    from rollout_trace.artifact.run_publish import publish as upload

    try:
        n = upload(Path(source), repo, private=private or None)
    except ArtifactError as e:
        print(f"ERROR {shown(source)}: not a run this tool can publish", file=sys.stderr)
        for p in e.problems:
            print(f"  - {p}", file=sys.stderr)
        return INVALID
    except (HfHubHTTPError, OSError, ValueError) as e:
        print(f"ERROR {shown(repo)}: the upload failed: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}",
              file=sys.stderr)
        return INVALID
    print(f"uploaded {n} files to https://huggingface.co/datasets/{repo}: `python app.py` then `?src={repo}` opens it; "
          f"datasets.load_dataset({repo!r}) loads its rollouts")
    return OK
