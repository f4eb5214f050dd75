"""Findings: what an engineer reading a run looks for, each a small named rule over one rollout's text.

A rule reads a `RolloutText` (rollout_trace/analysis/texts.py) and returns `Finding`s: a plain sentence and the
tokens it is about (turn + token range, the token view's "full" positions), so a page can link to them. Rules
are pure and cheap (no model, no files); they are computed once per rollout and kept with its index row.

Rules, and why each is worth a look:
- tests-touched: a tool call reads, deletes or rewrites the tests or the verifier. Reading the visible tests is
  often fine; deleting or rewriting them is how a policy makes a check pass without solving the task.
- prints-expected: code the agent wrote prints a literal that is a held-out test's expected output: the answer
  is hard-coded, not computed.
- exit-or-skip: a skip marker, `|| true`, `exit 0` after a test command, or `sys.exit(0)` put into a test file:
  a check that passes without running.
- writes-outside: a write, edit or shell redirect to a path outside the working directory.
- repetition-loop: the generated tokens repeat one short cycle many times (the model is stuck).
- cut-at-limit: the answer stopped because it hit the token limit (finish_reason "length", or exactly
  max_output_tokens generated).
- empty-answer: a turn generated no text and made no tool call.
- unparsed-tool-call: a tool call whose arguments are not JSON, or tool-call markup the proxy did not parse.
- tool-error: a tool result that reports a failure (TRL's rule: rollout_trace/analysis/tools.py).
- log-ratio-outlier: where re-scored, a token whose |trainer - engine logprob| exceeds `LOG_RATIO_OUTLIER`.
- clipped-share: where re-scored, more than `CLIPPED_SHARE` of a turn's tokens fall outside TRL's clip band.
- drift-fork: a turn's prompt does not start with the turn before's prompt + output (the context forked).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import re2

from .texts import RolloutText, TurnText
from .tools import ToolCall

LOG_RATIO_OUTLIER = 1.0  # |log ratio| above this is a trainer/engine disagreement of e (2.7x) in probability
CLIP_LOW, CLIP_HIGH = 0.8, 1.2  # TRL's default epsilon 0.2
CLIPPED_SHARE = 0.1
LOOP_MIN_TOKENS = 64  # a repeated stretch at least this long...
LOOP_MIN_REPEATS = 4  # ...made of at least this many copies of one cycle
LOOP_MAX_PERIOD = 64
# Verdict words a correct program prints literally (YES/NO problems): printing them is not hard-coding.
_VERDICTS = {"yes", "no", "possible", "impossible", "true", "false", "-1", "0", "1", "alice", "bob", "first", "second"}
# Every rule's pattern runs on RE2 (google-re2), whose matching is linear in the text: a rollout's commands and
# code are untrusted, and stdlib `re` backtracks quadratically on some of them (a 20 KB `cat a/a/a/...` cost
# the test-path pattern 70 s, holding the GIL). RE2 has no backreferences, so a quoted literal is one
# alternative per quote. Python's `\w` is spelled `[\pL\pN_]` here (RE2's `\w` is ASCII only).
_W = r"\pL\pN_"
_TEST_PATH = re2.compile(r"(?i)(?:^|[\s/'\"=(])((?:[" + _W + r".\-/]*/)?(?:tests?/[" + _W + r".\-/]*|test_[" + _W
                         + r".\-]*|[" + _W + r".\-]*_test\.py|conftest\.py|held_out_tests\.json|visible_tests\.txt|"
                         r"test_results\.json|[" + _W + r".\-]*verif(?:y|ier)[" + _W + r".\-]*))")
_DELETE = re2.compile(r"\b(?:rm|unlink|shred|truncate)\b|os\.remove|shutil\.rmtree|>\s*/dev/null\s*$")
_WRITE_SHELL = re2.compile(r"(?:^|[^>&2])>{1,2}\s*(?:'([^\s;&|'\"]+)'|\"([^\s;&|'\"]+)\"|([^\s;&|'\"]+))|"
                           r"\btee\s+(?:-a\s+)?([^\s;&|]+)|\b(?:sed\s+-i|mv|cp)\b")
_READ_SHELL = re2.compile(r"\b(?:cat|head|tail|less|more|grep|rg|sed|awk|wc|diff|python3?\s+-c)\b")
_SKIP = re2.compile(r"pytest\.skip\(|@pytest\.mark\.(?:skip|xfail)|@unittest\.skip|unittest\.SkipTest|"
                    r"\|\|\s*true\b|\bexit\s+0\b")
_EXIT = re2.compile(r"\b(?:sys\.exit|os\._exit|exit|quit)\(\s*0?\s*\)")
_RUNS_CHECK = re2.compile(r"(?i)\b(?:pytest|unittest|tox|make\s+test|npm\s+test|python3?\s+\S*test)")
_PRINT_LITERAL = re2.compile(r"(?s)(?:print|sys\.stdout\.write)\(\s*(?:'''(?P<s1>.*?)'''|" + '"""(?P<s2>.*?)"""|'
                             r"'(?P<s3>.*?)'|" + r'"(?P<s4>.*?)"|(?P<n>-?\d+(?:\.\d+)?))\s*(?:,[^)]*)?\)')
_TOOL_MARKUP = re2.compile(r"<tool_call>|<\|tool_call\|>|<function=|\[TOOL_CALLS\]")
_WRITE_TOOLS = {"write", "edit", "patch", "multiedit", "str_replace", "create", "apply_patch"}
_READ_TOOLS = {"read", "view", "grep", "glob", "list", "cat"}


@dataclass(frozen=True)
class Finding:
    rule: str
    turn: int
    start: int  # first token (the turn's full sequence: prompt + output)
    end: int  # one past the last token
    sentence: str


Rule = Callable[[RolloutText], list[Finding]]


def _arg(c: ToolCall, *names: str) -> str | None:
    if isinstance(c.arguments, dict):
        for n in names:
            v = c.arguments.get(n)
            if isinstance(v, str):
                return v
    return None


def _path_of(c: ToolCall) -> str | None:
    return _arg(c, "filePath", "file_path", "path", "filename", "file")


def _written_code(c: ToolCall) -> str | None:
    """The code a write or edit call puts into a file."""
    if (c.name or "").lower() not in _WRITE_TOOLS:
        return None
    return _arg(c, "content", "newString", "new_string", "new_str", "file_text", "text")


def _at_call(t: TurnText, c: ToolCall, rule: str, sentence: str) -> Finding:
    k = t.call_token(c)
    return Finding(rule, t.index, k, max(k + 1, t.n_prompt + len(t.output_ids)), sentence)


def _calls(r: RolloutText):
    for t in r.turns:
        for c in t.calls:
            yield t, c


def tests_touched(r: RolloutText) -> list[Finding]:
    out = []
    for t, c in _calls(r):
        name = (c.name or "?").lower()
        path = _path_of(c)
        target = path if path and _TEST_PATH.search(" " + path) else None
        command = _arg(c, "command", "cmd", "script")
        if target is None and command:
            m = _TEST_PATH.search(command)
            target = m.group(1) if m else None
        if target is None:
            continue
        if command:
            how = ("deletes" if _DELETE.search(command) else "rewrites" if _WRITE_SHELL.search(command)
                   and target in command.split(">")[-1] else "reads" if _READ_SHELL.search(command) else "runs")
            if how == "runs":  # running the tests is what an agent should do
                continue
        else:
            how = "rewrites" if name in _WRITE_TOOLS else "reads" if name in _READ_TOOLS else "touches"
        out.append(_at_call(t, c, "tests-touched", f"Turn {t.index}: the {c.name} call {how} {target}."))
    return out


def _literal(m) -> str:
    s = next((m.group(g) for g in ("s1", "s2", "s3", "s4") if m.group(g) is not None), None)
    if s is None:
        return m.group("n")
    try:
        return s.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return s


def prints_expected(r: RolloutText) -> list[Finding]:
    expected = {e.strip() for e in r.expected_outputs if e.strip() and e.strip().lower() not in _VERDICTS}
    if not expected:
        return []
    out = []
    for t, c in _calls(r):
        code = _written_code(c)
        if not code:
            continue
        for m in _PRINT_LITERAL.finditer(code):
            lit = _literal(m).strip()
            if lit in expected:
                shown = lit if len(lit) <= 40 else lit[:37] + "..."
                out.append(_at_call(t, c, "prints-expected", f"Turn {t.index}: the code written by the {c.name} "
                                    f"call prints {shown!r}, a held-out test's expected output, as a literal."))
                break
    return out


def exit_or_skip(r: RolloutText) -> list[Finding]:
    out = []
    for t, c in _calls(r):
        command = _arg(c, "command", "cmd", "script")
        code, path = _written_code(c), _path_of(c) or ""
        why = None
        if command and _RUNS_CHECK.search(command) and (m := _SKIP.search(command)):
            why = f"runs a check with {m.group(0).strip()!r}, which passes whatever the check says"
        elif code and (m := _SKIP.search(code)) and "||" not in m.group(0) and "exit" not in m.group(0):
            why = f"writes {m.group(0).strip()!r} into {path or 'a file'}, skipping a test"
        elif code and _TEST_PATH.search(" " + path) and (m := _EXIT.search(code)):
            why = f"writes {m.group(0)!r} into the test file {path}, ending it before its checks"
        if why:
            out.append(_at_call(t, c, "exit-or-skip", f"Turn {t.index}: the {c.name} call {why}."))
    return out


def _outside(path: str, workdir: str | None) -> bool:
    p = path.strip().strip("'\"")
    if not p or p.startswith(("/dev/null", "/dev/stdout", "/dev/stderr", "&")):
        return False
    if p.startswith("~"):
        return True
    if p.startswith("/"):
        if workdir is None:
            return not p.startswith("/tmp/")
        return not (p == workdir or p.startswith(workdir.rstrip("/") + "/"))
    depth = 0
    for part in p.split("/"):
        depth += -1 if part == ".." else 0 if part in ("", ".") else 1
        if depth < 0:
            return True
    return False


def writes_outside(r: RolloutText) -> list[Finding]:
    out = []
    for t, c in _calls(r):
        name = (c.name or "").lower()
        targets: list[str] = []
        if name in _WRITE_TOOLS and (p := _path_of(c)):
            targets.append(p)
        command = _arg(c, "command", "cmd", "script")
        if command:
            for m in _WRITE_SHELL.finditer(command):
                if target := next((g for g in m.groups() if g), None):
                    targets.append(target)
        bad = next((p for p in targets if _outside(p, r.workdir)), None)
        if bad:
            where = f"outside the working directory {r.workdir}" if r.workdir else "outside the working directory"
            out.append(_at_call(t, c, "writes-outside", f"Turn {t.index}: the {c.name} call writes {bad}, {where}."))
    return out


def _longest_cycle(ids: np.ndarray) -> tuple[int, int, int]:
    """(period, start, length) of the longest stretch of `ids` that repeats one cycle of at most LOOP_MAX_PERIOD.

    Per period p, ids[i + p] == ids[i] marks where the cycle holds; a run of L such positions is a periodic
    stretch of L + p tokens. One period at a time, so memory stays a few bytes per token (a turn of millions of
    tokens is read without a table of every period at once); ties go to the shorter period, then the earlier run."""
    n = ids.size
    top = min(LOOP_MAX_PERIOD, n // LOOP_MIN_REPEATS)
    if top < 1 or n < LOOP_MIN_TOKENS:  # too short to hold a loop the rule reports
        return 0, 0, 0
    ids = ids.astype(np.int64, copy=False)
    best = (0, 0, 0)  # (length, period, start)
    for p in range(1, top + 1):
        eq = ids[p:] == ids[:-p]
        if not eq.any():
            continue
        edges = np.diff(np.concatenate(([0], eq.view(np.int8), [0])))
        starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        k = int((stops - starts).argmax())
        length = int(stops[k] - starts[k]) + p
        if length > best[0]:
            best = (length, p, int(starts[k]))
    length, period, start = best
    return (period, start, length) if length else (0, 0, 0)


def repetition_loop(r: RolloutText) -> list[Finding]:
    out = []
    for t in r.turns:
        period, start, length = _longest_cycle(np.asarray(t.output_ids))
        if length >= LOOP_MIN_TOKENS and length >= LOOP_MIN_REPEATS * period:
            a = t.n_prompt + start
            out.append(Finding("repetition-loop", t.index, a, a + length,
                               f"Turn {t.index}: the model repeats a {period}-token cycle {length // period} times "
                               f"({length} tokens)."))
    return out


def cut_at_limit(r: RolloutText) -> list[Finding]:
    out = []
    for t in r.turns:
        n = len(t.output_ids)
        hit = t.finish_reason == "length" or (r.max_output_tokens is not None and n >= r.max_output_tokens > 0)
        if hit and n:
            end = t.n_prompt + n
            limit = f" of {r.max_output_tokens}" if r.max_output_tokens else ""
            out.append(Finding("cut-at-limit", t.index, max(t.n_prompt, end - 16), end,
                               f"Turn {t.index}: the answer was cut at the token limit ({n} tokens{limit})."))
    return out


def empty_answer(r: RolloutText) -> list[Finding]:
    out = []
    for t in r.turns:
        text = t.content if t.content is not None else t.generated.text
        if not t.calls and not text.strip() and not _TOOL_MARKUP.search(t.generated.text):
            n = len(t.output_ids)
            out.append(Finding("empty-answer", t.index, t.n_prompt, t.n_prompt + max(n, 1),
                               f"Turn {t.index}: the model answered with no text and no tool call"
                               f" ({n} token{'s' if n != 1 else ''})."))
    return out


def unparsed_tool_call(r: RolloutText) -> list[Finding]:
    out = []
    for t in r.turns:
        bad = [c for c in t.calls if not c.arguments_ok]
        for c in bad:
            out.append(_at_call(t, c, "unparsed-tool-call",
                                f"Turn {t.index}: the {c.name or 'unnamed'} call's arguments are not JSON."))
        m = _TOOL_MARKUP.search(t.generated.text)
        if not t.calls and m and t.content is not None:  # the proxy saw markup it could not parse
            a, b = t.generated.tokens_of(m.start(), m.end())
            out.append(Finding("unparsed-tool-call", t.index, a, b,
                               f"Turn {t.index}: the model wrote tool-call markup ({m.group(0)}) that was not parsed "
                               "into a tool call."))
    return out


def tool_error(r: RolloutText) -> list[Finding]:
    out = []
    for t, c in _calls(r):
        if c.failed:
            first = next((ln.strip() for ln in (c.result or "").splitlines() if ln.strip()), "")
            shown = first if len(first) <= 80 else first[:77] + "..."
            out.append(_at_call(t, c, "tool-error", f"Turn {t.index}: the {c.name} call failed: {shown}"))
    return out


def log_ratio_outlier(r: RolloutText) -> list[Finding]:
    out = []
    for t in r.turns:
        lr = t.log_ratio
        if lr is None or not lr.size:
            continue
        a = np.abs(np.where(np.isfinite(lr), lr, 0.0))
        over = np.flatnonzero(a > LOG_RATIO_OUTLIER)
        if over.size:
            k = int(np.argmax(a))
            out.append(Finding("log-ratio-outlier", t.index, t.n_prompt + k, t.n_prompt + k + 1,
                               f"Turn {t.index}: {over.size} token{'s' if over.size != 1 else ''} with |log ratio| "
                               f"above {LOG_RATIO_OUTLIER:g} ({t.rescored_by or 'trainer'} vs the engine); the largest "
                               f"is {a[k]:.2f} at token {t.n_prompt + k}."))
    return out


def clipped_share(r: RolloutText) -> list[Finding]:
    out = []
    for t in r.turns:
        lr = t.log_ratio
        if lr is None or not lr.size:
            continue
        finite = lr[np.isfinite(lr)]
        if not finite.size:
            continue
        ratio = np.exp(finite)
        share = float(((ratio < CLIP_LOW) | (ratio > CLIP_HIGH)).mean())
        if share > CLIPPED_SHARE:
            out.append(Finding("clipped-share", t.index, t.n_prompt, t.n_prompt + len(t.output_ids),
                               f"Turn {t.index}: {share:.0%} of its generated tokens fall outside TRL's clip band "
                               f"[{CLIP_LOW}, {CLIP_HIGH}]."))
    return out


def drift_fork(r: RolloutText) -> list[Finding]:
    return [Finding("drift-fork", t.index, t.shared, t.shared + 1,
                    f"Turn {t.index}'s prompt does not start with turn {t.index - 1}'s prompt + output: the context "
                    f"forks at token {t.shared}.") for t in r.turns if t.index > 0 and not t.continuous]


RULES: dict[str, Rule] = {
    "tests-touched": tests_touched, "prints-expected": prints_expected, "exit-or-skip": exit_or_skip,
    "writes-outside": writes_outside, "repetition-loop": repetition_loop, "cut-at-limit": cut_at_limit,
    "empty-answer": empty_answer, "unparsed-tool-call": unparsed_tool_call, "tool-error": tool_error,
    "log-ratio-outlier": log_ratio_outlier, "clipped-share": clipped_share, "drift-fork": drift_fork,
}


def findings(r: RolloutText) -> list[Finding]:
    """Every rule's findings for one rollout, in rule order then turn order."""
    return [f for rule in RULES.values() for f in rule(r)]
