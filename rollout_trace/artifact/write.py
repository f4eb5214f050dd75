"""Write an artifact folder atomically, and only if it reads back valid.

Files go to a hidden sibling folder first; the finished folder is validated with the same reader
every consumer uses, then synced and renamed into place (rollout_trace/artifact/atomic.py). A failed or interrupted write therefore never leaves
something at `out_dir` that looks like a complete artifact.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from .atomic import publish_folder, staging_folder
from .errors import RolloutTraceError
from .group import GROUP_FILE, encode_group, load_group, rollout_folder
from .model import Artifact, Turn
from .problems import ArtifactError, Problem
from .read import load_artifact
from .schema import FORMAT_VERSION, TOKENIZER_DIR, Summary, Task, TestCase, TestResult, TrlSample
from .trl_part import files as trl_files

_encode = msgspec.json.Encoder().encode


class OutDirExists(RolloutTraceError, FileExistsError):
    pass


def turn_record(t: Turn) -> dict[str, Any]:
    rec = {
        "turn": t.index, "trained": t.seed_trained, "tool_calls": list(t.tool_calls),
        "n_prompt_ids": t.n_prompt, "n_output_ids": t.n_output,
        "prompt_ids": t.prompt_ids.tolist(), "output_ids": t.output_ids.tolist(),
        "per_token_logps": t.logprobs.tolist(), "mask": t.mask.tolist(),
        "prompt_source": t.prompt_source,
    }
    if t.retokenized_prompt_ids is not None:
        rec["retokenized_prompt_ids"] = t.retokenized_prompt_ids.tolist()
    return rec


def write_artifact(out_dir: Path | str, *, summary: Summary, turns: list[Turn], task: Task | None,
                   visible_tests: str | None, held_out_tests: list[TestCase] | None,
                   trace_entries: list[dict] | None, test_results: list[TestResult] | None = None,
                   solution: str | None = None, tokenizer: Any = None,
                   trl: tuple[TrlSample, dict[str, np.ndarray] | None] | None = None,
                   validate: bool = True) -> Artifact:
    """Write every file, validate the result, move it into place, and return it as read back.

    `tokenizer` is anything with `save_pretrained(dir)` (a transformers tokenizer); its files make
    the artifact render offline. `trl` is a recorded rollout's trl part: its sample.json and the flat
    arrays of its rows (rollout_trace/artifact/trl_part.py `encode_rows`; None when TRL built no row).
    `validate=False` skips the read-back and returns the parts as given (no trace calls, no tokenizer):
    for a writer that must not spend the CPU, the recorder inside TRL's worker, whose runs `viewer check`
    validates whole. The write stays atomic.
    """
    out = Path(out_dir)
    tmp = _staging(out, "partial")
    try:
        summary = msgspec.structs.replace(summary, format_version=FORMAT_VERSION)
        for name, data in artifact_files(summary=summary, turns=turns, task=task, visible_tests=visible_tests,
                                         held_out_tests=held_out_tests, trace_entries=trace_entries,
                                         test_results=test_results, solution=solution, trl=trl).items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)
        if tokenizer is not None:
            tokenizer.save_pretrained(str(tmp / TOKENIZER_DIR))
        written = load_artifact(tmp) if validate else None  # raises ArtifactError before anything reaches out_dir
        publish_folder(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if written is None:
        return Artifact(source=str(out), root=out, summary=summary, turns=turns, task=task, visible_tests=visible_tests,
                        held_out_tests=held_out_tests, test_results=test_results, solution=solution)
    return _moved(written, out)  # the validated read-back, moved with its folder: no second read


def artifact_files(*, summary: Summary, turns: list[Turn], task: Task | None, visible_tests: str | None = None,
                   held_out_tests: list[TestCase] | None = None, trace_entries: list[dict] | None = None,
                   test_results: list[TestResult] | None = None, solution: str | None = None,
                   trl: tuple[TrlSample, dict[str, np.ndarray] | None] | None = None) -> dict[str, bytes]:
    """An artifact's files (path in its folder -> bytes) as `write_artifact` writes them: what a recorded run's
    rollout row holds (rollout_trace/artifact/run_schema.py) and a folder gets."""
    out = {"turns.json": _encode({"turns": [turn_record(t) for t in turns]}),
           "summary.json": msgspec.json.format(_encode(msgspec.structs.replace(summary, format_version=FORMAT_VERSION)),
                                               indent=2)}
    if task is not None:
        out["task.json"] = msgspec.json.format(_encode(task), indent=2)
    if visible_tests is not None:
        out["visible_tests.txt"] = visible_tests.encode("utf-8")
    if held_out_tests is not None:
        out["held_out_tests.json"] = msgspec.json.format(_encode(held_out_tests), indent=2)
    if trace_entries is not None:
        out["trace.json"] = _encode({"turns": trace_entries})
    if test_results is not None:
        out["test_results.json"] = msgspec.json.format(_encode({"tests": test_results}), indent=2)
    if solution is not None:
        out["solution.py"] = solution.encode("utf-8")
    if trl is not None:
        out |= trl_files(*trl)
    return out


def _staging(out: Path, kind: str) -> Path:
    """A hidden, private sibling of `out` to build it in; refuses an `out` that exists and is not an empty folder."""
    if out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir()))):
        raise OutDirExists(f"{out} already exists and is not empty; choose another --out-dir or remove it")
    return staging_folder(out, kind)


def _moved(a: Artifact, root: Path) -> Artifact:
    """`a` as read from its staging folder, at `root` where that folder was renamed to."""
    tok = root / TOKENIZER_DIR if a.tokenizer_dir is not None else None
    return dataclasses.replace(a, source=str(root), root=root, tokenizer_dir=tok)


class GroupBuild:
    """Build a GRPO group folder (group.json, task.json, rollout-NN/) in a hidden sibling, then rename it.

        with GroupBuild(out_dir) as g:
            write_artifact(g.rollout_dir(0), ...)      # each rollout through the artifact writer
            g.commit(group_file, task)                 # group.json checked against its folders, then renamed

    Until `commit` renames it, nothing at `out_dir` exists: a crash, a SIGKILL or an exception leaves at
    most a hidden `.NAME.group-partial-*` folder that every reader skips (the block removes it when it can).
    """

    def __init__(self, out_dir: Path | str):
        self.out = Path(out_dir)
        self.root = _staging(self.out, "group-partial")
        self.committed = False

    def rollout_dir(self, index: int) -> Path:
        return self.root / rollout_folder(index)

    def commit(self, group: Any, task: Task | None, validate: bool = True) -> list[Artifact | None]:
        """Write group.json (a GroupFile) and task.json, check them, rename into place; raise ArtifactError.

        With `validate` every rollout is read back with the artifact reader and the group cross-checked
        against them as `viewer check` does; the rollouts are returned as read back, at their final folders
        (None for a rollout without one). `validate=False` checks group.json alone (load_group) and returns
        no rollouts: for the recorder inside TRL's worker, as write_artifact's `validate`."""
        if task is not None:
            (self.root / "task.json").write_bytes(msgspec.json.format(_encode(task), indent=2))
        (self.root / GROUP_FILE).write_bytes(encode_group(group))
        load_group(self.root)  # raises ArtifactError before anything reaches out_dir
        read = [load_artifact(self.root / r.folder) if r.folder else None for r in group.rollouts] if validate else []
        if validate:
            _cross_check(self.root)
        publish_folder(self.root, self.out)
        self.committed = True
        return [_moved(a, self.out / r.folder) if a is not None and r.folder else None
                for a, r in zip(read, group.rollouts, strict=False)]

    def __enter__(self) -> GroupBuild:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.committed:
            shutil.rmtree(self.root, ignore_errors=True)


def _cross_check(root: Path) -> None:
    """The group at `root` checked against its rollouts' summaries (rewards, statuses, task) as `viewer check`
    does it: the collection reader's record of every row; raises ArtifactError naming each invalid one."""
    from .collection import open_collection

    c = open_collection(str(root))
    try:
        bad = [r for r in c.records if not r.valid]
    finally:
        c.close()
    if bad:
        raise ArtifactError([Problem(r.path or ".", r.problem or "invalid") for r in bad])
