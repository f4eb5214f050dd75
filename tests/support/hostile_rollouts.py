"""Rollouts an attacker would write for a public app, as small generators: each makes the text one findings rule
reads (a bash command, code a write call puts into a file) at a size `n`, shaped so that a backtracking regex
engine spends time quadratic in `n` on it. `rollout_text` wraps one in a one-turn rollout for the rules;
`hostile_run` writes a copy of the bundled TRL run whose every rollout's first agent reply carries them all as
tool calls (what the fairness benchmark and the app-level tests open as a Hub run).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rollout_trace.analysis.texts import Piece, RolloutText, TurnText
from rollout_trace.analysis.tools import ToolCall


def test_path_command(n: int) -> dict:
    """`cat a/a/a/...`: every `/` starts a test-path match that scans to the end (tests-touched)."""
    return {"name": "bash", "arguments": {"command": "cat " + "a/" * n}}


def print_literal_code(n: int) -> dict:
    """`print("print("print(...`: every print( opens a literal whose end is searched to the end (prints-expected)."""
    return {"name": "write", "arguments": {"filePath": "solution.py", "content": 'print("' * n}}


def exit_spaces_code(n: int) -> dict:
    """`exit(` and n spaces with no `)`, written into a test file: two `\\s*` around an optional 0 (exit-or-skip)."""
    return {"name": "write", "arguments": {"filePath": "tests/test_sum.py", "content": "exit(" + " " * n}}


GENERATORS: dict[str, Callable[[int], dict]] = {
    "tests-touched": test_path_command, "prints-expected": print_literal_code, "exit-or-skip": exit_spaces_code}


def rollout_text(call: dict, expected_outputs: tuple[str, ...] = ("42\n",)) -> RolloutText:
    """One turn whose reply makes `call` (as a generator gives it), ready for the findings rules."""
    text = "x"
    c = ToolCall(0, "c0", call["name"], call["arguments"], True, "ok", False)
    turn = TurnText(index=0, n_prompt=10, output_ids=np.zeros(1, np.int32),
                    generated=Piece("generated", 0, text, 10, np.zeros(1, np.int64)),
                    context=Piece("tool-output", 0, "", 0, np.zeros(0, np.int64)), calls=(c,), content=text)
    return RolloutText(turns=(turn,), expected_outputs=expected_outputs, workdir="/work")


def hostile_run(dest: Path, n: int = 10_000) -> Path:
    """The bundled TRL run copied to `dest`, every rollout's first agent reply making every generator's call too, at size n."""
    from rollout_trace.artifact.sources import EXAMPLES_DIR

    shutil.copytree(EXAMPLES_DIR / "trl-run", dest)
    calls = [{"id": f"call_{k}", "type": "function",
              "function": {"name": g(n)["name"], "arguments": json.dumps(g(n)["arguments"])}}
             for k, g in enumerate(GENERATORS.values())]
    for trace in sorted(dest.glob("groups/*/rollout-*/trace.json")):
        doc = json.loads(trace.read_text())
        replies = [t["response"]["choices"][0]["message"] for t in doc["turns"] if t.get("response", {}).get("choices")]
        agent = next((m for m in replies if m.get("tool_calls")), None)  # the first agent turn (not the title call)
        if agent is not None:
            agent["tool_calls"] = agent["tool_calls"] + calls
            trace.write_text(json.dumps(doc))
    return dest


def huge_number_run(dest: Path, value: int = 2**60, field: str = "policy_version") -> Path:
    """The bundled TRL run written to `dest` with its first rollout row's `field` set to `value` (a number a
    float64 does not hold exactly: a version no page, JSON answer or chart may show)."""
    from support.run_tables import bundled_rows, changed, write_run

    rows = bundled_rows()
    first = rows[field].to_pylist()
    first[0] = value
    return write_run(dest, changed(rows, **{field: first}))
