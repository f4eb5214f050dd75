"""Write an artifact folder atomically, and only if it reads back valid.

Files go to a hidden sibling folder first; the finished folder is validated with the same reader
every consumer uses, then renamed into place. A failed or interrupted write therefore never leaves
something at `out_dir` that looks like a complete artifact.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from .model import Artifact, Turn
from .read import load_artifact
from .schema import FORMAT_VERSION, TOKENIZER_DIR, Summary, Task, TestCase, TestResult

_encode = msgspec.json.Encoder().encode


class OutDirExists(FileExistsError):
    pass


def turn_record(t: Turn) -> dict[str, Any]:
    rec = {
        "turn": t.index, "trained": t.seed_trained, "tool_calls": list(t.tool_calls),
        "n_prompt_ids": t.n_prompt, "n_output_ids": t.n_output,
        "prompt_ids": t.prompt_ids.tolist(), "output_ids": t.output_ids.tolist(),
        "per_token_logps": t.logprobs.tolist(), "mask": t.mask.tolist(),
        "prompt_source": t.prompt_source,
    }
    if t.retokenized_prompt_ids is not None:
        rec["retokenized_prompt_ids"] = t.retokenized_prompt_ids.tolist()
    return rec


def write_artifact(out_dir: Path | str, *, summary: Summary, turns: list[Turn], task: Task | None,
                   visible_tests: str | None, held_out_tests: list[TestCase] | None,
                   trace_entries: list[dict] | None, test_results: list[TestResult] | None = None,
                   solution: str | None = None, tokenizer: Any = None) -> Artifact:
    """Write every file, validate the result, move it into place, and return it as read back.

    `tokenizer` is anything with `save_pretrained(dir)` (a transformers tokenizer); its files make
    the artifact render offline.
    """
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OutDirExists(f"{out} already exists and is not empty; choose another --out-dir or remove it")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        summary = msgspec.structs.replace(summary, format_version=FORMAT_VERSION)
        (tmp / "turns.json").write_bytes(_encode({"turns": [turn_record(t) for t in turns]}))
        (tmp / "summary.json").write_bytes(msgspec.json.format(_encode(summary), indent=2))
        if task is not None:
            (tmp / "task.json").write_bytes(msgspec.json.format(_encode(task), indent=2))
        if visible_tests is not None:
            (tmp / "visible_tests.txt").write_text(visible_tests, encoding="utf-8")
        if held_out_tests is not None:
            (tmp / "held_out_tests.json").write_bytes(msgspec.json.format(_encode(held_out_tests), indent=2))
        if trace_entries is not None:
            (tmp / "trace.json").write_bytes(_encode({"turns": trace_entries}))
        if test_results is not None:
            (tmp / "test_results.json").write_bytes(msgspec.json.format(_encode({"tests": test_results}), indent=2))
        if solution is not None:
            (tmp / "solution.py").write_text(solution, encoding="utf-8")
        if tokenizer is not None:
            tokenizer.save_pretrained(str(tmp / TOKENIZER_DIR))
        written = load_artifact(tmp)  # raises ArtifactError before anything reaches out_dir
        tmp.chmod(0o755)  # mkdtemp makes it private; an artifact is meant to be shared
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    # the validated read-back, moved with its folder: no second read
    tok = out / TOKENIZER_DIR if written.tokenizer_dir is not None else None
    return dataclasses.replace(written, source=str(out), root=out, tokenizer_dir=tok)
