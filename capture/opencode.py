"""How opencode is configured for a capture: one OpenAI-compatible provider pointed at the proxy.

The capture session id is the provider's API key: that is how the proxy knows which rollout a call
belongs to. Tools the coding task does not need are denied (they vanish from the model's view), and
the agent runs with its own HOME and config folders so nothing from the machine leaks in.
"""

from __future__ import annotations

from pathlib import Path

OPENCODE_VERSION = "1.18.33"
PROVIDER = "policy"  # @ai-sdk/openai-compatible must not be named "openai"
DENIED_TOOLS = ("webfetch", "question", "task")
ROOT = Path(__file__).resolve().parent.parent
LOCAL_BINARY = ROOT / "node_modules" / ".bin" / "opencode"


def config(base_url: str, session_id: str, model: str, max_output_tokens: int, context: int,
           deny: tuple[str, ...] = DENIED_TOOLS, seed: int | None = None) -> dict:
    """`seed`, when given, is sent as the request's `seed` on every model call: the capture proxy passes
    unknown body fields through, so it reaches the engine (vLLM seeds that request's sampler)."""
    models = {model: {"name": model, "tool_call": True, "limit": {"context": context, "output": max_output_tokens}}}
    if seed is not None:
        models[model]["options"] = {"seed": seed}  # @ai-sdk/openai-compatible spreads these into the body
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": f"{PROVIDER}/{model}",
        "small_model": f"{PROVIDER}/{model}",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "policy behind the capture proxy",
                "options": {"baseURL": base_url, "apiKey": session_id},
                "models": models,
            }
        },
        "permission": {**{tool: "deny" for tool in deny}, "edit": "allow", "bash": "allow",
                       "external_directory": "deny"},
    }


def environment(home: str, config_path: str) -> dict[str, str]:
    """Isolated HOME/XDG folders; no model list fetch, no auto-update, no LSP downloads.

    opencode also starts background npm installs of its plugin packages, with no switch to turn
    them off; the agent only ever needs the capture proxy on loopback, so every other HTTP request
    is sent to a dead local port and fails at once instead of reaching out.
    """
    dead = "http://127.0.0.1:9"
    return {
        "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "http_proxy": dead, "https_proxy": dead,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        "npm_config_registry": f"{dead}/",
        "HOME": home,
        "XDG_CONFIG_HOME": f"{home}/.config",
        "XDG_DATA_HOME": f"{home}/.local/share",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "XDG_STATE_HOME": f"{home}/.local/state",
        "OPENCODE_CONFIG": config_path,
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "NO_COLOR": "1",
        "TERM": "dumb",
    }
