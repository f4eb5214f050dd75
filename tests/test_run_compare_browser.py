"""Two runs compared on the run page, in a real browser (viewer/assets/src/run_versus.js): the bundled run beside a copy
with other rewards (tests/support/second_run.py), named in the URL (`vs=`), both runs' numbers side by side, their
per-version curves overlaid on canvas, one task both ran followed in both (`vs_task=`, kept by a reload) with each
side's rollouts linked, this run's opening in place, and a run that cannot be opened named. Screenshots light and
dark at 1440x900 and 1024x768."""

from __future__ import annotations

import re

import pytest

from conftest import SHOTS
from support import pages
from support.pages import query, url_of
from support.second_run import second_run

pytestmark = pytest.mark.browser
TIMEOUT = 60_000
VERSUS = "[data-testid=run-versus]"
PLOTS = ("cmp-reward-plot", "cmp-pass-plot", "cmp-spread-plot", "cmp-tokens-plot")
# Per overlaid chart: the points it drew and how many of its canvas pixels are painted.
PAINTED = """() => Array.from(document.querySelectorAll('[data-testid=run-vs-charts] [data-testid=run-chart]')).map((c) => {
  const cv = c.querySelector('canvas'), d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
  let painted = 0; for (let i = 3; i < d.length; i += 4 * 7) if (d[i] > 0) painted++;
  return {id: c.id, points: Number(c.dataset.points), painted, legend: c.querySelector('.rp-legend').innerText};
})"""


@pytest.fixture(scope="module")
def other(tmp_path_factory) -> str:
    return str(second_run(tmp_path_factory.mktemp("runs") / "other-run"))


def _answered(page, before: str = "") -> None:
    page.wait_for_function("b => { const m = document.querySelector('.rp-vsmount'); return m && m.dataset.answered "
                           "&& m.dataset.answered !== b; }", arg=before, timeout=TIMEOUT)


def _before(page) -> str:
    return page.eval_on_selector(".rp-vsmount", "m => m.dataset.answered || ''")


def test_two_runs_side_by_side_and_one_task_in_both(page, app_url, other):
    page.goto(url_of(app_url, "trl-run", vs=other))
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    _answered(page)
    sides = page.inner_text("[data-testid=run-vs-sides]")
    assert "trl-run" in sides and other in sides and "0.346" in sides and "0.654" in sides  # reward means r, 1 - r
    assert "10 tasks in both runs" in page.inner_text("[data-testid=run-vs-status]")
    assert "matched by title" in page.inner_text("[data-testid=run-vs-notes]")
    for p in PLOTS:
        page.wait_for_selector(f"#{p} canvas", timeout=TIMEOUT)
    charts = page.evaluate(PAINTED)
    assert [c["id"] for c in charts] == list(PLOTS)
    for c in charts:
        assert c["points"] == 4 and c["painted"] > 200, c  # both runs' lines over versions 1-4
        # a long source by its end (the table above names both in full)
        assert "this run: trl-run" in c["legend"] and "other run: …" + other[-27:] in c["legend"], c["legend"]
    # a scale on each: the versions table's numbers are 0.33-0.39, more than one tick apart
    self_cmp = page.evaluate("ids => ids.map(id => JSON.parse(document.getElementById(id).dataset.yticks || '[]'))", list(PLOTS))
    assert all(len(t) >= 2 for t in self_cmp), self_cmp
    # the crosshair reads both runs at the version under the pointer: the other's rewards are 1 - r, its passes
    # this run's failures, so at version 4 the two values add up to 1 (and to 100%)
    for plot, whole in (("cmp-reward-plot", 1.0), ("cmp-pass-plot", 100.0)):
        page.locator(f"#{plot}").scroll_into_view_if_needed()
        over = page.locator(f"#{plot} .u-over").bounding_box()
        page.mouse.move(over["x"] + over["width"] * 0.98, over["y"] + over["height"] / 2)
        readout = page.locator(f"#{plot} [data-testid=chart-readout]")
        readout.wait_for(state="visible", timeout=TIMEOUT)
        rows = readout.locator(".rp-read-row").all_inner_texts()
        assert "version 4" in readout.inner_text() and len(rows) == 2, rows
        assert rows[0].startswith("this run") and rows[1].startswith("other run"), rows
        a, b = (float(re.findall(r"-?[0-9.]+", r)[-1]) for r in rows)
        assert a + b == pytest.approx(whole, abs=0.01 * whole), rows

    before = _before(page)
    task5 = page.eval_on_selector("[data-testid=run-vs-task-pick]", "s => Array.from(s.options).find((o) => "
                                  "o.text.startsWith('[task 5]')).value")
    page.select_option("[data-testid=run-vs-task-pick]", task5)
    _answered(page, before)
    assert query(page)["vs"] == other and query(page)["vs_task"] == task5
    sides = page.locator(".rp-vsside")
    assert sides.count() == 2
    for i in (0, 1):
        assert sides.nth(i).locator("[data-testid=run-vs-group]").count() == 2  # versions 2 and 3 on each side
    mine = sides.nth(0).locator("[data-testid=run-vs-rollout]")
    theirs = sides.nth(1).locator("[data-testid=run-vs-rollout]")
    assert mine.count() == theirs.count() == 8
    assert "src=trl-run" in mine.first.get_attribute("href")
    href = theirs.first.get_attribute("href")
    assert f"src={other.replace('/', '%2F')}" in href and "row=groups%2F" in href
    assert mine.first.inner_text().split()[1] != theirs.first.inner_text().split()[1]  # other rewards
    page.locator(VERSUS).scroll_into_view_if_needed()
    pages.shots(page, "run-compare", settle_ms=400)
    for w, h in ((1440, 900), (1024, 768)):  # the task in both runs, at the top of the window
        page.set_viewport_size({"width": w, "height": h})
        for dark in (False, True):
            page.evaluate("d => { document.body.classList.toggle('dark', d); "
                          "document.querySelector('[data-testid=run-vs-task]').scrollIntoView({block: 'start'}); }", dark)
            page.wait_for_timeout(300)
            page.screenshot(path=str(SHOTS / f"run-compare-task-{w}x{h}-{'dark' if dark else 'light'}.png"))
    page.evaluate("document.body.classList.remove('dark')")

    page.reload()  # the comparison and its task live in the URL
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    _answered(page)
    page.wait_for_selector(".rp-vsside [data-testid=run-vs-rollout]", timeout=TIMEOUT)
    assert page.eval_on_selector("[data-testid=run-vs-task-pick]", "s => s.value") == task5
    page.locator(".rp-vsside").nth(0).locator("[data-testid=run-vs-rollout]").first.click()  # this run's: in place
    page.wait_for_selector("[data-testid=tokens] .t", timeout=TIMEOUT)
    assert query(page)["row"].startswith("groups/") and query(page)["src"] == "trl-run"
    assert not page.errors and not page.outside_requests


def test_a_run_that_cannot_be_opened_is_named(page, app_url, other):
    page.goto(url_of(app_url, "trl-run"))
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    before = _before(page)
    page.fill("[data-testid=run-vs-input]", other + "-missing")
    page.press("[data-testid=run-vs-input]", "Enter")
    _answered(page, before)
    said = page.inner_text("[data-testid=run-vs-status]")  # why, as the reader found it: nothing under that name
    assert "cannot be compared: " in said and f"{other}-missing: not found" in said, said
    assert query(page)["vs"] == other + "-missing"
    before = _before(page)
    page.click("[data-testid=run-vs-clear]")
    _answered(page, before)
    assert "vs" not in query(page) and page.locator("[data-testid=run-vs-sides]").count() == 0
    assert not page.errors


def test_the_task_matched_by_title_is_followed_in_both(page, app_url, other):
    from rollout_trace.artifact.run import open_run

    task5 = next(g.task_id for g in open_run("trl-run").groups if g.title.startswith("[task 5]"))
    page.goto(url_of(app_url, "trl-run", vs=other, vs_task=task5))
    page.wait_for_selector(".rp-vsside [data-testid=run-vs-rollout]", timeout=TIMEOUT)
    assert page.locator(".rp-vsside").nth(1).locator("[data-testid=run-vs-rollout]").count() == 8  # B names it by another id


def test_runs_that_share_no_task_offer_none_to_follow(page, app_url, tmp_path):
    """Every task of the other run under another id and title: no empty "follow a task" choice, a line saying so."""
    from support.run_tables import bundled_rows, changed, write_run

    rows = bundled_rows()
    apart = str(write_run(tmp_path / "apart", changed(
        rows, task_id=[None if t is None else "d" * 40 for t in rows["task_id"].to_pylist()],
        title=[None if t is None else "another task" for t in rows["title"].to_pylist()])))
    page.goto(url_of(app_url, "trl-run", vs=apart))
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    _answered(page)
    assert "0 tasks in both runs" in page.inner_text("[data-testid=run-vs-status]")
    assert page.locator("[data-testid=run-vs-task-pick]").count() == 0
    assert "share no task" in page.inner_text("[data-testid=run-vs-no-tasks]")
    assert not page.errors


def test_two_long_runs_compared_are_smoothed_as_the_run_pages_charts_are(page, app_url, tmp_path_factory):
    """Two runs of 2,000 versions overlaid raw are as many zigzags as pixels, one over the other: the compared
    charts say so and follow the run page's one smoothing slider (each run's raw curve faint beneath its EMA), and
    the crosshair reads both runs' raw value with its EMA."""
    from support.scale_run import make_run

    a, b = tmp_path_factory.mktemp("long-a") / "run", tmp_path_factory.mktemp("long-b") / "run"
    make_run(a, versions=2000, groups=1, k=2)
    make_run(b, versions=2000, groups=1, k=2, zero_spread=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(url_of(app_url, str(a), vs=str(b), smooth="0"))  # raw, asked for (a long run opens smoothed)
    page.wait_for_selector("[data-testid=run-versions]", timeout=TIMEOUT)
    _answered(page)
    page.wait_for_selector("#cmp-reward-plot canvas", timeout=TIMEOUT)
    note = page.locator("#cmp-reward-plot .rp-chart-note").inner_text()
    assert "2,000 versions, more than its pixels: smooth them above" in note
    assert "EMA" not in page.locator("#cmp-reward-plot .rp-legend").inner_text()
    page.locator("[data-testid=run-smooth]").evaluate(
        "el => { el.value = '0.9'; el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true})); }")
    for p in PLOTS:  # every compared chart, as every line chart of the run
        page.wait_for_function(f"/faint: raw · bold: EMA 0.9/.test(document.querySelector('#{p} .rp-legend').textContent)",
                               timeout=TIMEOUT)
    assert page.locator("#cmp-reward-plot .rp-chart-note").count() == 0  # smoothed: nothing more to say
    page.locator("#cmp-reward-plot").scroll_into_view_if_needed()
    over = page.locator("#cmp-reward-plot .u-over").bounding_box()
    page.mouse.move(over["x"] + over["width"] * 0.5, over["y"] + over["height"] / 2)
    readout = page.locator("#cmp-reward-plot [data-testid=chart-readout]")
    readout.wait_for(state="visible", timeout=TIMEOUT)
    rows = readout.locator(".rp-read-row").all_inner_texts()
    assert len(rows) == 2 and all("(EMA 0.9: " in r for r in rows), rows
    page.locator(VERSUS).screenshot(path=str(SHOTS / "run-compare-smoothed-1440x900-light.png"))
    assert not page.errors and not page.outside_requests
