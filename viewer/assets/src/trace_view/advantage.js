// -- advantage mode (GRPO groups): every trained generated token carries its rollout's advantage ------
// Kept apart from the other modes so the trainer-view modes can merge beside it; a loss mode may read
// O.advantage too. Alpha grows with |advantage| (TRL's advantages are z-scores: 2 is already far out).
import {el} from "../dom.js";

/** A token's class in advantage mode and its colour's strength (`--a`, null: none).
 *  @param {Outline} O @param {TurnOutline} t @param {string} mask @param {boolean} rowScope
 *  @returns {{cls: string, alpha: string | null}} */
export function advantageClass(O, t, mask, rowScope) {
  const trained = mask === "1" && (rowScope || (t && t.trained));
  if (!trained) return {cls: " adv-ctx", alpha: null};
  const a = O.advantage;
  if (a === null || a === undefined) return {cls: " adv-unknown", alpha: null};
  return {cls: a > 0 ? " adv-pos" : a < 0 ? " adv-neg" : " adv-zero", alpha: (0.18 + 0.7 * Math.min(1, Math.abs(a) / 2)).toFixed(3)};
}

/** A legend's colour swatch. @param {string} cls */
export const swatch = (cls) => el("span", {class: `sw ${cls}`});
/** A swatch and its words, kept on one line (a legend breaks between its entries, never inside one).
 *  @param {string} cls @param {string} words */
export const key = (cls, words) => el("span", {class: "tv-nowrap"}, swatch(cls), words);

/** A run's turn (or training row) the trainer never trained: the push a mode shows never happened. `f`: its fate
 *  (`fateOf`, or the row's), null outside a run. @param {Fate | null} f @returns {(Node | string)[]} */
export function hypothetical(f) {
  if (!f) return [];
  return f.trained ? [" · ", el("span", {class: "tv-badge tv-fate trained", "data-testid": "push-fate", text: `${f.label}: this push was in the loss`})]
    : [" ", el("span", {class: "tv-badge warn tv-fate never", "data-testid": "push-fate", title: f.why,
                        text: `hypothetical: ${f.label}, so this push never reached the model`})];
}

/** @param {Outline} O @param {Fate | null} f the fate of what is on screen (a turn, or a training row) @returns {(Node | string)[]} */
export function advantageLegend(O, f) {
  const a = O.advantage;
  const failed = O.run && O.run.advantage === null;
  const val = failed ? el("span", {class: "tv-badge warn", "data-testid": "no-advantage", text: "TRL gave this rollout no advantage (it built no training row)"})
    : a === null || a === undefined
    ? el("span", {class: "tv-badge warn", "data-testid": "no-advantage", text: "no advantage here: this rollout was opened on its own, and a GRPO advantage comes with a group (open a group's map to see its rollouts' advantages)"})
    // its separator inside it: a line never ends on a dangling "·"
    : el("span", {class: "tv-nowrap"}, "· this rollout's advantage ", el("b", {text: `${Number(a) >= 0 ? "+" : ""}${Number(a).toFixed(3)}`}));
  return [key("adv-pos", "pushed up (advantage > 0)"), " ", key("adv-neg", "pushed down (< 0)"), " ", key("adv-zero", "no push (0)"), " ",
          key("adv-ctx", "not trained"), " ", val, ...hypothetical(f)];
}
