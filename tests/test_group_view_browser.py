"""The group view in a real browser: the group map of the bundled SmolLM2 group and of a synthetic group with
different rewards, opening a rollout from a cell and coming back, the `?rollout=&turn=` deep link, comparing
two siblings (the divergence marked), the advantage token mode, screenshots light and dark at two sizes, and the
map and compare drawn from records holding markup."""

from __future__ import annotations

import msgspec
import pytest
from test_group_view import REWARDS, make_group

from conftest import SHOTS
from rollout_trace.artifact.group import grpo_advantages
from support import pages
from support.pages import query, url_of
from viewer import assets
from viewer.contract import encode
from viewer.group import Compare, CompareSide, GroupCell, GroupMap, GroupRow
from viewer.index.contract import IndexPage
from viewer.numbers import number

pytestmark = pytest.mark.browser
TIMEOUT = 60_000


@pytest.fixture(scope="module")
def grp(tmp_path_factory):
    return make_group(tmp_path_factory.mktemp("grpb") / "grp")




def open_map(page, url: str):
    page.goto(url)
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    return page


def order(page) -> list[int]:
    return page.locator("[data-testid=group-row]").evaluate_all("rs => rs.map(r => Number(r.dataset.rollout))")



def shots(page, name: str):
    pages.shots(page, f"group-{name}")

def test_bundled_group_map(page, app_url):
    open_map(page, url_of(app_url, "smollm2-group"))
    assert page.locator("[data-testid=group-row]").count() == 4
    text = page.locator("[data-testid=group-map]").inner_text()
    assert "K=4" in text and "same advantage" in text and "-0.100" in text
    assert page.locator(".tv-tokens").count() == 0
    # the findings column names which rollout the search panel's chart counts (cut-at-limit: rollout 2): filled in
    # once the panel's index of the group is built, when the map was drawn before it
    cut = page.locator('[data-testid=group-row][data-rollout="2"] [data-testid=group-findings] .ci-finding')
    cut.wait_for(timeout=TIMEOUT)
    assert cut.inner_text() == "cut-at-limit"
    others = page.locator('[data-testid=group-row]:not([data-rollout="2"]) [data-testid=group-findings]')
    assert others.all_inner_texts() == ["-"] * 3
    SHOTS.mkdir(parents=True, exist_ok=True)
    shots(page, "bundled")
    assert page.errors == []


def test_a_run_groups_map_names_its_rollouts_findings(page, app_url):
    open_map(page, url_of(app_url, "trl-run", version=1, group=0))
    cells = page.locator("[data-testid=group-row] [data-testid=group-findings]")
    assert sorted(cells.all_inner_texts()) == ["-", "drift-fork", "drift-fork", "drift-fork"]
    assert page.errors == []


def test_synthetic_group_map_open_a_cell_and_back(page, app_url, grp):
    open_map(page, url_of(app_url, str(grp)))
    adv = grpo_advantages(REWARDS)
    assert order(page) == sorted(range(4), key=lambda i: (-adv[i], i))
    assert page.locator("tr[data-rollout='3'] .gm-status").inner_text().startswith("timed-out")
    assert page.locator("tr[data-rollout='1'] .gm-bar-fill.pos").count() == 1
    assert page.locator("tr[data-rollout='2'] .gm-bar-fill.neg").count() == 1
    shots(page, "synthetic")
    page.locator("tr[data-rollout='2'] [data-testid=group-cell]").first.click()
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    q = query(page, blanks=True)
    assert q["rollout"] == "2" and q["turn"] == "0" and "row" not in q  # the root group: no empty row=
    page.reload()  # the link without row= opens the same rollout from the same map
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    assert "back to the group map" in page.locator("[data-testid=back-to-index]").inner_text()
    assert "back to the group map" in page.locator("[data-testid=back-to-index]").inner_text()
    assert "advantage " + f"{adv[2]:+.3f}" in page.locator(".ci-backbar").inner_text()
    page.locator("[data-testid=back-to-index]").click()
    page.wait_for_selector("[data-testid=group-map]", timeout=TIMEOUT)
    page.wait_for_function("!document.querySelector('.tv-tokens')", timeout=TIMEOUT)
    assert "rollout" not in query(page, blanks=True) and "row" not in query(page, blanks=True)
    assert page.errors == []


def test_deep_link_and_advantage_mode(page, app_url, grp):
    page.goto(url_of(app_url, str(grp), rollout=1, turn=0))
    page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
    assert "back to the group map" in page.locator("[data-testid=back-to-index]").inner_text()
    page.locator("[data-mode=advantage]").click()
    page.wait_for_selector(".t.adv-pos", timeout=TIMEOUT)
    assert page.locator(".t.adv-neg").count() == 0
    legend = page.locator(".tv-legend").inner_text()
    assert f"{grpo_advantages(REWARDS)[1]:+.3f}" in legend
    colour = page.locator(".t.adv-pos").first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert colour.startswith("rgba(22, 163, 74")
    page.screenshot(path=str(SHOTS / "group-advantage-mode.png"))
    # a negative sibling is red; a rollout opened on its own says its advantage is unknown
    page.goto(url_of(app_url, str(grp), rollout=2, turn=0, mode="advantage"))
    page.wait_for_selector(".t.adv-neg", timeout=TIMEOUT)
    page.goto(url_of(app_url, str(grp / "rollout-00"), mode="advantage"))
    page.wait_for_selector(".t.adv-unknown", timeout=TIMEOUT)
    assert "no advantage here: this rollout was opened on its own" in page.locator(".tv-legend").inner_text()
    assert page.errors == []


def test_compare_two_siblings(page, app_url, grp):
    open_map(page, url_of(app_url, str(grp)))
    assert page.locator("[data-testid=compare]").is_disabled()
    page.locator("tr[data-rollout='0'] [data-testid=group-pick]").check()
    page.locator("tr[data-rollout='1'] [data-testid=group-pick]").check()
    page.locator("[data-testid=compare]").click()
    page.wait_for_selector("[data-testid=compare-side]", timeout=TIMEOUT)
    assert page.locator("[data-testid=compare-side]").count() == 2
    assert page.locator("[data-testid=divergence]").count() == 2
    head = page.locator(".gm-cmp-h").inner_text()
    assert "their generated tokens" in head and "differ" in head
    assert page.locator(".gm-calls").count() == 2 and "write(" in page.locator(".gm-callrow").inner_text()
    page.locator("[data-testid=divergence]").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "group-compare.png"), full_page=True)
    # the bundled real group: the siblings already part in the prompt (each sandbox has its own folder)
    open_map(page, url_of(app_url, "smollm2-group"))
    page.locator("tr[data-rollout='0'] [data-testid=group-pick]").check()
    page.locator("tr[data-rollout='2'] [data-testid=group-pick]").check()
    page.set_viewport_size({"width": 1280, "height": 720})
    page.locator("[data-testid=compare]").click()
    page.wait_for_selector("[data-testid=divergence]", timeout=TIMEOUT)
    # the answer is brought into sight (it lands below the map): its heading in the screen's top half, its sides below
    head = page.locator(".gm-cmp-h").bounding_box()
    assert 0 <= head["y"] < 360, head
    shots(page, "compare-bundled")
    # the link says it: shared, it opens on the same comparison; anything else the page shows drops it
    assert (query(page)["cmp"], query(page)["cturn"]) == ("0,2", "0")
    shared = page.url
    open_map(page, shared)
    page.wait_for_selector("[data-testid=divergence]", timeout=TIMEOUT)
    ticked = page.locator("[data-testid=group-pick]:checked").evaluate_all("cs => cs.map(c => c.dataset.rollout)")
    assert ticked == ["0", "2"] or sorted(ticked) == ["0", "2"]
    assert page.locator("[data-testid=compare-side]").count() == 2
    page.locator("tr[data-rollout='2'] .gm-open").first.click()
    page.wait_for_selector(".tv-tokens .t", timeout=TIMEOUT)
    assert "cmp" not in query(page) and "cturn" not in query(page)
    open_map(page, shared.replace("cmp=0%2C2", "cmp=0%2C99").replace("cmp=0,2", "cmp=0,99"))  # no rollout 99: the map alone
    assert page.locator("[data-testid=group-pick]:checked").count() == 0
    assert page.errors == []


def _row(i: int, adv: float, tools: tuple[str, ...] = ("bash",), failed: bool = False) -> GroupRow:
    return GroupRow(rollout=i, path=f"rollout-{i:02d}", status="ok", reward=adv, advantage=adv,
                    cells=[GroupCell(turn=0, tools=list(tools), failed=failed, trained=True, output_tokens=5)])


def _side(i: int) -> CompareSide:
    return CompareSide(rollout=i, turn=0, turns=1, start=0, text=["<i>p</i>"], mask="0", prompt_tokens=1, length=3,
                       out_text=["<img src=y>", f"<b>{i}"], out_mask="11", out_total=2,
                       tools=["<svg onload=alert(2)>"], failed=False)


def test_markup_in_a_map_and_a_compare_is_drawn_as_text(page):
    """The page draws a group map and a compare from their records (no app: the index's script on a page of its
    own): markup in a title, a tool name, a token or a note stays text, and numbers are written as Python writes
    them (an exact tie rounded to even)."""
    m = GroupMap(path="", title="<script>alert(1)</script>", model="m", k=2, max_abs_advantage=1.0, max_turns=1,
                 rows=[_row(0, 0.0625, tools=("<img src=x onerror=alert(1)>",), failed=True), _row(1, -1.0)])
    value = encode(IndexPage(serial=1, mode="group", src="s", row="", group=m)).decode()
    answer = {"compare": msgspec.to_builtins(Compare(turn=0, diverge_at=2, output_diverge_at=1, prompt_diverge_at=None,
                                                     a=_side(0), b=_side(1), note="<u>note</u>"))}
    page.route("http://127.0.0.1:9/**", lambda r: r.fulfill(
        body="<!doctype html><div id='x'><div class='ci-mount'></div></div>", content_type="text/html"))
    page.goto("http://127.0.0.1:9/map")
    page.add_script_tag(content=assets.read("collection_index.js"))
    page.evaluate("""([value, answer]) => {
      window.alerted = 0; window.alert = () => { window.alerted++; };
      CollectionIndex.mountInApp(document.getElementById('x'), {value},
        {index: async () => null, compare: async () => answer}, () => {}, () => {});
    }""", [value, answer])
    gm = page.locator("[data-testid=group-map]")
    assert "<script>alert(1)</script>" in gm.locator(".gm-head").inner_text()
    cell = page.locator("tr[data-rollout='0'] [data-testid=group-cell]")
    assert cell.inner_text() == "✗ <img src=x onerror=alert(1)>" and cell.locator(".gm-fail").count() == 1
    assert page.locator("tr[data-rollout='0'] .gm-reward").inner_text() == number(0.0625) == "+0.062"
    assert page.locator("tr[data-rollout='0'] .gm-bar-fill.pos").count() == 1
    assert page.locator("tr[data-rollout='1'] .gm-bar-fill.neg").count() == 1
    page.locator("tr[data-rollout='0'] [data-testid=group-pick]").check()
    page.locator("tr[data-rollout='1'] [data-testid=group-pick]").check()
    page.locator("[data-testid=compare]").click()
    page.wait_for_selector("[data-testid=compare-side]", timeout=TIMEOUT)
    box = page.locator("[data-testid=compare-box]")
    said = box.inner_text()
    assert "<img src=y>" in said and "<svg onload=alert(2)>" in said and "<u>note</u>" in said
    assert "their generated tokens are the same for 1 token, then differ (at generated token 1)" in said
    assert "their prompts are identical (1 token)" in said
    assert page.locator("[data-testid=divergence]").count() == 2
    assert page.locator("#x script, #x img, #x svg, #x u, #x b:not(.gm-head b, .gm-calls b, .gm-cmp-h b)").count() == 0
    assert page.evaluate("window.alerted") == 0 and page.errors == []


@pytest.mark.parametrize("width", [1024, 1280])
def test_a_run_groups_heading_keeps_its_name_whole(page, app_url, width):
    """A run's group map names "GRPO group · K=4" on one line and its model whole (63 characters, was cut at 40)."""
    from rollout_trace.artifact.run import open_run

    run = open_run("trl-run")
    g = next(g for g in run.groups if g.k == 4)
    model = run.open(next(r.path for r in run.rows if r.path)).summary.model
    run.close()
    page.set_viewport_size({"width": width, "height": 720})
    open_map(page, url_of(app_url, "trl-run", version=g.policy_version, group=g.group_id, segment=g.segment))
    name = page.locator(".gm-head .gm-nowrap")
    assert name.inner_text() == "GRPO group · K=4"
    line = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.gm-head')).lineHeight) || 20")
    assert name.bounding_box()["height"] < 1.5 * line  # one line
    assert len(model) > 40 and model in page.locator(".gm-head").inner_text()


@pytest.mark.parametrize("width", [1024, 1280])
def test_a_run_groups_map_reads_in_its_box(page, app_url, width):
    """Where the group sits is a line of its own above what the group is (they ran together as one sentence); the
    map's columns, its findings too, fit its box; a rollout whose rows met different fates says so by its turns in
    five lines (seven at 1024 px)."""
    page.set_viewport_size({"width": width, "height": 768})
    open_map(page, url_of(app_url, "trl-run", version=3, group=2))
    got = page.evaluate("""() => {
      const place = document.querySelector('[data-testid=group-place]').getBoundingClientRect();
      const name = document.querySelector('.gm-head .gm-nowrap').getBoundingClientRect();
      const box = document.querySelector('.gm-tablebox'), cell = document.querySelector('.gm-fate.partly');
      return {place_bottom: place.bottom, name_top: name.top, fits: box.scrollWidth <= box.clientWidth + 1,
              lines: cell.getBoundingClientRect().height / parseFloat(getComputedStyle(cell).lineHeight)};
    }""")
    assert got["place_bottom"] <= got["name_top"] + 1 and got["fits"] and got["lines"] <= 6, got  # the cell's padding is a half line
    assert page.errors == []


def test_a_map_drawn_again_when_its_findings_come_keeps_its_cursor(page, app_url, tmp_path):
    """A group whose search index is not built yet is drawn with its findings unknown, then again once the search
    panel has read it: the row cursor (Enter opens it; j/k move it) is still on the map, on the same row."""
    import shutil

    from conftest import EXAMPLE

    fresh = tmp_path / "group"
    shutil.copytree(EXAMPLE.parent / "smollm2-group", fresh)  # a source no test has indexed
    open_map(page, url_of(app_url, str(fresh)))
    cut = page.locator('[data-testid=group-row][data-rollout="2"] [data-testid=group-findings] .ci-finding')
    cut.wait_for(timeout=TIMEOUT)  # drawn again with its findings
    cursor = page.locator("tr.gm-row.ci-cursor")
    assert cursor.count() == 1 and cursor.get_attribute("data-rollout") == str(order(page)[0])
    assert page.errors == []
