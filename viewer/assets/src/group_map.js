// A GRPO group's map and two of its rollouts compared at one turn, drawn from viewer/group.py's records (`GroupMap`,
// `Compare`) as they cross: the collection index shows the map (collection_index.js), the run page the compare of
// two rollouts of one task (run_page.js). Tool names, statuses, problems and token texts come from artifacts and are
// untrusted: they reach the page only as textContent or attribute values. Numbers are written as viewer/numbers.py
// writes them, so the map says a reward as the index beside it does.
import {el, findingsCell, intoSight, presentLabel, short} from "./dom.js";
import {count, fateKind, many, number, sign, signed} from "./values.js";

/** @import {Num} from "./values.js" */


/** TRL's advantage, coloured by its sign. @param {number} adv */
export const advantage = (adv) => el("span", {class: "gm-adv " + sign(adv), text: signed(adv)});

/** A bar from the middle: right and green for a positive advantage, left and red for a negative one. @param {Num} adv @param {number} scale */
function bar(adv, scale) {
  if (adv === null || adv === undefined) {
    return [el("span", {class: "gm-adv none", title: "TRL gave this rollout no advantage: it built no training row", text: "none"})];
  }
  const width = scale <= 0 ? 0 : Math.min(50, 50 * Math.abs(adv) / scale);
  const side = adv >= 0 ? "left:50%" : `left:${(50 - width).toFixed(1)}%`;
  return [el("span", {class: "gm-bar", title: `advantage ${signed(adv, 4)}`}, el("span", {class: "gm-bar-mid"}),
            el("span", {class: "gm-bar-fill " + sign(adv), style: `${side};width:${width.toFixed(1)}%`})),
          advantage(adv)];
}

/** @param {GroupRow} row @param {number} pos */
function cell(row, pos) {
  if (pos >= row.cells.length) return el("td", {class: "gm-cell gm-none"});
  const c = row.cells[pos];
  const tools = c.tools.length ? c.tools.join(", ") : "no tool call";
  const never = c.fate !== null && c.trained && !c.fate.trained;  // in the mask, its row never trained
  const classes = ["gm-cell", c.trained ? "trained" : "untrained", never ? "never" : "", c.failed ? "failed" : "",
                   c.tools.length ? "" : "stop"].filter(Boolean).join(" ");
  const mask = c.trained ? "in TRL's mask" : "not in TRL's mask";
  const fate = c.fate !== null && c.trained ? ` · ${c.fate.label}` : "";
  const tip = `turn ${c.turn}: ${tools}${c.failed ? " (failed)" : ""} · ${mask}${fate} · ${count(c.output_tokens)} generated tokens`;
  return el("td", {class: classes}, el("button", {type: "button", class: "gm-open", "data-rollout": row.rollout, "data-turn": pos,
    title: tip, "data-testid": "group-cell"}, c.failed ? el("span", {class: "gm-fail", "aria-label": "a tool call failed", text: "✗"}) : null,
    c.failed ? " " : null, short(tools, 40)));
}

/**
 * The trainer's fact beside the mask's: "step 3", "never: read-ahead", or a rollout whose rows met different fates
 * by its turns ("turn 0 trained at step 5 · turns 1–2 never trained (read-ahead)"); the sentence on hover.
 * @param {Fate | null} f
 */
function fateCell(f) {
  if (f === null) return el("td", {class: "gm-fate", text: "-"});
  const label = !(f.label.startsWith("trained at ") || f.label.startsWith("never trained (")) ? f.label  // by turns, whole
    : f.trained ? (f.steps.length === 1 ? "step " : "steps ") + f.steps.join(", ") : `never: ${f.cause}`;
  return el("td", {class: "gm-fate " + fateKind(f), "data-testid": "group-fate", title: f.why, text: short(label, 90)});
}

/** @param {GroupRow} row @param {GroupMap} m */
function mapRow(row, m) {
  const openable = row.path !== null && row.problem === null;
  const pick = openable && row.cells.length ? el("input", {type: "checkbox", class: "gm-pick", "data-rollout": row.rollout,
    "aria-label": `compare rollout ${row.rollout}`, "data-testid": "group-pick"}) : null;
  const name = openable
    ? el("button", {type: "button", class: "gm-open gm-name", "data-rollout": row.rollout, "data-turn": "0", text: `rollout ${row.rollout}`})
    : el("span", {class: "gm-name", text: `rollout ${row.rollout}`});
  const cells = Array.from({length: m.max_turns}, (_, i) => cell(row, i));
  const never = row.fate !== null && !row.fate.trained ? " fate-" + fateKind(row.fate) : "";
  const drift = row.drifting === null ? "-" : row.drifting === 0 ? "none" : `${row.drifting} ⚠`;
  return el("tr", {class: `gm-row status-${row.status}${openable ? "" : " closed"}${never}`, "data-rollout": row.rollout,
                   "data-testid": "group-row"},
    el("td", {class: "gm-pickcell"}, pick), el("td", null, name),
    el("td", {class: "gm-num"}, el("span", {class: "gm-reward " + sign(row.reward), text: number(row.reward)})),
    el("td", {class: "gm-advcell"}, ...bar(row.advantage, m.max_abs_advantage)),
    el("td", {class: "gm-status", "data-testid": "group-status"}, row.status,
       row.problem ? " " : null, row.problem ? el("span", {class: "gm-problem", text: short(row.problem, 120)}) : null),
    m.place ? fateCell(row.fate) : null,
    el("td", {class: "gm-num", text: count(row.trained_turns)}), el("td", {class: "gm-num", text: count(row.tokens)}),
    el("td", {class: "gm-num", text: drift}), findingsCell(row.findings, !m.findings_known, "group-findings"), ...cells,
    row.more_turns ? el("td", {class: "gm-more", text: `+${count(row.more_turns)} turns`}) : null);
}

/** A run's group map heading: version, group id, segment, and the steps it was trained at. @param {RunPlace} p */
function placeLine(p) {
  const steps = p.steps.length ? (p.steps.length === 1 ? "trained at step " : "trained at steps ") + p.steps.slice(0, 8).join(", ")
    : "never trained";
  // by cause, in Python's sorted order (code points)
  const never = Object.entries(p.never).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, n]) => `${c} ${n}`).join(", ");
  let rest = p.steps.length && never ? ` · never trained: ${never}` : never ? ` (${never})` : "";
  if (p.partly) rest += ` · ${p.partly} partly trained (rows of different fates)`;
  return el("span", {class: "gm-place", "data-testid": "group-place"}, el("b", {text: `version ${p.version} · group ${p.group_id}`}),
    " ", el("span", {class: "gm-dim", text: `segment ${short(p.segment, 40)} · ${steps}${rest}`}));
}

/** @param {string} text @param {string} [title] */
const th = (text, title) => el("th", {scope: "col", title, text});

/** The map: one row per rollout (best advantage first), one column per turn so siblings line up. @param {GroupMap} m */
export function drawGroupMap(m) {
  const head = el("tr", null,
    el("th", {scope: "col", class: "gm-pickcell", title: "tick two rows, then press compare below", text: "compare"}),
    th("rollout"), th("reward"), th("advantage", "TRL: (reward - mean) / (std + 1e-8) over the group"), th("status"),
    m.place ? th("trainer", "whether the trainer took this rollout: the global step its rows were trained at, or why never " +
                            "(its consumption log)") : null,
    th("in mask", "agent turns TRL's completion mask (OpenEnv's loss mask) would train a token of, were its rows in the loss"),
    th("tokens"), th("drift"),
    th("findings", "the rules of the search panel's findings each rollout trips (the index's findings column)"),
    ...Array.from({length: m.max_turns}, (_, i) => el("th", {scope: "col", class: "gm-turnh", text: `turn ${i}`})));
  const hatched = m.rows.some((r) => r.cells.some((c) => c.fate !== null && c.trained && !c.fate.trained));
  const key = hatched ? el("div", {class: "gm-key gm-dim", "data-testid": "group-key"}, el("span", {class: "gm-swatch trained"}),
    " in TRL's mask, its row trained · ", el("span", {class: "gm-swatch trained never"}),
    " in TRL's mask, its row never trained (the trainer column says why)") : null;
  const same = new Set(m.rows.map((r) => r.advantage).filter((a) => a !== null)).size <= 1;
  const note = same && m.rows.length ? el("div", {class: "gm-note", text: "every rollout has the same advantage: GRPO learns " +
    "nothing from this group (all rewards equal)"}) : null;
  return el("div", {class: "gm", "data-testid": "group-map"},
    el("div", {class: "gm-head"}, m.place ? placeLine(m.place) : null, m.place ? " " : null,
       el("b", {class: "gm-nowrap", text: `GRPO group · K=${m.k}`}), " ",
       el("span", {class: "gm-dim", title: `${m.model} · ${m.title}`, text: `${short(m.model, 64)} · ${short(m.title, 100)}`}), " ",
       el("button", {type: "button", class: "gm-present", "data-testid": "present",
                     title: "presentation mode (p): large type, j/k move between rollouts, Enter opens one"}, ...presentLabel())),
    note,
    el("div", {class: "gm-help gm-dim", text: "Rows are sorted by advantage, best first. Click a rollout or a turn to open it; " +
      "tick two rows and press compare to see a turn of both side by side; p presents the map."}),
    el("div", {class: "gm-tablebox"}, el("table", {class: "gm-table"}, el("thead", null, head),
       el("tbody", null, ...m.rows.map((r) => mapRow(r, m))))),
    key,
    el("div", {class: "gm-compare-bar"},
       el("label", null, "turn ", el("input", {type: "number", class: "gm-cturn", min: "0", value: "0", "data-testid": "compare-turn"})),
       el("button", {type: "button", class: "gm-compare", disabled: true, "data-testid": "compare"}, "compare the two ticked rollouts")),
    el("div", {class: "gm-comparebox", "data-testid": "compare-box"}));
}

/** The prompt around its first difference (the folded note). @param {CompareSide} s @param {number | null} at */
function strip(s, at) {
  const out = s.text.map((tok, k) => {
    const pos = s.start + k, here = at !== null && pos === at;
    const cls = "gm-t" + (s.mask[k] === "1" ? " gen" : "") + (here ? " div" : "") + (at !== null && pos > at ? " after" : "");
    return el("span", {class: cls, "data-mask": s.mask[k], title: here ? `first difference, position ${count(pos)}` : null, text: tok});
  });
  if (at !== null && at >= s.prompt_tokens) out.push(el("span", {class: "gm-t div end", title: "this prompt ends here", text: "⟂ end"}));
  return out;
}

/**
 * A side's generated tokens from the first, each marked with its mask as the token view does, the first difference
 * boxed (or an end mark where this side stops while the other goes on).
 * @param {CompareSide} s @param {number | null} at
 */
function output(s, at) {
  const out = s.out_text.map((tok, k) => {
    const here = at !== null && k === at;
    return el("span", {class: "gm-t gen" + (here ? " div" : "") + (at !== null && k > at ? " after" : ""), "data-mask": s.out_mask[k],
      "data-k": k, title: here ? `first difference: generated token ${count(k)}` : null, "data-testid": here ? "divergence" : null, text: tok});
  });
  if (at !== null && at >= s.out_total) {
    out.push(el("span", {class: "gm-t div end", "data-testid": "divergence", title: "this turn ends here", text: "⟂ end"}));
  }
  if (s.out_total > s.out_text.length) {
    out.push(el("span", {class: "gm-dim", text: ` … ${count(s.out_total - s.out_text.length)} more generated tokens`}));
  }
  return out;
}

/** @param {CompareSide} s */
const sideName = (s) => s.label || `rollout ${s.rollout}`;

/**
 * Two siblings' turn: their generated tokens side by side from the first, the first difference boxed; where their
 * prompts differ as a folded note; their tool calls side by side.
 * @param {Compare} c
 */
export function drawCompare(c) {
  const k = c.output_diverge_at;
  const where = k === null ? `their generated tokens are identical (${many(c.a.out_total, "token")})`
    : k === 0 ? "their generated tokens differ from the first one"
    : `their generated tokens are the same for ${many(k, "token")}, then differ (at generated token ${count(k)})`;
  const p = c.prompt_diverge_at;
  // siblings' prompts can differ in small things (a capture made before every local sandbox had the same working
  // directory names each sandbox's own folder): folded, below what GRPO compares
  const prompt = p === null
    ? el("div", {class: "gm-dim", "data-testid": "prompt-note", text: `their prompts are identical (${many(c.a.prompt_tokens, "token")})`})
    : el("details", {class: "gm-prompt-note", "data-testid": "prompt-note"},
      el("summary", {text: `their prompts already differ at position ${count(p)} (of ${count(c.a.prompt_tokens)} and ` +
                           `${count(c.b.prompt_tokens)}): show where`}),
      ...[c.a, c.b].flatMap((x) => [el("div", {class: "gm-side-h", text: `rollout ${x.rollout}`}),
                                    el("div", {class: "gm-strip"}, ...strip(x, p))]));
  /** @param {CompareSide} s */
  const side = (s) => el("div", {class: "gm-side", "data-testid": "compare-side"},
    el("div", {class: "gm-side-h"}, `${sideName(s)} · turn ${s.turn}${s.fate ? ` · ${s.fate}` : ""} `,
       el("span", {class: "gm-dim", text: `${count(s.out_total)} generated tokens`})),
    el("div", {class: "gm-strip gm-out"}, ...output(s, k)));
  /** @param {CompareSide} s */
  const calls = (s) => el("div", {class: "gm-calls" + (s.failed ? " failed" : "")}, el("b", {text: sideName(s)}),
    el("ul", null, ...(s.tools.length ? s.tools.map((t) => el("li", {text: short(t, 200)}))
                                      : [el("li", {class: "gm-dim", text: "no tool call"})])));
  return el("div", {class: "gm-cmp"},
    el("div", {class: "gm-cmp-h"}, el("b", {text: `turn ${c.turn}`}), `: ${where} `,
       el("span", {class: "gm-dim", text: "(each side from its first generated token, mask 1 underlined; the first difference boxed)"})),
    c.note ? el("div", {class: "gm-note", "data-testid": "compare-note", text: c.note}) : null,
    el("div", {class: "gm-sides"}, side(c.a), side(c.b)), prompt,
    el("div", {class: "gm-callrow"}, calls(c.a), calls(c.b)));
}

/**
 * A compare answer in `out`: the two sides, or why there are none.
 * @param {HTMLElement} out @param {{compare?: Compare, error?: string} | null | undefined} got
 */
export function showCompare(out, got) {
  if (got && got.compare) out.replaceChildren(drawCompare(got.compare));
  else out.textContent = (got && got.error) || "could not compare";
}

/**
 * The group map in `box`, with its ticks and compare button: a row or turn opens that rollout (api.openRollout), two
 * ticked rows are compared at the chosen turn (api.compare).
 * @param {HTMLElement} box
 * @param {{compare(a: number, b: number, turn: number): Promise<{compare?: Compare, error?: string}>,
 *          compared(a: number, b: number, turn: number): void,
 *          openRollout(rollout: number, turn: number): void}} api
 */
export function mountGroupMap(box, api) {
  const ticked = () => Array.from(box.querySelectorAll(".gm-pick:checked"), (c) => Number(/** @type {HTMLElement} */ (c).dataset.rollout));
  function sync() {  // at most two ticked: the oldest tick gives way
    const b = /** @type {HTMLButtonElement | null} */ (box.querySelector(".gm-compare"));
    if (b) b.disabled = ticked().length !== 2;
  }
  box.addEventListener("change", (ev) => {
    const c = /** @type {HTMLInputElement | null} */ (/** @type {Element} */ (ev.target).closest(".gm-pick"));
    if (!c) return;
    if (c.checked) {
      const others = Array.from(/** @type {NodeListOf<HTMLInputElement>} */ (box.querySelectorAll(".gm-pick:checked"))).filter((x) => x !== c);
      if (others.length >= 2) others[0].checked = false;
    }
    sync();
  });
  box.addEventListener("click", async (ev) => {
    const target = /** @type {Element} */ (ev.target);
    const open = /** @type {HTMLElement | null} */ (target.closest(".gm-open"));
    if (open) { api.openRollout(Number(open.dataset.rollout), Number(open.dataset.turn)); return; }
    if (target.closest(".gm-compare")) compareTicked();
  });
  async function compareTicked() {
    const [a, b] = ticked();
    const out = /** @type {HTMLElement} */ (box.querySelector(".gm-comparebox"));
    out.textContent = "comparing…";
    const turn = Math.max(0, Number(/** @type {HTMLInputElement} */ (box.querySelector(".gm-cturn")).value) || 0);
    const got = await api.compare(a, b, turn);
    showCompare(out, got);
    if (got && got.compare) api.compared(a, b, turn);  // the link says it: shared, it opens on the same comparison
    intoSight(out);  // the answer lands below the map, past the first screen of a group of 8 at 1280x720
  }
  return {
    /** Why the group cannot be shown whole (if it cannot), over its map; `linked`, a comparison the page's link
     *  names (two of its rollouts at a turn), made again.
     *  @param {HTMLElement | null} problems @param {GroupMap | null} m
     *  @param {{a: number, b: number, turn: number} | null} [linked] */
    show(problems, m, linked = null) {
      box.replaceChildren();
      if (problems) box.append(problems);
      if (m) box.append(drawGroupMap(m));
      sync();
      if (!m || !linked || linked.a === linked.b) return;
      const picks = [linked.a, linked.b].map((r) => /** @type {HTMLInputElement | null} */ (box.querySelector(`.gm-pick[data-rollout="${r}"]`)));
      if (picks.some((c) => !c)) return;  // not rollouts of this group: the map alone
      for (const c of picks) /** @type {HTMLInputElement} */ (c).checked = true;
      /** @type {HTMLInputElement} */ (box.querySelector(".gm-cturn")).value = String(linked.turn);
      sync();
      compareTicked();
    },
  };
}
