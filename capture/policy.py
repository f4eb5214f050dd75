"""What a visitor of a public deployment may ask a capture to do: nothing that names a server path or
runs on the server itself.

A public server (`app.py --public`, a Space) takes capture settings from strangers, who can call its
API directly with any value, hidden fields included. `check_public(cfg)` is the gate every such
request passes before anything is read, imported, probed or started: no training script, no local
task file, no local tokenizer folder, no local backend (it runs the agent's commands on the server),
no endpoint on the server's own network. The dataset is compared with the owner's list as a plain
string, so the answer never depends on what exists on the server's disk.
"""

from __future__ import annotations

import ipaddress
import os
import re
from urllib.parse import urlsplit

from .config import DEFAULT_DATASET, CaptureConfig
from .errors import CaptureError

DATASETS_ENV = "ROLLOUT_VIEWER_CAPTURE_DATASETS"  # comma-separated Hub dataset ids a visitor may pick
# A Hub repo id (name or org/name); anything else (a slash-led, dotted or nested path) is refused unread.
_REPO_ID = re.compile(r"^(?:[A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}$")


def public_datasets() -> list[str]:
    """The Hub datasets a visitor of a public server may capture from (the owner's list, or the default)."""
    listed = [d.strip() for d in os.environ.get(DATASETS_ENV, "").split(",") if d.strip()]
    return listed or [DEFAULT_DATASET]


def _is_repo_id(value: str) -> bool:
    return bool(_REPO_ID.match(value)) and ".." not in value and not value.endswith((".json", ".jsonl", ".parquet"))


def _internal_host(url: str) -> bool:
    """True when the URL names this machine or its private network by name or address literal."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("", "localhost") or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved or ip.is_unspecified


def check_public(cfg: CaptureConfig) -> None:
    """Raise `CaptureError` (naming the setting, never echoing a path) unless a public visitor may run `cfg`."""
    if cfg.backend != "hf-sandbox" or cfg.local_model:
        field = "local_model" if cfg.local_model else "backend"
        raise CaptureError("must be hf-sandbox on a public server: the local backend runs the agent's commands "
                           "on the server itself", field)
    if cfg.example:
        raise CaptureError("cannot be set on a public server: it would run a file from the server", "example")
    if cfg.dataset not in public_datasets():
        raise CaptureError("must be one of the Hub datasets this server allows: " + ", ".join(public_datasets()),
                           "dataset")
    if cfg.tokenizer and not _is_repo_id(cfg.tokenizer):
        raise CaptureError("must be a Hugging Face Hub repo id (org/name) on a public server", "tokenizer")
    if cfg.llm_url and _internal_host(cfg.llm_url):
        raise CaptureError("must be a public address on a public server (not localhost or a private network)",
                           cfg.url_field)
