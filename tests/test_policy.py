"""A public deployment's capture policy (issue 14 #1): no field may name a server path, the local
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
