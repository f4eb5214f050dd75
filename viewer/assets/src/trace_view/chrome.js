// -- the view's chrome: presentation mode, the keyboard help, the export menu, the token tooltip ------------
// Each toggle takes `on` (undefined: flip it) and says whether it is open (aria-pressed, aria-expanded).
import {el, keyScrolled} from "../dom.js";
import {errorText, refused} from "./format.js";
import {storyOf} from "./place.js";
import {exportPlace} from "./turn.js";
/** @import {View} from "./mount.js" */

/** @param {View} v @param {boolean} [on] */
export function present(v, on) {
  const {view, pane, $} = v;
  const shown = on === undefined ? !view.classList.contains("present") : on;
  view.classList.toggle("present", shown);
  document.body.classList.toggle("tv-present", shown);  // app chrome (tabs, source row) hides on this
  $(".tv-present-btn").setAttribute("aria-pressed", String(shown));
  pane.fit(true);
  if (shown) { keyScrolled($(".tv-tokens")); pane.goTo(storyOf(v.O, v.st, v.trainer) || 0); }  // the tokens take PageDown
}

/** @param {View} v @param {boolean} [on] */
export function toggleHelp(v, on) {
  const help = v.$(".tv-help");
  help.hidden = on === undefined ? !help.hidden : !on;
  v.$(".tv-help-btn").setAttribute("aria-expanded", String(!help.hidden));
}

/** The export menu: the server builds the page, the browser saves it (no file on the server). The link of
 *  the last file written is kept until the next one replaces it. @param {View} v */
export function exportMenu(v) {
  const {$, api} = v;
  let exportUrl = "";
  /** @param {boolean} [on] */
  function toggle(on) {
    const m = $(".tv-export-menu");
    m.hidden = on === undefined ? !m.hidden : !on;
    $(".tv-export-btn").setAttribute("aria-expanded", String(!m.hidden));
  }
  /** @param {string} what: "rollout" or "turn" */
  async function save(what) {
    const ask = api.export;
    if (!ask) return;  // the menu is drawn only when the view can export
    const out = $(".tv-export-status");
    out.textContent = "writing the file…";
    /** @type {Answer<Exported>} */
    let got;
    try { got = await ask({what, ...exportPlace(v)}); } catch (e) { got = {error: errorText(e)}; }
    if (!got || refused(got)) { out.replaceChildren(el("span", {class: "tv-err", text: refused(got) ? got.error : "no answer from the server"})); return; }
    if (exportUrl) URL.revokeObjectURL(exportUrl);
    exportUrl = URL.createObjectURL(new Blob([got.html], {type: "text/html"}));
    out.replaceChildren(el("a", {href: exportUrl, download: got.name, "data-testid": "export-link", text: got.name}), ` · ${got.size}`,
      ...(got.note ? [el("div", {class: "tv-dim", text: got.note})] : []));
    const link = out.querySelector("a");
    if (link) link.click();
  }
  return {toggle, save};
}

/** The tooltip under (or, near the window's bottom, above) a token. @param {HTMLElement} tip
 *  @param {HTMLElement} span @param {string} text */
export function showTip(tip, span, text) {
  tip.textContent = text;
  tip.hidden = !text;
  const r = span.getBoundingClientRect();
  tip.style.left = Math.max(4, Math.min(r.left, window.innerWidth - tip.offsetWidth - 8)) + "px";
  tip.style.top = (r.bottom + tip.offsetHeight + 12 > window.innerHeight ? r.top - tip.offsetHeight - 6 : r.bottom + 6) + "px";
}
