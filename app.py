"""Rollout trace viewer: `python app.py [SOURCE] [--host H] [--port P] [--public]`.

SOURCE is a bundled example name, a folder, a .zip or a Hub dataset id (org/name[@rev][:sub/folder]),
holding one artifact or a collection of them; without it, ROLLOUT_VIEWER_SOURCE, else the bundled example.
On a Hugging Face Space (SPACE_ID is set) or with --public, visitors cannot name server paths.
"""

from __future__ import annotations

import argparse

import crash_log
from viewer.memory_pool import settle_startup
from viewer.settings import settings
from viewer.ui.app import build_app, configured_source, launch_options


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="?", default=None, help="overrides ROLLOUT_VIEWER_SOURCE")
    crash_log.to_stderr()  # the traceback behind a page's 'unexpected' message, in the Space's log
    env = settings()  # every variable the server reads: viewer/settings.py
    ap.add_argument("--host", default=env.host)
    ap.add_argument("--port", type=int, default=env.port)
    ap.add_argument("--public", action="store_true", help="Space mode: no server paths, size-limited uploads")
    args = ap.parse_args()
    public = args.public or env.on_space
    demo = build_app(default_source=configured_source(args.source), public=public)
    settle_startup()  # the start-up's objects out of every full collection the server makes
    demo.launch(server_name=args.host, server_port=args.port, **launch_options(public, demo))


if __name__ == "__main__":
    main()
