"""Before anything boots: can this endpoint produce a trainable capture?

An endpoint without token ids answers every request normally and yields nothing trainable, so it is
refused up front. The probe is openenv's own (`validate_llm`): one real completion, graded by what
came back: prompt ids, completion ids, logprobs, tool calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field

VLLM_FLAGS = ("--return-tokens-as-token-ids --logprobs-mode processed_logprobs "
              "--enable-auto-tool-choice --tool-call-parser hermes")


@dataclass(frozen=True)
class Verdict:
    ok: bool  # trainable: prompt ids, completion ids and logprobs all came back
    # the endpoint answered: openenv's `reachable` (usable at all), or it listed the models it serves (an
    # endpoint that does not serve the model named is unusable, yet it answered)
    reachable: bool
    token_ids: bool
    logprobs: bool
    tool_calls: str  # openenv's tool probe: ok, no-tool-call, rejected, unknown, or "" (not asked)
    message: str  # plain words for the user, with what to do
    findings: list[str] = field(default_factory=list)
    served: list[str] = field(default_factory=list)  # the model ids its /models listed ([]: none listed)
    serves_model: bool = True  # False: it listed its models and the one named is not among them


def check_endpoint(url: str, model: str, timeout: float = 120.0, check_tools: bool = True) -> Verdict:
    from openenv.core.harness.capture.validate_llm import validate_llm

    try:
        report = validate_llm(url, model, timeout=timeout, check_tools=check_tools)
    except Exception as e:  # the probe itself failed: still a verdict, never a traceback
        return Verdict(False, False, False, False, "", f"could not probe {url}: {type(e).__name__}: {e}")
    ids = report.capture_level == "tokens"
    logprobs = report.capture_level in ("tokens", "logprobs")
    served = list(report.served_models)
    answered = report.reachable or bool(served)
    serves = report.reachable or not served  # openenv's probe stops at a model it does not list
    if not serves:
        shown = ", ".join(repr(m) for m in served[:10]) + (f" and {len(served) - 10:,} more" if len(served) > 10 else "")
        msg = f"{url} answers but does not serve {model!r}: it serves {shown}. Name one of those as the model."
    elif not report.reachable:
        msg = f"{url} is not reachable as an OpenAI-compatible endpoint serving {model!r}: " + "; ".join(report.findings)
    elif not ids:
        have = "logprobs but no token ids" if logprobs else "neither token ids nor logprobs"
        msg = (f"{url} answers but returns {have}: nothing it produces is trainable. Start vLLM with {VLLM_FLAGS}.")
    else:
        msg = f"{url} returns prompt token ids, completion token ids and logprobs ({report.summary()})."
        if report.tool_support == "no-tool-call":
            msg += (" Tool calls: the model answered the probe in prose instead of calling its tool, so the agent "
                    "may stop without acting (small models often do).")
        elif report.tool_support == "rejected":
            msg += (" Tool calls: the endpoint rejected a request with tools; vLLM needs "
                    "--enable-auto-tool-choice --tool-call-parser hermes.")
    return Verdict(report.ok and ids, answered, ids, logprobs, report.tool_support, msg, list(report.findings), served,
                   serves)
