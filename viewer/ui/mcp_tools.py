"""Read-only tools for coding agents, served by Gradio's own MCP server (`GRADIO_MCP_SERVER=True`, or
`build_app(mcp=True)`; the endpoint is /gradio_api/mcp/).

Six tools, each a `gr.api` endpoint whose docstring is its MCP description: what is open, a run's per-version
summary and health notes, rollouts found by filters + search + findings, one rollout's turn as text with mask,
fate and logprobs, two rollouts compared, and two runs compared per version. They reach sources exactly as the web page does (the collection
cache, the same public rule: a public app opens bundled examples and Hub ids only, never a server path) and each
answer is bounded (tokens per turn, hits, a regex's time budget) and at most MAX_ANSWER_BYTES long: a longer list
is cut where it fits and the answer says how to ask for the rest (a version range, the next token). `list_open`
names the bundled examples and what this client (viewer/ui/in_flight.py's visitor) opened, never another's. With the tools on, the page's own events are
marked "undocumented" so that they are neither listed as tools nor in the API docs (the page still calls them).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any

import gradio as gr
import msgspec

from rollout_trace.analysis.tokens import decode
from rollout_trace.artifact import ArtifactError
from rollout_trace.artifact.bounded import Bounded
from rollout_trace.artifact.sources import bundled_groups, bundled_runs
from viewer import run_compare, run_stats, short_ids
from viewer.find import answers
from viewer.find.cache import Building
from viewer.find.query import QueryError, parse_versions
from viewer.group import compare as group_compare
from viewer.page_link import MAX_SRC_CHARS
from viewer.rollout import CHUNK
from viewer.settings import settings

from .in_flight import visitor_of_request
from .service import Service

MAX_TURN_TOKENS = 2000  # tokens one rollout_turn answer carries
MAX_GENERATED_CHARS = 40_000  # a turn's generated text in one rollout_turn answer
MAX_TURN_CALLS = 12  # tool calls one rollout_turn answer lists
MAX_RESULT_CHARS = 2_000  # of each tool call's result
TOOLS = ("list_open", "run_summary", "find_rollouts", "rollout_turn", "compare_rollouts", "compare_runs")
MAX_SHARED_TASKS = 50  # tasks a compare_runs answer lists
MAX_ANSWER_BYTES = 100_000  # one answer's JSON (about 25k tokens of an agent's context)
MAX_CLIENTS = 1_000  # clients whose opened sources list_open remembers
MAX_OPENED = 32  # sources remembered per client


def _said_if_refused(tool: Callable[..., str]) -> Callable[..., str]:
    """`tool` answering {error} where reading the run crossed a public visitor's bound, or the visitor left."""
    @functools.wraps(tool)
    def answered(*args: Any, **kwargs: Any) -> str:
        try:
            return tool(*args, **kwargs)
        except ArtifactError as e:
            return json.dumps({"error": "; ".join(str(p) for p in e.problems[:5]) or "it cannot be read"})
    return answered


def _size(doc: object) -> int:
    return len(json.dumps(doc, ensure_ascii=False).encode())


def _fit(doc: dict, key: str, rest: Callable[[list, int], dict]) -> dict:
    """`doc` with its list `key` cut to the longest head whose answer fits MAX_ANSWER_BYTES; `rest(kept, total)`
    adds how to ask for the rest when it was cut."""
    items = doc.get(key) or []
    if _size(doc) <= MAX_ANSWER_BYTES:
        return doc
    lo, hi = 0, len(items)
    while lo < hi:  # the most items that fit, by halving
        mid = (lo + hi + 1) // 2
        if _size({**doc, key: items[:mid], **rest(items[:mid], len(items))}) <= MAX_ANSWER_BYTES:
            lo = mid
        else:
            hi = mid - 1
    return {**doc, key: items[:lo], **rest(items[:lo], len(items))}


def _cut_texts(doc: dict, sides: tuple[str, ...], key: str) -> dict:
    """`doc` whose `sides`' text `key` is cut (each to an equal share, said in `<key>_cut`) when the answer would
    pass MAX_ANSWER_BYTES."""
    over = _size(doc) - MAX_ANSWER_BYTES
    if over <= 0:
        return doc
    for side in sides:
        text = doc[side].get(key) or ""
        keep = max(0, len(text) - over // len(sides) - 1_000)
        if keep < len(text):
            doc[side] = {**doc[side], key: text[:keep], f"{key}_cut": f"the first {keep:,} of {len(text):,} characters"}
    return doc


def _bounded(doc: dict) -> str:
    """The answer as JSON, or, when it still does not fit, an error saying how to ask for less."""
    text = json.dumps(doc, ensure_ascii=False)
    if len(text.encode()) <= MAX_ANSWER_BYTES:
        return text
    return json.dumps({"error": f"the answer is {len(text.encode()):,} bytes, over this app's bound of "
                                f"{MAX_ANSWER_BYTES:,}: ask for less (a version range, fewer tokens)"})


def bounded_turn(answer: str) -> str:
    """A rollout_turn answer within MAX_ANSWER_BYTES: its tokens cut where it fits, `next_start` the next one."""
    if len(answer.encode()) <= MAX_ANSWER_BYTES:
        return answer
    doc = json.loads(answer)
    if not isinstance(doc.get("tokens"), list):
        return _bounded(doc)
    start = doc.get("start") or 0
    return _bounded(_fit(doc, "tokens", lambda kept, total: {"next_start": start + len(kept)} if len(kept) < total
                         else {}))


def bounded_compare(answer: str) -> str:
    """A compare_rollouts answer within MAX_ANSWER_BYTES: each side's generated text cut to fit."""
    if len(answer.encode()) <= MAX_ANSWER_BYTES:
        return answer
    doc = json.loads(answer)
    return _bounded(_cut_texts(doc, ("a", "b"), "generated") if "a" in doc and "b" in doc else doc)


def _in_range(version: int | None, lo: int | None, hi: int | None) -> bool:
    return version is not None and (lo is None or version >= lo) and (hi is None or version <= hi)


def _next_versions(kept: list, total: int, version: Callable[[Any], int], hi: int | None) -> dict:
    if len(kept) >= total:
        return {}
    start = version(kept[-1]) + 1 if kept else None
    ask = f"{start}:{'' if hi is None else hi}" if start is not None else "a narrower range"
    return {"cut": f"{len(kept):,} of {total:,} versions shown (the answer is at most {MAX_ANSWER_BYTES:,} bytes): "
                   f"ask again with versions={ask!r} for the next ones", "next_versions": ask}


def _cut(text: str | None, most: int) -> str | None:
    return text if text is None or len(text) <= most else text[:most] + f" … ({len(text) - most:,} more characters)"


def _dump(value: object) -> str:
    return json.dumps(msgspec.to_builtins(value), ensure_ascii=False)


class McpTools:
    def __init__(self, service: Service):
        self.service = service
        # client -> the sources its tool calls opened (name -> kind), for list_open
        self._opened: Bounded[str, Bounded[str, str]] = Bounded(MAX_CLIENTS)

    def _client(self) -> str:
        """Who is calling: the visitor of the running request (viewer/ui/in_flight.py), "local" outside one."""
        from gradio.context import LocalContext

        request = LocalContext.request.get(None)
        return visitor_of_request(request, settings().on_space) if request is not None else "local"

    def _opened_by_client(self, src: str, kind: str) -> None:
        self._opened.setdefault(self._client(), lambda: Bounded(MAX_OPENED)).put(src, kind)

    def _collection(self, source: str, row: str | None = None):
        """(name, collection) of `source`; with `row`, what opening that row reads (of a local run, the row's
        group only: viewer/ui/service.py `row_collection`)."""
        src = (source or "").strip()
        if not src or len(src) > MAX_SRC_CHARS:
            raise ValueError("name a source: a bundled example or a Hub dataset id (a local path on a private app)")
        if not self.service.is_collection(src):
            raise ValueError("this source is not a collection or a run this app can open (a public app opens bundled "
                             "examples and Hub dataset ids)")
        try:
            c = self.service.row_collection(src, row) if row is not None else \
                self.service.collections.get(src, self.service.allow_local(src))
        except ArtifactError as e:
            raise ValueError("; ".join(str(p) for p in e.problems[:5])) from None
        self._opened_by_client(src, "run" if self.service.is_run(src) else "collection")
        return src, c

    # -- the tools (their docstrings are what an agent reads) --------------------------------------------

    def list_open(self) -> str:
        """List the sources this app offers (the bundled examples: collections and runs) and those this client
        opened through these tools. Returns JSON: {sources: [{source, kind}]}."""
        out = [{"source": s, "kind": "run"} for s in bundled_runs()] + \
              [{"source": s, "kind": "collection"} for s in bundled_groups()]
        seen = {o["source"] for o in out}
        mine = self._opened.get(self._client())
        for name, kind in mine.items() if mine is not None else []:
            if name not in seen:
                out.append({"source": name, "kind": kind})
                seen.add(name)
        return json.dumps({"sources": out})

    @_said_if_refused
    def run_summary(self, source: str, versions: str = "") -> str:
        """A recorded TRL run's numbers per policy version (groups, rollouts, reward mean/sd/min/max, pass rate,
        zero-spread groups, trained tokens, rollouts never trained) and its health notes in plain language, with
        the findings per version (rollouts with each finding). An answer is at most 100 KB: a long run's versions
        are cut where it fits, and `next_versions` says what to ask for next.

        Args:
            source: the run: a bundled example name (e.g. "trl-run") or a Hub dataset id
            versions: policy versions to list, A:B (inclusive), A:, :B or A; empty for all (as many as fit)
        Returns JSON: {live, followed, versions: [...], notes: [...], findings: {...}, next_versions?} or {error}:
        live, a segment has not ended; followed, asking again can show more (false for a zip or a Hub commit)."""
        try:
            lo, hi = parse_versions(versions or None)
        except QueryError as e:
            return json.dumps({"error": str(e)})
        src = (source or "").strip()
        t = self.service.run_table(src) if src and len(src) <= MAX_SRC_CHARS else None
        if t is None:  # not a run: the collection reader says why
            try:
                src, c = self._collection(source)
            except ValueError as e:
                return json.dumps({"error": str(e)})
            if c.run is None:
                return json.dumps({"error": f"{src[:100]!r} is a collection, not a recorded run"})
            t = run_stats.table_of(c.run)
        self._opened_by_client(src, "run")
        # the numbers from the run's columns (a local run's are never read into Python rows); the findings
        # from the text index, which covers the run's first rows (its notes say how many)
        stats = self.service.follower.stats(t)
        live = t.run_files.live
        index = self.service.find_index(src)
        found = answers.summary(index) if index is not None else None
        model = t.run_files.manifest.model if t.run_files.manifest is not None else None
        shown = [v for v in stats if _in_range(v.version, lo, hi)]
        rules = [msgspec.structs.replace(r, per_version={k: n for k, n in r.per_version.items()
                                                        if _in_range(int(k), lo, hi)}) for r in found.rules] if found else []
        doc = msgspec.to_builtins({"source": src, "model": model, "live": live, "followed": t.followed, "versions": shown,
                                   "notes": run_stats.health_notes(stats, live) + ([found.covers] if found and found.covers else []),
                                   "findings": rules})

        def rest(kept: list, total: int) -> dict:  # the findings of the versions shown only
            more = _next_versions(kept, total, lambda v: v["version"], hi)
            if more:
                last = kept[-1]["version"] if kept else -1
                more["findings"] = [{**r, "per_version": {k: n for k, n in r["per_version"].items() if int(k) <= last}}
                                    for r in doc["findings"]]
            return more

        return _bounded(_fit(doc, "versions", rest))

    @_said_if_refused
    def find_rollouts(self, source: str, pattern: str = "", rule: str = "", where: str = "", versions: str = "",
                      status: str = "") -> str:
        """Find rollouts of a collection or run: by a text search over what the model generated, its tool calls
        and the tool outputs (plain text, case-insensitive, or /regex/), and/or by a finding rule. Each hit
        names the rollout (path; in a run version and rollout index), the turn, the token where it starts and
        an excerpt.

        Args:
            source: a bundled example name or a Hub dataset id
            pattern: text to find, or /regex/ (flags i, s, m after the closing slash); may be empty with a rule
            rule: a finding rule (tests-touched, prints-expected, exit-or-skip, writes-outside, repetition-loop, cut-at-limit, empty-answer, unparsed-tool-call, tool-error, log-ratio-outlier, clipped-share, drift-fork), or empty
            where: generated, tool-call or tool-output, or empty for all three
            versions: a run's policy versions, A:B (inclusive), A:, :B or A; empty for all
            status: a run's rollout status (ok, timed-out, unscorable, failed), or empty
        Returns JSON: {hits, rollouts, per_version, partial, notes} or {error}."""
        deadline = time.monotonic() + answers.budget_s(self.service.public)  # the whole answer's budget
        try:
            index = self.service.find_index((source or "").strip()[:MAX_SRC_CHARS],
                                            wait_s=answers.budget_s(self.service.public))
        except Building as e:
            return _dump(answers.SearchAnswer(partial=True, notes=[str(e)]))
        if index is None:
            return json.dumps({"error": "this source is not a collection or a run this app can open"})
        src = (source or "").strip()[:MAX_SRC_CHARS]
        self._opened_by_client(src, "run" if self.service.is_run(src) else "collection")
        req = {"pattern": pattern, "rule": rule, "fields": [where] if where else [], "versions": versions,
               "statuses": [status] if status else [], "limit": 50}
        doc = msgspec.to_builtins(answers.search(index, req, self.service.public, deadline))
        if _size(doc) > MAX_ANSWER_BYTES:  # a run of many versions: its counts per version go first, said so
            doc["notes"] = doc.get("notes", []) + [f"per_version left out: the answer is at most {MAX_ANSWER_BYTES:,} "
                                                   "bytes (ask with versions=A:B for a range's counts)"]
            doc["per_version"] = {}
        return _bounded(_fit(doc, "hits", lambda kept, total: {"cut": f"{len(kept)} of {total} hits shown"}
                             if len(kept) < total else {}))

    def rollout_turn(self, source: str, path: str, turn: int = 0, start: int = -1, count: int = 500) -> str:
        """One turn of one rollout: what the model generated (its text and tool calls, each with its result) and
        the turn token by token: each token's text, mask (1 = generated, in TRL's mask; 0 = context) and the
        engine's logprob; in a recorded run, that turn's fate in training (the row that trains it: trained at which
        global step, or why never), the rollout's, and its training rows (each with the turns it trains and its
        fate); and its findings. The tokens start at the turn's first generated token unless `start` says where;
        at most 2000 tokens per call: page with start.

        Args:
            source: the collection or run
            path: the rollout: its path (as find_rollouts names it) or, in a run, its short id as the pages show
                it ("v3 g2 r1"; with the segment in front when two segments share it)
            turn: the agent turn (0-based)
            start: the first token of the turn's full sequence (prompt + output); -1 for the first generated one
            count: how many tokens (at most 2000)
        Returns JSON: {path, turn, turns, prompt_tokens, output_tokens, generated, generated_tokens, tool_calls:
        [{name, arguments, result, failed}], start, tokens: [[text, mask, logprob]], fate, findings} or {error}."""
        try:
            src, c, rec = self._rollout_record(source, path)
            r = self.service.rollout(c, src, rec.path)
        except (ValueError, ArtifactError) as e:
            return json.dumps({"error": str(e)})
        turns = r.artifact.turns
        if not isinstance(turn, int) or not 0 <= turn < len(turns):
            return json.dumps({"error": f"turn {turn}: this rollout has turns 0..{len(turns) - 1}"})
        t = turns[turn]
        total = t.n_prompt + t.n_output
        first = int(start) if isinstance(start, int) and start >= 0 else t.n_prompt
        lo = max(0, min(first, total))
        hi = min(total, lo + max(1, min(int(count) if isinstance(count, int) else 500, MAX_TURN_TOKENS)))
        tokens: list[list] = []
        for k_chunk in range(lo // CHUNK, (hi - 1) // CHUNK + 1 if hi > lo else lo // CHUNK):
            ch = r.chunk(turn, "full", k_chunk)
            for k, pos in enumerate(range(ch.start, ch.start + len(ch.ids))):
                if lo <= pos < hi:
                    tokens.append([ch.text[k], int(ch.mask[k]), ch.logprob[k]])
        generated = decode(r.vocab, t.output_ids)
        calls = [{"name": x.name, "arguments": x.arguments, "result": _cut(x.result, MAX_RESULT_CHARS),
                  "failed": x.failed} for x in r.tool_calls if x.turn == t.index]
        index = self.service.find_index(src)
        return _dump({"path": rec.path, "turn": turn, "turns": len(turns), "prompt_tokens": t.n_prompt,
                      "output_tokens": t.n_output, "generated": _cut(generated, MAX_GENERATED_CHARS),
                      **({"generated_cut": f"the first {MAX_GENERATED_CHARS:,} of {len(generated):,} characters"}
                         if len(generated) > MAX_GENERATED_CHARS else {}),
                      "tool_calls": calls[:MAX_TURN_CALLS],
                      **({"tool_calls_cut": f"{MAX_TURN_CALLS} of {len(calls)} calls"} if len(calls) > MAX_TURN_CALLS
                         else {}),
                      "start": lo, "tokens": tokens, "fate": self._fate(c, src, rec, r, turn),
                      "findings": index.findings_of(rec.path) if index is not None else []})

    def _rollout_record(self, source: str, name: str):
        """(source, collection, record) of the rollout `name` names in `source`: a path, or in a run its short id
        (viewer/short_ids.py)."""
        src = (source or "").strip()[:MAX_SRC_CHARS]
        path = (name or "").strip().strip("/")[:MAX_SRC_CHARS]
        short = short_ids.parse(path)
        if short is not None:
            t = self.service.run_table(src) if src else None
            if t is None:
                raise ValueError(f"{short} names a rollout of a run by version, group and rollout; {src[:100]!r} is "
                                 "not a run this app can open: name the rollout by its path")
            path = short_ids.path_of(t, short)
        src, c = self._collection(src, path)
        rec = c.record(path)
        if rec is None or rec.kind != "artifact":
            raise ValueError(f"no rollout at {path[:100]!r} in this source")
        return src, c, rec

    def _fate(self, c, src: str, rec, r, turn: int) -> dict | None:
        """A run's rollout in training, turn `turn` first: that turn's fate (its row's: viewer/fate.py), the
        rollout's, and its rows with the turns each trains; None outside a recorded run."""
        run = self.service.rows.rollout_run(c, src, rec, r)
        if run is None:
            return None
        pos = next((k for k, x in enumerate(r.artifact.turns) if x.index == turn), None)
        f = run.turns[pos] if pos is not None and pos < len(run.turns) else None
        return {"turn": None if f is None else {"trained": f.trained, "steps": f.steps, "cause": f.cause,
                                                "label": f.label, "why": f.why},
                "rollout": {"trained": run.fate.trained, "partly": run.fate.partly, "steps": run.fate.steps,
                            "label": run.fate.label},
                "rows": [{"ordinal": q.ordinal, "turns": q.turns, "tokens": q.tokens,
                          "trained_tokens": q.trained_tokens, "fate": q.fate, "step": q.step} for q in run.rows],
                "status": run.status, "reward": run.reward, "advantage": run.advantage, "version": run.version,
                "group": run.group_id, "rollout_index": run.rollout, "segment": run.segment}

    def compare_rollouts(self, source: str, a: str, b: str, turn: int = 0) -> str:
        """Compare two rollouts of a collection or run at one turn: their rewards, advantages, findings and, in a
        recorded run, that turn's fate in each (trained at which step, or why never) beside the rollout's and its
        rows; where their prompts first differ, and each one's generated text at that turn.

        Args:
            source: the collection or run
            a: the first rollout: its path, or in a run its short id ("v3 g2 r1")
            b: the second rollout, named the same way
            turn: the agent turn to compare (clamped to each rollout's turns)
        Returns JSON: {a: {...}, b: {...}, prompt_differs_at} or {error}."""
        try:
            src, ca, ra = self._rollout_record(source, a)
            _, cb, rb = self._rollout_record(source, b)
            if ra.path == rb.path:
                raise ValueError("name two different rollouts of this source (their paths, as find_rollouts gives)")
            xa, xb = self.service.rollout(ca, src, ra.path), self.service.rollout(cb, src, rb.path)
            got = group_compare(xa, ra.rollout or 0, xb, rb.rollout or 0, max(0, turn if isinstance(turn, int) else 0))
        except (ValueError, ArtifactError) as e:
            return json.dumps({"error": str(e)})
        index = self.service.find_index(src)

        def side(c, rec, x, s) -> dict:
            return {"path": rec.path, "version": rec.policy_version, "rollout": rec.rollout, "reward": rec.reward,
                    "advantage": rec.advantage, "status": rec.status, "fate": self._fate(c, src, rec, x, s.turn),
                    "turn": s.turn, "turns": s.turns, "generated": "".join(s.out_text),
                    "generated_tokens": s.out_total, "tools": s.tools, "tool_failed": s.failed,
                    "findings": msgspec.to_builtins(index.findings_of(rec.path)) if index is not None else []}

        doc = msgspec.to_builtins(got)
        return json.dumps({"a": side(ca, ra, xa, got.a), "b": side(cb, rb, xb, got.b),
                           **{k: v for k, v in doc.items() if k not in ("a", "b")}}, ensure_ascii=False)

    @_said_if_refused
    def compare_runs(self, a: str, b: str, task: str = "", versions: str = "") -> str:
        """Compare two recorded TRL runs per policy version: for every version either run has, each run's numbers
        there (groups, rollouts, reward mean/sd/min/max, pass rate, zero-spread groups, trained tokens, rollouts
        never trained; null where a run has no such version), each run's totals, the tasks both ran (matched by
        task id, else by title) and, with `task`, that task's groups and rollouts (reward, passed, status, path)
        in both runs.

        Args:
            a: the first run: a bundled example name (e.g. "trl-run") or a Hub dataset id
            b: the second run, named the same ways
            task: a task id of run a (as `tasks` lists them), or empty
            versions: policy versions to compare, A:B (inclusive), A:, :B or A; empty for all (as many as fit in
                the answer's 100 KB: `next_versions` says what to ask for next)
        Returns JSON: {a, b, by_version: [{version, a, b}], tasks, task, a_task, b_task, notes, next_versions?} or
        {error}."""
        try:
            lo, hi = parse_versions(versions or None)
        except QueryError as e:
            return json.dumps({"error": str(e)})
        runs = []
        for which, name in (("a", a), ("b", b)):
            src = (name or "").strip()
            if not src or len(src) > MAX_SRC_CHARS:
                return json.dumps({"error": f"run {which}: name a recorded run: a bundled example or a Hub dataset id"})
            run, why = self.service.run_snapshot(src)
            if run is None and self.service.is_collection(src):
                return json.dumps({"error": f"run {which} is a collection, not a recorded run"})
            if run is None:  # the source's name is not said back: a public app never echoes a server path
                return json.dumps({"error": f"run {which} cannot be compared: {why}"})
            self._opened_by_client(src, "run")
            runs.append((src, run, self.service.follower.stats(run.table)))
        (sa, ra, va), (sb, rb, vb) = runs
        got = run_compare.compare(sa, ra, va, sb, rb, vb, (task or "").strip()[:64] or None)
        doc = msgspec.to_builtins(got)
        doc.pop("serial", None)
        for side in ("a", "b"):
            doc[side].pop("versions", None)  # said once, aligned by version below
        doc["by_version"] = [p for p in msgspec.to_builtins(run_compare.by_version(got)) if _in_range(p["version"], lo, hi)]
        doc["tasks"] = doc["tasks"][:MAX_SHARED_TASKS]
        for side in ("a_task", "b_task"):  # a task's groups and pass rates: the versions asked for
            if doc.get(side):
                for key in ("groups", "pass_rates"):
                    doc[side][key] = [g for g in doc[side][key] if _in_range(g.get("version"), lo, hi)]
        return _bounded(_fit(doc, "by_version", lambda kept, total: _next_versions(kept, total, lambda p: p["version"], hi)))

    def register(self) -> None:
        """Add the tools as API endpoints (call inside the Blocks)."""

        def list_open() -> str:
            return self.list_open()

        def run_summary(source: str, versions: str = "") -> str:
            return self.run_summary(source, versions)

        def find_rollouts(source: str, pattern: str = "", rule: str = "", where: str = "", versions: str = "",
                          status: str = "") -> str:
            return self.find_rollouts(source, pattern, rule, where, versions, status)

        def rollout_turn(source: str, path: str, turn: int = 0, start: int = -1, count: int = 500) -> str:
            return bounded_turn(self.rollout_turn(source, path, turn, start, count))

        def compare_rollouts(source: str, a: str, b: str, turn: int = 0) -> str:
            return bounded_compare(self.compare_rollouts(source, a, b, turn))

        def compare_runs(a: str, b: str, task: str = "", versions: str = "") -> str:
            return self.compare_runs(a, b, task, versions)

        for fn in (list_open, run_summary, find_rollouts, rollout_turn, compare_rollouts, compare_runs):
            fn.__doc__ = getattr(McpTools, fn.__name__).__doc__
            gr.api(fn, api_name=fn.__name__, queue=False)


def only_tools_public(demo: gr.Blocks) -> None:
    """Mark every endpoint but the tools "undocumented": the MCP server lists public endpoints as tools."""
    for fn in demo.fns.values():
        if fn.api_name not in TOOLS and fn.api_visibility == "public":
            fn.api_visibility = "undocumented"
