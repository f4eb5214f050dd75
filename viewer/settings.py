"""The server's settings: every environment variable the app reads, in one place, read when asked.

| variable                          | what it sets                                                        |
|-----------------------------------|---------------------------------------------------------------------|
| GRADIO_SERVER_NAME / _PORT        | where `python app.py` listens (127.0.0.1:7860); flags win            |
| SPACE_ID                          | set by Hugging Face Spaces: public mode, and sign-in can be offered  |
| ROLLOUT_VIEWER_SOURCE             | what the app opens on; `app.py SOURCE` wins (a bundled example else) |
| ROLLOUT_VIEWER_ENABLE_CAPTURE     | "1": a public server offers the Capture tab (gated, see below)       |
| ROLLOUT_VIEWER_CAPTURE_SECRET     | a password a public visitor gives to capture                         |
| ROLLOUT_VIEWER_CAPTURE_USERS      | comma-separated Hugging Face usernames who may capture               |
| ROLLOUT_VIEWER_CAPTURE_DATASETS   | comma-separated Hub dataset ids a public visitor may capture from    |
| ROLLOUT_VIEWER_CAPTURE_DIR        | where the Capture tab writes artifacts (./captures)                  |
| GRADIO_MCP_SERVER                 | Gradio's own switch: "true" serves the read-only MCP tools too       |

Read on each call rather than at import, so a test (or an operator's restart script) that sets a variable
sees it take effect. The capture CLI's own variables (HF_TOKEN, OPENENV_LLM_API_KEY, PUSH_TO_DATASET) are
documented with its flags (capture/__main__.py); GRADIO_TEMP_DIR is Gradio's (viewer/ui/cache_folder.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_ENV = "ROLLOUT_VIEWER_SOURCE"
ENABLE_CAPTURE_ENV = "ROLLOUT_VIEWER_ENABLE_CAPTURE"
SECRET_ENV = "ROLLOUT_VIEWER_CAPTURE_SECRET"
USERS_ENV = "ROLLOUT_VIEWER_CAPTURE_USERS"
DATASETS_ENV = "ROLLOUT_VIEWER_CAPTURE_DATASETS"
CAPTURE_DIR_ENV = "ROLLOUT_VIEWER_CAPTURE_DIR"
MCP_ENV = "GRADIO_MCP_SERVER"  # Gradio's own name: `launch` reads it too


def _space_id(value: str) -> str:
    """SPACE_ID when it is an "owner/name" a link can carry, else "" (no link is made of it)."""
    value = value.strip()
    return value if re.fullmatch(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}", value) else ""


def _listed(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 7860
    on_space: bool = False
    space_id: str = ""  # "owner/name" of the Space serving the app (its files are linked to from the page)
    source: str = ""
    enable_capture: bool = False
    capture_secret: str = field(default="", repr=False)  # never printed
    capture_users: frozenset[str] = frozenset()  # lower-case
    capture_datasets: tuple[str, ...] = ()
    capture_dir: Path | None = None
    mcp_server: bool = False


def settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings as the environment says now; a malformed port is a message, not a traceback."""
    env = os.environ if environ is None else environ
    port = env.get("GRADIO_SERVER_PORT", "7860").strip() or "7860"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise SystemExit(f"GRADIO_SERVER_PORT={port[:20]!r}: expected a port number (1-65535)")
    return Settings(
        host=env.get("GRADIO_SERVER_NAME", "").strip() or "127.0.0.1",
        port=int(port),
        on_space=bool(env.get("SPACE_ID")),
        space_id=_space_id(env.get("SPACE_ID", "")),
        source=env.get(SOURCE_ENV, "").strip(),
        enable_capture=env.get(ENABLE_CAPTURE_ENV) == "1",
        capture_secret=env.get(SECRET_ENV, ""),
        capture_users=frozenset(u.lower() for u in _listed(env.get(USERS_ENV, ""))),
        capture_datasets=_listed(env.get(DATASETS_ENV, "")),
        capture_dir=Path(env[CAPTURE_DIR_ENV]) if env.get(CAPTURE_DIR_ENV) else None,
        mcp_server=env.get(MCP_ENV, "").strip().lower() in ("1", "true", "yes"),
    )


def named_arrow_pool(environ: Mapping[str, str] | None = None) -> str:
    """ARROW_DEFAULT_MEMORY_POOL, which Arrow reads itself: a process that names its pool keeps it
    (viewer/memory_pool.py). Apart from `settings`, so the command line reads it without the server's checks."""
    env = os.environ if environ is None else environ
    return env.get("ARROW_DEFAULT_MEMORY_POOL", "").strip()
