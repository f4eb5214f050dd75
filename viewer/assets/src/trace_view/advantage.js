// -- advantage mode (GRPO groups): every trained generated token carries its rollout's advantage ------
// Kept apart from the other modes so the trainer-view modes can merge beside it; a loss mode may read
// O.advantage too. Alpha grows with |advantage| (TRL's advantages are z-scores: 2 is already far out).
import {esc} from "./format.js";

/** @param {Outline} O @param {TurnOutline} t @param {string} mask @param {boolean} rowScope */
export function advantageClass(O, t, mask, rowScope) {
  const trained = mask === "1" && (rowScope || (t && t.trained));
  if (!trained) return {cls: " adv-ctx", style: ""};
  const a = O.advantage;
  if (a === null || a === undefined) return {cls: " adv-unknown", style: ""};
  const alpha = (0.18 + 0.7 * Math.min(1, Math.abs(a) / 2)).toFixed(3);
  return {cls: a > 0 ? " adv-pos" : a < 0 ? " adv-neg" : " adv-zero", style: ` style="--a:${alpha}"`};
}

/** A run's turn (or training row) the trainer never trained: the push a mode shows never happened. `f`: its fate
 *  (`fateOf`, or the row's), null outside a run. @param {Fate | null} f */
export function hypothetical(f) {
  if (!f) return "";
  return f.trained ? ` · <span class="tv-badge tv-fate trained" data-testid="push-fate">${esc(f.label)}: this push was in the loss</span>`
    : ` <span class="tv-badge warn tv-fate never" data-testid="push-fate" title="${esc(f.why)}">hypothetical: ${esc(f.label)}, so this push never reached the model</span>`;
}

/** @param {Outline} O @param {Fate | null} f the fate of what is on screen (a turn, or a training row) */
export function advantageLegend(O, f) {
  const a = O.advantage;
  const failed = O.run && O.run.advantage === null;
  const val = failed ? "<span class='tv-badge warn' data-testid='no-advantage'>TRL gave this rollout no advantage (it built no training row)</span>"
    : a === null || a === undefined
    ? "<span class='tv-badge warn' data-testid='no-advantage'>no advantage here: this rollout was opened on its own, and a GRPO advantage comes with a group (open a group's map to see its rollouts' advantages)</span>"
    : `<span class="tv-nowrap">this rollout's advantage <b>${Number(a) >= 0 ? "+" : ""}${Number(a).toFixed(3)}</b></span>`;
  return `<span class="sw adv-pos"></span>pushed up (advantage &gt; 0) <span class="sw adv-neg"></span>pushed down (&lt; 0) <span class="sw adv-zero"></span>no push (0) <span class="sw adv-ctx"></span>not trained · ${val}${hypothetical(f)}`;
}
