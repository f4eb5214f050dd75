"""The trainer's view in the page: the server function and its records, and in a real browser
the mismatch / entropy / loss modes, the part picker, hover, per-turn and per-rollout statistics and
the log-ratio histogram, light and dark."""

from __future__ import annotations

import re

import msgspec
import pytest

from conftest import EXAMPLE, SHOTS
from rollout_trace.artifact import open_artifact
from viewer.contract import MODES, TRAINER_MODES, Outline, TrainerSummary, TrainerTurn, encode
from viewer.render.outline import outline
from viewer.requests import read
from viewer.rollout import Rollout
from viewer.server_api import TrainerRequest
from viewer.trainer_records import BadRequest, parse_request, trainer_summary, trainer_turn

TIMEOUT = 60_000
F32, BF16 = "smollm2-135m-instruct.float32.cpu.t1", "smollm2-135m-instruct.bfloat16.cpu.t1"


@pytest.fixture(scope="module")
def rollout() -> Rollout:
    return Rollout.load(open_artifact(str(EXAMPLE)))


# -- records and the server function --------------------------------------------------------------------

def test_outline_offers_trainer_modes_only_with_a_part(rollout):
    o = msgspec.json.decode(encode(outline(rollout)), type=Outline)
    assert [m.id for m in o.modes] == list(MODES)
    assert [p.dtype for p in o.trainer.parts] == ["float32", "bfloat16"]
    assert o.trainer.eps_choices == [(0.2, 0.2), (0.2, 0.28)] and o.advantage is None
    import dataclasses
    bare = Rollout(dataclasses.replace(rollout.artifact, rescores={}), rollout.vocab)
    ob = outline(bare)
    assert ob.trainer is None and not TRAINER_MODES & {m.id for m in ob.modes}


def test_trainer_turn_record(rollout):
    t = trainer_turn(rollout, 0, BF16, 0.2, 0.2, -1.0)
    t = msgspec.json.decode(encode(t), type=TrainerTurn)  # round-trips as the typed record
    n = rollout.artifact.turns[0].n_output
    assert t.start == rollout.artifact.turns[0].n_prompt
    assert len(t.log_ratio) == len(t.entropy) == len(t.topk_text) == len(t.trained) == len(t.clipped) == n
    k = 0
    assert t.log_ratio[k] == pytest.approx(t.trainer_lp[k] - t.engine_lp[k], abs=2e-6)
    assert set(t.clipped) <= {"0", "l", "h"} and all(len(a) == 5 for a in t.topk_text)
    # A = -1: loss is +ratio where unclipped
    assert t.loss[k] == pytest.approx(2.718281828 ** t.log_ratio[k], abs=1e-4)


def test_summary_differs_by_part(rollout):
    f = trainer_summary(rollout, F32, 0.2, 0.2, 1.0)
    b = trainer_summary(rollout, BF16, 0.2, 0.2, 1.0)
    assert isinstance(f, TrainerSummary) and len(f.turns) == len(rollout.artifact.turns)
    assert f.rollout.max_abs_log_ratio < 1e-3 < b.rollout.max_abs_log_ratio
    assert sum(b.rollout.histogram) == b.rollout.with_engine


@pytest.mark.parametrize("req, why", [({"part": "nope"}, "no such rescore part"),
                                      ({"part": F32, "eps": [0.1, 0.1]}, "eps must be"),
                                      ({"part": F32, "advantage": 1e6}, "finite"), ({"part": F32, "advantage": "nan"}, "advantage a number"),
                                      ({"part": F32, "advantage": "x"}, "advantage a number")])
def test_bad_requests(rollout, req, why):
    unread: list[str] = []
    asked = read(req, TrainerRequest, unread)
    with pytest.raises(BadRequest, match=why):
        parse_request(rollout, asked, unread)


def test_server_function(rollout):
    from viewer.ui.service import Service
    from viewer.ui.view_tab import ViewTab

    tab = ViewTab(Service("scripted-smollm2", public=False))
    key, _ = tab.service.store.open("test|trainer", lambda: rollout)
    out = tab.trainer({"key": key, "turn": 1, "part": BF16, "eps": [0.2, 0.28], "advantage": 1})
    assert out["turn"] == 1 and list(out["eps"]) == [0.2, 0.28]
    s = tab.trainer({"key": key, "part": F32, "summary": True})
    assert s["rollout"]["tokens"] == sum(t.n_output for t in rollout.artifact.turns)
    assert "error" in tab.trainer({"key": key, "turn": 99, "part": F32})
    assert "error" in tab.trainer({"key": "nope", "turn": 0, "part": F32})
    assert "error" in tab.trainer("junk")


# -- in the browser -----------------------------------------------------------------------------------

def _open(page, url):
    page.goto(url)
    # a page's first load in a cold app reads the rollout's trainer part and imports what the trainer view needs:
    # on a 2-core machine busy with the suite's other half (a real model serving), that has taken a minute
    page.wait_for_selector(".t[data-mask]", timeout=4 * TIMEOUT)
    page.wait_for_selector("[data-testid=trainer-stats]", timeout=TIMEOUT)


def _painted(page, cls_re: str) -> int:
    return page.locator(".t[data-mask='1']").evaluate_all(
        f"els => els.filter(e => /{cls_re}/.test(e.className)).length")


def _tip(page, selector):
    page.locator(selector).first.hover()
    return page.locator(".tv-tip").inner_text()


def test_mismatch_mode_and_parts(page, app_url):
    _open(page, f"{app_url}/?turn=0&mode=mismatch")
    page.wait_for_function("document.querySelectorAll('.t[class*=mm-]').length > 0", timeout=TIMEOUT)
    assert "clip band [0.80, 1.20]" in page.locator("[data-testid=clip-band]").inner_text()
    gen = page.locator(".t[data-mask='1']").count()
    assert _painted(page, "mm-") == gen  # every generated token carries a ratio colour
    assert page.locator(".t[data-mask='0'][class*=mm-]").count() == 0  # context is not coloured
    f32 = page.locator("[data-testid=trainer-stats]").inner_text()
    assert _painted(page, "mm-0") == gen  # float32: all within 1e-3
    page.click("[data-tpart='%s']" % BF16)
    page.wait_for_function("document.querySelectorAll('.t[class*=mm-n], .t[class*=mm-p]').length > 0", timeout=TIMEOUT)
    # the panel is drawn again on a part's click: between two draws it may not be there
    page.wait_for_function(f"(document.querySelector('[data-testid=trainer-stats]')?.innerText ?? {f32!r}) !== {f32!r}",
                           timeout=TIMEOUT)
    bf = page.locator("[data-testid=trainer-stats]").inner_text()
    assert re.search(r"max \|log ratio\| 0\.1\d", bf) and "outside clip [0.8, 1.2] 2" in bf
    assert page.locator(".t.tr-out").count() >= 1
    tip = _tip(page, ".t[data-mask='1'].tr-out")
    for word in ("trainer logprob", "engine logprob", "ratio", "k3 KL", "entropy", "top-1", "top-5", "OUTSIDE"):
        assert word in tip, word
    page.click("[data-teps='1']")
    page.wait_for_function("!!document.querySelector('[data-testid=clip-band]')?.innerText.includes('1.28')",
                           timeout=TIMEOUT)
    nav = page.locator("[data-testid=nav-trainer]")
    assert nav.count() == 3 and "outside the band" in nav.first.inner_text()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.screenshot(path=str(SHOTS / "trainer_mismatch_light.png"))
    assert page.errors == [] and page.outside_requests == []


def test_histogram_entropy_and_dark(page, app_url):
    _open(page, f"{app_url}/?turn=1&mode=entropy")
    page.wait_for_function("document.querySelectorAll('.t[class*=en-]').length > 0", timeout=TIMEOUT)
    assert _painted(page, "en-") == page.locator(".t[data-mask='1']").count()
    svg = page.locator("[data-testid=trainer-histogram]")
    assert svg.locator("rect").count() == 17 and "log ratio" in svg.text_content()
    page.click("[data-tpart='%s']" % BF16)
    page.wait_for_function("document.querySelectorAll('[data-testid=trainer-histogram] rect[height]:not([height=\"0\"])').length > 3")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.screenshot(path=str(SHOTS / "trainer_entropy_light.png"))
    page.evaluate("document.body.classList.add('dark')")
    page.click("[data-mode=mismatch]")
    page.wait_for_function("document.querySelectorAll('.t[class*=mm-p], .t[class*=mm-n]').length > 0", timeout=TIMEOUT)
    page.screenshot(path=str(SHOTS / "trainer_mismatch_dark.png"))
    assert _min_contrast(page) >= 4.5
    page.evaluate("document.body.classList.remove('dark')")
    assert _min_contrast(page) >= 4.5


def test_loss_mode_with_both_signs(page, app_url):
    _open(page, f"{app_url}/?turn=0&mode=loss")
    page.click("[data-tpart='%s']" % BF16)
    page.wait_for_function("document.querySelectorAll('.t[class*=ls-u]').length > 0", timeout=TIMEOUT)
    assert page.locator(".t[class*=ls-d]").count() == 0  # A = +1: every unclipped token is raised
    clipped_pos = page.locator(".t.ls-clip").count()
    legend = page.locator(".tv-legend").inner_text()
    assert clipped_pos == 1 and "A = +1.000 (supposed: a rollout opened on its own has no group advantage" in legend
    assert "clipped high" in _tip(page, ".t.ls-clip")
    page.click("[data-tadv='-1']")
    page.wait_for_function("document.querySelectorAll('.t[class*=ls-d]').length > 0", timeout=TIMEOUT)
    assert page.locator(".t[class*=ls-u]").count() == 0
    page.set_viewport_size({"width": 1440, "height": 900})
    page.screenshot(path=str(SHOTS / "trainer_loss_light.png"))
    page.click("[data-scope=row]")
    assert page.locator("[data-mode=loss]").is_disabled()  # per turn only


def _min_contrast(page) -> float:
    """The lowest text/background contrast over coloured generated tokens (solid backgrounds only)."""
    return page.evaluate("""() => {
      const rgb = (s) => (s.match(/[\\d.]+/g) || []).map(Number);
      const lum = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
                                   return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
      let worst = 99;
      for (const e of document.querySelectorAll('.t[class*=mm-], .t[class*=en-], .t[class*=ls-u], .t[class*=ls-d]')) {
        const cs = getComputedStyle(e), bg = rgb(cs.backgroundColor);
        if (bg.length < 3 || (bg.length === 4 && bg[3] < 1)) continue;
        const a = lum(rgb(cs.color)), b = lum(bg);
        worst = Math.min(worst, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
      }
      return worst;
    }""")


@pytest.mark.browser
def test_the_chosen_part_is_kept_in_the_url(page, app_url):
    """float32 or bfloat16: the picked rescore part is in the page's link, so a reload or a shared link shows it."""
    _open(page, f"{app_url}/?turn=0&mode=mismatch")
    page.click("[data-tpart='%s']" % BF16)
    page.wait_for_function(f"new URL(location.href).searchParams.get('part') === {BF16!r}", timeout=TIMEOUT)
    page.reload()
    page.wait_for_selector(f"[data-tpart='{BF16}'].on", timeout=TIMEOUT)
    assert "bfloat16" in page.locator("[data-testid=legend-part]").inner_text()
    page.click("[data-mode=mask]")
    page.wait_for_function("new URL(location.href).searchParams.get('mode') === 'mask'")
    assert f"part={BF16}" in page.url  # a mode change keeps it
    assert page.errors == []
