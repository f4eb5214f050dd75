// -- toolbar: modes, scopes and actions; every toggle says whether it is pressed ------------------
// What each mode needs comes with it in the outline (viewer/contract.py `ModeChoice`): the page keeps no list.
import {el} from "../dom.js";
import {all, fmt} from "./format.js";
import {advantageLegend, key} from "./advantage.js";
import {fateOf} from "./navigator.js";
/** @import {Trainer} from "./trainer.js" */

/** @type {(O: Outline, id: string) => ModeChoice | undefined} */
const modeOf = (O, id) => O.modes.find((m) => m.id === id);
/** @type {(O: Outline, id: string) => boolean} */
export const isTrainerMode = (O, id) => { const m = modeOf(O, id); return !!m && m.trainer; };
/** @type {(O: Outline, id: string) => string | null} */
export const notInRows = (O, id) => { const m = modeOf(O, id); return m ? m.not_in_rows : null; };  // why a row cannot show it

/** @param {HTMLElement} bar @param {Outline} O */
export function toolbarPart(bar, O) {
  /** @param {string} kind @param {Choice[]} choices */
  const group = (kind, choices) => el("span", {class: "tv-group", role: "group", "aria-label": kind}, ...choices.map((c) =>
    el("button", {[`data-${kind}`]: c.id, title: c.help, "aria-pressed": "false", text: c.label})));
  // the scopes and the jump wrap together: the jump alone on a line of its own read as a stray button
  bar.replaceChildren(el("b", {class: "tv-turn-title"}), group("mode", O.modes), el("span", {class: "tv-tail"}, group("scope", O.scopes),
    el("button", {class: "tv-jump-btn", title: "jump to where this turn's story is: its drift, or its generated tokens (g)",
                  "aria-label": "jump to the generated tokens", text: "↓ generated"})));
  return {
    /** @param {ViewPlace} st @param {string} title */
    show(st, title) {
      const heading = bar.querySelector(".tv-turn-title");
      if (heading) heading.textContent = title;
      /** @type {NodeListOf<HTMLButtonElement>} */ (bar.querySelectorAll("[data-mode]")).forEach((b) => {
        const on = b.dataset.mode === st.mode;
        b.classList.toggle("on", on); b.setAttribute("aria-pressed", String(on));
        const why = notInRows(O, b.dataset.mode || "");
        b.disabled = st.scope === "row" && !!why;
        if (b.disabled && why) b.title = why;
      });
      all(bar, "[data-scope]").forEach((b) => {
        const on = b.dataset.scope === st.scope;
        b.classList.toggle("on", on); b.setAttribute("aria-pressed", String(on));
      });
    },
  };
}

/** What is on screen's fate: the training row's in row scope, else the turn's. @param {Outline} O @param {ViewPlace} st
 *  @param {Training | null} training @returns {Fate | null} */
function fateHere(O, st, training) {
  if (st.scope !== "row") return fateOf(O, st.turn);
  const r = training ? training.rows[st.row] : null;
  return r ? r.fate : null;
}

/** The legend of what is on screen: each mode's swatches and words, then the turn's mask audit.
 *  @param {Outline} O @param {ViewPlace} st @param {Trainer | null} trainer @param {Training | null} training
 *  @returns {DocumentFragment} */
export function legendNodes(O, st, trainer, training) {
  const t = O.turns[st.turn], f = fateHere(O, st, training);
  const never = f && !f.trained ? `, in TRL's mask: never trained, ${f.cause || ""})` : null;
  /** @type {() => (Node | string)[]} */
  const mask = () => [key("m0", "context the model read (mask 0)"), " ",
    ...(st.scope === "row" ? [key("m1", `tokens the model generated (mask 1, underlined${never || ")"}`)]
      : t.trained ? [key("m1", `tokens the model generated (mask 1, underlined${never || ", trained)"}`)]
      : [key("m1", "tokens the model generated (mask 1, underlined)"), " ", key("m1u", "hatched: this turn is not trained")]),
    ...(st.scope !== "row" && t.drift_at !== null ? [" ", key("dmark", "rewritten at the turn boundary (drift)")] : [])];
  /** @type {Record<string, () => (Node | string)[]>} */
  const modes = {
    mask,
    logprob: () => [key("lp-hi", "p ≈ 1"), " ", key("lp-lo", "p ≈ 0"), " ", key("nolp", "no logprob recorded (context, or none captured)")],
    drift: () => [key("d-carried", "carried over exactly"), " ", key("d-rewritten", "rewritten (drift)"), " ", key("d-new", "new context"), " ",
                  key("d-out", "generated")],
    advantage: () => advantageLegend(O, f),
  };
  const out = document.createDocumentFragment();
  if (isTrainerMode(O, st.mode) && trainer) out.append(...trainer.legend(f));
  else if (modes[st.mode]) out.append(...modes[st.mode]());
  if (st.scope === "row") return out;
  /** @type {string[]} */
  const warn = [];
  const a = t.audit;
  if (a.ones_in_prompt) warn.push(`${fmt(a.ones_in_prompt)} prompt tokens have mask 1`);
  if (a.zeros_in_output) warn.push(`${fmt(a.zeros_in_output)} generated tokens have mask 0`);
  if (a.trained_without_logprobs) warn.push("trained turn without logprobs");
  if (warn.length) out.append(" ", el("span", {class: "tv-badge warn", text: `mask audit: ${warn.join("; ")}`}));
  return out;
}
