"""Read an artifact folder, validate it once, and hand back typed objects.

This is the boundary: past `load_artifact`, code trusts the invariants listed in rollout_trace/artifact/schema.py.
Big arrays are decoded from raw JSON bytes straight into numpy (rollout_trace/artifact/arrays.py); `load_index`
reads only the small per-turn fields, which is what a turn list needs, without materialising ids.
"""

from __future__ import annotations

import enum
import hashlib
import mmap
import os
import re
from collections import Counter
from pathlib import Path
from typing import Final

import msgspec
import numpy as np

from . import arrays
from .model import Artifact, Turn
from .problems import ArtifactError, Findings, Problem, from_msgspec
from .rescore import read_parts
from .schema import NO_RAW, TOKENIZER_DIR, Summary, Task, TestCase, TestResults, TraceFile, TurnHeader, TurnsFile
from .trace import normalise
from .trl_part import read_part as read_trl_part

_BLANK = re.compile(rb"\s*\Z")
_DECODERS = {t: msgspec.json.Decoder(t) for t in (TurnsFile, Summary, Task, list[TestCase], TestResults, TraceFile)}


class _Unreadable(enum.Enum):
    """A file that exists but could not be read; the problem is already recorded."""

    UNREADABLE = "unreadable"


UNREADABLE: Final = _Unreadable.UNREADABLE
# Free-form JSON (trace requests and responses, summary extras) is handed to code that recurses: the
# page's JSON encoder, pretty-printers, Gradio (orjson refuses more than 255 levels). Real traces
# nest about 10 deep; anything past this is refused here with a message instead of failing there.
MAX_NESTING = 128


# The small files are small in every real artifact; one that is not (a summary with millions of tool
# names) would cost a visitor's request seconds and hundreds of MB, so it is refused by its size.
MAX_SMALL_FILE_BYTES = {"summary.json": 16 * 2**20, "task.json": 16 * 2**20, "visible_tests.txt": 16 * 2**20}


def _read(root: Path, name: str, findings: Findings, mapped: bool = False) -> mmap.mmap | bytes | _Unreadable | None:
    """The file's bytes (mapped read-only when `mapped`), None when absent, UNREADABLE on an OS error.

    A mapped file is not copied; msgspec.Raw fields keep the map alive until the arrays are parsed."""
    path = root / name
    try:
        if not path.is_file():
            return None
        cap = MAX_SMALL_FILE_BYTES.get(name)
        if cap is not None and (size := path.stat().st_size) > cap:
            findings.add(name, "too large for this file", expected=f"at most {cap:,} bytes", found=f"{size:,} bytes")
            return UNREADABLE
        if not mapped:
            return path.read_bytes()
        with path.open("rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return b""
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:  # permission denied, an I/O error: name the file, not the server path
        findings.add(name, f"cannot be read: {e.strerror or type(e).__name__}")
        return UNREADABLE


def _decode(data: bytes | mmap.mmap, kind, name: str, findings: Findings):
    if _BLANK.match(data):
        findings.add(name, "the file is empty")
        return None
    try:
        return _DECODERS[kind].decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as e:
        findings.problems.append(from_msgspec(name, e, data))
    except RecursionError:  # msgspec and json both recurse per level; 100k levels exhaust the stack
        findings.add(name, "JSON nested too deeply to read", expected=f"at most {MAX_NESTING} levels",
                     found="far more")
    return None


def _nesting(value: object, limit: int = MAX_NESTING) -> int:
    """Depth of nested lists/dicts, counted without recursion and stopping once past `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            v = v.values()
        elif not isinstance(v, list):
            continue
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        stack.extend((x, d + 1) for x in v if isinstance(x, (list, dict)))
    return deepest


def _check_nesting(value: object, file: str, findings: Findings, turn: int | None = None, field: str | None = None) -> None:
    if _nesting(value) > MAX_NESTING:
        findings.add(file, "JSON nested too deeply", turn=turn, field=field, expected=f"at most {MAX_NESTING} levels",
                     found=f"more than {MAX_NESTING}")


def _require(root: Path, name: str, kind, findings: Findings, label: str):
    data = _read(root, name, findings, mapped=kind is TurnsFile)
    if data is UNREADABLE:
        return None
    if data is None:
        findings.add(name, f"required file is missing from {label}")
        return None
    return _decode(data, kind, name, findings)


def _optional(root: Path, name: str, kind, findings: Findings, say_missing: bool = True):
    data = _read(root, name, findings)
    if data is UNREADABLE:
        return None
    if data is None:
        if say_missing:
            findings.notices.append(f"{name} is not in this artifact; the parts of the view that need it are empty")
        return None
    return _decode(data, kind, name, findings)


def _check_header(i: int, h: TurnHeader, findings: Findings) -> None:
    if h.turn != i:
        findings.add("turns.json", "turns are numbered 0, 1, 2... in order", turn=i, field="turn",
                     expected=str(i), found=str(h.turn))
    if h.trained != bool(h.tool_calls):
        findings.add("turns.json", "`trained` is true exactly when the turn made a tool call", turn=i,
                     field="trained", expected=str(bool(h.tool_calls)).lower(), found=str(h.trained).lower())


def load_index(root: Path) -> list[TurnHeader]:
    """The per-turn small fields of turns.json (arrays left raw); raises ArtifactError when unreadable."""
    findings = Findings()
    turns = _require(Path(root), "turns.json", TurnsFile, findings, str(root))
    findings.raise_if_any()
    for i, h in enumerate(turns.turns):
        _check_header(i, h, findings)
    findings.raise_if_any()
    return turns.turns


def decode_turn(i: int, h: TurnHeader, findings: Findings) -> Turn | None:
    """Materialise one turn's arrays and check its length invariants."""
    file = "turns.json"
    got: dict[str, np.ndarray] = {}
    fields = [("prompt_ids", arrays.token_ids), ("output_ids", arrays.token_ids),
              ("per_token_logps", arrays.logprobs), ("mask", arrays.mask_values)]
    if memoryview(h.retokenized_prompt_ids) != bytes(NO_RAW):  # NO_RAW: the capture kept no re-tokenization
        fields.append(("retokenized_prompt_ids", arrays.token_ids))
    for name, parse in fields:
        try:
            got[name] = parse(getattr(h, name))
        except arrays.ArrayError as e:
            findings.add(file, str(e), turn=i, field=name, expected=e.expected, found=e.found)
    if len(got) < len(fields):
        return None
    p, o, lp, m = got["prompt_ids"], got["output_ids"], got["per_token_logps"], got["mask"]
    ok = True
    for name, n, arr in (("n_prompt_ids", h.n_prompt_ids, p), ("n_output_ids", h.n_output_ids, o)):
        if n != arr.size:
            findings.add(file, f"{name} is the length of the array it counts", turn=i, field=name,
                         expected=str(arr.size), found=str(n))
            ok = False
    if m.size != p.size + o.size:
        findings.add(file, "the mask covers prompt_ids + output_ids", turn=i, field="mask",
                     expected=f"{p.size} + {o.size} = {p.size + o.size} values", found=f"{m.size}")
        ok = False
    if lp.size not in (0, o.size):
        findings.add(file, "one logprob per output token, or none", turn=i, field="per_token_logps",
                     expected=f"{o.size} or 0 values", found=f"{lp.size}")
        ok = False
    if not ok:
        return None
    return Turn(i, h.trained, tuple(h.tool_calls), p, o, lp, m, h.prompt_source, got.get("retokenized_prompt_ids"))


def _check_summary(s: Summary, a: Artifact, findings: Findings) -> None:
    def same(field: str, expected, found) -> None:
        if expected != found:
            findings.add("summary.json", "disagrees with the other files", field=field,
                         expected=str(expected), found=str(found))

    same("agent_turns", len(a.turns), s.agent_turns)
    same("trained_turns", sum(t.seed_trained for t in a.turns), s.trained_turns)  # the seed's rule, as written
    counts = dict(Counter(name for t in a.turns for name in t.tool_calls if name))
    same("tool_calls_by_name", counts, s.tool_calls_by_name)
    if s.n_tokens is not None:
        same("n_tokens", a.n_tokens, s.n_tokens)
    if a.trace is not None:
        same("captured_calls", len(a.trace), s.captured_calls)
    if a.held_out_tests is not None:
        same("held_out_tests", len(a.held_out_tests), s.held_out_tests)
    if a.task is not None and a.task.task_id != s.task_id:
        findings.add("task.json", "names another task than summary.json", field="task_id",
                     expected=s.task_id, found=a.task.task_id)


def _check_run(a: Artifact, findings: Findings) -> None:
    """summary.json's `run` and the trl part describe the same rollout, rows and advantage."""
    run, part = a.summary.run, a.trl
    if run is None:
        if part is not None:
            findings.add("summary.json", "a rollout with a trl part says where it sits in its run", field="run",
                         expected="the run extra", found="none")
        return
    if run.reward != a.summary.reward_after_penalties:
        findings.add("summary.json", "in a recorded run the reward is TRL's summed reward", field="run.reward",
                     expected=str(a.summary.reward_after_penalties), found=str(run.reward))
    if part is None:
        if run.rows:
            findings.add("trl/sample.json", "the rollout's rows are recorded", expected=f"{run.rows} rows",
                         found="no trl part")
        return
    s = part.sample
    mine = (run.segment, run.group_id, run.rollout_index, run.rollout_id, run.policy_version, run.advantage,
            run.rows, run.trained_tokens)
    theirs = (s.segment, s.group_id, s.rollout_index, s.rollout_id, s.model_version, s.advantage, len(s.rows),
              sum(r.trained_tokens for r in s.rows))
    if mine != theirs:
        findings.add("trl/sample.json", "describes another rollout than summary.json's run",
                     field="segment/group_id/rollout_index/rollout_id/model_version/advantage/rows/trained_tokens",
                     expected=str(mine), found=str(theirs))


def _tokenizer_of(tok_dir: Path) -> Path | None:
    return tok_dir if (tok_dir / "tokenizer.json").is_file() or (tok_dir / "tokenizer_config.json").is_file() else None


def _run_tokenizer(root: Path, summary: Summary | None) -> Path | None:
    """A recorded run's rollout folder (<run>/groups/<group>/<rollout>) holds no tokenizer: its run's, when the
    folder still sits in its run (opened on its own, or copied by `viewer rescore -o`)."""
    if summary is None or summary.run is None:
        return None
    run = root.resolve().parent.parent.parent
    return _tokenizer_of(run / TOKENIZER_DIR) if (run / "run.json").is_file() else None


def load_artifact(root: Path | str, source: str | None = None) -> Artifact:
    """Read and validate every file; raise ArtifactError naming each problem found."""
    root = Path(root)
    label = source or str(root)  # what the user named: an upload's temporary folder is not shown
    findings = Findings()
    try:
        if not root.is_dir():
            raise ArtifactError([Problem(label, "not a folder")])
    except OSError as e:
        raise ArtifactError([Problem(label, f"cannot be read: {e.strerror or type(e).__name__}")]) from None
    turns_file = _require(root, "turns.json", TurnsFile, findings, label)
    summary = _require(root, "summary.json", Summary, findings, label)
    task = _optional(root, "task.json", Task, findings)
    # A recorded run's rollout is verified by OpenEnv's verify() (its reward is in summary.json's `run`): it has
    # no held-out test files, and their absence is no gap to report.
    captured = summary is None or summary.run is None
    held_out = _optional(root, "held_out_tests.json", list[TestCase], findings, say_missing=captured)
    trace_file = _optional(root, "trace.json", TraceFile, findings)
    results = _optional(root, "test_results.json", TestResults, findings, say_missing=False)
    if summary is not None:
        _check_nesting(summary.reward_breakdown, "summary.json", findings, field="reward_breakdown")
        _check_nesting(summary.capture, "summary.json", findings, field="capture")
    if trace_file is not None:
        for i, entry in enumerate(trace_file.turns):
            for name in ("request", "response", "metadata"):
                _check_nesting(getattr(entry, name), "trace.json", findings, turn=i, field=name)
    visible = _read(root, "visible_tests.txt", findings)
    if visible is UNREADABLE:
        visible = None
    elif visible is None and captured:
        findings.notices.append("visible_tests.txt is not in this artifact; the visible tests are not shown")
    turns: list[Turn] = []
    if turns_file is not None:
        for i, h in enumerate(turns_file.turns):
            _check_header(i, h, findings)
            turn = decode_turn(i, h, findings)
            if turn is not None:  # None only with a problem recorded: raise_if_any below stops the load
                turns.append(turn)
        del turns_file  # drop the raw bytes: only numpy arrays are kept
    trace = normalise(trace_file.turns, findings) if trace_file is not None else None
    findings.raise_if_any()
    tok_dir = root / TOKENIZER_DIR
    solution = _read(root, "solution.py", findings)
    solution = None if solution is UNREADABLE else solution
    artifact = Artifact(
        source=source or str(root), root=root, summary=summary, turns=turns, task=task,
        visible_tests=_text(visible, "visible_tests.txt", findings),
        held_out_tests=held_out, trace=trace,
        test_results=results.tests if results else None,
        solution=_text(solution, "solution.py", findings),
        tokenizer_dir=_tokenizer_of(tok_dir) or _run_tokenizer(root, summary),
        notices=findings.notices,
        rescores=read_parts(root, turns, findings),
        trl=read_trl_part(root, findings),
    )
    _check_summary(summary, artifact, findings)
    _check_run(artifact, findings)
    if task is not None and hashlib.sha1(task.instruction.encode()).hexdigest() != task.task_id:
        findings.notices.append("task.json: task_id is not the sha1 of the instruction, as the recipe makes it")
    findings.raise_if_any()
    return artifact


def _text(data: bytes | mmap.mmap | None, name: str, findings: Findings) -> str | None:
    if data is None:
        return None
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError as e:
        findings.add(name, f"not UTF-8 text (byte {e.start})")
        return None

