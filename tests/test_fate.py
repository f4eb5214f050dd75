"""Whether the trainer took a recorded run's rollout, told apart from what TRL's mask would train, on every page
off the run page: the fate words (viewer/fate.py), the group map's fate column, status and heading, the token
view's outline (its record, headline, header and verifier panel), the back bar's breadcrumb, an export, and
`viewer ls`. The rollouts are found by asking the bundled run's reader (a re-recorded run has other names and
counts), never by name."""

from __future__ import annotations

import argparse
import io
import json
import re

import msgspec
import pytest

from conftest import ROOT
from rollout_trace.artifact.run import RunRow, open_run
from rollout_trace.artifact.schema import Summary
from rollout_trace.recipe.tasks import DIRECTIONS, title_of
from support.run_picks import RUN, pick_each
from viewer import run_page
from viewer.contract import Initial, Outline
from viewer.export import write_export
from viewer.fate import fate_of
from viewer.index import cli
from viewer.ui.service import Service
from viewer.ui.view_tab import ViewTab


@pytest.fixture(scope="module")
def run():
    r = open_run(RUN)
    yield r
    r.close()


def run_summary(pick: RunRow) -> bytes:
    return (ROOT / "examples" / RUN / pick.path / "summary.json").read_bytes()


@pytest.fixture(scope="module")
def picks(run) -> dict[str, RunRow]:
    return pick_each(run)


@pytest.fixture(scope="module")
def tab() -> ViewTab:
    return ViewTab(Service(RUN, public=False))


def test_fate_words_tell_did_from_would():
    t = fate_of([3], None, ("trained",))
    assert t.trained and t.label == "trained at step 3" and t.steps == [3] and "in the loss" in t.why
    partly = fate_of([5], None, ("trained", "read-ahead"))
    assert partly.label == "trained at step 5" and "1 of 2 rows; the rest read-ahead" in partly.why
    two = fate_of([2, 3], None, ("trained", "trained"))
    assert two.label == "trained at steps 2, 3"
    for cause in ("read-ahead", "in-queue", "stale", "oversize", "resume-skip", "in-batcher", "failed"):
        f = fate_of([], cause)
        assert not f.trained and f.label == f"never trained ({cause})" and f.cause == cause
        assert f.why.startswith("the trainer never trained this rollout: ") and len(f.why) > 60
    assert fate_of([], None).label == "never trained (unknown)"


def _map_rows(group_html: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(0) for m in re.finditer(r"<tr class='gm-row[^']*' data-rollout='(\d+)'.*?</tr>",
                                                             group_html)}


def test_group_map_has_a_fate_column_trl_status_and_the_runs_place(tab, run, picks):
    for kind, pick in picks.items():
        _, _, index = tab.service.rows.open_row(RUN, pick.group, {}, Initial())
        page = json.loads(index)
        html = page["group_html"]
        head = re.search(r"data-testid='group-place'>(.*?)</span></span>", html)
        assert head is not None, kind
        assert f"version {pick.policy_version} · group {pick.group_id}" in head.group(1)
        assert f"segment {pick.segment}" in head.group(1)
        members = [r for r in run.rows if r.group == pick.group]
        steps = sorted({s for r in members for s in r.trained_steps})
        assert (f"trained at step{'s' if len(steps) > 1 else ''} {', '.join(map(str, steps))}" if steps
                else "never trained") in head.group(1)
        assert ">trainer</th>" in html and ">in mask</th>" in html  # the two facts, two columns
        row = _map_rows(html)[pick.rollout]
        fate = re.search(r"data-testid='group-fate'[^>]*>([^<]*)<", row).group(1)
        assert fate == (f"step {pick.trained_step}" if kind == "trained" and len(pick.trained_steps) == 1 else
                        f"steps {', '.join(map(str, pick.trained_steps))}" if kind == "trained" else
                        f"never: {pick.dropped}"), (kind, fate)
        status = re.search(r"data-testid='group-status'>([^<]*)", row).group(1)
        assert status == pick.status, (kind, status)  # unscorable and failed say so, never "ok"
        if pick.advantage is None:  # TRL gave none: no "+0.00" bar
            assert "class='gm-adv none'" in row and "gm-bar" not in row
        else:
            assert f">{pick.advantage:+.3f}</span>" in row
        if kind in ("read-ahead", "in-queue", "unscorable"):
            assert "fate-never" in row  # its mask cells are hatched: what WOULD be trained


def _opened(tab: ViewTab, pick: RunRow, mode: str = "mask") -> tuple[Outline, dict]:
    value, _, index = tab.service.rows.open_row(RUN, pick.group, {}, Initial(mode=mode), pick.rollout)  # type: ignore[arg-type]
    opened = json.loads(value)
    assert "outline" in opened, opened
    return msgspec.convert(opened["outline"], Outline), json.loads(index)


@pytest.mark.parametrize("kind", ["trained", "read-ahead", "in-queue", "unscorable"])
def test_the_token_view_says_trained_at_step_or_never_and_where_it_sits(tab, picks, kind):
    pick = picks[kind]
    o, page = _opened(tab, pick)
    assert o.run is not None and o.run.version == pick.policy_version and o.run.group_id == pick.group_id
    assert o.run.rollout == pick.rollout and o.run.segment == pick.segment and o.run.status == pick.status
    assert o.run.fate.trained == (kind == "trained")
    assert o.run.fate.label == (fate_of(pick.trained_steps, None).label if kind == "trained" else
                                f"never trained ({pick.dropped})")
    assert o.advantage == pick.advantage == o.run.advantage  # TRL's own
    # the headline names both facts: the mask's turns and the trainer's fate
    assert "in TRL's mask" in o.summary_html and "trained by TRL" not in o.summary_html
    assert f">{o.run.fate.label}</span>" in o.summary_html
    assert "data-testid='run-context'" in o.header_html and f"v{pick.policy_version} › group {pick.group_id}" in \
        o.header_html
    assert "mask" in o.header_html and "trained-disagree" not in o.header_html  # no capture script here
    assert all(t.seed_trained == t.trained for t in o.turns) and "capture script" not in o.header_html + "".join(
        t.trained_html for t in o.turns)  # nor in the turn's pill tooltip (navigator.js) or its note
    # what the verifier reported, not "files are missing"
    assert "data-testid='verifier'" in o.tests_html and "is not in this artifact" not in o.header_html
    # and what it reported beside its reward (OpenEnv's VerifyResult, as the bundled run's summary.json keeps it)
    verify = msgspec.json.decode(run_summary(pick), type=Summary).run.verify
    assert verify is not None and verify.metrics and "data-testid='verify-none'" not in o.tests_html
    for name, value in verify.metrics.items():
        shown = f"{value:,}" if isinstance(value, int) else value  # the replayed sessions': counts and text
        assert f"<td>{name}</td><td class='num'>{shown}</td>" in o.tests_html
    if kind == "unscorable":
        assert "unscorable: no reward" in o.summary_html and "none (unscorable)" in o.tests_html
    # the back bar: the run's crumbs, not a folder path
    crumbs = re.sub(r"<[^>]+>", "", re.search(r"data-testid='crumbs'>(.*?)</span><span", page["row_html"]).group(1))
    assert crumbs == f"run › v{pick.policy_version} › group {pick.group_id} › rollout {pick.rollout}"
    assert "groups/" not in page["row_html"]


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
    assert outline["advantage"] == pick.advantage and f">{o.run.fate.label}</span>" in outline["summary_html"]


def _ls(*argv: str) -> tuple[str, str]:
    p = argparse.ArgumentParser()
    cli.add_ls_arguments(p)
    out, err = io.StringIO(), io.StringIO()
    assert cli.ls(p.parse_args(list(argv)), out, err) == 0
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
    for choice in run_page.task_choices(run)[:5]:
        track = run_page.task_track(run, choice.task_id)
        assert track is not None
        assert track.pass_rates
        for point in track.pass_rates:  # the task's chart, per version
            rows = [r for r in run.rows if r.task_id == choice.task_id and r.policy_version == point.version]
            assert point.pass_rate == run_page.pass_rate(rows)
        for g in track.groups:  # each of its groups
            assert g.pass_rate == run_page.pass_rate([r for r in run.rows if r.group == g.path])


def test_a_run_in_a_collection_is_one_row_that_opens_the_run_page(tmp_path):
    import shutil

    from rollout_trace.artifact.collection import open_collection
    from rollout_trace.artifact.filters import apply, from_query
    from rollout_trace.artifact.sources import EXAMPLES_DIR

    coll = tmp_path / "coll"
    shutil.copytree(EXAMPLES_DIR / RUN, coll / "runs" / "mine")
    shutil.copytree(EXAMPLES_DIR / "scripted-smollm2", coll / "one")
    c = open_collection(str(coll))
    assert [(r.kind, r.path) for r in c.records] == [("artifact", "one"), ("run", "runs/mine")]
    run_row = c.records[1]
    groups = len(list((coll / "runs" / "mine" / "groups").iterdir()))
    assert run_row.k == groups and f"{groups} groups" in run_row.title and run_row.model
    assert [r.path for r in apply(c.records, from_query({"kind": "run"})[0])] == ["runs/mine"]
    _, _, index = Service(RUN, public=False).rows.open_row(str(coll), "runs/mine", {}, Initial())
    page = json.loads(index)
    assert page["goto"] == str(coll / "runs" / "mine") and not page["error_html"]
    public = ViewTab(Service(str(coll), public=True))  # the owner's source: a visitor never gets a server path
    page = json.loads(public.service.rows.open_row(str(coll), "runs/mine", {}, Initial())[2])
    assert page["goto"] is None and "open the run on its own" in page["error_html"]
    text, _ = _ls(str(coll))
    assert any(ln.split()[:2] == ["runs/mine", "run"] for ln in text.splitlines())


def test_trainer_mismatch_per_version_from_rollouts_rescored_in_the_run(tmp_path, picks):
    import shutil

    from rollout_trace.artifact import load_artifact
    from rollout_trace.artifact.sources import EXAMPLES_DIR
    from viewer.rescore_cli import note_in_run

    copy = tmp_path / "run"
    shutil.copytree(EXAMPLES_DIR / RUN, copy)
    a, b = picks["trained"], picks["read-ahead"]
    for pick, worst, outside in ((a, 0.02, 3), (b, 0.5, 7), (b, 0.3, 1)):  # b re-scored twice: its latest counts
        art = load_artifact(copy / pick.path)
        assert note_in_run(art, "p", {"tokens": 100, "with_engine_logprob": 100, "max_abs_log_ratio": worst,
                                       "outside_clip": outside}) == copy / "rescored" / f"{pick.segment}.jsonl"
    elsewhere = tmp_path / "alone"
    shutil.copytree(copy / a.path, elsewhere)  # a copy outside its run: nothing to note
    assert note_in_run(load_artifact(elsewhere), "p", {}) is None
    run = open_run(str(copy))
    stats = {s.version: s for s in run_page.version_stats(run)}
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


def test_check_of_a_run_rollout_names_no_capture_script(picks, capsys):
    """`viewer check` counts the capture script's rule only where that script's files are what it reads."""
    from viewer.cli import main

    assert main(["check", str(ROOT / "examples" / RUN / picks["trained"].path)]) == 0
    out = capsys.readouterr().out
    assert " agent turns, " in out and "capture script" not in out
    assert main(["check", str(ROOT / "examples" / "scripted-smollm2")]) == 0
    assert "(the capture script's rule: 2)" in capsys.readouterr().out
