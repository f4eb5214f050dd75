"""Whether the trainer took a recorded run's rollout, turn by turn, told apart from what TRL's mask would train, on
every page off the run page: the fate words (viewer/fate.py: a fate belongs to a training row, a turn to the row
that trains it), the group map's fate column, status and heading, the token view's outline (its record, each
turn's fate, headline, header and verifier panel), the back bar's breadcrumb, the training-rows scope, an export,
the run's index table, MCP and `viewer ls`. The rollouts are found by asking the bundled run's reader (a
re-recorded run has other names and counts), never by name."""

from __future__ import annotations

import argparse
import io
import json
import re

import msgspec
import pytest

from conftest import ROOT
from rollout_trace.artifact.run import RunRow, open_run
from rollout_trace.artifact.run_table import QueuedRow
from rollout_trace.artifact.schema import Summary
from rollout_trace.recipe.tasks import DIRECTIONS, title_of
from support.run_picks import RUN, pick_each
from viewer import run_stats
from viewer.cli import collection
from viewer.contract import Initial, Outline
from viewer.export import write_export
from viewer.fate import rollout_fate, turn_fate
from viewer.ui.service import Service
from viewer.ui.view_tab import ViewTab


@pytest.fixture(scope="module")
def run():
    r = open_run(RUN)
    yield r
    r.close()


def run_summary(run, pick: RunRow) -> bytes:
    return run.files(pick.path)["summary.json"]


@pytest.fixture(scope="module")
def picks(run) -> dict[str, RunRow]:
    return pick_each(run)


@pytest.fixture(scope="module")
def tab() -> ViewTab:
    return ViewTab(Service(RUN, public=False))


def _q(ordinal: int, turns, fate: str = "trained", step: int | None = None) -> QueuedRow:
    return QueuedRow(ordinal=ordinal, turns=turns, tokens=100, trained_tokens=10, fate=fate,  # type: ignore[arg-type]
                     step=step if fate == "trained" else None)


def test_a_turn_has_its_rows_fate_never_the_rollouts():
    split = (_q(15, (0,), "trained", 5), _q(16, (1, 2), "read-ahead"))
    t0, t1, t2 = (turn_fate(t, True, split, None) for t in range(3))
    assert t0.trained and t0.label == "trained at step 5" and t0.steps == [5] and "queue position 15" in t0.why
    assert not t1.trained and t2.label == t1.label == "never trained (read-ahead)" and "queue position 16" in t2.why
    assert turn_fate(1, False, split, None).label == "never trained (not in mask)"  # no row puts it in the loss
    whole = rollout_fate(split, None)
    assert whole.label == "turn 0 trained at step 5 · turns 1–2 never trained (read-ahead)"
    assert not whole.trained and whole.partly and whole.steps == [5] and whole.cause == "read-ahead"
    assert "met different fates" in whole.why and "never reached a step" in whole.why
    # rows that do not name their turns: a turn takes the rows' fate only when they all met the same one
    unnamed = (_q(15, None, "trained", 5), _q(16, None, "read-ahead"))
    assert turn_fate(2, True, unnamed, None).cause == "row not known"
    assert rollout_fate(unnamed, None).label == "row 0 trained at step 5 · row 1 never trained (read-ahead)"
    same = (_q(3, None, "trained", 2), _q(4, None, "trained", 2))
    assert turn_fate(1, True, same, None).label == "trained at step 2" and rollout_fate(same, None).trained
    steps = rollout_fate((_q(1, (0,), "trained", 2), _q(2, (1,), "trained", 3)), None)
    assert steps.trained and not steps.partly and steps.label == "turn 0 trained at step 2 · turn 1 trained at step 3"
    for cause in ("read-ahead", "in-queue", "stale", "oversize", "resume-skip", "in-batcher"):
        f = rollout_fate((_q(7, (0,), cause),), None)
        assert not f.trained and not f.partly and f.label == f"never trained ({cause})" and f.cause == cause
        assert f.why.startswith("the trainer never trained this rollout: its 1 row ") and len(f.why) > 60
    for cause in ("failed", "no rows"):  # no row at all: every turn says why the rollout has none
        assert rollout_fate((), cause).label == turn_fate(0, True, (), cause).label == f"never trained ({cause})"


def test_group_map_has_a_fate_column_trl_status_and_the_runs_place(tab, run, picks):
    """The map's records: the run's place over it, each rollout's fate beside TRL's status and advantage, each
    turn's fate (its words on the page: tests/test_fate_browser.py)."""
    for kind, pick in picks.items():
        _, _, index = tab.service.rows.open_row(RUN, pick.group, {}, Initial())
        m = json.loads(index)["group"]
        place = m["place"]
        assert place is not None, kind
        assert (place["version"], place["group_id"], place["segment"]) == (pick.policy_version, pick.group_id, pick.segment)
        members = [r for r in run.rows if r.group == pick.group]
        assert place["steps"] == sorted({s for r in members for s in r.trained_steps})
        row = next(r for r in m["rows"] if r["rollout"] == pick.rollout)
        fate = row["fate"]
        if kind == "trained":
            assert fate["trained"] and fate["steps"] == list(pick.trained_steps), (kind, fate)
        elif kind == "partly":
            assert fate["partly"] and fate["label"] == rollout_fate(pick.queued, pick.dropped).label, (kind, fate)
        else:
            assert not fate["trained"] and fate["cause"] == pick.dropped, (kind, fate)
        assert row["status"] == pick.status, kind  # unscorable and failed say so, never "ok"
        assert row["advantage"] == (None if pick.advantage is None else pytest.approx(pick.advantage))  # none: no bar
        hatched = [c["trained"] and c["fate"] is not None and not c["fate"]["trained"] for c in row["cells"]]
        if kind in ("read-ahead", "in-queue", "unscorable"):  # its mask cells are hatched: what WOULD be trained
            assert not fate["trained"] and all(h for h, c in zip(hatched, row["cells"], strict=True) if c["trained"])
        if kind == "partly":  # only the turns whose row was never trained are hatched
            never = [turn_fate(t, True, pick.queued, pick.dropped).trained is False for t in range(len(row["cells"]))]
            assert hatched == never and any(never) and not all(never)


def _opened(tab: ViewTab, pick: RunRow, mode: str = "mask") -> tuple[Outline, dict]:
    value, _, index = tab.service.rows.open_row(RUN, pick.group, {}, Initial(mode=mode), pick.rollout)  # type: ignore[arg-type]
    opened = json.loads(value)
    assert "outline" in opened, opened
    return msgspec.convert(opened["outline"], Outline), json.loads(index)


@pytest.mark.parametrize("kind", ["trained", "partly", "read-ahead", "in-queue", "unscorable"])
def test_the_token_view_says_trained_at_step_or_never_and_where_it_sits(tab, run, picks, kind):
    pick = picks[kind]
    o, page = _opened(tab, pick)
    assert o.run is not None and o.run.version == pick.policy_version and o.run.group_id == pick.group_id
    assert o.run.rollout == pick.rollout and o.run.segment == pick.segment and o.run.status == pick.status
    assert o.run.fate.trained == (kind == "trained") and o.run.fate.partly == (kind == "partly")
    assert o.run.fate.label == rollout_fate(pick.queued, pick.dropped).label
    assert o.run.fate.label == (f"trained at step {pick.trained_step}" if kind == "trained" else
                                f"never trained ({pick.dropped})" if kind != "partly" else o.run.fate.label)
    # each turn its row's fate, asked of the one function, beside what TRL's mask would train
    assert o.run.turns == [turn_fate(t.index, t.trained, pick.queued, pick.dropped) for t in o.turns]
    assert len(o.run.turns) == len(o.turns) and o.run.rows == list(pick.queued)
    assert o.advantage == pick.advantage == o.run.advantage  # TRL's own
    # the headline names both facts: the mask's turns and the trainer's fate (the page draws o.run.fate beside
    # them), and the header where the rollout sits (o.run's crumbs)
    assert o.summary.recorded and "in TRL's mask" in o.summary.trained and "trained by TRL" not in o.summary.trained
    assert o.run.crumbs[1:] == [f"v{pick.policy_version}", f"group {pick.group_id}", f"rollout {pick.rollout}"]
    header = msgspec.json.encode(o.header).decode()
    assert o.header.counts.recorded and o.header.disagree is None  # counts what its mask would train; no capture script
    assert all(t.seed_trained == t.trained for t in o.turns) and "capture script" not in header and all(
        t.trained_note is None for t in o.turns)  # nor in the turn's pill tooltip (navigator.js) or its note
    # what the verifier reported, not "files are missing"
    shown = o.tests.verifier
    assert shown is not None and "is not in this artifact" not in header
    # and what it reported beside its reward (OpenEnv's VerifyResult, as the bundled run's summary.json keeps it)
    verify = msgspec.json.decode(run_summary(run, pick), type=Summary).run.verify
    assert verify is not None and verify.metrics and shown.done is not None and not shown.none_why
    said = {m.name: m.value for m in shown.metrics}
    for name, value in verify.metrics.items():
        assert said[name] == (f"{value:,}" if isinstance(value, int) else value)  # the replayed sessions': counts and text
    if kind == "unscorable":
        assert o.summary.no_reward == "unscorable: no reward" and shown.reward is None  # "none (unscorable)"
    # the back bar: the run's crumbs, not a folder path
    back = page["back"]
    assert back["kind"] == "run" and " › ".join(back["crumbs"]) == \
        f"run › v{pick.policy_version} › group {pick.group_id} › rollout {pick.rollout}"
    assert "groups/" not in json.dumps(back)


def _consumption_log(segment: str) -> dict[int, tuple[str, int | None]]:
    """The bundled run's consumption table for `segment` read straight from its shards with pyarrow (the later row
    of an ordinal logged twice stands, as for the reader): ordinal -> (fate, step)."""
    import pyarrow.parquet as pq

    from rollout_trace.artifact.run_shards import read_tail_file

    logged = {}
    for shard in sorted((ROOT / "examples" / RUN / "consumed").glob(f"{segment}-*.*")):
        if shard.suffix == ".arrows" and shard.with_suffix(".parquet").exists():
            continue  # sealed: the tail was the seal's input
        table = pq.read_table(shard) if shard.suffix == ".parquet" else read_tail_file(shard)[0]
        for c in table.select(["ordinal", "fate", "step"]).to_pylist():
            logged[c["ordinal"]] = (c["fate"], c["step"])
    assert logged, f"no consumption shard for segment {segment}"
    return logged


def _row_turns_and_fates(run, pick: RunRow) -> dict[int, tuple[str, int | None]]:
    """Each turn of `pick` with its row's fate, found apart from the viewer: the turns each recorded row trains from
    its arrays (trl/rows.safetensors, TRL's own rows, against turns.json, as the run holds the rollout's files) and
    each row's fate straight from the consumption table's shards."""
    from safetensors.numpy import load as load_arrays

    files = run.files(pick.path)
    a = run.open(pick.path)  # the artifact reader over the same files
    rows = load_arrays(files["trl/rows.safetensors"])
    sample = json.loads(files["trl/sample.json"])
    logged = _consumption_log(pick.segment)
    out = {}
    for i, ref in enumerate(sample["rows"]):
        lo, hi = int(rows["offsets"][i]), int(rows["offsets"][i + 1])
        ids, mask = rows["input_ids"][lo:hi], rows["completion_mask"][lo:hi]
        for t in a.turns:
            n = t.n_prompt + t.n_output
            if ids.size >= n and (ids[:t.n_prompt] == t.prompt_ids).all() and \
                    (ids[t.n_prompt:n] == t.output_ids).all() and mask[t.n_prompt:n].any():
                out[t.index] = logged.get(ref["ordinal"], ("in-queue", None))
    return out


def _said(fate) -> tuple[str, int | None]:
    return ("trained", fate.steps[0]) if fate.trained else (fate.cause, None)


def test_a_rollout_a_drift_fork_split_reads_each_turns_row_fate_everywhere(tab, run, picks):
    """The bundled run (TRL's real worker and trainer) holds a rollout that a drift fork split into two rows, the
    first trained and the second collated ahead when training stopped: every place that shows it gives each turn
    its own row's fate, and the rollout says both."""
    from viewer.ui.mcp_tools import McpTools

    pick = picks["partly"]
    truth = _row_turns_and_fates(run, pick)
    assert len({f for f, _ in truth.values()}) == 2 and "trained" in {f for f, _ in truth.values()}
    assert all(q.turns is not None for q in pick.queued)  # the recorder wrote the turns each row trains
    assert {t: (q.fate, q.step) for q in pick.queued for t in q.turns or ()} == truth
    label = rollout_fate(pick.queued, pick.dropped).label
    assert " · " in label and "never trained" in label and "trained at step" in label

    # the token view, opened from the group map, from a search hit (the rollout's own path) and from a deep link
    opened = [_opened(tab, pick)[0]]
    for value in (tab.service.rows.open_row(RUN, pick.path, {}, Initial(scope="full"))[0],
                  tab.service.rows.page_link({"src": RUN, "version": str(pick.policy_version),
                                              "group": str(pick.group_id), "rollout": str(pick.rollout)}).view):
        opened.append(msgspec.convert(json.loads(value)["outline"], Outline))
    for o in opened:
        assert o.run is not None and o.run.fate.label == label and o.run.fate.partly
        assert {t.index: _said(f) for t, f in zip(o.turns, o.run.turns, strict=True) if t.trained} == truth
        assert o.summary.recorded  # the headline draws o.run.fate
    # the back bar's breadcrumb says where it sits; its fate is the headline's (above), said once on the page
    page = json.loads(tab.service.rows.open_row(RUN, pick.group, {}, Initial(), pick.rollout)[2])
    assert page["back"]["crumbs"][-1] == f"rollout {pick.rollout}" and "fate" not in page["back"]
    # the training-rows scope: each row its own fate
    key = json.loads(tab.service.rows.open_row(RUN, pick.group, {}, Initial(), pick.rollout)[0])["key"]
    rows = tab.training({"key": key, "run": msgspec.to_builtins(opened[0].run)})["rows"]
    assert [(r["fate"]["trained"], r["fate"]["steps"]) for r in rows] == \
        [(q.fate == "trained", [q.step] if q.fate == "trained" else []) for q in pick.queued]
    # an export of the rollout, and of one never-trained turn alone
    r = tab.service.store.get(key)
    never_turn = next(t for t, (f, _) in truth.items() if f != "trained")
    for turn in (None, never_turn):
        out = io.StringIO()
        write_export(r, out, turn=turn, run=opened[0].run)
        data = json.loads(re.search(r'<script type="application/json" id="tv-data">(.*?)</script>', out.getvalue(),
                                    re.S).group(1))
        o = msgspec.convert(data["opened"]["outline"], Outline)
        assert {t.index: _said(f) for t, f in zip(o.turns, o.run.turns, strict=True)} == \
            {t: truth[t] for t in ([never_turn] if turn is not None else truth)}
    # viewer ls --json: the rollout's rows, each with the turns it trains and its fate
    doc = json.loads(_ls(RUN, "--json")[0])
    rec = next(x for x in doc["records"] if x["path"] == pick.path)
    assert rec["rows"] == [{"ordinal": q.ordinal, "turns": list(q.turns or ()), "tokens": q.tokens,
                            "trained_tokens": q.trained_tokens, "fate": q.fate, "step": q.step} for q in pick.queued]
    assert rec["fate"].startswith(f"step {pick.trained_step} + never: ")
    # MCP: rollout_turn gives that turn's fate and the rollout's rows; compare_rollouts each side's turn
    tools = McpTools(tab.service)
    for t, (fate, step) in truth.items():
        got = json.loads(tools.rollout_turn(RUN, pick.path, t, 0, 5))["fate"]
        assert (got["turn"]["trained"], got["turn"]["steps"]) == (fate == "trained", [step] if step else [])
        assert got["rollout"]["label"] == label and [x["turns"] for x in got["rows"]] == [list(q.turns or ()) for q in
                                                                                         pick.queued]
    other = next(x for x in doc["records"] if x["kind"] == "artifact" and x["path"] and x["path"] != pick.path)
    side = json.loads(tools.compare_rollouts(RUN, pick.path, other["path"], never_turn))["a"]
    assert side["fate"]["turn"]["trained"] is False and side["fate"]["turn"]["cause"] == truth[never_turn][0]
    # the run's index table: the fate column says both, TRL's status, the place
    table = tab.service.rows.index_page(RUN, {}).table
    assert table is not None and table.run and "trained_step" in [c.sort for c in table.columns]
    row = next(r for r in table.rows if r.path == pick.path)
    assert row.kind == "rollout" and row.fate == rec["fate"] and row.fate_kind == "partly"
    assert (row.version, row.group_id, row.rollout) == (pick.policy_version, pick.group_id, pick.rollout)
    assert row.status == pick.status


def test_no_page_calls_a_turn_trained_whose_row_was_never_trained(tab, run):
    """Every turn of every rollout of the bundled run, as the token view's record gives it, against the rows'
    arrays and the consumption log read apart: before rows had fates, a rollout with one trained row called every
    turn "trained at step N"."""
    checked = 0
    for pick in run.rows:
        if pick.path is None:
            continue
        truth = _row_turns_and_fates(run, pick)
        o, _ = _opened(tab, pick)
        assert o.run is not None
        for t, f in zip(o.turns, o.run.turns, strict=True):
            if t.trained:
                assert _said(f) == truth.get(t.index, (pick.dropped, None)), (pick.path, t.index)
                checked += 1
            else:
                assert not f.trained and f.cause == "not in mask"
    assert checked > 50


def test_an_export_of_a_run_rollout_carries_its_run_and_fate(tab, picks):
    pick = picks["read-ahead"]
    o, _ = _opened(tab, pick, "advantage")
    r = tab.service.store.get(json.loads(tab.service.rows.open_row(RUN, pick.group, {}, Initial(), pick.rollout)[0])["key"])
    out = io.StringIO()
    write_export(r, out, mode="advantage", run=o.run)
    html = out.getvalue()
    assert f"<title>run v{pick.policy_version} › group {pick.group_id} › rollout {pick.rollout}</title>" in html
    data = json.loads(re.search(r'<script type="application/json" id="tv-data">(.*?)</script>', html, re.S).group(1))
    outline = data["opened"]["outline"]
    assert outline["run"]["fate"]["label"] == f"never trained ({pick.dropped})"
    assert outline["advantage"] == pick.advantage and outline["summary"]["recorded"]  # the headline draws its fate


def _ls(*argv: str) -> tuple[str, str]:
    p = argparse.ArgumentParser()
    collection.add_ls_arguments(p)
    out, err = io.StringIO(), io.StringIO()
    assert collection.ls(p.parse_args(list(argv)), out, err) == 0
    return out.getvalue(), err.getvalue()


def test_ls_counts_mask_and_trained_tokens_apart_and_lists_failed_rollouts(run, picks):
    doc = json.loads(_ls(RUN, "--json")[0])
    rollouts = [r for r in doc["records"] if r["kind"] == "artifact"]
    assert len(rollouts) == len(run.rows)  # a rollout that failed before producing a folder is a row too
    failed = [r for r in rollouts if r["status"] == "failed"]
    assert failed and len(failed) == sum(r.status == "failed" for r in run.rows)
    assert all(r["path"] == "" and r["dropped"] for r in failed if r["trained_step"] is None)
    text, err = _ls(RUN)
    head = text.splitlines()[0].split()
    assert {"mask", "trained", "fate"} <= set(head) and "step" not in head and "dropped" not in head
    assert "mask: tokens TRL's mask would train" in err
    never = picks["read-ahead"]
    line = next(ln for ln in text.splitlines() if ln.rstrip().endswith(never.path))
    cells = dict(zip(head, line.split(), strict=False))
    assert cells["mask"] == f"{never.trained_tokens:,}" and cells["trained"] == "0" and never.trained_tokens > 0
    done = picks["trained"]
    line = next(ln for ln in text.splitlines() if ln.rstrip().endswith(done.path))
    assert f"step {done.trained_step}" in line
    assert sum(r.trainer_tokens for r in run.rows) < sum(r.trained_tokens for r in run.rows)  # not one number


def test_task_titles_skip_the_directions_wherever_they_sit():
    assert title_of("[task 4] " + DIRECTIONS + "You are given n integers.\n\nInput\n5") == "[task 4] You are given n integers."
    assert title_of(DIRECTIONS + "Sum two numbers.\nInput") == "Sum two numbers."
    assert title_of("Just a statement\nmore") == "Just a statement"


def test_one_pass_rate_for_a_version_a_group_and_a_task(run):
    for choice in run_stats.task_choices(run)[:5]:
        track = run_stats.task_track(run, choice.task_id)
        assert track is not None
        assert track.pass_rates
        for point in track.pass_rates:  # the task's chart, per version
            rows = [r for r in run.rows if r.task_id == choice.task_id and r.policy_version == point.version]
            assert point.pass_rate == run_stats.pass_rate(rows)
        for g in track.groups:  # each of its groups
            assert g.pass_rate == run_stats.pass_rate([r for r in run.rows if r.group == g.path])


def test_a_run_in_a_collection_is_one_row_that_opens_the_run_page(tmp_path):
    import shutil

    from rollout_trace.artifact.collection import open_collection
    from rollout_trace.artifact.sources import EXAMPLES_DIR
    from support.run_tables import bundled_rows
    from viewer.index.filters import apply, from_query

    coll = tmp_path / "coll"
    shutil.copytree(EXAMPLES_DIR / RUN, coll / "runs" / "mine")
    shutil.copytree(EXAMPLES_DIR / "scripted-smollm2", coll / "one")
    c = open_collection(str(coll))
    assert [(r.kind, r.path) for r in c.records] == [("artifact", "one"), ("run", "runs/mine")]
    run_row = c.records[1]
    groups = len(set(bundled_rows()["group"].to_pylist()))  # the run's groups, counted from its shards
    assert run_row.k == groups and f"{groups} groups" in run_row.title and run_row.model
    assert [r.path for r in apply(c.records, from_query({"kind": "run"})[0])] == ["runs/mine"]
    _, _, index = Service(RUN, public=False).rows.open_row(str(coll), "runs/mine", {}, Initial())
    page = json.loads(index)
    assert page["goto"] == str(coll / "runs" / "mine") and not page["problems"]
    public = ViewTab(Service(str(coll), public=True))  # the owner's source: a visitor never gets a server path
    page = json.loads(public.service.rows.open_row(str(coll), "runs/mine", {}, Initial())[2])
    assert page["goto"] is None and "open the run on its own" in " ".join(page["problems"]["items"])
    text, _ = _ls(str(coll))
    assert any(ln.split()[:2] == ["runs/mine", "run"] for ln in text.splitlines())


def test_trainer_mismatch_per_version_from_rollouts_rescored_in_the_run(tmp_path, picks):
    """Rescore parts placed in the run (rescored/ and its log, support/run_rescore.py): the run page's trainer
    mismatch per version reads the log, the latest part of a rollout counting; the rollout opens with its parts."""
    import shutil

    from rollout_trace.artifact.sources import EXAMPLES_DIR
    from support.rescore_fakes import fake_arrays, fake_meta
    from support.run_rescore import rescore_in_run

    copy = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / RUN, copy)
    a, b = picks["trained"], picks["read-ahead"]
    for pick, worst, outside in ((a, 0.02, 3), (b, 0.5, 7), (b, 0.3, 1)):  # b re-scored twice: its latest counts
        art = rescore_in_run(copy, pick.path, "p", fake_meta, fake_arrays,
                             {"tokens": 100, "with_engine": 100, "max_abs_log_ratio": worst, "outside_clip": outside})
        assert list(art.rescores) == ["p"]  # the run's rollout opens with the part placed in its run
    assert sorted(p.name for p in (copy / "rescored").glob("*.jsonl")) == sorted({f"{a.segment}.jsonl",
                                                                                   f"{b.segment}.jsonl"})
    run = open_run(str(copy))
    stats = {s.version: s for s in run_stats.version_stats(run)}
    if a.policy_version == b.policy_version:
        s = stats[a.policy_version]
        assert s.rescored == 2 and s.mismatch_max == 0.3 and s.outside_share == 4 / 200
    else:
        assert (stats[a.policy_version].rescored, stats[a.policy_version].mismatch_max) == (1, 0.02)
        assert (stats[b.policy_version].rescored, stats[b.policy_version].mismatch_max) == (1, 0.3)
        assert stats[b.policy_version].outside_share == 1 / 100
    assert all(s.rescored == 0 and s.mismatch_max is None for v, s in stats.items()
               if v not in (a.policy_version, b.policy_version))
    run.close()


def test_check_of_a_run_rollout_names_no_capture_script(run, picks, tmp_path, capsys):
    """`viewer check` counts the capture script's rule only where that script's files are what it reads: a run's
    rollout (its files as the run holds them, laid out in a folder) names none."""
    from viewer.cli import main

    folder = tmp_path / "rollout"
    for name, data in run.files(picks["trained"].path).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    assert main(["check", str(folder)]) == 0
    out = capsys.readouterr().out
    assert " agent turns, " in out and "capture script" not in out
    assert main(["check", str(ROOT / "examples" / "scripted-smollm2")]) == 0
    assert "(the capture script's rule: 2)" in capsys.readouterr().out
