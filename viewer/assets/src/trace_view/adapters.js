// -- adapters ----------------------------------------------------------------------------------------
import {el, problemsBox, sentValue} from "../dom.js";
import {isLive, watchRun} from "./live.js";
/** @import {AppState} from "./live.js" */
import {mount} from "./mount.js";

/** @param {HTMLElement} element @param {{value: string}} props @param {ViewServer} server
 *  @param {(name: string, fn: () => void) => void} watch */
export function mountInApp(element, props, server, watch) {  // inside gr.HTML: chunks come from server functions
  // This component's state: the rollout on screen (its server key, its source) and the capture watched.
  /** @type {AppState} */
  const app = {key: null, src: null, live: null};
  /** @overload @param {TrainerQuery & {summary: true}} q @returns {Promise<Answer<TrainerSummary>>} */
  /** @overload @param {TrainerQuery & {turn: number}} q @returns {Promise<Answer<TrainerTurn>>} */
  /** @param {TrainerQuery & {turn?: number, summary?: true}} q */
  function trainer(q) { return server.trainer({...q, key: app.key}); }
  /** @type {TraceApi} */
  const api = {
    chunk: (q) => server.chunk({...q, key: app.key}),
    training: (run) => server.training({key: app.key, run}),
    trainer,
    export: (q) => server.export({...q, key: app.key}),
    sibling: (k) => { if (app.live) app.live.sibling(k); },
    cancelRun: () => { if (app.live) server.live_cancel({run: app.live.run}); },
    linkPart: () => new URLSearchParams(window.location.search).get("part"),
    onState: (s) => {
      const u = new URL(window.location.href);
      if (app.src) u.searchParams.set("src", app.src); else u.searchParams.delete("src");
      if (!("part" in s)) u.searchParams.delete("part");  // a rollout without rescore parts names none
      for (const [k, v] of Object.entries(s)) if (v === "") u.searchParams.delete(k); else u.searchParams.set(k, String(v));
      window.history.replaceState(null, "", u.toString());
    },
  };
  // The page is built with the default rollout in it. A deep link (?src, ?turn...) is answered by the
  // page-load event instead: skip the built value rather than paint the wrong view first.
  // Its parameters are `src` and the fields of the initial place (viewer/contract.py `Initial`).
  const q = new URLSearchParams(window.location.search);
  /** @param {Opened} o */
  const deepLink = (o) => ["src", ...Object.keys(o.initial)].some((k) => q.has(k));
  function start() {
    const box = element.querySelector(".tv-mount");
    if (!box || !props.value) return;
    /** @type {Opened | Failed} */
    const opened = sentValue(props);
    if ("problems" in opened) {  // a message (or, while the index shows, nothing) replaces the view: its listeners retire
      app.live = null;
      // the CSS hides the whole view while it holds .tv-cleared (viewer/assets/app_chrome.css)
      box.replaceChildren(opened.problems ? problemsBox(opened.problems) : el("div", {class: "tv-cleared", hidden: true}));
      return;
    }
    if (opened.built && deepLink(opened)) { box.replaceChildren(el("div", {class: "tv-dim", style: "padding:12px", text: "opening the link…"})); return; }
    const watched = app.live;
    if (opened.live && watched && watched.run === opened.live.run) { watched.apply(opened); return; }  // in place
    /** @param {Opened} o @param {ViewPlace | null} [keep] */
    const show = (o, keep) => {
      app.key = o.key; app.src = o.src;
      const v = mount(/** @type {HTMLElement} */ (box), keep ? {...o, initial: {turn: keep.turn, mode: keep.mode, scope: keep.scope}} : o, api, !!o.built);
      window.__traceView = {...v, state: () => ({...v.state(), key: app.key}), watching: () => app.live};
      return v;
    };
    if (isLive(opened)) watchRun(app, element, opened, server, show);
    else { app.live = null; show(opened); }
  }
  start();
  watch("value", start);
}

/** @param {HTMLElement} dataElement @param {HTMLElement} root */
export function mountExport(dataElement, root) {  // an exported file: every chunk it can show is embedded
  /** @type {ExportData} */
  const D = JSON.parse(dataElement.textContent || "");
  const absent = "not included in this export: export this turn alone to get its full context";
  const folded = "not in this export (it holds a bounded number of tokens): open the rollout in the app to see these";
  /** @type {TraceApi} */
  const api = {
    chunk: async (q) => {  // chunks[scope][turn or row][chunk index]; a scope present in part was folded
      const scope = (D.chunks[q.scope] || {})[q.scope === "row" ? String(q.row) : String(q.turn)];
      return scope && scope[String(q.index)] ? scope[String(q.index)] : {error: scope ? folded : absent};
    },
    training: async () => D.training,
  };
  if (D.trainer) {  // every part at the band and advantage that were on screen (viewer/export.py)
    const T = D.trainer;
    /** @overload @param {TrainerQuery & {summary: true}} q @returns {Promise<Answer<TrainerSummary>>} */
    /** @overload @param {TrainerQuery & {turn: number}} q @returns {Promise<Answer<TrainerTurn>>} */
    /** @param {TrainerQuery & {turn?: number, summary?: true}} q @returns {Promise<Answer<TrainerSummary> | Answer<TrainerTurn>>} */
    async function trainer(q) {
      return q.summary ? T.summary[q.part]
        : ((T.turns[q.part] || {})[String(q.turn)] || {error: "this export has no trainer numbers for this turn"});
    }
    api.trainer = trainer;
  }
  if (window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches) document.body.classList.add("dark");
  return mount(root, {...D.opened, note: D.note}, api);
}
