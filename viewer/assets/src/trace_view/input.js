// -- the reader's input: the view's buttons, the pointer and arrow keys over the tokens, the shortcut keys ------
// Listeners sit on the view's own elements, which a re-mount replaces; the one on `document` retires once the
// view is gone (a re-mount into the same element leaves one listener, not two).
import {target} from "./format.js";
import {notInRows} from "./toolbar.js";
import {storyOf} from "./place.js";
import {go, setMode, setScope, update} from "./turn.js";
import {exportMenu, present, showTip, toggleHelp} from "./chrome.js";
/** @import {View} from "./mount.js" */

/** Every button of the view, by what it carries (data-turn, data-mode, ...) or its class.
 *  @param {View} v @param {ReturnType<typeof exportMenu>} menu */
export function listenToButtons(v, menu) {
  const {view, st, pane} = v;
  view.addEventListener("click", (ev) => {
    const b = target(ev).closest("button");
    if (!b || !view.contains(b) || b.disabled) return;
    if (b.dataset.turn !== undefined) go(v, Number(b.dataset.turn));
    else if (b.dataset.mode) setMode(v, b.dataset.mode);
    else if (b.dataset.scope) setScope(v, b.dataset.scope);
    else if (b.dataset.row !== undefined) { st.row = Number(b.dataset.row); update(v); }
    else if (b.classList.contains("tv-collapsed")) setScope(v, "full");
    else if (b.classList.contains("tv-present-btn")) present(v);
    else if (b.classList.contains("tv-jump-btn")) pane.jump(storyOf(v.O, st, v.trainer) || 0);
    else if (b.classList.contains("tv-help-btn")) toggleHelp(v);
    else if (b.classList.contains("tv-export-btn")) menu.toggle();
    else if (b.dataset.export) menu.save(b.dataset.export);
  });
}

/** The tokens: hovering shows a token's details, a click pins it and puts the cursor there, the arrow keys
 *  walk the cursor (its details follow). @param {View} v */
export function listenToTokens(v) {
  const {box, pane} = v, tip = v.$(".tv-tip");
  /** @param {HTMLElement} s */
  const tell = (s) => showTip(tip, s, pane.info(Number(s.dataset.i)));
  box.addEventListener("mouseover", (ev) => {
    const s = /** @type {HTMLElement | null} */ (target(ev).closest(".t"));
    if (s) tell(s);
  });
  box.addEventListener("mouseleave", () => { if (pane.cursorPos() === null) tip.hidden = true; });
  box.addEventListener("click", (ev) => {
    const s = /** @type {HTMLElement | null} */ (target(ev).closest(".t"));
    if (!s) return;
    box.querySelectorAll(".t.pinned").forEach((x) => x.classList.remove("pinned"));
    s.classList.add("pinned");
    pane.setCursor(Number(s.dataset.i));
    tell(s);
  });
  box.addEventListener("keydown", (ev) => {
    if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
    ev.preventDefault(); ev.stopPropagation();
    box.querySelectorAll(".t.pinned").forEach((x) => x.classList.remove("pinned"));  // the cursor is where the click was
    const s = pane.moveCursor(ev.key === "ArrowRight" ? 1 : -1);
    if (s) tell(s);
  });
}

/** The shortcut keys (the help lists them), anywhere on the page but in a text field. @param {View} v
 *  @param {ReturnType<typeof exportMenu>} menu */
export function listenToKeys(v, menu) {
  const {view, st, O, modes, scopes} = v;
  /** @param {KeyboardEvent} ev */
  const onKey = (ev) => {  // one listener per mount: a re-mount into the same element retires this one
    if (!view.isConnected) { document.removeEventListener("keydown", onKey); return; }
    const on = /** @type {HTMLElement | null} */ (ev.target);
    const tag = (on && on.tagName) || "";
    if (/INPUT|TEXTAREA|SELECT/.test(tag) || (on && on.isContentEditable) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key;
    if (k === "j" || k === "ArrowRight") go(v, st.turn + 1);
    else if (k === "k" || k === "ArrowLeft") go(v, st.turn - 1);
    else if (k === "m") { const usable = modes.filter((m) => !(st.scope === "row" && notInRows(O, m))); setMode(v, usable[(usable.indexOf(st.mode) + 1) % usable.length]); }
    else if (k === "s") setScope(v, scopes[(scopes.indexOf(st.scope) + 1) % scopes.length]);
    else if (k === "p") present(v);
    else if (k === "g") v.pane.jump(storyOf(O, st, v.trainer) || 0);
    else if (k === "?") toggleHelp(v);
    else if (k === "Escape") { toggleHelp(v, false); if (v.api.export) menu.toggle(false); present(v, false); }
    else return;
    ev.preventDefault();
  };
  document.addEventListener("keydown", onKey);
}
