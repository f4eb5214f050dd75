"""What the agent is asked, and which example cases it can see.

The instruction wraps a cleaned problem statement with the training example's directions; the task
id is the sha1 of the instruction. The visible tests are the example lines inside the statement
(the agent's only feedback), lifted as the seed lifts them, from the statement's examples on.
"""

from __future__ import annotations

import hashlib
import re

from rollout_trace.artifact.collection import first_line

DIRECTIONS = (
    "Write a Python program `solution.py` in the current working directory that reads the input from "
    "stdin and prints only the answer to stdout. Run it on the example cases from the statement with "
    "the bash tool, fix it with the edit tool until the examples pass, then stop.\n\n"
)


def instruction_for(statement: str) -> str:
    return DIRECTIONS + statement.strip()


def task_id(instruction: str) -> str:
    return hashlib.sha1(instruction.encode()).hexdigest()


def title_of(instruction: str) -> str:
    """A task's title in an index: the statement's first line, the directions every task shares skipped
    wherever they sit (a training prompt may put a tag before them, "[task 4] <directions><statement>": the
    tag stays, it tells tasks apart too)."""
    head, found, statement = instruction.partition(DIRECTIONS)
    if not found:
        return first_line(instruction)
    tag = head.strip()
    return first_line(f"{tag} {statement.lstrip()}" if tag else statement)


def visible_tests_from(instruction: str) -> str:
    """The statement's example lines (input/output/example/sample headers and number-only lines), as the seed
    lifts them, from the statement's first example or sample heading on when it has one: its own "Input" and
    "Output" sections above it describe the format, not a case, and their headings alone read as broken data."""
    lines = instruction.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"^\s*(examples?|samples?)\b", line, re.I)), 0)
    keep = [
        line
        for line in lines[start:]
        if re.search(r"^\s*(input|output|examples?|samples?)\b", line, re.I) or re.match(r"^\s*-?\d+(\s+-?\d+)*\s*$", line)
    ]
    return "\n".join(keep) if keep else instruction
