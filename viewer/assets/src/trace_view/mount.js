// The token view. It receives one `Opened` record (viewer/contract.py: the outline, this visitor's
// initial place, the first chunk) and asks for more token chunks as they scroll into view. mount builds it
// from its parts, each a small function over one element: the skeleton (markup.js), the navigator (turns),
// the toolbar (modes, scopes, actions), the token pane (chunks, colours, the keyboard cursor), the trainer's
// view and the live badge; what drives them shares one `View`: moving the place (turn.js), the chrome
// (chrome.js: presentation, help, export, tooltip), the listeners (input.js) and the settling (settle.js).
// Two adapters (adapters.js) mount it inside the Gradio app (chunks from a server function) and in an
// exported HTML file (chunks embedded).
// Its parts build elements and set text as textContent; the panels (panels.js) are drawn as elements too.
import {el} from "../dom.js";
import {navPart} from "./navigator.js";
import {toolbarPart} from "./toolbar.js";
import {tokenPane} from "./token_pane.js";
/** @import {TokenPane} from "./token_pane.js" */
import {trainerPart} from "./trainer.js";
/** @import {Trainer} from "./trainer.js" */
import {followBar} from "./live.js";
import {firstChunkOf, outlineFor, scopeRange, startPlace} from "./place.js";
import {viewNodes} from "./markup.js";
import {drawRollout} from "./panels.js";
import {exportPlace, fetchTraining, go, growView, setMode, setScope, tellState, trainerLanded, update} from "./turn.js";
import {exportMenu, present} from "./chrome.js";
import {listenToButtons, listenToKeys, listenToTokens} from "./input.js";
import {settleLayout} from "./settle.js";

// -- the whole view ---------------------------------------------------------------------------------
/** One mounted view: its outline and place, its elements and parts, shared by the functions that drive it
 *  (turn.js, chrome.js, input.js, settle.js). `nav` is drawn afresh as a capture grows; `training` (TRL's rows)
 *  is fetched on first use; `mounted` is false while a quiet mount leaves the URL alone.
 *  @typedef {{O: Outline, st: ViewPlace, api: TraceApi, live: boolean, hasTrainer: boolean,
 *    modes: string[], scopes: string[], $: (sel: string) => HTMLElement, view: HTMLElement, box: HTMLElement,
 *    liveBar: ReturnType<typeof followBar>, nav: ReturnType<typeof navPart>, bar: ReturnType<typeof toolbarPart>,
 *    trainer: Trainer | null, pane: TokenPane, training: Training | null, mounted: boolean,
 *    outOfRows: string | null, rowFor: number | null}} View */
/** What mount opens: an `Opened` record (or one whose place a re-mount keeps) and an export's note.
 *  @typedef {Omit<Opened, "initial"> & {initial: Partial<ViewPlace> | null, note?: string | null}} Opening */

/** @param {HTMLElement} root @param {Opening} opened @param {TraceApi} api */
export function mount(root, opened, api, quiet = false) {  // quiet: leave the URL alone until the reader moves
  const hasTrainer = !!(opened.outline.trainer && api.trainer);
  const O = outlineFor(opened.outline, hasTrainer);
  const st = startPlace(opened.initial, O);
  root.replaceChildren(viewNodes(O, !!api.export));
  // every selector asked for names an element viewNodes (or a part, at mount) drew, so none comes back empty
  const $ = (/** @type {string} */ sel) => /** @type {HTMLElement} */ (root.querySelector(sel));
  drawRollout($, O);
  const view = $(".tv");
  const liveBar = followBar($(".tv-live-box"), {follow: () => { st.follow = true; liveBar.following(true); go(v, O.turns.length - 1, true); },
                                                 sibling: (k) => api.sibling && api.sibling(k),
                                                 cancel: api.cancelRun ? () => api.cancelRun && api.cancelRun() : null});
  st.follow = !!opened.live;  // a watched capture: the view follows its newest turn until the reader moves
  /** @param {Live} L */
  const showLive = (L) => liveBar.show(L, st.follow);
  if (opened.live) showLive(opened.live);
  if (!O.turns.length) {  // nothing to page through: say so, keep the tests and reward
    $(".tv-main").replaceChildren(el("div", {class: opened.live ? "tv-dim" : "tv-error", role: "status", "data-testid": "no-turns", text: O.notice || "no agent turn"}));
    return {state: () => ({...st}), grow: (/** @type {Opened} */ _next) => false, showLive};
  }
  st.turn = Math.min(Math.max(0, st.turn | 0), O.turns.length - 1);
  st.foundTurn = st.turn;  // a search hit's tokens (st.found) are marked on the turn it opened on
  const nav = navPart($(".tv-nav"), O), bar = toolbarPart($(".tv-toolbar"), O);
  if (opened.note) { $(".tv-note-box").textContent = opened.note; $(".tv-note-box").hidden = false; }
  const first = firstChunkOf(opened.first_chunk, O, st);
  const trainer = hasTrainer ? trainerPart($(".tv-trainer-box"), $(".tv-nav"), O, api, st, () => trainerLanded(v), () => tellState(v)) : null;
  const pane = tokenPane($(".tv-tokens"), O, api, st, () => scopeRange(O, st, v.training), first, trainer);
  /** @type {View} */
  const v = {O, st, api, live: !!opened.live, hasTrainer, modes: O.modes.map((m) => m.id), scopes: O.scopes.map((s) => s.id),
             $, view, box: $(".tv-tokens"), liveBar, nav, bar, trainer, pane, training: null,
             outOfRows: null, rowFor: null,  // the mode the training rows set aside; the turn whose row they open on
             // The URL follows the reader, not the first paint: the app reads the page's own URL on load (a deep
             // link), which a rewrite at mount would replace before it is read.
             mounted: !quiet};
  const menu = exportMenu(v);
  listenToButtons(v, menu);
  listenToTokens(v);
  listenToKeys(v, menu);
  if (st.scope === "row") fetchTraining(v);
  update(v);
  v.mounted = true;
  settleLayout(v);
  if (document.body.classList.contains("tv-present")) present(v, true);  // a re-mount keeps presentation on
  return {go: (/** @type {number} */ turn, auto = false) => go(v, turn, auto), setMode: (/** @type {string} */ m) => setMode(v, m),
          setScope: (/** @type {string} */ s) => setScope(v, s), present: (/** @type {boolean | undefined} */ on) => present(v, on),
          grow: (/** @type {Opened} */ next) => growView(v, next), showLive, state: () => exportPlace(v)};
}
