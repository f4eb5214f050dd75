"""A public deployment's capture policy: no field may name a server path, the local
backend is refused, and the messages name the form's field without echoing the value."""

from __future__ import annotations

import pytest

from capture import CaptureConfig, CaptureError, capture
from capture.policy import PolicyError, check_public, public_problems

SAFE = dict(backend="hf-sandbox", sandbox_vllm_url="https://vllm.example.org/v1", model="Qwen/Qwen3-8B",
            dataset="open-r1/verifiable-coding-problems-python")


def labels(cfg, **kw) -> list[str]:
    return [p.label for p in public_problems(cfg, **kw)]


def test_safe_config_passes():
    assert public_problems(CaptureConfig(**SAFE)) == []


@pytest.mark.parametrize("change,label", [
    (dict(example="/tmp/gradio/abc/evil.py"), "Training script"),
    (dict(dataset="/etc/passwd"), "Dataset"),
    (dict(dataset="tasks.jsonl"), "Dataset"),
    (dict(dataset="../../secret/data.parquet"), "Dataset"),
    (dict(dataset="examples/scripted-smollm2"), "Dataset"),  # org/name-shaped, but a folder here
    (dict(tokenizer="/root/.cache/tok"), "Tokenizer"),
    (dict(tokenizer="~/tok"), "Tokenizer"),
    (dict(model="/srv/models/x"), "Model"),
    (dict(backend="local", endpoint="http://127.0.0.1:8000/v1"), "Backend"),
    (dict(local_model=True), "Backend"),
    (dict(sandbox_vllm_url="http://127.0.0.1:8000/v1"), "Endpoint URL"),
    (dict(sandbox_vllm_url="http://169.254.169.254/latest"), "Endpoint URL"),
    (dict(sandbox_vllm_url="file:///etc/passwd"), "Endpoint URL"),
])
def test_each_server_path_field_is_refused_by_its_label(change, label):
    cfg = CaptureConfig(**(SAFE | change))
    problems = public_problems(cfg)
    assert [p.label for p in problems] == [label]
    for value in change.values():
        if isinstance(value, str) and ("/" in value or "." in value):
            assert value not in str(problems[0])  # the value is never reflected back


def test_out_dir_outside_the_captures_root(tmp_path):
    root = tmp_path / "captures"
    assert labels(CaptureConfig(**SAFE, out_dir=str(root / "20250101")), allowed_out_root=root) == []
    assert labels(CaptureConfig(**SAFE, out_dir="/etc/cron.d"), allowed_out_root=root) == ["Output folder"]
    assert labels(CaptureConfig(**SAFE, out_dir=str(root / ".." / "x")), allowed_out_root=root) == ["Output folder"]


def test_check_public_raises_with_every_problem():
    with pytest.raises(PolicyError) as e:
        check_public(CaptureConfig(**(SAFE | dict(example="/x.py", dataset="/y.jsonl"))))
    assert [p.label for p in e.value.problems] == ["Training script", "Dataset"]


def test_library_refuses_before_importing_the_script(tmp_path):
    """The upload-then-import route: a .py on the server named as the training script must not run."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('pwned')\ndef build_dataset(**kw):\n    return [], {{}}\n")
    cfg = CaptureConfig(**(SAFE | dict(example=str(script), out_dir=str(tmp_path / "out"))))
    with pytest.raises(CaptureError, match="Training script") as e:
        capture(cfg, public=True)
    assert not marker.exists() and str(script) not in str(e.value)
    # without public=True the same config is the owner's own choice (the CLI): the script is imported
    with pytest.raises(CaptureError):
        capture(cfg)
    assert marker.exists()


# -- every spelling of a private address, resolved as the HTTP client resolves it ---------

@pytest.mark.parametrize("host", ["2130706433", "0x7f000001", "127.1", "0177.0.0.1", "0", "[::1]",
                                  "[::ffff:127.0.0.1]", "10.0.0.1", "100.64.0.1", "169.254.169.254", "192.168.1.1"])
def test_other_spellings_of_private_addresses_are_refused(host):
    cfg = CaptureConfig(**(SAFE | dict(sandbox_vllm_url=f"http://{host}:8000/v1")))
    assert [str(p) for p in public_problems(cfg)] == [
        "Endpoint URL: a public app takes only a public http(s) URL, not this machine or a private network"]


def test_a_name_is_checked_by_every_address_it_resolves_to(monkeypatch):
    import socket

    answers = {"alias.example.org": ["93.184.215.14", "127.0.0.1"], "inside.example.org": ["10.1.2.3"],
               "public.example.org": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]}
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, *a, **k: [
        (socket.AF_INET6 if ":" in ip else socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
        for ip in answers[host]])
    for host, refused in (("alias.example.org", True), ("inside.example.org", True), ("public.example.org", False)):
        cfg = CaptureConfig(**(SAFE | dict(sandbox_vllm_url=f"https://{host}/v1")))
        assert bool(public_problems(cfg)) is refused, host


def test_a_name_that_does_not_resolve_is_refused():
    cfg = CaptureConfig(**(SAFE | dict(sandbox_vllm_url="https://no-such-host.invalid/v1")))
    assert [str(p) for p in public_problems(cfg)] == [
        "Endpoint URL: its host name cannot be resolved from this server"]


def test_check_endpoint_never_reaches_this_machine_by_another_spelling(scripted_llm):
    """The Capture tab's Check endpoint, public: the scripted server on 127.0.0.1 gets no request and its
    reply is not echoed, whichever spelling of its address the visitor types."""
    from test_capture_tab import SECRET, make_tab

    from viewer.ui.capture_gate import Gate

    llm = scripted_llm()
    port = llm.url.split(":")[2].split("/")[0]
    tab = make_tab(public=True, gate=Gate(SECRET))
    for host in ("2130706433", "0x7f000001", "127.1", "0177.0.0.1"):
        html = tab.check(tab.values(secret=SECRET, endpoint=f"http://{host}:{port}/v1"))
        assert "Not allowed on a public server" in html and "not this machine" in html, html
        assert "scripted-model" not in html and "token_id" not in html
    assert llm.requests == []
