"""The public app in its own process, mid-work, for tests that stop it from outside.

    python tests/support/app_child.py PORT

Before serving it leaves what a busy app has on disk: a download (an export), a capture's sandbox
whose thread will be abandoned, and an upload being unpacked in a daemon thread. It prints
`READY <its Gradio cache folder>` and serves until it is stopped.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2])]

from capture.sandbox import LocalSandbox  # noqa: E402
from rollout_trace.artifact.unpack import scratch  # noqa: E402
from viewer.ui.app import build_app, launch_options  # noqa: E402
from viewer.ui.cache_folder import private_cache  # noqa: E402
from viewer.ui.downloads import new_download_dir  # noqa: E402


def main() -> int:
    port = int(sys.argv[1])
    demo = build_app(default_source="scripted-smollm2", public=True)
    (new_download_dir() / "rollout.html").write_text("an export")
    box = LocalSandbox.create()  # a capture mid-run: its thread never gets to kill() it
    (box.root / "workdir").mkdir()

    def unpacking() -> None:
        with scratch("rollout-upload-") as folder:
            (folder / "turns.json").write_text("{}")
            time.sleep(3600)

    threading.Thread(target=unpacking, daemon=True).start()
    print(f"READY {private_cache()}", flush=True)
    demo.launch(server_name="127.0.0.1", server_port=port, quiet=True, **launch_options(True, demo))
    return 0


if __name__ == "__main__":
    sys.exit(main())
