"""A scripted OpenAI-compatible chat server that answers like vLLM (a test double, not a model).

It returns what vLLM returns when served with `--return-tokens-as-token-ids --logprobs-mode
processed_logprobs --enable-auto-tool-choice`: top-level `prompt_token_ids`, `choices[0].token_ids`,
`logprobs.content[i] = {token: "token_id:N", logprob}` and tool calls in the message. Token ids come
from a real tokenizer (SmolLM2's, with a ChatML + hermes template), so captured artifacts render as
text. Logprobs are made up and labelled so; the probe's temperature question is answered the way a
processed-logprobs engine would.

The script decides from the request, so retries are harmless: requests without tools (opencode's
title call) get a short answer; with tools, the reply depends on how many tool results the history
holds: `steps[n]` is the n-th reply, a (tool name, arguments) pair or plain text that ends the run.

`scripts` plays a different script per rollout of a GRPO group, chosen by the request's `seed` (a
group sends each rollout's seed with every call, so the choice is stable across retries and
concurrent sessions): seed -> steps, or CRASH to refuse every call of that rollout with a 400.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
import uuid
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from processes import free_port

SOLUTION = "n = int(input())\nvalues = input().split()\nprint(len(set(values)))\n"
DEFAULT_STEPS: list[Any] = [
    ("write", {"filePath": "solution.py", "content": SOLUTION}),
    ("bash", {"command": "printf '5\\n1 2 2 3 3\\n' | python3 solution.py", "description": "Run the example"}),
    "The example prints 3. Done.",
]
_TOP_LOGITS = [6.75, 0.0, -1.0, -2.0, -3.0]
CRASH = "crash"


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


class ScriptedLLM:
    def __init__(self, tokenizer, model: str = "scripted-model", steps: list[Any] | None = None,
                 token_ids: bool = True, delay_s: float = 0.0, slow_after: int = 0,
                 scripts: dict[int, Any] | None = None, held: bool = False):
        """`delay_s` slows each agent reply once the history holds `slow_after` tool results; `slowed` is set when
        the first slowed request arrives (a test's clock can start there, not at a guess of the machine's speed).
        `held`: each agent reply waits until the test lets it go with `allow` (every rollout's first n replies),
        so a test sees each turn arrive at the step it chose, on a machine of any speed, without sleeping."""
        self.tok, self.model, self.steps = tokenizer, model, steps or DEFAULT_STEPS
        self.scripts = scripts or {}
        self.token_ids, self.delay_s, self.slow_after = token_ids, delay_s, slow_after
        self.allowed: float = 0 if held else math.inf  # agent replies let through, per rollout
        self.requests: list[dict] = []
        self.slowed = threading.Event()
        self.port = free_port()
        self._server = None
        self._thread = None

    def allow(self, replies: float) -> None:
        """Let each rollout's first `replies` agent replies through (math.inf: all of them, from now on)."""
        self.allowed = replies

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- the script ---------------------------------------------------------------------------------

    def _decide(self, body: dict) -> tuple[str, list[dict]]:
        tools = body.get("tools") or []
        if not tools:
            return "Count distinct values", []
        names = [(t.get("function") or {}).get("name") for t in tools]
        n = sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")
        steps = self.scripts.get(body.get("seed"), self.steps)
        step = steps[min(n, len(steps) - 1)]
        if isinstance(step, str):
            return step, []
        name, args = step
        if name not in names:  # e.g. openenv's tool probe offers its own tool
            name, args = names[0], {}
        call = {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}
        return "", [call]

    def _render(self, messages: list[dict], tools: list | None) -> list[int]:
        clean = []
        for m in messages:
            m = dict(m)
            m["content"] = _text(m.get("content"))
            clean.append(m)
        return self.tok.apply_chat_template(clean, tools=tools or None, add_generation_prompt=True, tokenize=True,
                                            return_dict=False)

    def respond(self, body: dict) -> dict:
        self.requests.append(body)
        text, calls = self._decide(body)
        prompt = self._render(body.get("messages") or [], body.get("tools"))
        said = text
        for c in calls:
            said += f'<tool_call>\n{{"name": "{c["function"]["name"]}", "arguments": {c["function"]["arguments"]}}}\n</tool_call>'
        ids = self.tok.encode(said + "<|im_end|>", add_special_tokens=False)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        finish = "tool_calls" if calls else "stop"
        if isinstance(max_tokens, int) and len(ids) > max_tokens:
            ids, finish, calls = ids[:max_tokens], "length", []
            text = self.tok.decode(ids)
        temperature = float(body.get("temperature") or 1.0)
        content = []
        for pos, tid in enumerate(ids):
            entry = {"token": f"token_id:{tid}" if self.token_ids else self.tok.decode([tid]),
                     "logprob": -round(0.01 + ((tid * 31 + pos * 7) % 97) / 100.0, 4), "bytes": None, "top_logprobs": []}
            if pos == 0 and body.get("top_logprobs"):
                scaled = [x / temperature for x in _TOP_LOGITS]
                z = max(scaled) + math.log(sum(math.exp(x - max(scaled)) for x in scaled))
                entry["top_logprobs"] = [{"token": f"token_id:{i}", "logprob": x - z, "bytes": None}
                                         for i, x in enumerate(scaled[: int(body["top_logprobs"])])]
                entry["logprob"] = scaled[0] - z
            content.append(entry)
        choice = {"index": 0, "finish_reason": finish,
                  "message": {"role": "assistant", "content": text or None, "tool_calls": calls},
                  "logprobs": {"content": content} if body.get("logprobs") else None}
        resp = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
                "model": self.model, "choices": [choice],
                "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(ids), "total_tokens": len(prompt) + len(ids)}}
        if self.token_ids:
            resp["prompt_token_ids"] = prompt
            choice["token_ids"] = ids
        return resp

    # -- serving ------------------------------------------------------------------------------------

    def start(self) -> "ScriptedLLM":
        app = FastAPI()

        @app.get("/v1/models")
        async def models():
            return {"object": "list", "data": [{"id": self.model, "object": "model", "max_model_len": 32768}]}

        @app.get("/health")
        async def health():
            return {"status": "ok"}

        @app.post("/v1/chat/completions")
        async def chat(request: Request):
            body = await request.json()
            if self.scripts.get(body.get("seed")) == CRASH:  # the title call too: nothing is captured
                self.requests.append(body)
                return JSONResponse({"error": {"message": "scripted crash: this rollout's engine refuses",
                                               "type": "invalid_request_error"}}, status_code=400)
            results = sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")
            if self.delay_s and body.get("tools") and len(body["tools"]) > 1 and results >= self.slow_after:
                self.slowed.set()
                await asyncio.sleep(self.delay_s)
            while body.get("tools") and len(body["tools"]) > 1 and results >= self.allowed:
                await asyncio.sleep(0.02)  # held until the test allows this reply (stop cancels the wait)
            resp = self.respond(body)
            if body.get("stream"):
                return StreamingResponse(_sse(resp), media_type="text/event-stream")
            return JSONResponse(resp)

        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("scripted LLM server did not start")

    def stop(self) -> None:
        if self._server is not None:
            # force: a request a test left hanging (delay_s) would otherwise hold the shutdown for its full delay
            self._server.should_exit = self._server.force_exit = True
            self._thread.join(timeout=10)


def _sse(resp: dict):
    base = {k: resp[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    msg, finish = resp["choices"][0]["message"], resp["choices"][0]["finish_reason"]

    def chunk(delta, fin=None):
        return "data: " + json.dumps(base | {"choices": [{"index": 0, "delta": delta, "finish_reason": fin}]}) + "\n\n"

    yield chunk({"role": "assistant", "content": msg.get("content") or ""})
    for i, c in enumerate(msg.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": i, **c}]})
    yield chunk({}, finish)
    yield "data: [DONE]\n\n"

