// -- toolbar: modes, scopes and actions; every toggle says whether it is pressed ------------------
// What each mode needs comes with it in the outline (viewer/contract.py `ModeChoice`): the page keeps no list.
import {all, esc, fmt} from "./format.js";
import {advantageLegend} from "./advantage.js";
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
  const group = (kind, choices) => `<span class="tv-group" role="group" aria-label="${kind}">${choices.map((c) =>
    `<button data-${kind}="${esc(c.id)}" title="${esc(c.help)}" aria-pressed="false">${esc(c.label)}</button>`).join("")}</span>`;
  bar.innerHTML = `<b class="tv-turn-title"></b>${group("mode", O.modes)}${group("scope", O.scopes)}
    <button class="tv-jump-btn" title="jump to where this turn's story is: its drift, or its generated tokens (g)" aria-label="jump to the generated tokens">↓ generated</button>`;
  return {
    /** @param {ViewPlace} st @param {string} title */
    show(st, title) {
      const heading = bar.querySelector(".tv-turn-title");
      if (heading) heading.textContent = title;
      /** @type {NodeListOf<HTMLButtonElement>} */ (bar.querySelectorAll("[data-mode]")).forEach((el) => {
        const on = el.dataset.mode === st.mode;
        el.classList.toggle("on", on); el.setAttribute("aria-pressed", String(on));
        const why = notInRows(O, el.dataset.mode || "");
        el.disabled = st.scope === "row" && !!why;
        if (el.disabled && why) el.title = why;
      });
      all(bar, "[data-scope]").forEach((el) => {
        const on = el.dataset.scope === st.scope;
        el.classList.toggle("on", on); el.setAttribute("aria-pressed", String(on));
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

/** @param {Outline} O @param {ViewPlace} st @param {Trainer | null} trainer @param {Training | null} training */
export function legend(O, st, trainer, training) {
  const t = O.turns[st.turn], f = fateHere(O, st, training);
  const L = isTrainerMode(O, st.mode) && trainer ? trainer.legend(f) : /** @type {Record<string, string>} */ ({
    mask: `<span class="sw m0"></span>context the model read (mask 0) <span class="sw m1"></span>tokens the model generated (mask 1, underlined${st.scope === "row" ? (f && !f.trained ? `, in TRL's mask: never trained, ${esc(f.cause || "")})` : ")") : t.trained ? (f && !f.trained ? `, in TRL's mask: never trained, ${esc(f.cause || "")})` : ", trained)") : ") <span class='sw m1u'></span>hatched: this turn is not trained"}` +
      (st.scope !== "row" && t.drift_at !== null ? ` <span class="sw dmark"></span>rewritten at the turn boundary (drift)` : ""),
    logprob: `<span class="sw lp-hi"></span>p ≈ 1 <span class="sw lp-lo"></span>p ≈ 0 <span class="sw nolp"></span>no logprob recorded (context, or none captured)`,
    drift: `<span class="sw d-carried"></span>carried over exactly <span class="sw d-rewritten"></span>rewritten (drift) <span class="sw d-new"></span>new context <span class="sw d-out"></span>generated`,
    advantage: advantageLegend(O, f),
  })[st.mode];
  if (st.scope === "row") return L;
  /** @type {string[]} */
  const warn = [];
  const a = t.audit;
  if (a.ones_in_prompt) warn.push(`${fmt(a.ones_in_prompt)} prompt tokens have mask 1`);
  if (a.zeros_in_output) warn.push(`${fmt(a.zeros_in_output)} generated tokens have mask 0`);
  if (a.trained_without_logprobs) warn.push("trained turn without logprobs");
  return L + (warn.length ? ` <span class="tv-badge warn">mask audit: ${esc(warn.join("; "))}</span>` : "");
}
