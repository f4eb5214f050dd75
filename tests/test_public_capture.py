"""The critical public-capture exploit through the real HTTP API: with
ROLLOUT_VIEWER_ENABLE_CAPTURE=1 on a public app, a visitor uploads a .py through Gradio's generic upload
route and calls Preview, Check and Capture with its server path in every text field. Before the fix,
Preview imported the file as the server's user. This module imports only what existed before the
fix, so it runs (and fails) against the old code too."""

from __future__ import annotations

import re

import httpx

from conftest import launch_app

SECRET = "owner-pass-4f1c"
SECRET_ENV = "ROLLOUT_VIEWER_CAPTURE_SECRET"


def write_payload(tmp_path):
    """A training script that leaves `marker` behind if anything imports it."""
    marker = tmp_path / "payload-ran"
    script = tmp_path / "evil.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                      "def build_dataset(n_prompts, seed):\n    return [], {}\n")
    return script, marker


def test_public_exploit_through_the_http_api(tmp_path, monkeypatch):
    """ROLLOUT_VIEWER_ENABLE_CAPTURE=1 on a public app: upload a .py through Gradio's upload route, then
    call Preview, Check and Capture with every text field set to its server path. Nothing runs, and
    no answer repeats the path. (Before the fix, Preview imported the file: the marker appeared.)"""
    from gradio_client import Client

    monkeypatch.setenv("ROLLOUT_VIEWER_ENABLE_CAPTURE", "1")
    monkeypatch.setenv(SECRET_ENV, SECRET)
    monkeypatch.setenv("ROLLOUT_VIEWER_CAPTURE_DIR", str(tmp_path / "captures"))
    script, marker = write_payload(tmp_path)
    demo, url = launch_app(public=True)
    try:
        with script.open("rb") as f:
            [server_path] = httpx.post(f"{url}/gradio_api/upload", files={"files": f}, timeout=30).json()
        client = Client(url, verbose=False)
        api = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
        for name in ("/preview", "/check", "/run"):
            args = []
            for p in api[name]["parameters"]:
                kind, lab = p["python_type"]["type"], p["label"]
                if lab == "Capture password":
                    args.append(SECRET)
                elif lab.startswith("Rollout seed"):  # a number in a text box: empty, so the request is well formed
                    args.append("")
                elif lab.startswith("Backend"):
                    args.append("local")
                elif kind.startswith("Literal"):  # the public dataset dropdown: its one allowed value
                    args.append(re.findall(r"'([^']*)'", kind)[0])
                elif kind == "str":
                    args.append(server_path)
                else:
                    args.append(p.get("parameter_default") or 1)
            answer = client.predict(*args, api_name=name)
            text = str(answer)
            assert not marker.exists(), f"{name}: the uploaded script ran on the server"
            assert server_path not in text, (name, text)
            assert "Not allowed on a public server" in text, text
            assert "Tokenizer: a public app takes only a Hub model id" in text, text
        assert not (tmp_path / "captures").exists()
        # a wrong password is refused before anything else
        labels = [p["label"] for p in api["/preview"]["parameters"]]
        args[labels.index("Capture password")] = "guess"
        assert "Not allowed" in str(client.predict(*args, api_name="/preview"))
    finally:
        demo.close()


