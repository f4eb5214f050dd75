"""What a public deployment lets a visitor ask a capture to do: nothing that names this server.

On a public app every form field is typed by a stranger, and several fields are read as server
paths by the code behind them: the training script (`example`) is imported and run, a dataset file
or folder is read (and a "does not exist" reply says whether a path exists), a tokenizer or model
name that is a local folder is loaded from disk, and the output folder is written. The `local`
backend runs the agent's commands on this machine. `public_problems` lists every such field,
named as the Capture form labels it, without echoing the value (the reply must not reflect a server
path back either); `capture.run.capture(..., public=True)` refuses on any of them, so the rule holds
in the library and not only in the UI.

Pure checks on the config text, except two: a name that would be found as a path relative to the
working directory is refused too (the libraries that load datasets and tokenizers look there first),
and the endpoint's host is resolved so that every address it names can be checked.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from rollout_trace.artifact.errors import RolloutTraceError

# The labels the Capture form shows (viewer/ui/capture_tab.py); messages must use these.
LABELS = {"backend": "Backend", "model": "Model", "endpoint": "Endpoint URL", "sandbox_vllm_url": "Endpoint URL",
          "dataset": "Dataset", "example": "Training script", "tokenizer": "Tokenizer", "out_dir": "Output folder",
          "local_model": "Backend"}
# org/name as the Hub spells repo ids; one slash, no leading dot, no path tricks
HUB_REPO = re.compile(r"^[A-Za-z0-9][\w-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
# a served model name: a Hub id or a bare name (vLLM's --served-model-name), never a path
MODEL_NAME = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}(?:/[A-Za-z0-9][\w.-]{0,95})?$")
FILE_SUFFIXES = (".json", ".jsonl", ".parquet", ".csv", ".txt", ".py", ".arrow", ".zip", ".gz")
NOT_PUBLIC = "a public app takes only a public http(s) URL, not this machine or a private network"


@dataclass(frozen=True)
class PolicyProblem:
    field: str  # CaptureConfig field
    label: str  # how the form names it
    reason: str

    def __str__(self) -> str:
        return f"{self.label}: {self.reason}"


class PolicyError(RolloutTraceError, ValueError):
    """The config asks for something a public deployment does not allow; `problems` says each."""

    def __init__(self, problems: list[PolicyProblem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def _exists_here(name: str) -> bool:
    try:
        return Path(name).exists()
    except (OSError, ValueError):
        return True  # cannot tell: treat as a path


def _hub_id(value: str) -> bool:
    return bool(HUB_REPO.fullmatch(value)) and not value.lower().endswith(FILE_SUFFIXES) and not _exists_here(value)


def _host_problem(url: str) -> str | None:
    """Why the server must not send requests to `url`'s host, or None when every address it resolves to
    is public.

    The host is resolved with `getaddrinfo`, as the HTTP client will resolve it, and every address is
    checked with `ipaddress`: `2130706433`, `0x7f000001`, `127.1` and `0177.0.0.1` all spell 127.0.0.1,
    and a DNS name can point at this machine or a private network too. A host that does
    not resolve is refused: there is nothing to check. (A name whose DNS answer changes between this
    check and the request is beyond what a check on the name can stop.)"""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").strip("[]").lower()
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return NOT_PUBLIC
    if parts.scheme not in ("http", "https") or not host:
        return NOT_PUBLIC
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return NOT_PUBLIC
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return "its host name cannot be resolved from this server"
    for *_, sockaddr in infos:
        try:
            ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        except ValueError:
            return NOT_PUBLIC
        mapped = getattr(ip, "ipv4_mapped", None)
        if not ip.is_global or ip.is_multicast or (mapped is not None and not mapped.is_global):
            return NOT_PUBLIC
    return None


def public_problems(cfg, allowed_out_root: str | Path | None = None) -> list[PolicyProblem]:
    """Every field of `cfg` (a CaptureConfig) that a public deployment must refuse, or [].

    `allowed_out_root`: the folder the server writes captures under; an out_dir outside it is refused
    (the app chooses out_dir itself; this stops a visitor-chosen one reaching the library)."""
    found: list[PolicyProblem] = []

    def refuse(field: str, reason: str) -> None:
        found.append(PolicyProblem(field, LABELS[field], reason))

    if cfg.backend != "hf-sandbox" or cfg.local_model:
        refuse("local_model" if cfg.local_model else "backend",
               "a public app runs captures only in a Hugging Face sandbox (hf-sandbox); the local backend runs "
               "the agent's commands on this server")
    if cfg.example:
        refuse("example", "a public app does not take a training script: it would run as code on this server")
    if cfg.dataset and not _hub_id(cfg.dataset):
        refuse("dataset", "a public app takes only a Hub dataset id (org/name), not a file or folder")
    if cfg.tokenizer and not _hub_id(cfg.tokenizer):
        refuse("tokenizer", "a public app takes only a Hub model id (org/name), not a file or folder")
    if not cfg.tokenizer and (not MODEL_NAME.fullmatch(cfg.model or "") or _exists_here(cfg.model)):
        # without a tokenizer field the model name is loaded as the tokenizer: the same rule applies
        refuse("model", "a public app takes a model name or Hub id (org/name), not a file or folder")
    url = cfg.sandbox_vllm_url if cfg.backend == "hf-sandbox" else None  # local is refused above
    why = _host_problem(url) if url else None
    if why:
        refuse("sandbox_vllm_url", why)
    if allowed_out_root is not None:
        root = Path(allowed_out_root).resolve()
        out = Path(cfg.out_dir).resolve()
        if out == root or not out.is_relative_to(root):
            refuse("out_dir", "a public app chooses where captures are written")
    return found


def check_public(cfg, allowed_out_root: str | Path | None = None) -> None:
    """Raise PolicyError naming every field a public deployment refuses (see `public_problems`)."""
    problems = public_problems(cfg, allowed_out_root)
    if problems:
        raise PolicyError(problems)
