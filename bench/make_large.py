"""Write a large synthetic rollout artifact in the seed's exact format, for benchmarks.

The folder holds what the original capture script writes (docs/design.md) (minus trace.json), formatted the same
way, `json.dumps(..., indent=2)`: turns.json, summary.json, task.json, visible_tests.txt and
held_out_tests.json. Nothing in it comes from a model: ids and logprobs are random, which is why
summary.json names the model "synthetic/bench".

The turns look like an agent run whose context grows linearly: turn 0's prompt is a fixed opening
(a quarter of `max_context`: system prompt, tool schemas, task), and turn k+1's prompt is turn k's
prompt + its output + a fresh random tool observation, so the prefix property holds, up to about
`max_context` tokens on the last turn. Outputs are 200-600 tokens with logprobs in (-5, 0]. At the
defaults turns.json is about 100 MB.

Python 3.11's json encodes indented output in pure Python (minutes at this size), so the big arrays
are formatted here directly; the small fields still go through `json.dumps(indent=2)`, and the
result is byte-identical to dumping the whole document (`--check` re-encodes it to prove it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODEL = "synthetic/bench"
TOOLS = ("bash", "read", "edit", "write", "grep", "glob", "list", "todowrite")
TOOL_WEIGHTS = (0.35, 0.2, 0.15, 0.05, 0.1, 0.05, 0.05, 0.05)
N_TESTS_EVAL = 12
OBSERVATION_FLOOR = 8  # a tool result message is never shorter than its chat-template wrapper

# Where a turn's arrays sit in {"turns": [{...}]} under indent=2: elements at 8 spaces, "]" at 6.
_ITEM = "\n" + " " * 8
_CLOSE = "\n" + " " * 6 + "]"
_SLOT = re.compile(r'"@@(\d+)@@"')

INSTRUCTION = (
    "Write a Python program `solution.py` in the current working directory that reads the input from stdin and "
    "prints only the answer to stdout. Run it on the example cases from the statement with the bash tool, fix it "
    "with the edit tool until the examples pass, then stop.\n\n"
    "You are given n integers. Print their sum.\n\n"
    "Input\nThe first line contains n (1 <= n <= 100000). The second line contains n integers separated by spaces.\n\n"
    "Output\nPrint one integer: the sum.\n\n"
    "Example\nInput\n3\n1 2 3\nOutput\n6"
)


def _visible_tests_from(instruction: str) -> str:
    """The seed's `visible_tests_from`: the statement lines that look like example cases."""
    keep = [
        line
        for line in instruction.splitlines()
        if re.search(r"^\s*(input|output|example|sample)\b", line, re.IGNORECASE)
        or re.match(r"^\s*-?\d+(\s+-?\d+)*\s*$", line)
    ]
    return "\n".join(keep) if keep else instruction


def _array(items: list[str]) -> str:
    """A turn-level JSON array exactly as json.dumps(indent=2) lays it out at that depth."""
    return "[" + _ITEM + ("," + _ITEM).join(items) + _CLOSE if items else "[]"


def _lengths(rng: np.random.Generator, turns: int, max_context: int) -> tuple[int, np.ndarray, np.ndarray]:
    """First prompt length, output lengths, and observation lengths (one per gap between turns)."""
    first = max_context // 4
    outputs = rng.integers(200, 601, size=turns)
    gaps = turns - 1
    if gaps == 0:
        return first, outputs, np.zeros(0, dtype=np.int64)
    budget = max(max_context - first - int(outputs.sum()), OBSERVATION_FLOOR * gaps)  # short contexts overshoot
    share = rng.exponential(size=gaps)
    observations = OBSERVATION_FLOOR + rng.multinomial(budget - OBSERVATION_FLOOR * gaps, share / share.sum())
    return first, outputs, observations


def _tool_calls(rng: np.random.Generator, turns: int) -> list[list[str]]:
    """Mostly one call a turn, sometimes two, a few turns with none, and a final answer without tools."""
    calls = []
    for k in range(turns):
        if k == turns - 1 or rng.random() < 0.05:
            calls.append([])
        else:
            n = 2 if rng.random() < 0.15 else 1
            calls.append([str(name) for name in rng.choice(TOOLS, size=n, p=TOOL_WEIGHTS)])
    return calls


def _held_out_tests(rng: np.random.Generator) -> list[dict[str, str]]:
    """Cases for the task in INSTRUCTION, with the right answers."""
    tests = []
    for _ in range(N_TESTS_EVAL):
        values = rng.integers(-10**9, 10**9, size=int(rng.integers(1, 20))).tolist()
        tests.append({"input": f"{len(values)}\n{' '.join(map(str, values))}\n", "output": f"{sum(values)}\n"})
    return tests


def _write_turns(path: Path, rng: np.random.Generator, vocab: int, first: int, outputs: np.ndarray,
                 observations: np.ndarray, calls: list[list[str]]) -> None:
    """turns.json: one random id stream whose prefixes are the prompts, written slot by slot."""
    starts = first + np.concatenate([[0], np.cumsum(outputs[:-1] + observations)])
    stream = rng.integers(0, vocab, size=int(starts[-1] + outputs[-1]))
    ids = [str(i) for i in stream.tolist()]
    arrays: list[tuple[str, int, int]] = []  # (kind, prompt length, output length) per slot, rendered while writing
    turns = []
    for k, (start, n_out) in enumerate(zip(starts.tolist(), outputs.tolist(), strict=True)):
        slots = []
        for kind in ("prompt", "output", "logps", "mask"):
            slots.append(f"@@{len(arrays)}@@")
            arrays.append((kind, start, n_out))
        turns.append({"turn": k, "trained": bool(calls[k]), "tool_calls": calls[k], "n_prompt_ids": start,
                      "n_output_ids": n_out, "prompt_ids": slots[0], "output_ids": slots[1],
                      "per_token_logps": slots[2], "mask": slots[3]})

    def render(kind: str, start: int, n_out: int) -> str:
        if kind == "prompt":
            return _array(ids[:start])
        if kind == "output":
            return _array(ids[start:start + n_out])
        if kind == "logps":
            return _array([repr(x) for x in (-5.0 * rng.random(n_out) + 0.0).tolist()])  # + 0.0 turns -0.0 into 0.0
        return _array(["0"] * start + ["1"] * n_out)

    parts = _SLOT.split(json.dumps({"turns": turns}, indent=2))
    with path.open("w", encoding="utf-8") as f:
        f.write(parts[0])
        for slot, text in zip(parts[1::2], parts[2::2], strict=True):
            f.write(render(*arrays[int(slot)]))
            f.write(text)


def make_large(out_dir: Path, turns: int = 100, max_context: int = 60_000, vocab: int = 49152, seed: int = 0) -> Path:
    """Write the synthetic artifact into `out_dir` (created if needed) and return that folder."""
    from rollout_trace.recipe.reward import reward  # from the repo root, put on sys.path above

    if turns < 1:
        raise ValueError("turns must be at least 1")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    first, outputs, observations = _lengths(rng, turns, max_context)
    calls = _tool_calls(rng, turns)
    _write_turns(out / "turns.json", rng, vocab, first, outputs, observations, calls)

    held_out = _held_out_tests(rng)
    task_id = hashlib.sha1(INSTRUCTION.encode()).hexdigest()
    tool_calls_by_name = dict(Counter(name for c in calls for name in c))
    env_reward = int(rng.integers(0, N_TESTS_EVAL + 1)) / N_TESTS_EVAL
    summary = {
        "model": MODEL,
        "task_id": task_id,
        "captured_calls": turns + 1,  # opencode also makes a title-generation call that is not an agent turn
        "agent_turns": turns,
        "trained_turns": sum(1 for c in calls if c),
        "tool_calls_by_name": tool_calls_by_name,
        "held_out_tests": len(held_out),
        "n_tests_eval_cap": N_TESTS_EVAL,
        "env_reward": env_reward,
        "reward_after_penalties": reward(env_reward, tool_calls_by_name, False),
        "timed_out": False,
    }
    (out / "task.json").write_text(json.dumps({"task_id": task_id, "task_index": 0, "instruction": INSTRUCTION},
                                              indent=2))
    (out / "visible_tests.txt").write_text(_visible_tests_from(INSTRUCTION))
    (out / "held_out_tests.json").write_text(json.dumps(held_out, indent=2))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return out


def _check(folder: Path) -> None:
    """Re-encode turns.json with json.dumps(indent=2); exit non-zero unless the bytes are identical."""
    text = (folder / "turns.json").read_text(encoding="utf-8")
    if json.dumps(json.loads(text), indent=2) != text:
        raise SystemExit("turns.json differs from json.dumps(indent=2) of its own content")
    print("turns.json is byte-identical to json.dumps(indent=2)")


def main() -> None:
    p = argparse.ArgumentParser(description="Write a large synthetic rollout artifact (seed format).")
    p.add_argument("out_dir", type=Path)
    p.add_argument("--turns", type=int, default=100)
    p.add_argument("--max-context", type=int, default=60_000)
    p.add_argument("--vocab", type=int, default=49152)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check", action="store_true",
                   help="re-encode turns.json with json.dumps(indent=2) and compare (slow at full size)")
    args = p.parse_args()
    t0 = time.perf_counter()
    folder = make_large(args.out_dir, args.turns, args.max_context, args.vocab, args.seed)
    size = (folder / "turns.json").stat().st_size
    print(f"wrote {folder} in {time.perf_counter() - t0:.1f} s; turns.json is {size / 1e6:.1f} MB")
    if args.check:
        _check(folder)


if __name__ == "__main__":
    main()
