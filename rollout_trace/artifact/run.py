"""A recorded TRL training run (rollout_trace/artifact/run_format.py) for code that wants Python rows.

    run = open_run("runs/my-run")          # a folder, a .zip of one, a Hub dataset id, a bundled example
    run.rows        # list[RunRow], one per recorded rollout, in (segment, policy_version, group_id, rollout) order
    run.groups      # list[RunGroup], one per scored group, same order
    run.versions()  # the policy versions that have groups
    run.open(row.path)   # the rollout's Artifact, read from its row and validated, with the run's tokenizer
    run.table       # the snapshot every page reads (rollout_trace/artifact/run_table.py): the same rows as columns
    run.close()

A `Run` is a view of one snapshot (`RunTable`): its rows are made from the snapshot's columns when first asked
for, joined with what the trainer did with each training row (`QueuedRow`: the consumption table's fate), so
this and every page count the same rows and name the same problems. A rollout's `trained_step` is the first
global step any of its rows was trained at (None when none was), and `dropped` is None when one was, else why
not (its first row's fate, or "failed" / "no rows" when TRL built none). A page of a large run reads the
snapshot's columns, not these rows.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pyarrow.compute as pc

from .bounded import Bounded
from .group import grpo_advantages, reward_spread
from .model import Artifact
from .problems import ArtifactError, Problem
from .read import load_artifact
from .run_fates import RowFate
from .run_files import RunSegment
from .run_format import MANIFEST, RESCORED_DIR, RunManifest
from .run_schema import ARTIFACT_FILES, INDEX_COLUMNS, ConsumedRecord
from .run_store import RunStore
from .run_table import FATE_COLUMNS, QueuedRow, RunTable, RunTableError, open_table
from .schema import TOKENIZER_DIR, RunStatus
from .stores import store_for
from .unpack import remove_folder, temporary_folder

MAX_AHEAD = 64  # rollouts' files read ahead and held per run view (a group map's: k is 64 or fewer in practice)


class RunRow(msgspec.Struct, frozen=True, kw_only=True):
    """One recorded rollout, joined with what the trainer did with its rows."""

    segment: str
    policy_version: int
    group_id: int
    group: str  # its group's name, "groups/<seg>-v..-g.." (run_format.group_path)
    rollout: int  # its index in the group
    rollout_id: str | None  # TRL's uuid4 (OpenEnv's episode_id)
    path: str | None  # its name, "<group>/rollout-NN"; None when the session failed before producing an artifact
    status: RunStatus
    cause: str | None
    reward: float | None  # TRL's summed reward; None = unscorable
    env_reward: float | None
    advantage: float | None  # TRL's; None when TRL built no row
    rows: int  # TRL training rows
    tokens: int | None
    trained_tokens: int  # in TRL's mask, over every row it queued (what WOULD be trained)
    turns: int | None  # agent turns
    trained_turns: int | None
    seed_trained_turns: int | None
    tools: tuple[str, ...]
    tool_calls: int
    drift: str
    drifting_boundaries: int | None
    timed_out: bool
    task_id: str | None
    title: str
    dataset_index: int | None
    recorded_at: str
    ordinals: tuple[int, ...]  # its TRL rows' positions in the queue within the segment (the join key)
    fates: tuple[RowFate, ...]  # one per TRL row, in queue order
    trained_steps: tuple[int, ...]  # the global steps its rows were trained at, sorted, each once
    trained_step: int | None  # the first of them; None when no row was trained
    dropped: str | None  # None when trained; else "failed", "no rows", or its rows' fate
    trainer_tokens: int = 0  # in TRL's mask over the rows the trainer DID train at a step
    problem: str | None = None  # what the recorder could not record of it, and why
    queued: tuple[QueuedRow, ...] = ()  # its TRL rows with their fates, in queue order


class RunGroup(msgspec.Struct, frozen=True, kw_only=True):
    """One scored group: TRL's K rollouts of a prompt at one policy version."""

    segment: str
    policy_version: int
    group_id: int
    path: str
    task_id: str | None
    title: str
    dataset_index: int | None
    k: int
    rewards: tuple[float | None, ...]
    advantages: tuple[float, ...]  # TRL's, and the same formula for rollouts without rows
    statuses: tuple[RunStatus, ...]
    reward_mean: float | None
    reward_min: float | None
    reward_max: float | None
    trained_steps: tuple[int, ...]
    dropped: tuple[str | None, ...]  # per rollout


def rescore_folder(path: str, part: str) -> str:
    """Where a rescore part of the rollout named `path` lives in its run: rescored/<group>/rollout-NN/<part>."""
    return f"{RESCORED_DIR}/{path.split('/', 1)[-1]}/{part}"


def find_run(store: Any) -> str | None:
    """Where the run is in `store`: "" at its root, a folder name when a zip holds one run folder, else None."""
    top = store.list_dir("")
    if MANIFEST in top:
        return ""
    for name in store.top_folders() if hasattr(store, "top_folders") else []:
        if MANIFEST in store.list_dir(name):
            return name
    return None


def rows_of(t: RunTable, at: np.ndarray | None = None) -> list[RunRow]:
    """The snapshot's rows `at` (row numbers; all when None) as RunRows, joined with their rows' fates."""
    rows = np.arange(len(t), dtype=np.int64) if at is None else np.asarray(at, dtype=np.int64)
    if not len(rows):
        return []
    values = t.take(rows, [*INDEX_COLUMNS, *FATE_COLUMNS]).to_pylist()
    queued = t.queued(rows.tolist())
    out = []
    for at_row, v in zip(rows.tolist(), values, strict=True):
        q = tuple(queued.get(at_row, ()))
        steps = tuple(sorted({x.step for x in q if x.fate == "trained" and x.step is not None}))
        out.append(RunRow(
            segment=v["segment"], policy_version=v["policy_version"], group_id=v["group_id"], group=v["group"],
            rollout=v["rollout"], rollout_id=v["rollout_id"], path=v["path"], status=v["status"], cause=v["cause"],
            reward=v["reward"], env_reward=v["env_reward"], advantage=v["advantage"], rows=len(v["row_ordinal"]),
            tokens=v["tokens"], trained_tokens=v["trained_tokens"], turns=v["agent_turns"],
            trained_turns=v["trained_turns"], seed_trained_turns=v["seed_trained_turns"], tools=tuple(v["tools"] or ()),
            tool_calls=v["tool_calls"], drift=v["drift"], drifting_boundaries=v["drifting_boundaries"],
            timed_out=bool(v["timed_out"]), task_id=v["task_id"], title=v["title"], dataset_index=v["dataset_index"],
            recorded_at=v["recorded_at"], ordinals=tuple(v["row_ordinal"]), fates=tuple(x.fate for x in q),
            trained_steps=steps, trained_step=steps[0] if steps else None, dropped=v["dropped"],
            trainer_tokens=v["trainer_tokens"], problem=v["problem"], queued=q))
    out.sort(key=lambda r: (r.segment, r.policy_version, r.group_id, r.rollout))
    return out


def groups_of(rows: list[RunRow]) -> list[RunGroup]:
    by: dict[str, list[RunRow]] = defaultdict(list)
    for r in rows:
        by[r.group].append(r)
    out = []
    for path, members in by.items():
        members.sort(key=lambda r: r.rollout)
        rewards = tuple(r.reward for r in members)
        # TRL's advantage where it queued a row; the same formula only for a rollout without rows
        formula = grpo_advantages(list(rewards)) if any(r.advantage is None for r in members) else [0.0] * len(members)
        lo, hi, mean = reward_spread(rewards)
        first = members[0]
        out.append(RunGroup(
            segment=first.segment, policy_version=first.policy_version, group_id=first.group_id, path=path,
            task_id=first.task_id, title=first.title, dataset_index=first.dataset_index, k=len(members),
            rewards=rewards, advantages=tuple(r.advantage if r.advantage is not None else a
                                              for r, a in zip(members, formula, strict=True)),
            statuses=tuple(r.status for r in members), reward_mean=mean, reward_min=lo, reward_max=hi,
            trained_steps=tuple(sorted({s for r in members for s in r.trained_steps})),
            dropped=tuple(r.dropped for r in members)))
    out.sort(key=lambda g: (g.segment, g.policy_version, g.group_id))
    return out


# a run row's reward columns, and the field of the rollout's own summary.json the recorder wrote each from
_REWARDS = {"reward": "reward_after_penalties", "env_reward": "env_reward"}
# what opening a rollout reads of its row: its artifact's files, and its rewards to check them against
_RECORDED = [*ARTIFACT_FILES, *_REWARDS]


def _files_of(row: dict[str, Any]) -> dict[str, bytes]:
    """A rollouts row's artifact files by their names in the artifact's folder."""
    return {name: row[col] for col, name in ARTIFACT_FILES.items() if row[col] is not None}


@dataclass
class Run:
    """A recorded run as Python rows, a view of one snapshot (`table`)."""

    table: RunTable
    _tokenizer: Path | None = field(default=None, repr=False)
    at: np.ndarray | None = field(default=None, repr=False)  # the snapshot's rows this view holds (a part); None: all
    # rollouts' recorded columns read ahead (`read_ahead`), each taken by its first `files` or `open`
    _ahead: Bounded[str, dict[str, Any]] = field(default_factory=lambda: Bounded(MAX_AHEAD), repr=False)

    @property
    def source(self) -> str:
        return self.table.label

    @property
    def kind(self) -> str:
        return self.table.kind

    @property
    def store(self) -> Any:
        return self.table.store

    @property
    def manifest(self) -> RunManifest:
        assert self.table.run_files.manifest is not None  # open_table refuses a run without one
        return self.table.run_files.manifest

    @property
    def segments(self) -> list[RunSegment]:
        return self.table.run_files.segments

    @property
    def rescored(self) -> list:
        return self.table.run_files.rescored

    @property
    def problems(self) -> list[Problem]:
        return self.table.problems()

    @property
    def notes(self) -> list[str]:
        return self.table.notes

    @property
    def live(self) -> bool:
        """A segment has not ended (training is running, or was killed before it could say so)."""
        return self.table.live

    @cached_property
    def rows(self) -> list[RunRow]:
        return rows_of(self.table, self.at)

    def __len__(self) -> int:
        return len(self.table) if self.at is None else len(self.at)

    @cached_property
    def groups(self) -> list[RunGroup]:
        return groups_of(self.rows)

    @cached_property
    def consumed(self) -> list[ConsumedRecord]:
        """The consumption table's rows (what `viewer check` reads)."""
        return [msgspec.convert(x, ConsumedRecord) for x in self.table.consumed_all().to_pylist()]

    def versions(self) -> list[int]:
        if self.at is None:  # from the column, not from a Python row per rollout
            return sorted(x for x in pc.unique(self.table.column("policy_version")).to_pylist() if x is not None)
        return sorted({g.policy_version for g in self.groups})

    def group(self, path: str) -> RunGroup | None:
        return next((g for g in self.groups if g.path == path), None)

    def tokenizer_dir(self) -> Path | None:
        """The run's tokenizer folder (fetched once), or None when the run holds none."""
        if self.manifest.tokenizer is None:
            return None
        if self._tokenizer is None:
            self._tokenizer = self.store.folder(TOKENIZER_DIR)
        return self._tokenizer

    def row_at(self, path: str) -> int:
        """The snapshot's row of the rollout named `path` (the first whose name it is: `RunTable.named`); raises
        ArtifactError when the run has none."""
        rows = self.table.named("path", path).tolist()
        if not rows:
            raise ArtifactError([Problem(path or "(root)", "no recorded rollout at this path in the run")])
        return rows[0]

    @contextmanager
    def read_ahead(self, paths: Sequence[str]) -> Iterator[None]:
        """Within it, the artifact files of the rollouts named `paths` (the first MAX_AHEAD of them) read in one
        pass, each shard's row group once, and held for their `files`; what no `files` took is let go of at its
        end. A group map opens each of its rollouts, and one by one each read its row group again (0.3 s of a
        group of 64's 1 s open at a million rollouts). A name of no rollout, or a read that fails, is left for
        `files` (each rollout's own read names its problem)."""
        rows: dict[str, int] = {}
        try:
            for path in list(dict.fromkeys(paths))[:MAX_AHEAD]:
                try:
                    rows[path] = self.row_at(path)
                except ArtifactError:
                    continue
            got = self.table.rows_of(np.array(list(rows.values()), np.int64), _RECORDED).to_pylist() if rows else []
        except Exception:  # noqa: BLE001 - each rollout read on its own below says what is wrong
            rows, got = {}, []
        for path, x in zip(rows, got, strict=True):
            self._ahead.put(path, x)
        try:
            yield
        finally:
            for path in rows:
                self._ahead.pop(path)

    def files(self, path: str) -> dict[str, bytes]:
        """The rollout's artifact files (folder path -> bytes) as recorded (or as read ahead), and its rescore
        parts' files."""
        return self._recorded(path)[0]

    def _recorded(self, path: str) -> tuple[dict[str, bytes], dict[str, Any]]:
        """The rollout's files (`files`) and its recorded columns (`_RECORDED`), as read ahead or read now."""
        at = self.row_at(path)
        row = self._ahead.pop(path)
        if row is None:
            row = self.table.rollout_files(at, _RECORDED)
        return _files_of(row) | self._rescore_files(at, path), row

    def _rescore_files(self, at: int, path: str) -> dict[str, bytes]:
        """The rescore parts `viewer rescore` wrote for the rollout (rescored/<group>/rollout-NN/<part>/, as the
        rescore log names them)."""
        if not self.rescored:  # the usual run: nothing rescored, no rollout's place to look up
            return {}
        place = self.table.take(np.array([at]), ["segment", "group_id", "rollout"]).to_pylist()[0]
        parts = sorted({r.part for r in self.rescored if (r.segment, r.group_id, r.rollout) ==
                        (place["segment"], place["group_id"], place["rollout"])})
        out: dict[str, bytes] = {}
        for part in parts:
            base = rescore_folder(path, part)
            names = [f"{base}/{n}" for n in self.store.list_dir(base)]
            for name, data in (self.store.read(names, 2**31) if names else {}).items():
                if isinstance(data, bytes):
                    out[f"rescore/{part}/{name.rsplit('/', 1)[-1]}"] = data
        return out

    def open(self, path: str) -> Artifact:
        """One rollout's artifact, read from its row and validated fully, rendering with the run's tokenizer.
        Its files are laid out in a private temporary folder for the one reader, which is removed after."""
        files, row = self._recorded(path)
        folder = temporary_folder("rollout-run-")
        try:
            for name, data in files.items():
                dest = folder / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
            a = load_artifact(folder, source=self.store.source_of(path) or f"{self.source}:{path}")
        finally:
            remove_folder(folder)
        a.root = None
        tok = self.tokenizer_dir()
        if tok is not None and (tok / "tokenizer.json").is_file():
            a.tokenizer_dir = tok
        told = rewards_disagree(row, a)
        if told:
            a.notices.append(told)
        return a

    def close(self) -> None:
        if hasattr(self.store.store, "close"):
            self.store.store.close()


def _reward_text(v: float | None) -> str:
    return "none (unscorable)" if v is None else f"{v:+.3f}"


def rewards_disagree(row: dict, a: Artifact) -> str | None:
    """What to tell when a run row's rewards (`row`: its reward columns) are not the ones its own summary.json holds:
    the recorder writes both from TRL's one number, so they differ only in a run changed after it was recorded. The
    run page, the index and the group map count the row's; the token view's header shows the summary's."""
    differ = []
    for column, name in _REWARDS.items():
        ours, theirs = row.get(column), getattr(a.summary, name, None)
        if ours is None or theirs is None:
            same = ours is theirs
        else:
            same = math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)
        if not same:
            differ.append(f"{column} {_reward_text(ours)} in the run's table, {_reward_text(theirs)} in its "
                          f"summary.json ({name})")
    if not differ:
        return None
    return ("This rollout's rewards differ between the run and its own files: " + "; ".join(differ) +
            ". The run page, the index and the group map count the table's; this header shows the summary's.")


def follow(run: Run) -> Run | None:
    """`run` with what its recorder wrote since (a new snapshot); None when no file of it changed."""
    later = run.table.follow()
    return Run(later, run._tokenizer) if later is not None else None


def open_run(source: str | os.PathLike[str], token: str | None = None, allow_local: bool = True) -> Run:
    """Open a recorded run (folder, .zip, Hub dataset id, bundled example); raises ArtifactError when it is not one
    (a run of the folder format, format 1, is named as one with the command that converts it)."""
    source = os.fspath(source)
    return run_in(store_for(source, token=token, allow_local=allow_local), source)


def run_in(store: Any, source: str) -> Run:
    """The run in `store` (the one `source` names, opened by the caller: a Hub store keeps the commit it resolved
    and the folders it listed, so opening the run there asks for neither again); closes the store when it holds
    no run (see `open_run`)."""
    prefix = find_run(store)
    if prefix is None:
        if hasattr(store, "close"):
            store.close()
        raise ArtifactError([Problem(source, "not a recorded TRL run: no run.json here",
                                     expected="a run folder written by rollout_trace.record", found="no run.json")])
    rs = RunStore(store, prefix)
    if rs.list_dir("index"):
        if hasattr(store, "close"):
            store.close()
        raise ArtifactError([Problem(source, "a run recorded in the folder format (format 1, a folder per group): "
                                     "convert it once with `python -m viewer convert OLD NEW`",
                                     expected="format 2 (rollouts/*.parquet)", found="index/ and groups/")])
    try:
        t = open_table(rs, store.label, store.kind,
                       root=Path(store.root) / prefix if store.kind == "folder" else None)
    except RunTableError as e:
        if hasattr(store, "close"):
            store.close()
        raise ArtifactError([Problem(source, str(e))]) from None
    return Run(t)
