"""A GRPO group: K rollouts of one task, and `group.json`, the file that says how they compare.

A group is a folder holding `group.json` and one complete artifact per rollout (`rollout-00`,
`rollout-01`, ...), each readable on its own by rollout_trace/artifact/read.py. `group.json` is the contract
between capture (which writes it) and the viewer (which reads it); it is versioned like summary.json.

    group.json  GroupFile
        format_version  int: 1, or 2 when a rollout has no folder (this reader reads both)
        task_id         the task all K rollouts were given (sha1 of the instruction)
        task_index      its row in the dataset, when known
        model           the policy that sampled the rollouts
        k               TRL's num_generations: how many rollouts the group has
        rollout_seed    the first rollout's seed; rollout i used rollout_seed + i
        parallel        how many rollouts ran at once (timing context), when known
        backend         "local", "hf-sandbox", ...
        created_at      ISO 8601 time the group finished
        wall_s          the whole group's wall time
        rollouts        [GroupRollout...] in rollout order
            index, folder, rollout_seed, status ("ok" | "failed" | "timed-out"),
            reward (null = unscorable, TRL's NaN), advantage (TRL's formula below),
            started_at, wall_s, error (one line when status is not "ok"),
            problem (one line: what a recorder could not record of this rollout, and why)
            folder is null (format_version 2) for a rollout that failed before it produced an
            artifact, or whose artifact a recorder could not build (then `problem` says why): its
            status, error, reward and advantage are all there is. A failed rollout's reward is
            null unless a reward function scored its empty completion (TRL does, in a recorded run's
            group: it then counts in the group's baseline, with an advantage but no training row).
        run             GroupRun, only in a group of a recorded TRL run (docs/runs.md): its
                        segment, the policy version TRL stamped on it, TRL's group id, and the
                        dataset row of its prompt. Readers that predate it ignore it.

The advantage is TRL's (`trl/experimental/async_grpo/async_rollout_worker.py`, `_score_group`):
`(r - mean) / (std + 1e-8)` over the scorable rollouts, numpy's population std; an unscorable
rollout gets 0. TRL computes it inline in a method, so `grpo_advantages` restates those lines;
tests/test_collection_group.py holds it to a numpy reference of the same lines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import msgspec
import numpy as np

from .numbers import finite_summary
from .problems import ArtifactError, Findings, Problem, from_msgspec

GROUP_FILE = "group.json"
GROUP_FORMAT_VERSION = 2  # the newest this reader understands; files say the oldest that can read them
ADVANTAGE_EPS = 1e-8  # TRL's: scored.std() + 1e-8
ADVANTAGE_TOLERANCE = 1e-6  # written advantages are floats that went through JSON
_FOLDER = re.compile(r"^[\w.-]{1,100}$")


class GroupRollout(msgspec.Struct, omit_defaults=True):
    index: int
    status: Literal["ok", "failed", "timed-out"]
    reward: float | None  # None: unscorable (TRL's NaN); JSON has no NaN
    advantage: float
    folder: str | None = None  # None: failed before any artifact existed (format_version 2)
    rollout_seed: int | None = None
    started_at: str | None = None
    wall_s: float | None = None
    error: str | None = None
    problem: str | None = None  # what of this rollout a recorder could not record, and why


class GroupRun(msgspec.Struct, omit_defaults=True):
    """group.json `run`: where a group sits in a recorded TRL run (rollout_trace/artifact/run.py reads runs)."""

    segment: str
    policy_version: int
    group_id: int
    dataset_index: int | None = None


class GroupFile(msgspec.Struct, omit_defaults=True):
    task_id: str
    k: int
    rollouts: list[GroupRollout]
    format_version: int = 1
    model: str | None = None
    task_index: int | None = None
    rollout_seed: int | None = None
    parallel: int | None = None
    backend: str | None = None
    created_at: str | None = None
    wall_s: float | None = None
    run: GroupRun | None = None


_DECODER = msgspec.json.Decoder(GroupFile)


def grpo_advantages(rewards: Sequence[float | None]) -> list[float]:
    """TRL's group advantage per rollout; None or NaN rewards are unscorable and get 0."""
    r = np.array([math.nan if x is None else float(x) for x in rewards], dtype=float)
    advantages = np.zeros_like(r)
    scored = ~np.isnan(r)
    if scored.any():
        s = r[scored]
        with np.errstate(over="ignore", invalid="ignore"):  # rewards near the float limit: TRL's formula gives inf/NaN too
            advantages[scored] = (s - s.mean()) / (s.std() + ADVANTAGE_EPS)
    return advantages.tolist()


def trl_reward(columns: Sequence[float | None]) -> float | None:
    """TRL's reward of one rollout from its reward columns (`_score_group`: nansum; every column NaN or None is
    unscorable). TRL sums inline in a method, so these lines restate it, beside its advantage."""
    values = [float(v) for v in columns if v is not None and not math.isnan(v)]
    return float(np.sum(values)) if values else None


def reward_spread(rewards: Sequence[float | None]) -> tuple[float | None, float | None, float | None]:
    """(min, max, mean) over the finite rewards (numbers.py: no overflow); all None when none is."""
    s = finite_summary(rewards)
    return s.min, s.max, s.mean


def check_group(g: GroupFile, findings: Findings, name: str = GROUP_FILE) -> None:
    """The invariants of one group.json on its own (its rollouts' folders are checked by whoever lists them)."""
    def bad(message: str, **kw) -> None:
        findings.add(name, message, **kw)

    if g.format_version > GROUP_FORMAT_VERSION:
        bad("written by a newer version of this tool", field="format_version",
            expected=f"at most {GROUP_FORMAT_VERSION}", found=str(g.format_version))
    if g.k != len(g.rollouts):
        bad("k is the number of rollouts", field="k", expected=str(len(g.rollouts)), found=str(g.k))
    folders = set()
    for i, r in enumerate(g.rollouts):
        where = f"rollouts[{i}]"
        if r.folder is None:
            if r.status != "failed" and r.problem is None:
                bad("a rollout that finished has its artifact folder", field=f"{where}.folder",
                    expected="a folder name", found="null")
            if g.run is None and r.reward is not None:  # only TRL scores a failed rollout's empty completion
                bad("a captured rollout without an artifact cannot be scored", field=f"{where}.reward",
                    expected="null", found=str(r.reward))
            if g.format_version < 2:
                bad("a rollout without a folder needs format_version 2", field="format_version", expected="2",
                    found=str(g.format_version))
        if r.index != i:
            bad("rollouts are numbered 0, 1, 2... in order", field=f"{where}.index", expected=str(i), found=str(r.index))
        if r.folder is None:
            pass
        elif not _FOLDER.match(r.folder) or r.folder in (".", ".."):
            bad("a folder name inside the group", field=f"{where}.folder", expected="a name like rollout-00, no path",
                found=repr(r.folder))
        elif r.folder in folders:
            bad("each rollout has its own folder", field=f"{where}.folder", expected="a name used once",
                found=f"{r.folder!r} twice")
        folders.add(r.folder)
        if r.reward is not None and not math.isfinite(r.reward):
            bad("a reward is finite, or null when unscorable", field=f"{where}.reward", expected="a number or null",
                found=str(r.reward))
        if g.rollout_seed is not None and r.rollout_seed is not None and r.rollout_seed != g.rollout_seed + i:
            bad("rollout i uses rollout_seed + i", field=f"{where}.rollout_seed",
                expected=str(g.rollout_seed + i), found=str(r.rollout_seed))
    expected = grpo_advantages([r.reward if r.reward is None or math.isfinite(r.reward) else None for r in g.rollouts])
    for i, (r, a) in enumerate(zip(g.rollouts, expected, strict=True)):
        if not math.isfinite(r.advantage) or abs(r.advantage - a) > ADVANTAGE_TOLERANCE * max(1.0, abs(a)):
            bad("the advantage is TRL's (r - mean) / (std + 1e-8) over the scorable rewards, 0 when unscorable",
                field=f"rollouts[{i}].advantage", expected=f"{a:.6g}", found=f"{r.advantage:.6g}")


def parse_group(data: bytes, findings: Findings, name: str = GROUP_FILE) -> GroupFile | None:
    """Decode and check group.json bytes; problems go to `findings`, None when it cannot be decoded."""
    if not data.strip():
        findings.add(name, "the file is empty")
        return None
    try:
        g = _DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as e:
        findings.problems.append(from_msgspec(name, e, data))
        return None
    check_group(g, findings, name)
    return g


def load_group(root: Path | str) -> GroupFile:
    """Read and validate `root/group.json` and check each rollout folder is there; raise ArtifactError."""
    root = Path(root)
    path = root / GROUP_FILE
    if not path.is_file():
        raise ArtifactError([Problem(str(root), "no group.json here: this is not a GRPO group")])
    findings = Findings()
    g = parse_group(path.read_bytes(), findings)
    if g is not None:
        for i, r in enumerate(g.rollouts):
            if r.folder is not None and _FOLDER.match(r.folder) and not (root / r.folder).is_dir():
                findings.add(GROUP_FILE, "the rollout's folder is missing", field=f"rollouts[{i}].folder",
                             expected=f"a folder {r.folder}/ beside group.json", found="none")
    findings.raise_if_any()
    assert g is not None  # parse_group returns None only with a problem recorded
    return g


def rollout_folder(index: int) -> str:
    """The folder of rollout `index` inside its group, as capture and the recorder name it."""
    return f"rollout-{index:02d}"


def format_version_for(rollouts: Sequence[GroupRollout]) -> int:
    """The oldest group.json version that can hold these rollouts: 2 when one has no folder, else 1."""
    return 2 if any(r.folder is None for r in rollouts) else 1


def encode_group(g: GroupFile) -> bytes:
    """group.json bytes as capture should write them (indented, no NaN: unscorable rewards are null).

    The version written is the oldest that can read the file: 2 only when a rollout has no folder.
    """
    needed = format_version_for(g.rollouts)
    if g.format_version < needed:
        g = msgspec.structs.replace(g, format_version=needed)
    return msgspec.json.format(msgspec.json.encode(g), indent=2)
