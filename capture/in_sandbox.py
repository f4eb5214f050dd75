"""Talk to the capture proxy from inside the sandbox (standard library only; uploaded and run there).

    python in_sandbox.py health PORT SECONDS     wait until the proxy answers /health
    python in_sandbox.py session PORT            mint a capture session; prints its JSON
    python in_sandbox.py get PORT PATH           GET PATH on the proxy; prints its JSON (the live view's poll)
    python in_sandbox.py entries PORT SID FILE   write the session's trace entries to FILE
    python in_sandbox.py proxy ARGS...           run openenv's capture proxy (its own server module) with ARGS

The proxy listens on the sandbox's loopback only, so these requests are made from inside.
"""

import importlib.util
import json
import os
import runpy
import sys
import time
import types
import urllib.error
import urllib.request


def call(method, url, body=None, timeout=30):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


PROXY = "openenv.core.harness.capture.server"


def run_proxy(args):
    """Run openenv's capture proxy module as `python -m` would, without running the package fronts above it.

    `openenv/core/__init__.py` imports the environment server and, through it, Gradio: about 6 s of a 7 s
    start on a busy machine, for code the proxy never calls. The proxy's own package (`capture`, and the
    `training` module it reads) imports as usual; only `openenv`, `openenv.core` and `openenv.core.harness`
    are made bare packages over their real folders."""
    root = importlib.util.find_spec("openenv").submodule_search_locations[0]
    for name, sub in (("openenv", ""), ("openenv.core", "core"), ("openenv.core.harness", os.path.join("core", "harness"))):
        package = types.ModuleType(name)
        package.__path__ = [os.path.join(root, sub)]
        sys.modules[name] = package
    sys.argv = [PROXY, *args]
    runpy.run_module(PROXY, run_name="__main__", alter_sys=True)
    return 0


def main(argv):
    if argv[0] == "proxy":
        return run_proxy(argv[1:])
    cmd, port = argv[0], int(argv[1])
    base = f"http://127.0.0.1:{port}"
    if cmd == "health":
        deadline = time.monotonic() + float(argv[2])
        while time.monotonic() < deadline:
            try:
                call("GET", base + "/health", timeout=2)
                return 0
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        print(f"capture proxy did not answer on port {port} within {argv[2]} s", file=sys.stderr)
        return 1
    if cmd == "session":
        print(json.dumps(call("POST", base + "/sessions", {"purpose": "train"})))
    elif cmd == "get":
        print(json.dumps(call("GET", base + argv[2], timeout=10)))
    elif cmd == "entries":
        try:
            payload = call("GET", f"{base}/sessions/{argv[2]}/trace_entries", timeout=120)
        except urllib.error.HTTPError as e:
            print(e.read().decode(errors="replace")[:2000], file=sys.stderr)
            return 1
        with open(argv[3], "w") as f:
            json.dump(payload.get("entries") or [], f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
