"""A collection: many artifacts and GRPO groups in one folder, .zip or Hub dataset, and its index.

The index is one `Record` per artifact or group, built from the small files only (summary.json,
task.json, group.json) so that listing a thousand rollouts costs what reading a few kB each costs,
never what their token arrays cost. A record is therefore honest about what small files can tell:
drift and token counts are known only when summary.json carries them (`drifting_boundaries`,
`n_tokens`), otherwise they are "unknown"/None here (the app's index counts them from turns.json once,
lazily: viewer/index/facts.py); `valid` means "no problem in the files the index reads", and `viewer
check` reads everything.

A folder is a row when it holds turns.json or summary.json (an artifact) or group.json (a group,
whose rollout folders are also rows, marked with `group`). Rows are found at any depth. An artifact
that fails to read appears with `valid=False` and its first problem; it never hides the others.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections import defaultdict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from . import budget
from .group import GROUP_FILE, GroupFile, parse_group, reward_spread
from .model import Artifact
from .problems import ArtifactError, Findings, Problem, from_msgspec
from .read import load_artifact
from .schema import Summary, Task
from .stores import MAX_ENTRIES, MAX_SMALL_BYTES, Listing, Store, store_for

MAX_RECORDS = 20_000  # rows in one index; past this the index says it was cut
TITLE_CHARS = 80
Drift = Literal["none", "drift", "unknown"]
_SUMMARY = msgspec.json.Decoder(Summary)
_TASK = msgspec.json.Decoder(Task)


class Record(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the index: an artifact (a rollout) or a GRPO group. None = not known from small files."""

    kind: Literal["artifact", "group", "run"]  # "run": a recorded TRL run inside the collection, one row
    path: str  # where it lives, relative to the collection ("" = the collection itself)
    valid: bool
    problem: str | None = None  # the first problem found, when not valid
    model: str | None = None
    task_id: str | None = None
    title: str = ""  # first line of the task statement, trimmed
    reward: float | None = None  # reward_after_penalties; a group's is the mean over scorable rollouts
    env_reward: float | None = None
    agent_turns: int | None = None
    trained_turns: int | None = None  # turns TRL trains (summary.json's trl_training); None when it does not say
    trained_by: str | None = None  # the TRL version trained_turns describes
    seed_trained_turns: int | None = None  # summary.json's trained_turns: the original capture script's rule
    tokens: int | None = None
    drift: Drift = "unknown"
    drifting_boundaries: int | None = None
    timed_out: bool | None = None
    tools: tuple[str, ...] = ()  # tool names used, sorted
    tool_calls: int | None = None
    # ISO date the capture finished, as summary.captured_at (or a group rollout's group.json created_at) records
    # it; None when nothing records it: a file's date is not a capture date (a copy or a checkout changes it)
    captured: str | None = None
    turns_bytes: int | None = None  # size of turns.json as listed
    group: str | None = None  # a rollout of this group (its path)
    rollout: int | None = None  # its index in the group
    advantage: float | None = None  # its advantage in the group (group.json)
    k: int | None = None  # groups: how many rollouts
    reward_min: float | None = None
    reward_max: float | None = None
    rewards: tuple[float | None, ...] = ()  # groups: per rollout, None = unscorable
    advantages: tuple[float, ...] = ()
    statuses: tuple[str, ...] = ()
    # A recorded TRL run's rows only (rollout_trace/artifact/run.py); None elsewhere.
    segment: str | None = None
    policy_version: int | None = None  # the version TRL stamped on the group
    group_id: int | None = None  # TRL's group id (groups count from 0 in every segment)
    rollout_id: str | None = None
    status: str | None = None  # ok | timed-out | unscorable | failed
    trained_tokens: int | None = None  # tokens in TRL's mask over the rows it queued (what WOULD be trained)
    trainer_tokens: int | None = None  # of them, in the rows the trainer DID train at a step
    trained_step: int | None = None  # the first global step a row was trained at; None: never trained
    dropped: str | None = None  # None when trained; else why not (rollout_trace/artifact/run.py RunRow.dropped)


COLUMNS = tuple(Record.__struct_fields__)


@dataclass
class Collection:
    """An opened collection: its index, every problem found, notes (cuts, offline), and a way to open a row."""

    source: str
    kind: Literal["folder", "zip", "hub"]
    records: list[Record]
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    store: Store | None = field(default=None, repr=False)
    run: Any = field(default=None, repr=False)  # artifact.run.Run when the collection is a recorded TRL run
    # a part of a larger index (one group of a large run, read from its columns: viewer/run_part.py):
    # how many rows the whole index has; None when `records` are the whole index
    part_of: int | None = None

    def record(self, path: str) -> Record | None:
        return next((r for r in self.records if r.path == path), None)

    def _opened(self) -> Store:
        if self.store is None:
            raise ValueError("this collection has no store: build it with open_collection")
        return self.store

    def source_of(self, path: str) -> str | None:
        """A source string `open_artifact` accepts for this row (folder path or Hub id); None inside a zip, and
        for a run's rollout (a row of its table, opened through the run: `open`)."""
        if self.run is not None and path != "":
            return None
        return self._opened().source_of(path)

    def folder(self, path: str) -> Path:
        """A local folder with every file of this row (downloads or unpacks just that row)."""
        return self._opened().folder(path)

    def open(self, path: str) -> Artifact:
        """Read and validate one artifact of the collection fully; raises ArtifactError."""
        rec = self.record(path)
        if rec is None or rec.kind != "artifact":
            raise ArtifactError([Problem(path or "(root)", "no artifact at this path in the collection")])
        if self.run is not None:  # a run's rollouts render with the run's tokenizer
            return self.run.open(self._in_run(path))
        where = f"{self.source}:{path}" if path else self.source
        return load_artifact(self.folder(path), source=self.source_of(path) or where)

    def read_ahead(self, paths: list[str]) -> AbstractContextManager[None]:
        """Within it, a run's rollouts `paths` about to be opened one by one (a group map's) have their files read
        at once (`Run.read_ahead`); nothing for another collection, whose artifacts are folders."""
        if self.run is None or not paths:
            return nullcontext()
        return self.run.read_ahead([self._in_run(p) for p in paths])

    def _in_run(self, path: str) -> str:
        """A run's row path as the run names it (a Hub run's rows carry the folder it lies in)."""
        assert self.run is not None
        prefix = self.run.store.prefix
        return path[len(prefix) + 1:] if prefix and path.startswith(prefix + "/") else path

    def release(self, folder: Path) -> None:
        """Done with a folder `folder()` gave: a zip's unpacked copy is removed; a real folder is left alone."""
        if self.store is not None and self.store.kind == "zip":
            self.store.release(folder)

    def close(self) -> None:
        if self.store is not None and self.store.kind == "zip":
            self.store.close()


TitleOf = Callable[[str], str]


def first_line(text: str) -> str:
    """A row's title: the first non-empty line, trimmed. Callers that know the recipe pass its `title_of`
    (rollout_trace/recipe/tasks.py skips the directions every task shares); this layer does not know them."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def row_folders(listing: Listing) -> tuple[list[str], list[str]]:
    """(artifact folders, group folders) of a listing, as relative posix paths."""
    names: dict[str, set[str]] = defaultdict(set)
    for path in listing.files:
        d, _, name = path.rpartition("/")
        names[d].add(name)
    groups = sorted(d for d, n in names.items() if GROUP_FILE in n)
    artifacts = sorted(d for d, n in names.items() if GROUP_FILE not in n and ("turns.json" in n or "summary.json" in n))
    return artifacts, groups


def _max_known(values: list[int | None]) -> int | None:
    """The largest, when every value is known (a group's trained turns are only as known as its rollouts')."""
    known = [v for v in values if v is not None]
    return max(known) if values and len(known) == len(values) else None


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


class _Builder:
    """Builds records from a listing and the bytes of its small files; collects every problem."""

    def __init__(self, listing: Listing, data: dict[str, bytes | str], title_of: TitleOf):
        self.listing, self.data, self.title_of = listing, data, title_of
        self.problems: list[Problem] = []

    def _small(self, path: str, decoder, findings: Findings, file: str, required: bool):
        if path not in self.listing.files:
            if required and self.listing.complete:
                findings.add(file, "required file is missing")
            return None
        got = self.data.get(path)
        if got is None:
            findings.add(file, "too large to index", expected=f"at most {MAX_SMALL_BYTES:,} bytes",
                         found=f"{self.listing.files[path]:,} bytes")
            return None
        if isinstance(got, str):
            findings.add(file, got)
            return None
        if not got.strip():
            findings.add(file, "the file is empty")
            return None
        try:
            return decoder.decode(got)
        except (msgspec.ValidationError, msgspec.DecodeError) as e:
            findings.problems.append(from_msgspec(file, e, got))
            return None

    def _finish(self, path: str, findings: Findings) -> tuple[bool, str | None]:
        located = [Problem(_join(path, p.file), p.message, p.turn, p.field, p.expected, p.found)
                   for p in findings.problems]
        self.problems.extend(located)
        return (not located, str(located[0]) if located else None)

    def artifact(self, path: str) -> Record:
        findings = Findings()
        if self.listing.complete and _join(path, "turns.json") not in self.listing.files:
            findings.add("turns.json", "required file is missing")
        s: Summary | None = self._small(_join(path, "summary.json"), _SUMMARY, findings, "summary.json", True)
        t: Task | None = self._small(_join(path, "task.json"), _TASK, findings, "task.json", False)
        if s is not None and t is not None and t.task_id != s.task_id:
            findings.add("task.json", "names another task than summary.json", field="task_id",
                         expected=s.task_id, found=t.task_id)
        if s is not None and s.trained_turns > s.agent_turns:
            findings.add("summary.json", "more trained turns than agent turns", field="trained_turns",
                         expected=f"at most {s.agent_turns}", found=str(s.trained_turns))
        valid, problem = self._finish(path, findings)
        turns_bytes = self.listing.files.get(_join(path, "turns.json"))
        base: dict[str, Any] = dict(kind="artifact", path=path, valid=valid, problem=problem,
                    turns_bytes=turns_bytes if turns_bytes is not None and turns_bytes >= 0 else None,
                    title=self.title_of(t.instruction) if t is not None else "", task_id=t.task_id if t else None)
        if s is None:
            return Record(**base)
        if s.drifting_boundaries is not None:
            drift: Drift = "drift" if s.drifting_boundaries else "none"
        else:
            drift = "none" if s.agent_turns <= 1 else "unknown"  # one turn has no boundary to drift at
        return Record(**{**base, "task_id": s.task_id, "captured": s.captured_at},
                      model=s.model, reward=s.reward_after_penalties, env_reward=s.env_reward,
                      agent_turns=s.agent_turns, seed_trained_turns=s.trained_turns, tokens=s.n_tokens,
                      trained_turns=s.trl_training.trained_turns if s.trl_training else None,
                      trained_by=f"TRL {s.trl_training.trl}" if s.trl_training else None,
                      drift=drift, drifting_boundaries=s.drifting_boundaries, timed_out=s.timed_out,
                      tools=tuple(sorted(n for n, c in s.tool_calls_by_name.items() if c)),
                      tool_calls=sum(s.tool_calls_by_name.values()))

    def group(self, path: str, members: dict[str, Record]) -> tuple[Record, list[Record]]:
        """The group's row, and its rollouts' rows marked with the group, its index and advantage."""
        findings = Findings()
        gpath = _join(path, GROUP_FILE)
        g: GroupFile | None = None
        got = self.data.get(gpath)
        if isinstance(got, bytes):
            g = parse_group(got, findings)
        else:
            findings.add(GROUP_FILE, got or f"larger than {MAX_SMALL_BYTES:,} bytes: not indexed")
        t: Task | None = self._small(_join(path, "task.json"), _TASK, findings, "task.json", False)
        rows: list[Record] = []
        if g is not None:
            for i, r in enumerate(g.rollouts):
                if r.folder is None:  # failed before it produced an artifact: group.json is all there is
                    continue
                m = members.get(_join(path, r.folder))
                if m is None:
                    if self.listing.complete:
                        findings.add(GROUP_FILE, "the rollout's folder is missing", field=f"rollouts[{i}].folder",
                                     expected=f"a folder {r.folder}/ beside group.json", found="none")
                    continue
                if m.task_id is not None and m.task_id != g.task_id:
                    findings.add(_join(r.folder, "summary.json"), "a rollout of another task", field="task_id",
                                 expected=g.task_id, found=m.task_id)
                if (r.reward is None) != (m.reward is None) or (
                        r.reward is not None and m.reward is not None and abs(r.reward - m.reward) > 1e-9):
                    findings.add(GROUP_FILE, "the group's reward disagrees with the rollout's summary.json",
                                 field=f"rollouts[{i}].reward", expected=str(m.reward), found=str(r.reward))
                if m.timed_out is not None and (r.status == "timed-out") != m.timed_out:
                    findings.add(GROUP_FILE, "the rollout's status disagrees with its summary.json timed_out",
                                 field=f"rollouts[{i}].status",
                                 expected="timed-out" if m.timed_out else "ok or failed", found=r.status)
                rows.append(msgspec.structs.replace(m, group=path, rollout=i, advantage=r.advantage,
                                                    captured=m.captured or g.created_at))
        valid, problem = self._finish(path, findings)
        bad = next((m for m in rows if not m.valid), None)
        if valid and bad is not None:  # the rollout's own problem is already listed under its path
            valid, problem = False, f"invalid rollout {bad.path}: {bad.problem}"
        if g is None:
            return Record(kind="group", path=path, valid=False, problem=problem,
                          title=self.title_of(t.instruction) if t else ""), rows
        rewards = tuple(r.reward for r in g.rollouts)
        lo, hi, mean = reward_spread(rewards)
        known = rows
        title = self.title_of(t.instruction) if t else next((m.title for m in known if m.title), "")
        tokens = [m.tokens for m in known]
        return Record(
            kind="group", path=path, valid=valid, problem=problem, model=g.model or next((m.model for m in known), None),
            task_id=g.task_id, title=title, reward=mean, k=g.k, reward_min=lo, reward_max=hi, rewards=rewards,
            advantages=tuple(r.advantage for r in g.rollouts), statuses=tuple(r.status for r in g.rollouts),
            timed_out=any(r.status == "timed-out" for r in g.rollouts) or any(m.timed_out for m in known),
            tools=tuple(sorted({n for m in known for n in m.tools})),
            trained_turns=_max_known([m.trained_turns for m in known]),
            trained_by=next((m.trained_by for m in known if m.trained_by), None),
            seed_trained_turns=max((m.seed_trained_turns or 0 for m in known), default=None),
            tokens=sum(t for t in tokens if t is not None) if known and None not in tokens else None,
            drift="drift" if any(m.drift == "drift" for m in known) else
                  "none" if known and all(m.drift == "none" for m in known) else "unknown",
            captured=g.created_at,
        ), rows


RUN_MANIFEST = "run.json"  # rollout_trace/artifact/run_format.py MANIFEST (run.py reads runs through this module)


def run_folders(listing: Listing) -> list[str]:
    """Folders of `listing` holding a recorded TRL run: a run.json beside the run's segments/ folder."""
    dirs = {path.rpartition("/")[0] for path in listing.files if path.rpartition("/")[2] == RUN_MANIFEST}
    return sorted(d for d in dirs if d and any(p.startswith(f"{d}/segments/") for p in listing.files))


def _segment_ends(path: str, listing: Listing) -> list[str]:
    """The run's segment end files (segments/<seg>.end.json): each says how many groups its segment wrote."""
    return sorted(p for p in listing.files if p.startswith(f"{path}/segments/") and p.endswith(".end.json")
                  and "/" not in p[len(f"{path}/segments/"):] and listing.files[p] <= MAX_SMALL_BYTES)


def _groups_written(path: str, listing: Listing, data: dict[str, bytes | str]) -> int:
    """The groups the run's ended segments wrote, as their end files say (its tables are not read for a row)."""
    total = 0
    for end in _segment_ends(path, listing):
        got = data.get(end)
        try:
            n = msgspec.json.decode(got).get("groups_written") if isinstance(got, bytes) else None
        except (msgspec.DecodeError, AttributeError):
            n = None
        total += n if isinstance(n, int) and n >= 0 else 0
    return total


def _run_record(path: str, data: bytes | str | None, groups: int) -> Record:
    """A recorded run as one row: it opens the run page (its groups and rollouts are the run's rows there)."""
    about: dict[str, Any] = {}
    if isinstance(data, bytes):
        try:
            got = msgspec.json.decode(data)
            about = got if isinstance(got, dict) else {}
        except msgspec.DecodeError:
            about = {}
    model = about.get("model") if isinstance(about.get("model"), str) else None
    started = about.get("started_at") if isinstance(about.get("started_at"), str) else None
    trl = about.get("versions", {}).get("trl") if isinstance(about.get("versions"), dict) else None
    title = f"recorded TRL {trl or '?'} run · {groups:,} groups" + (f" · started {started[:16]}" if started else "")
    return Record(kind="run", path=path, valid=True, model=model, title=title[:TITLE_CHARS], k=groups,
                  captured=started)


def index(listing: Listing, read, title_of: TitleOf = first_line) -> tuple[list[Record], list[Problem], list[str]]:
    """Records for every artifact and group of `listing`; `read(paths)` gives the small files' bytes. A recorded
    run inside it is one row of kind "run", its groups and rollouts not listed beside it."""
    notes = list(listing.notes)
    whole = listing
    runs = run_folders(listing)
    if runs:
        inside = tuple(f"{d}/" for d in runs)
        listing = dataclasses.replace(listing, files={p: n for p, n in listing.files.items() if not p.startswith(inside)})
    artifacts, groups = row_folders(listing)
    if len(artifacts) + len(groups) > MAX_RECORDS:
        notes.append(f"{len(artifacts) + len(groups):,} rows found; the index shows the first {MAX_RECORDS:,} by path")
        keep = set(sorted(artifacts + groups)[:MAX_RECORDS])
        artifacts, groups = [a for a in artifacts if a in keep], [g for g in groups if g in keep]
    wanted = [_join(d, n) for d in artifacts for n in ("summary.json", "task.json")]
    wanted += [_join(d, n) for d in groups for n in (GROUP_FILE, "task.json")]
    wanted = [p for p in wanted if p in listing.files and listing.files[p] <= MAX_SMALL_BYTES]
    wanted += [f"{d}/{RUN_MANIFEST}" for d in runs] + [e for d in runs for e in _segment_ends(d, whole)]
    data = read(wanted)
    builder = _Builder(listing, data, title_of)
    by_path = {d: builder.artifact(d) for d in artifacts}
    records: list[Record] = []
    in_group: set[str] = set()
    by_parent: dict[str, dict[str, Record]] = defaultdict(dict)
    for d, r in by_path.items():
        by_parent[posixpath.dirname(d)][d] = r
    for gpath in groups:
        members = by_parent.get(gpath, {})
        row, rows = builder.group(gpath, members)
        records.append(row)
        records.extend(rows)
        in_group.update(members)
    records.extend(r for d, r in by_path.items() if d not in in_group)
    records.extend(_run_record(d, data.get(f"{d}/{RUN_MANIFEST}"), _groups_written(d, whole, data))
                   for d in runs)
    records.sort(key=lambda r: r.path)
    return records, builder.problems, notes


def failed_records(run: Any) -> list[Record]:
    """A recorded run's rollouts that failed before producing a folder: rows with no path (`ls` lists them; the
    index cannot open them, and their group's row says so)."""
    prefix = run.store.prefix if run.store is not None else ""
    return [Record(kind="artifact", path="", valid=True, model=run.manifest.model, task_id=m.task_id, title=m.title,
                   reward=m.reward, env_reward=m.env_reward, captured=m.recorded_at,
                   group=f"{prefix}/{m.group}" if prefix else m.group, rollout=m.rollout, advantage=m.advantage,
                   segment=m.segment, policy_version=m.policy_version, group_id=m.group_id, rollout_id=m.rollout_id,
                   status=m.status, trained_tokens=m.trained_tokens, trainer_tokens=m.trainer_tokens,
                   trained_step=m.trained_step, dropped=m.dropped)
            for m in run.rows if m.path is None]


def run_records(run: Any) -> list[Record]:
    """A recorded run's rows as collection rows (groups, then their rollouts), from its index alone."""
    trl = f"TRL {run.manifest.versions.get('trl', '?')}"
    out: list[Record] = []
    by_group: dict[str, list] = defaultdict(list)
    for r in run.rows:
        by_group[r.group].append(r)
    for g in run.groups:
        members = by_group[g.path]
        known = [m for m in members if m.path is not None]
        trained = [s for m in members if m.trained_step is not None for s in (m.trained_step,)]
        out.append(Record(
            kind="group", path=g.path, valid=True, model=run.manifest.model, task_id=g.task_id, title=g.title,
            reward=g.reward_mean, k=g.k, reward_min=g.reward_min, reward_max=g.reward_max, rewards=g.rewards,
            advantages=g.advantages, statuses=g.statuses,  # TRL's: ok, timed-out, unscorable, failed
            timed_out=any(m.timed_out for m in members), tools=tuple(sorted({t for m in members for t in m.tools})),
            trained_turns=_max_known([m.trained_turns for m in known]), trained_by=trl,
            seed_trained_turns=max((m.seed_trained_turns or 0 for m in known), default=None),
            tokens=sum(m.tokens or 0 for m in known) if known else None,
            drift="drift" if any(m.drift == "drift" for m in known) else "none" if known else "unknown",
            captured=members[0].recorded_at, segment=g.segment, policy_version=g.policy_version, group_id=g.group_id,
            trained_tokens=sum(m.trained_tokens for m in members), trainer_tokens=sum(m.trainer_tokens for m in members),
            trained_step=min(trained) if trained else None,
            dropped=None if trained else next((d for d in g.dropped if d), None)))
        for m in members:
            if m.path is None:  # failed before it produced an artifact: the group's row says so
                continue
            out.append(Record(
                kind="artifact", path=m.path, valid=True, model=run.manifest.model, task_id=m.task_id, title=m.title,
                reward=m.reward, env_reward=m.env_reward, agent_turns=m.turns, trained_turns=m.trained_turns,
                trained_by=trl, seed_trained_turns=m.seed_trained_turns, tokens=m.tokens, drift=m.drift,
                drifting_boundaries=m.drifting_boundaries, timed_out=m.timed_out, tools=m.tools,
                tool_calls=m.tool_calls, captured=m.recorded_at, group=m.group, rollout=m.rollout,
                advantage=m.advantage, segment=m.segment, policy_version=m.policy_version, group_id=m.group_id,
                rollout_id=m.rollout_id, status=m.status, trained_tokens=m.trained_tokens, trainer_tokens=m.trainer_tokens,
                trained_step=m.trained_step, dropped=m.dropped))
    return out


def run_collection(run: Any) -> Collection:
    """A recorded run (artifact.run.Run, read from its store) as a collection: its rows from the index alone."""
    store, prefix = run.store.store, run.store.prefix
    notes = list(run.notes)
    if run.at is None and len(run) > MAX_RECORDS:  # never a Python row per rollout of a large run
        whole = run.table.index_rows()
        notes.append(f"{len(run):,} rollouts: the run's page and index read them from its columns, a group at a time")
        records: list[Record] = []
    else:
        records = run_records(run)
        whole = len(records)
    if prefix:
        records = [msgspec.structs.replace(r, path=f"{prefix}/{r.path}", group=f"{prefix}/{r.group}" if r.group
                                           else None) for r in records]
    return Collection(source=store.label, kind=store.kind, records=records, problems=run.problems,
                      notes=notes, store=store, run=run, part_of=whole if whole > len(records) else None)


def open_collection(source: str, token: str | None = None, allow_local: bool = True,
                    title_of: TitleOf = first_line) -> Collection:
    """List a collection and index it from its small files; raises ArtifactError when it cannot be listed.
    `title_of` makes a row's title from its task's instruction (the recipe's skips its directions)."""
    from .run import find_run, run_in  # run.py reads records through this module's stores

    store = store_for(source, token=token, allow_local=allow_local)
    if find_run(store) is not None:
        return run_collection(run_in(store, source))
    listing = store.list(budget.max_files(MAX_ENTRIES))
    budget.files(store.label, len(listing.files), cut=True)  # a public request's bound (budget.py), named
    records, problems, notes = index(listing, store.read, title_of)
    if not records:
        notes.append("no artifact or group here: no folder holds a turns.json, summary.json or group.json")
    return Collection(source=store.label, kind=store.kind, records=records, problems=problems, notes=notes, store=store)
