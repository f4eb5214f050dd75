// -- navigator: one button per turn --------------------------------------------------------------
// Two facts, never one word: t.trained is what TRL's mask WOULD train; a recorded run's turn fate whether the
// trainer DID train the row that trains the turn (O.run.turns, one per turn: viewer/fate.py `turn_fate`; a
// rollout's rows can meet different fates). Without a run there is only the mask.
import {el} from "../dom.js";
import {all, fmt} from "./format.js";

/** The trainer's fact about the turn at outline position `pos`, or null outside a run. @param {Outline} O @param {number} pos */
export function fateOf(O, pos) {
  if (!O.run) return null;
  return O.run.turns[pos] || null;
}
/** @param {Outline} O @param {TurnOutline} t @param {number} pos */
function turnPill(O, t, pos) {
  const f = fateOf(O, pos);
  if (!O.run) return {text: t.trained ? "trained" : "not trained", on: t.trained};
  if (!t.trained) return {text: "not in mask", on: false};
  if (!f) return {text: "in mask", on: false};
  return f.trained ? {text: `trained · step ${f.steps.join(", ")}`, on: true} : {text: `never trained (${f.cause})`, on: false};
}
/** The toolbar's words after "turn N". @param {Outline} O @param {TurnOutline} t @param {number} pos */
export function turnFate(O, t, pos) {
  const f = fateOf(O, pos);
  if (!t.trained) return O.run ? " (not in TRL's mask)" : " (not trained)";
  if (!f) return "";
  return f.trained ? ` (trained at step ${f.steps.join(", ")})` : ` (in TRL's mask, never trained: ${f.cause})`;
}
/** @param {HTMLElement} nav @param {Outline} O */
export function navPart(nav, O) {
  nav.replaceChildren(...O.turns.map((t, pos) => {
    const occ = O.max_context ? Math.round(100 * (t.prompt_tokens + t.output_tokens) / O.max_context) : 0;
    const drift = t.drift_at !== null ? el("span", {class: "tv-driftmark", title: `the prompt departs from the turn before at position ${fmt(t.drift_at)}`, text: "⚠ drift"}) : null;
    const fail = t.tool_failed ? el("span", {class: "tv-failmark", title: "a tool call failed", "aria-label": "a tool call failed", text: "✗"}) : null;
    // t.trained is what TRL trains (rollout_trace/analysis/training.py); the capture script's flag may disagree
    const why = `${fmt(t.trained_tokens)} of ${fmt(t.output_tokens)} generated tokens trained` +
      (t.seed_trained !== t.trained ? `; the original capture script marks this turn ${t.seed_trained ? "trained" : "untrained"}` : "");
    const f = fateOf(O, pos), p = turnPill(O, t, pos), fate = f ? `; ${f.why}` : "";
    const pill = el("span", {class: `tv-pill${p.on ? " tr" : ""}${f && !f.trained && t.trained ? " never" : ""}`, "data-testid": "turn-pill",
                             title: (O.run ? why.replace("trained", "in TRL's mask") : why) + fate, text: p.text});
    return el("button", {class: `tv-navitem${t.trained ? " trained" : ""}`, "data-turn": pos, "data-testid": "nav-turn", "aria-current": "false"},
      el("span", {class: "tv-nav-h"}, el("span", {class: "tv-nav-turn", text: `turn ${t.index}`}), " ", pill, " ", drift, fail),
      el("span", {class: "tv-nav-tools", text: t.tools.length ? t.tools.join(", ") : "no tool call"}),
      el("span", {class: "tv-nav-n", text: `prompt ${fmt(t.prompt_tokens)} · out ${fmt(t.output_tokens)} · new ${fmt(t.added)}`}),
      el("span", {class: "tv-occ", title: `context ${fmt(t.prompt_tokens + t.output_tokens)} of the rollout's longest ${fmt(O.max_context)}`},
        el("span", {style: `width:${occ}%`})));
  }));
  return {
    /** @param {ViewPlace} st @param {number[] | null} rowTurns */
    show(st, rowTurns) {  // the active turn, or in row scope every turn the row holds
      all(nav, ".tv-navitem").forEach((item) => {
        const k = Number(item.dataset.turn);
        const on = rowTurns ? rowTurns.includes(O.turns[k].index) : k === st.turn;
        item.classList.toggle("active", on);
        item.setAttribute("aria-current", on ? (rowTurns ? "true" : "step") : "false");
      });
      const a = nav.querySelector(".active");  // scrolled into view at the next frame, not forcing a layout now
      if (a && a.scrollIntoView) requestAnimationFrame(() => { if (a.isConnected) a.scrollIntoView({block: "nearest"}); });
    },
  };
}
