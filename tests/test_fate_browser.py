"""Off the run page, a recorded run's rollout says whether the trainer took it, in a real browser: a read-ahead,
an in-queue, an unscorable, a failed and a trained rollout on their group maps (fate column, TRL's status and
advantage, the run's heading), in the token view in every mode it offers (headline, turn pills, legends: the push
is hypothetical for a rollout never in the loss), the breadcrumb, the cross-version compare's headings, and an
exported file; and the rollout a drift fork split into two rows of different fates (turn by turn, opened from its
group map, a search hit and a deep link). The rollouts are found by asking the bundled run's reader, never by name.
Screenshots light and dark at 1440x900 and 1024x768."""

from __future__ import annotations

import shutil

import pytest

from rollout_trace.artifact.run import RunRow, open_run
from rollout_trace.artifact.sources import EXAMPLES_DIR
from support import pages
from support.pages import url_of
from support.rescore_fakes import fake_arrays, fake_meta
from support.run_picks import RUN, pick_each
from support.run_rescore import rescore_in_run
from viewer.fate import rollout_fate, turn_fate

pytestmark = pytest.mark.browser
TIMEOUT = 60_000


@pytest.fixture(scope="module")
def run():
    r = open_run(RUN)
    yield r
    r.close()


@pytest.fixture(scope="module")
def picks(run) -> dict[str, RunRow]:
    return pick_each(run)


@pytest.fixture(scope="module")
def rescored(tmp_path_factory, picks) -> str:
    """A copy of the run whose picked rollouts carry a rescore part (made-up scores) placed in its rescored/ folder
    and noted in its log (support/run_rescore.py): the token view offers the trainer's modes (mismatch, entropy,
    loss) and the run page its mismatch column."""
    copy = tmp_path_factory.mktemp("fate") / "run"
    shutil.copytree(EXAMPLES_DIR / RUN, copy)
    for p in picks.values():
        if p.path is None:
            continue
        rescore_in_run(copy, p.path, "fake.float32", fake_meta, fake_arrays,
                       {"tokens": 100, "with_engine": 100, "max_abs_log_ratio": 0.05, "outside_clip": 2})
    return str(copy)


def _link(app_url: str, r: RunRow, src: str = RUN, **more) -> str:
    return url_of(app_url, src, version=r.policy_version, group=r.group_id, segment=r.segment, **more)


def _fate_text(r: RunRow) -> str:
    """The group map's trainer cell: the steps when every row was trained, the cause when none was and all for
    one reason, else the rollout's parts by turn."""
    if r.queued and all(q.fate == "trained" for q in r.queued):
        return ("step " if len(r.trained_steps) == 1 else "steps ") + ", ".join(map(str, r.trained_steps))
    if len({q.fate for q in r.queued}) <= 1:
        return f"never: {r.dropped}"
    return rollout_fate(r.queued, r.dropped).label


def _pills(r: RunRow, in_mask: list[bool]) -> list[str]:
    """What each turn's pill says: its own row's fate (viewer/fate.py), or that TRL's mask trains none of it."""
    out = []
    for t, m in enumerate(in_mask):
        f = turn_fate(t, m, r.queued, r.dropped)
        out.append("not in mask" if not m else f"trained · step {f.steps[0]}" if f.trained else
                   f"never trained ({f.cause})")
    return out


def test_group_maps_say_each_rollouts_fate_status_and_advantage(page, app_url, run, picks):
    shot = max({p.group for p in picks.values()}, key=lambda g: len({k for k, p in picks.items() if p.group == g}))
    for group in sorted({p.group for p in picks.values()}):
        first = next(p for p in picks.values() if p.group == group)
        page.goto(_link(app_url, first))
        page.wait_for_selector("[data-testid=group-place]", timeout=TIMEOUT)
        place = page.locator("[data-testid=group-place]").inner_text()
        assert f"version {first.policy_version} · group {first.group_id}" in place and first.segment in place
        for r in (x for x in run.rows if x.group == group):
            row = page.locator(f"[data-testid=group-row][data-rollout='{r.rollout}']")
            assert row.locator("[data-testid=group-fate]").inner_text() == _fate_text(r)
            assert row.locator("[data-testid=group-status]").inner_text().startswith(r.status)
            adv = row.locator(".gm-adv").inner_text()
            assert adv == ("none" if r.advantage is None else f"{r.advantage:+.3f}")
        if group == shot:
            pages.shots(page, "fate-group-map")
    assert page.errors == []


def _open_rollout(page, app_url, r: RunRow, mode: str = "mask", src: str = RUN):
    page.goto(_link(app_url, r, src, rollout=r.rollout, mode=mode))
    page.wait_for_selector(".tv-tokens .t[data-mask]", timeout=TIMEOUT)
    page.wait_for_selector("[data-testid=crumbs]", timeout=TIMEOUT)


@pytest.mark.parametrize("kind", ["read-ahead", "trained", "in-queue", "unscorable"])
def test_the_token_view_in_every_mode(page, app_url, picks, rescored, kind):
    r = picks[kind]
    _open_rollout(page, app_url, r, src=rescored)
    crumbs = page.locator("[data-testid=crumbs]").inner_text()
    assert crumbs == f"run › v{r.policy_version} › group {r.group_id} › rollout {r.rollout}"
    label = page.locator("[data-testid=summary] [data-testid=fate]").inner_text()
    never = kind != "trained"
    assert label == (f"never trained ({r.dropped})" if never else
                     "trained at step" + ("s " if len(r.trained_steps) > 1 else " ") + ", ".join(map(str, r.trained_steps)))
    summary = page.locator("[data-testid=summary]").inner_text()
    assert "in TRL's mask" in summary and "trained by TRL" not in summary
    before = page.locator("[data-testid=summary] [data-testid=fate]").evaluate("e => e.previousSibling.textContent")
    assert "·" not in before  # a pill needs no dot, which a line wrapped before the pill leaves dangling
    if kind == "unscorable":
        assert "unscorable: no reward" in summary
    assert page.locator("[data-testid=verifier]").count() == 1  # what the verifier said, not "files are missing"
    assert page.locator(".tv-notices").count() == 0 and page.locator("[data-testid=trained-disagree]").count() == 0
    pills = page.locator("[data-testid=turn-pill]").all_inner_texts()
    assert pills and all(p.startswith("never trained" if never else "trained · step") or p == "not in mask" for p in pills)
    in_mask = page.locator("[data-testid=nav-turn]").evaluate_all("els => els.map(e => e.classList.contains('trained'))")
    assert pills == _pills(r, in_mask)
    modes = [m for m in page.locator(".tv-toolbar [data-mode]").evaluate_all("els => els.map(e => e.dataset.mode)")]
    assert {"advantage", "mismatch", "entropy", "loss"} <= set(modes)  # the copy's rollouts carry a rescore part
    for mode in modes:  # every mode the view offers this rollout
        page.click(f".tv-toolbar [data-mode={mode}]")
        page.wait_for_function(f"document.querySelector('.tv-tokens').dataset.paint === '{mode}'", timeout=TIMEOUT)
        legend = page.locator(".tv-legend").inner_text()
        if mode in ("advantage", "loss"):  # the push: hypothetical when the trainer never took it
            assert ("hypothetical: never trained" in legend) == never and ("was in the loss" in legend) != never
            if mode == "advantage" and r.advantage is not None:
                assert f"{r.advantage:+.3f}" in legend
        if kind == "read-ahead" and mode in ("advantage", "loss"):
            if mode == "loss":
                page.wait_for_selector("[data-testid=trainer-stats]", timeout=TIMEOUT)
            pages.shots(page, f"fate-token-{mode}")
    if kind == "read-ahead":
        page.click(".tv-toolbar [data-mode=mask]")
        pages.shots(page, "fate-token-mask")
    assert page.errors == []


def _split_view_says_each_turn(page, r: RunRow) -> None:
    """The token view of the split rollout: each pill its own row's fate, the headline the rollout's parts (said
    there once: the breadcrumb above it says where the rollout sits), and a never-trained turn's advantage legend
    calls its push hypothetical."""
    label = rollout_fate(r.queued, r.dropped).label
    assert page.locator("[data-testid=summary] [data-testid=fate]").inner_text() == label
    assert label not in page.locator("#collection-index").inner_text()
    in_mask = page.locator("[data-testid=nav-turn]").evaluate_all("els => els.map(e => e.classList.contains('trained'))")
    pills = page.locator("[data-testid=turn-pill]").all_inner_texts()
    assert pills == _pills(r, in_mask) and any(p.startswith("trained · step") for p in pills) \
        and any(p.startswith("never trained") for p in pills), pills


def test_the_split_rollout_from_its_group_map_a_search_hit_and_a_link(page, app_url, picks):
    """A drift fork split it into two rows, and training stopped between them: turn 0 trained at step N, the rest
    never (read-ahead). From its group map, from a search hit and from a deep link, every turn says its own row's
    fate; the group map hatches only the turns never trained; the training rows' scope has each row's fate."""
    r = picks["partly"]
    label = rollout_fate(r.queued, r.dropped).label
    never = next(t for t in range(8) if not turn_fate(t, True, r.queued, r.dropped).trained)
    # the group map: the fate column says both parts, only the never-trained turns' cells are hatched
    page.goto(_link(app_url, r))
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    row = page.locator(f"[data-testid=group-row][data-rollout='{r.rollout}']")
    assert row.locator("[data-testid=group-fate]").inner_text() == label
    hatched = row.locator(".gm-cell").evaluate_all("cs => cs.map(c => c.classList.contains('never'))")
    assert hatched == [not turn_fate(t, True, r.queued, r.dropped).trained for t in range(len(hatched))]
    assert "its row never trained" in page.inner_text("[data-testid=group-key]")  # the hatching's key
    for width, height in ((1024, 768), (1280, 720)):  # every turn column in view, without a sideways scroll
        page.set_viewport_size({"width": width, "height": height})
        assert page.eval_on_selector(".gm-tablebox", "b => b.scrollWidth <= b.clientWidth + 1"), width
    pages.shots(page, "fate-split-group-map")
    row.locator(".gm-open.gm-name").click()
    page.wait_for_selector(".tv-tokens .t[data-mask]", timeout=TIMEOUT)
    page.wait_for_selector("[data-testid=crumbs]", timeout=TIMEOUT)
    _split_view_says_each_turn(page, r)
    page.click(f"[data-testid=nav-turn][data-turn='{never}']")
    page.click(".tv-toolbar [data-mode=advantage]")
    page.wait_for_function("document.querySelector('.tv-tokens').dataset.paint === 'advantage'", timeout=TIMEOUT)
    legend = page.locator(".tv-legend").inner_text()
    assert "hypothetical: never trained (read-ahead)" in legend and "was in the loss" not in legend
    assert f"turn {never} (in TRL's mask, never trained: read-ahead)" in page.inner_text(".tv-turn-title")
    pages.shots(page, "fate-split-token-never")
    page.click("[data-testid=nav-turn][data-turn='0']")
    page.wait_for_function("document.querySelector('.tv-legend').innerText.includes('was in the loss')",
                           timeout=TIMEOUT)
    page.click(".tv-toolbar [data-mode=mask]")
    page.click(".tv-toolbar [data-scope=row]")  # the training rows: each with its own fate
    page.wait_for_selector("[data-testid=row-fate]", timeout=TIMEOUT)
    fates = page.locator("[data-testid=row-fate]").all_inner_texts()
    assert fates == [f"trained at step {q.step}" if q.fate == "trained" else f"never trained ({q.fate})"
                     for q in r.queued]
    page.locator("[data-testid=row-fate]").last.evaluate("e => e.scrollIntoView({block: 'center'})")
    pages.shots(page, "fate-split-rows")
    # the run's index table: its place, TRL's status and the trainer's words for both rows
    page.goto(url_of(app_url, RUN))
    line = page.locator(f"[data-testid=index-row][data-path='{r.path}']")
    line.wait_for(timeout=TIMEOUT)
    assert line.locator("[data-testid=run-place]").inner_text() == \
        f"v{r.policy_version} · group {r.group_id} · rollout {r.rollout}"
    assert line.locator("[data-testid=run-status]").inner_text() == r.status
    assert line.locator("[data-testid=index-fate]").inner_text().startswith(f"step {r.trained_step} + never: read-ahead")
    line.evaluate("e => e.scrollIntoView({block: 'center'})")
    pages.shots(page, "fate-split-index")
    # a search hit on it: the panel lists its version's hits, the one on this rollout opens it in its group
    page.wait_for_selector(".fp-mount[data-ready='1'] [data-testid=find-input]", timeout=120_000)
    page.fill("[data-testid=find-versions]", str(r.policy_version))
    before = page.eval_on_selector(".fp-mount", "b => b.dataset.answered || ''")
    page.fill("[data-testid=find-input]", "Wrote file")
    page.press("[data-testid=find-input]", "Enter")
    page.wait_for_function("b => { const x = document.querySelector('.fp-mount'); return x && x.dataset.answered && "
                           "x.dataset.answered !== b; }", arg=before, timeout=60_000)
    hit = page.locator("[data-testid=find-hit]").filter(has=page.locator(f".fp-path:text-is('{r.path}')")).first
    hit.click()
    page.wait_for_selector(".tv-tokens .t.tv-found", timeout=TIMEOUT)
    page.wait_for_selector("[data-testid=crumbs]", timeout=TIMEOUT)
    _split_view_says_each_turn(page, r)
    pages.shots(page, "fate-split-search-hit")
    # a deep link to it
    _open_rollout(page, app_url, r)
    _split_view_says_each_turn(page, r)
    pages.shots(page, "fate-split-link")
    assert page.errors == []


def test_group_compare_and_cross_version_compare_head_each_side(page, app_url, run, picks):
    r = picks["read-ahead"]
    page.goto(_link(app_url, r))
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    page.locator(f"[data-testid=group-pick][data-rollout='{r.rollout}']").check()
    page.locator(f"[data-testid=group-pick]:not([data-rollout='{r.rollout}'])").first.check()
    page.click("[data-testid=compare]")
    page.wait_for_selector("[data-testid=compare-side]", timeout=TIMEOUT)
    heads = page.locator("[data-testid=compare-side] .gm-side-h").all_inner_texts()
    assert len(heads) == 2 and all(" · trained at step" in h or " · never trained (" in h for h in heads), heads
    assert any(h.startswith(f"rollout {r.rollout} · turn 0 · never trained ({r.dropped})") for h in heads), heads
    pages.shots(page, "fate-group-compare")
    # one task across versions: each side headed by its version, group and rollout
    task = next(t for t in {x.task_id for x in run.rows}
                if t and len({x.policy_version for x in run.rows if x.task_id == t and x.path}) > 1)
    page.goto(url_of(app_url, RUN, task=task))
    page.wait_for_selector("[data-testid=run-task-group]", timeout=TIMEOUT)
    groups = page.locator("[data-testid=run-task-group]")
    groups.nth(0).locator("[data-testid=run-task-rollout]").first.check()
    groups.nth(1).locator("[data-testid=run-task-rollout]").first.check()
    page.click("[data-testid=run-compare]")
    page.wait_for_selector("[data-testid=run-compare-box] [data-testid=compare-side]", timeout=TIMEOUT)
    heads = page.locator("[data-testid=run-compare-box] [data-testid=compare-side] .gm-side-h").all_inner_texts()
    versions = sorted({x.policy_version for x in run.rows if x.task_id == task and x.path})
    assert heads[0].startswith(f"v{versions[0]} › group ") and heads[1].startswith(f"v{versions[1]} › group ")
    page.locator("[data-testid=run-compare-box]").scroll_into_view_if_needed()
    pages.shots(page, "fate-run-compare")
    assert page.errors == []


def test_an_export_carries_the_run_and_the_fate(page, app_url, picks, tmp_path):
    r = picks["read-ahead"]
    _open_rollout(page, app_url, r, mode="advantage")
    page.click("[data-testid=export]")
    with page.expect_download(timeout=TIMEOUT) as dl:
        page.click("[data-testid=export-rollout]")
    name = page.locator("[data-testid=export-link]").inner_text()
    assert name == f"run-v{r.policy_version}-g{r.group_id}-r{r.rollout}.html"
    saved = tmp_path / name
    dl.value.save_as(saved)
    page.goto(saved.as_uri())
    page.wait_for_selector(".tv-tokens .t[data-mask]", timeout=TIMEOUT)
    assert page.title() == f"run v{r.policy_version} › group {r.group_id} › rollout {r.rollout}"
    assert page.locator("[data-testid=summary] [data-testid=fate]").inner_text() == f"never trained ({r.dropped})"
    assert f"v{r.policy_version} › group {r.group_id} › rollout {r.rollout}" in \
        page.locator("[data-testid=run-context]").inner_text()
    assert "hypothetical: never trained" in page.locator(".tv-legend").inner_text()
    pages.shots(page, "fate-export")
    assert page.errors == []


def test_the_run_page_shows_the_trainer_mismatch_per_version(page, app_url, rescored, picks):
    page.goto(url_of(app_url, rescored))
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    versions = {p.policy_version for p in picks.values() if p.path is not None}
    for v in versions:
        cell = page.locator(f"[data-testid=run-version][data-version='{v}'] [data-testid=run-mismatch]").inner_text()
        n = sum(p.policy_version == v and p.path is not None for p in picks.values())
        assert cell == f"0.050 · 2% outside ({n} re-scored)", cell
    page.locator("[data-testid=run-versions]").scroll_into_view_if_needed()
    pages.shots(page, "fate-run-mismatch")
    assert page.errors == []


def test_back_returns_to_the_version_and_group_it_came_from(page, app_url, run, picks):
    r = picks["read-ahead"]
    page.set_viewport_size({"width": 1024, "height": 768})  # small enough that the group sits below the fold
    page.goto(url_of(app_url, RUN))
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    page.locator(f"[data-testid=run-version][data-version='{r.policy_version}']").click()
    page.wait_for_selector("[data-testid=run-group]", timeout=TIMEOUT)
    row = page.locator("[data-testid=run-group]").filter(has=page.locator(f"text='g{r.group_id}'"))
    path = row.get_attribute("data-path")
    assert path is not None and path.endswith(r.group.rsplit("/", 1)[1])
    row.locator(".rp-open").click()
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    page.locator("[data-testid=back-to-index]").click()
    page.wait_for_selector(f"tr.rp-came[data-path='{path}']", timeout=TIMEOUT)
    assert page.locator(f"[data-testid=run-version][data-version='{r.policy_version}']").get_attribute(
        "aria-expanded") == "true"
    box = page.locator(f"tr.rp-came[data-path='{path}']").bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 768  # on screen, not at the top
    pages.shots(page, "fate-back")
    assert page.errors == []


def test_the_verifier_panel_shows_the_verify_result_where_tests_would_be(page, app_url, picks):
    """Where a captured rollout shows its held-out tests, a run's rollout shows what its verify() reported (env
    reward, done, the metrics the bundled run's replayed sessions give: tests passed and failed) beside what TRL
    made of it, both tables side by side and inside the window at 1440 and 1024 px, in light and dark."""
    r = picks["trained"]
    _open_rollout(page, app_url, r)
    panel = page.locator("[data-testid=verifier]")
    panel.scroll_into_view_if_needed()
    metrics = dict(m.split("\t") for m in panel.locator("[data-testid=verify-metric]").all_inner_texts())
    assert set(metrics) == {"tests_passed", "tests_failed"} and int(metrics["tests_passed"]) + int(metrics["tests_failed"]) == 4
    assert "done\tyes" in panel.inner_text() and "What TRL made of it" in panel.inner_text()
    for w, h in ((1440, 900), (1024, 768)):
        page.set_viewport_size({"width": w, "height": h})
        panel.scroll_into_view_if_needed()
        tables = panel.locator("table").evaluate_all("ts => ts.map(t => t.getBoundingClientRect().toJSON())")
        assert len(tables) == 2 and abs(tables[0]["top"] - tables[1]["top"]) < 60  # side by side, not stacked
        assert all(t["right"] <= w and t["width"] > 200 for t in tables)
    panel.evaluate("e => e.scrollIntoView({block: 'start'})")  # the whole panel in every shot
    pages.shots(page, "verifier-panel")
    assert page.errors == []


def test_a_rollout_whose_files_give_another_reward_than_its_row_says_so_in_its_header(page, app_url, picks,
                                                                                        tmp_path):
    """A run whose table was changed after recording: the token view's header shows the summary's reward and says
    the table's, which the run page and the group map count; both numbers readable in light and dark."""
    from support.run_tables import reward_changed

    r = picks["trained"]
    src = str(reward_changed(tmp_path / "run", r.path, 1.062))
    _open_rollout(page, app_url, r, src=src)
    notes = page.locator(".tv-notices li").all_inner_texts()
    told = [n for n in notes if "rewards differ" in n]
    assert len(told) == 1 and "reward +1.062 in the run's table" in told[0] and f"{r.reward:+.3f} in its summary" in told[0]
    assert f"{r.reward:+.3f}" in page.locator(".tv-reward-value").inner_text()  # the header: the summary's reward
    page.locator(".tv-notices").scroll_into_view_if_needed()
    pages.shots(page, "rewards-differ")
    assert page.errors == []
