"""The group view in a real browser: the group map of the bundled SmolLM2 group and of a synthetic group with
different rewards, opening a rollout from a cell and coming back, the `?rollout=&turn=` deep link, comparing
two siblings (the divergence marked), the advantage token mode, and screenshots light and dark at two sizes."""

from __future__ import annotations

import pytest
from test_group_view import REWARDS, make_group

from conftest import SHOTS
from rollout_trace.artifact.group import grpo_advantages
from support import pages
from support.pages import query, url_of

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
    SHOTS.mkdir(parents=True, exist_ok=True)
    shots(page, "bundled")
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
    assert "their generated tokens part at generated token" in head
    assert page.locator(".gm-calls").count() == 2 and "write(" in page.locator(".gm-callrow").inner_text()
    page.locator("[data-testid=divergence]").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "group-compare.png"), full_page=True)
    # the bundled real group: the siblings already part in the prompt (each sandbox has its own folder)
    open_map(page, url_of(app_url, "smollm2-group"))
    page.locator("tr[data-rollout='0'] [data-testid=group-pick]").check()
    page.locator("tr[data-rollout='2'] [data-testid=group-pick]").check()
    page.locator("[data-testid=compare]").click()
    page.wait_for_selector("[data-testid=divergence]", timeout=TIMEOUT)
    shots(page, "compare-bundled")
    assert page.errors == []
