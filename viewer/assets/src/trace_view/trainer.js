// -- the trainer's view: rescore parts, mismatch / entropy / loss colours, stats, histogram --
// Everything about the trainer lives here so the rest of the view only asks it for a class, a legend,
// tooltip lines and "is this turn's data here yet". Numbers come from server.trainer (TrainerTurn and
// TrainerSummary in viewer/contract.py), cached per turn, part, band and advantage.
import {el} from "../dom.js";
import {all, errorText, fmt, num, refused, target} from "./format.js";
import {hypothetical, key} from "./advantage.js";

const SVG = "http://www.w3.org/2000/svg";
/** An SVG element `tag` with `attrs` (`text` is its textContent) and `children`.
 *  @param {string} tag @param {Record<string, string | number>} attrs @param {...Node} children @returns {SVGElement} */
function svg(tag, attrs, ...children) {
  const e = /** @type {SVGElement} */ (document.createElementNS(SVG, tag));
  for (const [k, v] of Object.entries(attrs)) if (k === "text") e.textContent = String(v); else e.setAttribute(k, String(v));
  e.append(...children);
  return e;
}

/** The trainer's view of one mounted rollout. @typedef {ReturnType<typeof trainerPart>} Trainer */

/** @param {HTMLElement} box @param {HTMLElement} nav @param {Outline} O @param {TraceApi} api @param {ViewPlace} st
 *  @param {() => void} onData */
export function trainerPart(box, nav, O, api, st, onData, onPart = () => {}) {
  const outline = O.trainer, asker = api.trainer;
  if (!outline || !asker) throw new Error("the trainer's view needs a rescore part and server.trainer");  // mount checks both
  const T = outline, ask = asker;
  const parts = T.parts;
  const group = O.advantage === null || O.advantage === undefined ? null : Number(O.advantage);
  // An export carries one band and one advantage and names the part it opens on (T.part, T.advantages).
  /** @type {string[][]} [value, label, help] */
  const offered = [...(group !== null ? [["group", `group A = ${group.toFixed(3)}`, "the advantage TRL gave this rollout in its group"]] : []),
    ["+1", "A = +1", "if this rollout had been above its group"], ["-1", "A = −1", "if this rollout had been below its group"]];
  const advChoices = offered.filter(([v]) => !T.advantages || T.advantages.includes(v));
  // the part a link names (?part=, kept in the URL as the reader picks one), else the export's, else the first
  const linked = api.linkPart ? api.linkPart() : null;
  const ts = {part: linked !== null && parts.some((p) => p.name === linked) ? linked : T.part !== null && parts.some((p) => p.name === T.part) ? T.part : parts[0].name,
              eps: 0, adv: advChoices[0][0]};
  const partLabel = () => (parts.find((p) => p.name === ts.part) || parts[0]).label;
  /** @type {Map<string, Answer<TrainerTurn> | null>} */
  const turnCache = new Map();
  /** @type {Map<string, Answer<TrainerSummary>>} */
  const sumCache = new Map();
  const advantage = () => ts.adv === "group" ? group : ts.adv === "-1" ? -1 : 1;
  const eps = () => T.eps_choices[ts.eps];
  const keyOf = () => `${ts.part}|${ts.eps}|${advantage()}`;
  /** @returns {TrainerQuery} */
  const query = () => ({part: ts.part, eps: eps(), advantage: advantage()});

  /** @param {number} turn */
  function need(turn) {  // fetch a turn's numbers once per setting; onData repaints when they land
    const k = keyOf() + "|" + turn;
    if (turnCache.has(k)) return;
    turnCache.set(k, null);
    ask({...query(), turn}).then((d) => { turnCache.set(k, d); onData(); })
      .catch((e) => { turnCache.set(k, {error: errorText(e)}); onData(); });
  }
  /** @type {(turn: number) => Answer<TrainerTurn> | null} */
  const data = (turn) => turnCache.get(keyOf() + "|" + turn) || null;

  /** @param {number} lr @param {string} out */
  function level(lr, out) {  // |log ratio| in bins that separate float noise, bf16 and worse
    if (out === "1") return 4;
    const a = Math.abs(lr);
    return a < 1e-3 ? 0 : a < 1e-2 ? 1 : a < 5e-2 ? 2 : 3;
  }
  /** @param {number} pos */
  function tokenClass(pos) {  // the class a token at absolute position `pos` of the turn gets
    const d = data(st.turn);
    if (!d || refused(d)) return " tr-ctx";
    const k = pos - d.start;
    if (k < 0 || k >= d.entropy.length) return " tr-ctx";  // prompt / context: not the trainer's to colour
    if (st.mode === "entropy") {
      const e = d.entropy[k];
      return e === null ? " nolp" : " en-" + (e < 0.1 ? 0 : e < 0.5 ? 1 : e < 1.5 ? 2 : e < 3 ? 3 : 4);
    }
    const lr = d.log_ratio[k];
    if (lr === null) return " nolp";  // no engine logprob: missing, never a ratio of 1
    if (st.mode === "mismatch") {
      const l = level(lr, d.outside[k]);
      return l === 0 ? " mm-0" : ` mm-${lr < 0 ? "n" : "p"}${l}${l === 4 ? " tr-out" : ""}`;
    }
    if (d.trained[k] !== "1") return " tr-off";  // not in TRL's loss
    if (d.clipped[k] !== "0") return " ls-clip";
    const A = Math.abs(d.advantage) || 1, loss = d.loss[k], rel = Math.abs(Number(loss)) / A;
    return ` ls-${loss !== null && loss < 0 ? "u" : "d"}${rel < 0.95 ? 1 : rel <= 1.05 ? 2 : 3}`;
  }

  /** @param {Fate | null} f the fate of the turn on screen (viewer/fate.py), null outside a run @returns {(Node | string)[]} */
  function legend(f) {
    const [lo, hi] = eps(), band = `[${(1 - lo).toFixed(2)}, ${(1 + hi).toFixed(2)}]`;
    const d = data(st.turn);
    const wait = !d ? [" ", el("span", {class: "tv-dim", text: "(loading the trainer's numbers…)"})]
      : refused(d) ? [" ", el("span", {class: "tv-err", text: d.error})] : [];
    const miss = () => key("nolp", "no engine logprob");
    const part = [el("span", {class: "tv-part", "data-testid": "legend-part"}, "part ", el("b", {text: partLabel()})), " · "];
    if (st.mode === "mismatch") return [...part, "log ratio = trainer − engine: ", key("mm-n4 tr-out", "below the clip band"), " ",
      key("mm-n2", "trainer lower"), " ", key("mm-0", "|log r| < 1e-3"), " ", key("mm-p2", "trainer higher"), " ",
      key("mm-p4 tr-out", "above the band"), " · ",
      el("span", {class: "tv-nowrap"}, el("b", {"data-testid": "clip-band", text: `clip band ${band}`}), ` (ε ${lo} / ${hi})`), " ", miss(), ...wait];
    if (st.mode === "entropy") return [...part, "trainer entropy (nats): ", key("en-0", "< 0.1"), " ", key("en-1", "< 0.5"), " ",
      key("en-2", "< 1.5"), " ", key("en-3", "< 3"), " ", key("en-4", "≥ 3"), ...wait];
    const A = advantage();
    // a supposed advantage is said to be one: the advantage mode says a rollout opened on its own has none
    const supposed = ts.adv === "group" ? "" : group === null ? " (supposed: a rollout opened on its own has no group advantage; the trainer's view below picks ±1)"
      : " (supposed, not its group's; the trainer's view below picks it)";
    return [...part, `per-token loss −min(r·A, clip(r)·A), A = ${A !== null && A > 0 ? "+" : ""}${num(A, 3)}${supposed}: `,
      key("ls-u2", "raised (loss < 0)"), " ", key("ls-d2", "lowered (loss > 0)"), " ", key("ls-clip", `clipped by TRL, no gradient (band ${band})`), " ",
      key("tr-off", "not in the loss"), " ", miss(), el("br"), el("span", {class: "tv-dim", text: "paler / stronger shade: |loss| below / above |A|"}),
      ...wait, ...hypothetical(f)];
  }

  /** @param {number} pos */
  function info(pos) {  // tooltip lines for a generated token (plain text: the tooltip sets textContent)
    const d = data(st.turn);
    if (!d || refused(d)) return "";
    const k = pos - d.start;
    if (k < 0 || k >= d.entropy.length) return "";
    const lr = d.log_ratio[k], [lo, hi] = eps();
    const ratio = lr === null ? "ratio n/a (no engine logprob)" :
      `ratio ${Math.exp(lr).toFixed(5)} (log ratio ${num(lr, 5)}) · ${d.outside[k] === "1" ? "OUTSIDE" : "inside"} the clip band [${1 - lo}, ${1 + hi}]`;
    const kl = d.kl_k3[k] === null ? "n/a" : d.kl_k3[k] === 0 ? "< 1e-8" : num(d.kl_k3[k], 6);
    const loss = d.trained[k] !== "1" ? "not in TRL's loss" :
      d.loss[k] === null ? "loss n/a" : `loss ${num(d.loss[k], 5)} (A = ${advantage()})${d.clipped[k] === "l" ? " · clipped low" : d.clipped[k] === "h" ? " · clipped high" : ""}`;
    const alts = d.topk_text[k].map((t, j) => `${JSON.stringify(t)} ${d.topk_probs[k][j].toFixed(3)}`).join(" · ");
    return `\ntrainer logprob ${num(d.trainer_lp[k])} · engine logprob ${num(d.engine_lp[k])}\n${ratio}\nk3 KL ${kl} · entropy ${num(d.entropy[k], 3)} · top-1: ${d.top1[k] === "1" ? "yes" : "no"}\n${loss}\ntop-${d.topk_text[k].length}: ${alts}`;
  }

  // Inline SVG: one bar per log-ratio bin, ticks at the bin edges. The summary's edges include the clip band's
  // own (log(1 - ε_low), log(1 + ε_high)): the dashed lines sit there, so the bars beyond them are exactly
  // the tokens counted outside the band.
  /** @param {number[]} counts @param {TrainerSummary} S */
  function histogram(counts, S) {
    const edges = S.histogram_edges && S.histogram_edges.length ? S.histogram_edges : T.histogram_edges;
    /** @param {number} e */
    const isBand = (e) => S.band && (Math.abs(e - S.band[0]) < 1e-9 || Math.abs(e - S.band[1]) < 1e-9);
    const n = counts.length, bw = 22, h = 70, left = 30, top = 14, max = Math.max(1, ...counts);
    /** @param {number} i */
    const x = (i) => left + i * bw;
    /** @type {Record<string, string>} */
    const lab = {"-1": "-1", "-0.1": "-0.1", "-0.01": "-0.01", "0.01": "0.01", "0.1": "0.1", "1": "1"};
    /** @param {number | string} tx @param {number} ty @param {string} anchor @param {string | number} words */
    const label = (tx, ty, anchor, words) => svg("text", {class: "ax", x: tx, y: ty, "text-anchor": anchor, text: words});
    const s = svg("svg", {role: "img", "aria-label": "histogram of log ratios", width: x(n) + 12, height: top + h + 30, "data-testid": "trainer-histogram"},
      svg("line", {class: "axl", x1: left, y1: top + h, x2: x(n), y2: top + h}), svg("line", {class: "axl", x1: left, y1: top, x2: left, y2: top + h}),
      label(left - 4, top + 8, "end", max), label(left - 4, top + h, "end", 0));
    counts.forEach((c, i) => {
      const bh = c ? Math.max(1.5, h * c / max) : 0, mid = i === Math.floor(n / 2);
      const lo = i === 0 ? "−∞" : num(edges[i - 1], 3), hi = i === n - 1 ? "∞" : num(edges[i], 3);
      const outside = (i > 0 && edges[i - 1] >= S.band[1] - 1e-12) || (i < n - 1 && edges[i] <= S.band[0] + 1e-12);
      s.append(svg("rect", {class: `${outside ? "b-out " : ""}${mid ? "b-0" : i < n / 2 ? "b-n" : "b-p"}`, x: x(i) + 2, y: top + h - bh, width: bw - 4, height: bh, "data-count": c},
        svg("title", {text: `${c} tokens with log ratio in [${lo}, ${hi})${outside ? ": outside the clip band" : ""}`})));
    });
    edges.forEach((e, j) => {
      const name = lab[String(e)];
      if (name) s.append(label(x(j + 1), top + h + 11, "middle", name));
      if (isBand(e)) s.append(svg("line", {class: "band", "data-testid": "band-line", "data-edge": e, x1: x(j + 1), y1: top - 4, x2: x(j + 1), y2: top + h}),
                              label(x(j + 1), top - 5, "middle", num(Math.exp(e), 2)));
    });
    s.append(label(x(Math.floor(n / 2)) + bw / 2, top + h + 11, "middle", 0),
             label((left + x(n)) / 2, top + h + 25, "middle", "log ratio (trainer − engine), tokens per bin"));
    const [blo, bhi] = S.band;
    return el("figure", {class: "tv-hist"}, s, el("figcaption", {text: `log-spaced bins; dashed: the clip band, ratio [${num(Math.exp(blo), 2)}, ${num(Math.exp(bhi), 2)}] = log ratio [${num(blo, 3)}, ${num(bhi, 3)}]; the bars beyond the lines are the tokens outside it`}));
  }

  /** @param {Answer<TrainerSummary>} S */
  function showSummary(S) {
    const out = box.querySelector(".tv-trainer-out");
    if (!out) return;  // the panel is built before its summary is asked for
    if (refused(S)) { out.replaceChildren(el("span", {class: "tv-err", text: S.error})); return; }
    const R = S.rollout, [lo, hi] = S.eps;
    out.replaceChildren(el("div", {class: "tv-trainer-stats", "data-testid": "trainer-stats"},
      `rollout, ${fmt(R.tokens)} generated tokens: max |log ratio| `, el("b", {text: num(R.max_abs_log_ratio)}),
      " · mean k3 KL ", el("b", {text: num(R.mean_kl_k3, 5)}), " · mean entropy ", el("b", {text: num(R.mean_entropy, 3)}),
      ` · outside clip [${1 - lo}, ${1 + hi}] `, el("b", {text: fmt(R.outside_clip)}),
      ` · trainer's top-1 ${fmt(R.top1)} · clipped (A = ${S.advantage}) ${fmt(R.clipped_low + R.clipped_high)}`,
      ...(R.with_engine < R.tokens ? [" · ", el("span", {class: "tv-err", text: `${fmt(R.tokens - R.with_engine)} without an engine logprob`})] : [])),
      histogram(R.histogram, S));
    all(nav, ".tv-navitem").forEach((item) => {  // per turn, under each navigator entry
      const t = S.turns[Number(item.dataset.turn)];
      let span = /** @type {HTMLElement | null} */ (item.querySelector(".tv-nav-tr"));
      if (!span) { span = el("span", {class: "tv-nav-tr", "data-testid": "nav-trainer"}); item.appendChild(span); }
      if (!t) { span.textContent = ""; return; }
      span.title = `the trainer's view of this turn (part ${partLabel()}): the largest |log ratio| (log trainer p − log engine p) over its generated tokens, and how many of them fall outside TRL's clip band [${1 - lo}, ${1 + hi}]`;
      span.replaceChildren(`trainer: max |log r| ${num(t.max_abs_log_ratio, 3)} · `, el("span", {class: t.outside_clip ? "hot" : "", text: `${fmt(t.outside_clip)} outside the band`}));
    });
  }

  function summary() {
    const k = keyOf();
    const cached = sumCache.get(k);
    if (cached) { showSummary(cached); return; }
    ask({...query(), summary: true}).then((S) => { sumCache.set(k, S); if (k === keyOf()) showSummary(S); })
      .catch((e) => showSummary({error: errorText(e)}));
  }

  function controls() {
    /** @param {string} attr @param {string | number} v @param {string} label @param {boolean} on */
    const btn = (attr, v, label, on, title = "") => el("button", {[`data-${attr}`]: v, class: on ? "on" : "", "aria-pressed": String(on), title, text: label});
    /** @param {string} name @param {Node[]} buttons */
    const group = (name, buttons) => el("span", {class: "tv-group", role: "group", "aria-label": name}, ...buttons);
    /** @param {string} words */
    const lab = (words) => el("span", {class: "tv-lab", text: words});
    box.replaceChildren(el("div", {class: "tv-trainer", "data-testid": "trainer-panel"},
      el("div", {class: "tv-trainer-ctl"}, el("b", {text: "Trainer's view"}),
        parts.length > 1 ? lab("part") : null,
        group("rescore part", parts.map((p) => btn("tpart", p.name, p.label, p.name === ts.part, `${p.model}, ${p.dtype} on ${p.device}, temperature ${p.temperature}, top-${p.top_k}`))),
        lab("clip ε"), group("clip band", T.eps_choices.map((e, i) => btn("teps", i, `${e[0]} / ${e[1]}`, i === ts.eps, i ? "DAPO's clip-higher" : "TRL's default"))),
        lab("advantage"), group("advantage", advChoices.map(([v, l, t]) => btn("tadv", v, l, v === ts.adv, t)))),
      el("div", {class: "tv-trainer-out"})));
    summary();
  }

  box.addEventListener("click", (ev) => {
    const b = target(ev).closest("button");
    if (!b || !box.contains(b)) return;
    if (b.dataset.tpart !== undefined) { ts.part = b.dataset.tpart; onPart(); }
    else if (b.dataset.teps !== undefined) ts.eps = Number(b.dataset.teps);
    else if (b.dataset.tadv !== undefined) ts.adv = b.dataset.tadv;
    else return;
    controls();
    onData();
  });
  // The panel (and its summary request) is built when a trainer mode first shows: a page opened in mask mode
  // asks the server nothing about the trainer.
  let built = false;
  function show() { if (!built) { built = true; controls(); } }
  /** @param {number} turn */
  function focus(turn) {  // the first token the mode outlines (outside the clip band; clipped in loss), or null
    const d = data(turn);
    if (!d || refused(d) || (st.mode !== "mismatch" && st.mode !== "loss")) return null;
    const k = st.mode === "loss" ? [...d.clipped].findIndex((c) => c !== "0") : d.outside.indexOf("1");
    return k < 0 ? null : d.start + k;
  }

  return {need, show, ready: (/** @type {number} */ turn) => !!data(turn), tokenClass, legend, info, focus, state: () => ({...ts})};
}
