// The run page's charts (viewer/assets/src/run_page.js mounts them), drawn on canvas by uPlot (vendor/uPlot.*,
// MIT, from npm's uplot 1.6.32) from the per-version numbers the body already holds (RunBody.versions), so
// the server sends each version once and no chart library is fetched after the data.
// A chart never draws more than its pixels: a line keeps each bin's lowest and highest value (the shape
// and every spike survive), a bar chart sums the versions of a bin into one bar and says how many it holds.
// Colours carry meaning and come from the page's palette (light and dark): good is green, a failure red,
// what is only waiting (in the queue, read ahead) a quiet grey. Titles and legends are HTML (they grow
// with the page's type in presentation), axes take the page's font size.
// Pointing at a chart (or the arrow keys on a focused one) reads one version, not a reduced bin: a crosshair
// and a readout of its numbers, built as elements over the canvas; a click (or Enter) opens it in the versions
// table. The line charts can be smoothed (an EMA, as W&B's), their raw curves kept faint beneath.
import {el, end} from "./dom.js";
import {count, many} from "./values.js";

/** @typedef {"line" | "lo" | "hi"} Keep */

/**
 * Lines reduced to at most `bins` bins of consecutive points: two points per bin (its first and last x),
 * per series the bin's min and max in the order they occur ("line"), or its min twice ("lo", a band's
 * lower edge) or its max twice ("hi"). Fewer points than 2 x bins are returned as they are.
 * @param {number[]} xs @param {(number | null)[][]} ys @param {Keep[]} keep @param {number} bins
 * @returns {{xs: number[], ys: (number | null)[][]}}
 */
export function reduceLines(xs, ys, keep, bins) {
  const n = xs.length;
  bins = Math.max(1, Math.floor(bins));
  if (n <= 2 * bins) return {xs: xs.slice(), ys: ys.map((y) => y.slice())};
  const ox = /** @type {number[]} */ ([]);
  const oy = ys.map(() => /** @type {(number | null)[]} */ ([]));
  for (let b = 0; b < bins; b++) {
    const i0 = Math.floor((b * n) / bins), i1 = Math.floor(((b + 1) * n) / bins);
    if (i1 <= i0) continue;
    ox.push(xs[i0], xs[i1 - 1]);
    ys.forEach((y, s) => {
      let lo = null, hi = null, ilo = -1, ihi = -1;
      for (let i = i0; i < i1; i++) {
        const v = y[i];
        if (v === null || v === undefined || !Number.isFinite(v)) continue;
        if (lo === null || v < lo) { lo = v; ilo = i; }
        if (hi === null || v > hi) { hi = v; ihi = i; }
      }
      const k = keep[s];
      if (k === "lo") oy[s].push(lo, lo);
      else if (k === "hi") oy[s].push(hi, hi);
      else if (ilo <= ihi) oy[s].push(lo, hi);
      else oy[s].push(hi, lo);
    });
  }
  return {xs: ox, ys: oy};
}

/**
 * Bars over at most `bins` bins of consecutive versions, each bin's bar the mean of its versions' values (a
 * missing value counts 0): a bar still reads "per version" whatever the chart's width, where a sum grew with the
 * versions a bar holds; `per` is how many versions a bar holds.
 * @param {number[]} xs @param {number[][]} ys @param {number} bins
 * @returns {{xs: number[], ys: number[][], per: number}}
 */
export function binBars(xs, ys, bins) {
  const n = xs.length;
  const per = Math.max(1, Math.ceil(n / Math.max(1, Math.floor(bins))));
  if (per === 1) return {xs: xs.slice(), ys: ys.map((y) => y.slice()), per};
  const ox = /** @type {number[]} */ ([]);
  const oy = ys.map(() => /** @type {number[]} */ ([]));
  for (let i0 = 0; i0 < n; i0 += per) {
    ox.push(xs[i0]);
    const i1 = Math.min(n, i0 + per);
    ys.forEach((y, s) => { let t = 0; for (let i = i0; i < i1; i++) t += y[i] || 0; oy[s].push(t / (i1 - i0)); });
  }
  return {xs: ox, ys: oy, per};
}

/** A raw curve drawn under its smoothed one (an EMA): thin, faint, without points. @param {object} s */
const faint = (s) => ({...s, width: 1, alpha: 0.3, points: {show: false}});

/** A finite number or null (uPlot leaves a gap); NaN and ±inf are not drawn. @param {unknown} v */
const fin = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * The exponential moving average TensorBoard and W&B draw ("EMA"): last = last·w + (1 − w)·y, divided by
 * 1 − w^n so the first points are not pulled toward 0. A gap (null) stays a gap and leaves the average as
 * it was, so the curve resumes after it rather than absorbing it. w = 0 is the raw curve.
 * @param {(number | null)[]} ys @param {number} w @returns {(number | null)[]}
 */
export function ema(ys, w) {
  if (!(w > 0)) return ys.slice();
  let last = 0, n = 0;
  return ys.map((y) => {
    if (y === null || !Number.isFinite(y)) return null;
    last = last * w + (1 - w) * y;
    n++;
    return last / (1 - Math.pow(w, n));
  });
}

/**
 * A band's edges where it has width, null where its lower edge meets its upper one: a version whose groups
 * all have zero spread has no band to fill, and reduced to the pixels its bin would otherwise be filled from
 * the lowest to the highest mean of its neighbours, drawing a band the data do not have.
 * @param {(number | null)[]} lo @param {(number | null)[]} hi @returns {[(number | null)[], (number | null)[]]}
 */
export function bandEdges(lo, hi) {
  const wide = lo.map((l, i) => l !== null && hi[i] !== null && /** @type {number} */ (hi[i]) > l);
  return [lo.map((l, i) => (wide[i] ? l : null)), hi.map((h, i) => (wide[i] ? h : null))];
}

/** [lo, hi] padded by 6% so no line sits on the frame; safe at the float limit. @param {number | null} lo @param {number | null} hi */
export function padded(lo, hi) {
  if (lo === null || hi === null) return [0, 1];
  if (lo === hi) { const d = Math.abs(lo) * 0.1 || 0.5; return [lo - d, hi + d]; }
  const d = hi * 0.06 - lo * 0.06;  // never (hi - lo), which overflows at ±1.7e308
  return [Math.max(-Number.MAX_VALUE, lo - d), Math.min(Number.MAX_VALUE, hi + d)];
}

/** @param {number} v */
function compact(v) {
  const a = Math.abs(v);
  if (a >= 1e15 || (a > 0 && a < 1e-3)) return v.toExponential(1);
  if (a >= 1e9) return +(v / 1e9).toFixed(1) + "G";
  if (a >= 1e6) return +(v / 1e6).toFixed(1) + "M";
  if (a >= 1e4) return +(v / 1e3).toFixed(1) + "k";
  return String(+v.toFixed(3));
}

// Causes of a rollout never trained (RunRow.dropped), by what they mean for a reader.
/** @type {Record<string, string>} */
const CAUSE_TONE = {"in-queue": "wait", "read-ahead": "wait", "in-batcher": "wait", "resume-skip": "wait",
                    "unknown": "none", "stale": "warn", "oversize": "warn", "no rows": "warn", "failed": "bad"};
const TONE_ORDER = ["bad", "warn", "none", "wait"];
// Each cause its own colour, of its tone's family (the waiting ones calm: grey, sky, violet, teal), so that two
// causes stacked in one bar are told apart; segments are also parted by a line of the page's background.
/** @type {Record<string, string>} */
const CAUSE_COLOUR = {"in-queue": "wait", "read-ahead": "ahead", "in-batcher": "batcher", "resume-skip": "skip",
                      "unknown": "none", "stale": "warn", "oversize": "oversize", "no rows": "warn2", "failed": "bad"};

/** The palette of the page (run_page.css, light or dark) at `box`. @param {Element} box */
function palette(box) {
  const cs = getComputedStyle(box);
  /** @param {string} name @param {string} dflt */
  const v = (name, dflt) => cs.getPropertyValue(name).trim() || dflt;
  return {fg: v("--fg", "#111827"), dim: v("--fg-dim", "#4b5563"), grid: v("--line-soft", "#e5e7eb"),
          accent: v("--c-mean", "#4338ca"), band: v("--c-band", "rgba(67,56,202,.22)"),
          range: v("--c-range", "rgba(67,56,202,.09)"), good: v("--c-good", "#15803d"), bad: v("--c-bad", "#dc2626"),
          warn: v("--c-warn", "#d97706"), warn2: v("--c-warn2", "#a16207"), wait: v("--c-wait", "#94a3b8"),
          none: v("--c-none", "#64748b"), ahead: v("--c-ahead", "#38bdf8"), batcher: v("--c-batcher", "#a78bfa"),
          skip: v("--c-skip", "#2dd4bf"), oversize: v("--c-oversize", "#ca8a04"), bg: v("--bg", "#ffffff"), font: parseFloat(cs.fontSize) || 14, family: cs.fontFamily || "sans-serif"};
}

/**
 * @typedef {{label: string, color: string, kind?: "line" | "band" | "bar", dash?: number[], width?: number, faint?: boolean}} Key
 * @typedef {{label: string, value: string, color?: string}} ReadRow
 * @typedef {{xs: number[], head: (i: number) => string, rows: (i: number) => ReadRow[], y?: (number | null)[]}} Hover
 *   a chart's readout: per version i of `xs` (every version, not the reduced points) its rows, and the value
 *   the crosshair's dot marks (the line as drawn: smoothed when it is)
 * @typedef {{title: string, note?: string, keys: Key[], xs: number[], ys: (number | null)[][], drawn: number,
 *            bars?: boolean, yRange?: [number, number], bands?: [number, number, string][], series: object[],
 *            fmt?: (v: number) => string, hover?: Hover, band?: "drawn" | "none"}} Spec
 * @typedef {(version: number) => void} Open
 */

/** A chart's cell: title, legend (HTML, so it grows with the page's type) and the canvas. @param {string} id @param {Spec} spec */
function cell(id, spec) {
  const title = el("figcaption", {class: "rp-chart-title", text: spec.title},
    spec.note ? el("span", {class: "rp-chart-note", text: " · " + spec.note}) : null);
  const legend = el("div", {class: "rp-legend"}, ...spec.keys.map((k) => {
    const sw = el("i", {class: "rp-sw rp-sw-" + (k.kind || "line") + (k.dash ? " dashed" : "") + (k.faint ? " faint" : "")});
    sw.style.setProperty("--sw", k.color);
    return el("span", {}, sw, k.label);
  }));
  // focusable: arrow keys move the readout from version to version, Enter opens the one it reads
  return el("figure", {class: "rp-chart", id, "data-testid": "run-chart", tabindex: spec.hover ? "0" : null,
                       "aria-label": spec.hover ? `${spec.title}: arrow keys read a version, Enter opens it` : null},
    title, legend, el("div", {class: "rp-canvas"}));
}

/** A value as the readout writes it: 3 decimals at most, large ones compact. @param {number | null | undefined} v */
function val(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  return Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? compact(v) : String(+v.toFixed(3));
}
const pct = (/** @type {number | null | undefined} */ v) => (v === null || v === undefined || !Number.isFinite(v) ? "–" : Math.round(v * 100) + "%");
// the steps between ticks of an axis of whole numbers (versions, counts): 1, 2 or 5 times a power of ten
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6,
                     1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9];

/** The index of the x in sorted `xs` nearest to `x`. @param {number[]} xs @param {number} x */
function nearest(xs, x) {
  let lo = 0, hi = xs.length - 1;
  while (hi - lo > 1) { const m = (lo + hi) >> 1; if (xs[m] <= x) lo = m; else hi = m; }
  return Math.abs(xs[hi] - x) < Math.abs(x - xs[lo]) ? hi : lo;
}

/**
 * The crosshair at the version nearest the pointer (or the keyboard's), its readout, and a click that opens
 * that version. Built as elements over the canvas: uPlot's own cursor snaps to the reduced points, which at
 * 2,000 versions are bins, not versions.
 * @param {HTMLElement} box @param {UPlot} u @param {Hover} hv @param {Open | undefined} open
 */
function attachHover(box, u, hv, open) {
  if (!hv.xs.length) return;
  const over = u.over;
  const cross = el("div", {class: "rp-cross", "aria-hidden": "true", hidden: true});
  const dot = el("div", {class: "rp-dot", "aria-hidden": "true", hidden: true});
  const read = el("div", {class: "rp-read", "data-testid": "chart-readout", role: "status", hidden: true});
  over.append(cross, dot);
  box.append(read);
  over.classList.toggle("rp-opens", !!open);
  let at = -1;
  const under = (/** @type {PointerEvent | MouseEvent} */ ev) => nearest(hv.xs, u.posToVal(ev.clientX - over.getBoundingClientRect().left, "x"));
  /** @param {number} i */
  function show(i) {
    at = Math.max(0, Math.min(hv.xs.length - 1, i));
    const x = u.valToPos(hv.xs[at], "x");
    cross.style.left = `${x}px`;
    cross.hidden = false;
    const y = hv.y ? hv.y[at] : null;
    dot.hidden = y === null || y === undefined;
    if (y !== null && y !== undefined) { dot.style.left = `${x}px`; dot.style.top = `${u.valToPos(y, "y")}px`; }
    read.replaceChildren(el("b", {text: hv.head(at)}), ...hv.rows(at).map((r) => {
      const sw = r.color ? el("i", {class: "rp-sw rp-sw-band"}) : null;
      if (sw && r.color) sw.style.setProperty("--sw", r.color);
      return el("div", {class: "rp-read-row"}, sw, el("span", {class: "rp-read-k", text: r.label}), el("span", {class: "rp-read-v", text: r.value}));
    }));
    if (open) read.append(el("div", {class: "rp-read-hint", text: "click or Enter: open this version"}));
    read.hidden = false;
    const ob = over.getBoundingClientRect(), bb = box.getBoundingClientRect();
    const w = read.offsetWidth;
    let left = ob.left - bb.left + x + 14;  // beside the crosshair, on whichever side has the room
    if (left + w > bb.width - 2) left = ob.left - bb.left + x - 14 - w;
    read.style.left = `${Math.max(2, left)}px`;
    read.style.top = `${Math.max(0, ob.top - bb.top + 2)}px`;
    box.dataset.hover = String(hv.xs[at]);
  }
  function hide() {
    cross.hidden = dot.hidden = read.hidden = true;
    delete box.dataset.hover;
  }
  // where the pointer was when the readout was last moved: a click within a pixel of it opens the version the
  // readout names (a pixel holds several versions of a long run, and a click's position is rounded, a move's not)
  let readAt = NaN;
  over.addEventListener("pointermove", (ev) => { readAt = ev.clientX; show(under(ev)); });
  over.addEventListener("pointerleave", () => { readAt = NaN; if (document.activeElement !== box) hide(); });
  over.addEventListener("click", (ev) => {
    const i = at >= 0 && Math.abs(ev.clientX - readAt) <= 1 ? at : under(ev);
    show(i);
    if (open) open(hv.xs[i]);
  });
  box.addEventListener("focus", () => show(at < 0 ? hv.xs.length - 1 : at));
  box.addEventListener("blur", hide);
  box.addEventListener("keydown", (ev) => {
    const step = ev.shiftKey ? 10 : 1;
    /** @type {Record<string, number>} */
    const moves = {ArrowLeft: -step, ArrowRight: step, PageUp: -10 * step, PageDown: 10 * step, Home: -Infinity, End: Infinity};
    if (ev.key in moves) {
      const d = moves[ev.key];
      show(d === -Infinity ? 0 : d === Infinity ? hv.xs.length - 1 : (at < 0 ? hv.xs.length - 1 : at) + d);
    } else if (ev.key === "Enter" && open && at >= 0) open(hv.xs[at]);
    else return;
    ev.preventDefault();
  });
}

/**
 * Draw `spec` into `box` (a cell), as wide as it is; the previous drawing is removed.
 * @param {HTMLElement} box @param {Spec} spec @param {ReturnType<typeof palette>} pal @param {number} height
 * @param {Open} [open]
 */
function draw(box, spec, pal, height, open) {
  const plot = /** @type {HTMLElement} */ (box.querySelector(".rp-canvas"));
  const old = /** @type {any} */ (plot).__uplot;
  if (old) old.destroy();
  const width = Math.max(120, Math.floor(plot.getBoundingClientRect().width || box.getBoundingClientRect().width));
  const font = `${Math.round(pal.font * 0.86)}px ${pal.family}`;
  const fmt = spec.fmt || compact;
  const axis = {stroke: pal.dim, font, grid: {stroke: pal.grid, width: 1}, ticks: {stroke: pal.grid, width: 1}};
  const xs = spec.xs;
  const half = spec.bars && xs.length > 1 ? (xs[xs.length - 1] - xs[0]) / (xs.length - 1) / 2 : 0.5;
  // Ticks as far apart as the widest version label plus a gap: at 2,000 versions in a narrow chart, labels
  // spaced by a fixed few characters ran into one another ("900100011001200").
  const ctx = document.createElement("canvas").getContext("2d");
  if (ctx) ctx.font = font;
  const textWidth = (/** @type {string} */ t) => (ctx ? ctx.measureText(t).width : t.length * pal.font * 0.6);
  const ends = xs.length ? [xs[0], xs[xs.length - 1]] : [0, 1];
  const space = Math.ceil(Math.max(...ends.map((x) => textWidth(String(Math.round(x))))) + pal.font * 1.2);
  /** @type {[number, string][]} */
  let labels = [];
  /** @type {number[]} */
  let yticks = [];
  const opts = {
    width, height, legend: {show: false}, cursor: {show: false}, padding: [8, Math.round(pal.font * 1.6), 0, 0],
    scales: {x: {time: false, range: () => [xs.length ? xs[0] - half : 0, xs.length ? xs[xs.length - 1] + half : 1]},
             y: {range: (/** @type {any} */ _u, /** @type {number} */ lo, /** @type {number} */ hi) =>
               spec.yRange || (spec.bars ? [0, padded(0, Math.max(hi, 1))[1]] : padded(lo, hi))}},
    axes: [{...axis, size: Math.round(pal.font * 2.4), space, incrs: WHOLE_STEPS,
            values: (/** @type {any} */ _u, /** @type {number[]} */ ticks) => {
              const out = ticks.map((t) => (Number.isInteger(t) ? String(t) : ""));
              labels = ticks.map((t, i) => [t, out[i]]);
              return out;
            }},
           // a bar chart counts (rollouts, tokens): its ticks whole numbers, never 2.5 rollouts
           // ticks as close as their labels allow (uPlot's 30 px left a 76 px plot of 0.33-0.39 one tick: no scale)
           {...axis, size: Math.round(pal.font * 3.6), space: Math.round(pal.font * 1.5), ...(spec.bars ? {incrs: WHOLE_STEPS} : {}),
            values: (/** @type {any} */ _u, /** @type {number[]} */ ticks) => { yticks = ticks; return ticks.map(fmt); }}],
    series: [{}, ...spec.series],
    bands: (spec.bands || []).map(([hi, lo, fill]) => ({series: [hi, lo], fill})),
    // the x labels as drawn, each with its extent in CSS pixels: what a test checks for collisions
    hooks: {draw: [(/** @type {UPlot} */ u) => {
      box.dataset.xticks = JSON.stringify(labels.filter(([, t]) => t).map(([x, t]) => {
        const c = u.valToPos(x, "x"), w = textWidth(t);
        return {text: t, left: c - w / 2, right: c + w / 2};
      }));
      box.dataset.yticks = JSON.stringify(yticks);  // the values the y axis marks, for a reader without the pixels
    }]},
  };
  const u = new uPlot(opts, [xs, ...spec.ys], plot);
  /** @type {any} */ (plot).__uplot = u;
  box.dataset.points = String(xs.length);
  box.dataset.drawn = String(spec.drawn);
  if (spec.band) box.dataset.band = spec.band;
  if (spec.hover) attachHover(box, u, spec.hover, open);
}

/**
 * The four charts of a run's versions (and the followed task's, when one is): specs for `width` pixels, the
 * line charts smoothed by `smooth` (an EMA weight; 0 draws them raw) with the raw curves kept, faint.
 * @param {VersionStats[]} vs @param {number} width @param {ReturnType<typeof palette>} pal @param {number} smooth
 * @returns {Record<string, Spec>}
 */
function specs(vs, width, pal, smooth) {
  const xs = vs.map((s) => s.version);
  const bins = Math.max(8, Math.floor(width / 2));  // two points per bin: one point per pixel
  const bars = Math.max(4, Math.floor(width / 4));  // a bar at least 4 px wide
  const smoothed = smooth > 0;
  const ew = `EMA ${+smooth.toFixed(2)}`;
  const line = (/** @type {string} */ c, w = 2, /** @type {number[] | undefined} */ dash = undefined) =>
    ({stroke: c, width: w, dash, points: {show: false}, spanGaps: false});
  // smoothing: the raw curve stays, thin and faint, under its smoothed one
  const raw = (/** @type {object} */ s) => (smoothed ? faint(s) : s);
  const hidden = {stroke: "transparent", width: 0, points: {show: false}};
  const counts = (/** @type {VersionStats} */ s) => ({label: "counts", value: `${many(s.groups, "group")} · ${many(s.rollouts, "rollout")}`});

  const mean = vs.map((s) => fin(s.reward_mean));
  const meanS = ema(mean, smooth);
  const [sdLo, sdHi] = bandEdges(vs.map((s) => sdEdge(s, -1)), vs.map((s) => sdEdge(s, 1)));
  const [rMin, rMax] = bandEdges(vs.map((s) => fin(s.reward_min)), vs.map((s) => fin(s.reward_max)));
  const banded = rMin.some((v) => v !== null);  // min < max somewhere: some version's rewards differ
  const r = reduceLines(xs, [rMin, sdLo, mean, sdHi, rMax, ...(smoothed ? [meanS] : [])],
                        ["lo", "lo", "line", "hi", "hi", ...(smoothed ? /** @type {Keep[]} */ (["line"]) : [])], bins);
  const share = (/** @type {number} */ part, /** @type {number} */ whole) => (whole ? part / whole : null);
  const untrained = (/** @type {VersionStats} */ s) => Object.values(s.dropped).reduce((a, b) => a + b, 0);
  const shares = [vs.map((s) => fin(s.pass_rate)), vs.map((s) => share(s.zero_spread, s.groups)),
                  vs.map((s) => share(s.unscorable, s.rollouts)), vs.map((s) => share(s.timeouts, s.rollouts)),
                  vs.map((s) => share(untrained(s), s.rollouts))];
  const sharesS = shares.map((y) => ema(y, smooth));
  const sh = reduceLines(xs, smoothed ? [...shares, ...sharesS] : shares, shares.flatMap(() => (smoothed ? ["line", "line"] : ["line"])), bins);
  const tk = binBars(xs, [vs.map((s) => s.trained_tokens)], bars);
  const causes = Array.from(new Set(vs.flatMap((s) => Object.keys(s.dropped))))
    .sort((a, b) => TONE_ORDER.indexOf(tone(a)) - TONE_ORDER.indexOf(tone(b)) || a.localeCompare(b));
  const dr = binBars(xs, causes.map((c) => vs.map((s) => s.dropped[c] || 0)), bars);
  // stacked: uPlot draws series in order, so the first is the whole stack and each next one covers it up to its top
  const stacks = causes.map((_, i) => dr.xs.map((_x, j) => causes.slice(i).reduce((t, _c, k) => t + dr.ys[i + k][j], 0)));
  const per = (/** @type {number} */ n) => (n > 1 ? `each bar: the mean of ${n} versions` : "");
  /** the bar holding version i, when a bar holds several: its versions and their mean @param {number} i @param {number} p @param {number[]} means */
  const inBar = (i, p, means) => {
    if (p <= 1) return [];
    const j = Math.floor(i / p);
    return [{label: "its bar", value: `versions ${xs[j * p]}–${xs[Math.min(xs.length, (j + 1) * p) - 1]}: ${val(means[j])} on average`}];
  };
  const bar = (/** @type {string} */ c) => ({fill: c, stroke: c, width: 0, points: {show: false},
                                             paths: uPlot.paths.bars({size: [0.86, Infinity], align: 0})});
  /** @type {Record<string, string>} */
  const causeColours = {wait: pal.wait, ahead: pal.ahead, batcher: pal.batcher, skip: pal.skip, none: pal.none,
                        warn: pal.warn, oversize: pal.oversize, warn2: pal.warn2, bad: pal.bad};
  const colorOf = (/** @type {string} */ c) => causeColours[CAUSE_COLOUR[c] || "none"];
  const shareKeys = [{label: "passed every test", color: pal.good, width: 2.5}, {label: "groups with zero spread (nothing learnt)", color: pal.warn2, dash: [6, 4]},
                     {label: "unscorable", color: pal.none, dash: [2, 3]}, {label: "timed out", color: pal.warn},
                     {label: "never trained (any cause)", color: pal.dim, dash: [8, 3, 2, 3]}];
  const shareLines = [line(pal.good, 2.5), line(pal.warn2, 2, [6, 4]), line(pal.none, 2, [2, 3]), line(pal.warn, 1.75),
                      line(pal.dim, 1.5, [8, 3, 2, 3])];
  const head = (/** @type {number} */ i) => `version ${xs[i]}`;
  const withEma = (/** @type {string} */ v, /** @type {(number | null)[]} */ ys, /** @type {number} */ i, f = pct) => (smoothed ? `${v} (${ew}: ${f(ys[i])})` : v);
  return {
    "run-reward-plot": {
      title: "Reward per version", note: banded ? "" : "no band: at every version every rollout has the same reward",
      xs: r.xs, ys: r.ys, drawn: vs.length, band: banded ? "drawn" : "none",
      keys: [{label: smoothed ? "mean (raw)" : "mean", color: pal.accent, faint: smoothed},
             ...(smoothed ? [{label: `mean, ${ew}`, color: pal.accent}] : []),
             ...(banded ? [{label: "mean ± 1 sd", color: pal.band, kind: /** @type {"band"} */ ("band")},
                           {label: "min … max", color: pal.range, kind: /** @type {"band"} */ ("band")}] : [])],
      series: [hidden, hidden, raw(line(pal.accent, 2.25)), hidden, hidden, ...(smoothed ? [line(pal.accent, 2.25)] : [])],
      bands: banded ? [[5, 1, pal.range], [4, 2, pal.band]] : [],
      hover: {xs, y: smoothed ? meanS : mean, head, rows: (i) => {
        const s = vs[i];
        return [{label: "mean", value: withEma(val(s.reward_mean), meanS, i, val), color: pal.accent},
                {label: "± 1 sd", value: `${val(sdEdge(s, -1))} … ${val(sdEdge(s, 1))} (sd ${val(s.reward_sd)})`, color: pal.band},
                {label: "min … max", value: `${val(s.reward_min)} … ${val(s.reward_max)}`, color: pal.range},
                {label: "zero spread", value: `${s.zero_spread}/${many(s.groups, "group")}`}, counts(s)];
      }},
    },
    "run-share-plot": {
      title: "What became of each version's rollouts", note: "share, 0–100%", xs: sh.xs, ys: sh.ys, drawn: vs.length,
      yRange: [-0.04, 1.04], fmt: (v) => (v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : ""),
      keys: smoothed ? [{label: `faint: raw · bold: ${ew}`, color: pal.dim, faint: true}, ...shareKeys] : shareKeys,
      series: smoothed ? [...shareLines.map(raw), ...shareLines] : shareLines,
      hover: {xs, y: (smoothed ? sharesS : shares)[0], head, rows: (i) => {
        const s = vs[i], u = untrained(s);
        return [{label: "passed every test", value: withEma(`${pct(s.pass_rate)} (${s.passed} of ${s.verified} verified)`, sharesS[0], i), color: pal.good},
                {label: "zero spread", value: withEma(`${s.zero_spread}/${many(s.groups, "group")}`, sharesS[1], i), color: pal.warn2},
                {label: "unscorable", value: withEma(`${s.unscorable}/${s.rollouts}`, sharesS[2], i), color: pal.none},
                {label: "timed out", value: withEma(`${s.timeouts}/${s.rollouts}`, sharesS[3], i), color: pal.warn},
                {label: "never trained", value: withEma(`${u}/${s.rollouts}`, sharesS[4], i), color: pal.dim}, counts(s)];
      }},
    },
    "run-tokens-plot": {
      title: "Trained tokens per version", note: per(tk.per), xs: tk.xs, ys: tk.ys, drawn: vs.length, bars: true,
      keys: [{label: "tokens in TRL's loss", color: pal.accent, kind: "bar"}], series: [bar(pal.accent)],
      hover: {xs, head, rows: (i) => [{label: "trained tokens", value: count(vs[i].trained_tokens), color: pal.accent},
                                       ...inBar(i, tk.per, tk.ys[0]), {label: "trained", value: `${vs[i].trained}/${vs[i].rollouts} rollouts`}, counts(vs[i])]},
    },
    "run-dropped-plot": {
      title: "Rollouts never trained, by cause", note: per(dr.per), xs: dr.xs, ys: stacks, drawn: vs.length, bars: true,
      keys: causes.length ? causes.map((c) => ({label: c + (tone(c) === "wait" ? " (waiting, harmless)" : ""), color: colorOf(c), kind: /** @type {"bar"} */ ("bar")}))
        : [{label: "none: every rollout was trained", color: pal.good, kind: "bar"}],
      series: causes.map((c) => ({...bar(colorOf(c)), stroke: pal.bg, width: causes.length > 1 ? 1 : 0})),
      hover: {xs, head, rows: (i) => [...causes.map((c) => ({label: c, value: count(vs[i].dropped[c] || 0), color: colorOf(c)})),
                                       {label: "never trained", value: `${untrained(vs[i])}/${vs[i].rollouts} rollouts`},
                                       ...inBar(i, dr.per, stacks.length ? stacks[0] : []), counts(vs[i])]},
    },
  };
}

/** @param {string} c */
function tone(c) { return CAUSE_TONE[c] || "none"; }

/** mean ± sd, or null; sd at the float limit is clipped, never inf. @param {VersionStats} s @param {number} side */
function sdEdge(s, side) {
  const m = fin(s.reward_mean), sd = fin(s.reward_sd);
  if (m === null) return null;
  const v = m + side * (sd || 0);
  return Number.isFinite(v) ? v : side * Number.MAX_VALUE;
}

/**
 * The followed task's pass rate per version, smoothed as the run's lines are.
 * @param {TaskTrack} t @param {number} width @param {ReturnType<typeof palette>} pal @param {number} smooth @returns {Spec}
 */
function taskSpec(t, width, pal, smooth) {
  const xs = t.pass_rates.map((p) => p.version);
  const ys = t.pass_rates.map((p) => p.pass_rate);
  const smoothed = smooth > 0, ysS = ema(ys, smooth);
  const r = reduceLines(xs, smoothed ? [ys, ysS] : [ys], smoothed ? ["line", "line"] : ["line"], Math.max(8, Math.floor(width / 2)));
  const rawLine = {stroke: pal.good, width: 2.5, points: {show: true, size: 5, fill: pal.good}};
  return {title: "This task's pass rate per version", xs: r.xs, ys: r.ys, drawn: xs.length, yRange: [-0.04, 1.04],
          fmt: (v) => (v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : ""),
          keys: [{label: "rollouts passing every held-out test" + (smoothed ? " (raw)" : ""), color: pal.good, faint: smoothed},
                 ...(smoothed ? [{label: `EMA ${+smooth.toFixed(2)}`, color: pal.good}] : [])],
          series: smoothed ? [{...rawLine, width: 1, alpha: 0.3}, {stroke: pal.good, width: 2.5, points: {show: false}}] : [rawLine],
          hover: {xs, y: smoothed ? ysS : ys, head: (i) => `version ${xs[i]}`, rows: (i) => {
            const p = t.pass_rates[i];
            return [{label: "pass rate", value: pct(ys[i]) + (smoothed ? ` (EMA ${+smooth.toFixed(2)}: ${pct(ysS[i])})` : ""), color: pal.good},
                    {label: "counts", value: `${many(p.groups, "group")} · ${p.passed}/${p.verified} passed`}];
          }}};
}

const LEGEND_SRC = 28;  // characters of a run's source a compared chart's legend shows

/**
 * Two runs' numbers per version overlaid (a run page compared with another run, RunCompare): on the versions
 * either run has, each run's line joined across a version it lacks. A is solid, B dashed. Smoothed (`smooth`, the
 * run page's one EMA weight), each run's raw curve stays faint and solid beneath its smoothed one: two long runs'
 * raw curves, each as many versions as pixels, overlaid are a wall neither can be read in.
 * @param {RunCompare} c @param {number} width @param {ReturnType<typeof palette>} pal @param {number} smooth
 * @returns {Record<string, Spec>}
 */
function compareSpecs(c, width, pal, smooth) {
  const xs = Array.from(new Set([...c.a.versions, ...c.b.versions].map((s) => s.version))).sort((x, y) => x - y);
  const bins = Math.max(8, Math.floor(width / 2));
  const at = (/** @type {VersionStats[]} */ vs) => { const m = new Map(vs.map((s) => [s.version, s])); return xs.map((x) => m.get(x) || null); };
  const sa = at(c.a.versions), sb = at(c.b.versions);
  const share = (/** @type {number} */ part, /** @type {number} */ whole) => (whole ? part / whole : null);
  /** @param {(s: VersionStats) => number | null} f */
  const both = (f) => [sa.map((s) => (s ? fin(f(s)) : null)), sb.map((s) => (s ? fin(f(s)) : null))];
  const smoothed = smooth > 0;
  const ew = `EMA ${+smooth.toFixed(2)}`;
  // a run of few versions beside a long one is a few pixels wide: its points drawn, so it is seen at all
  const line = (/** @type {string} */ col, /** @type {number[] | undefined} */ dash, /** @type {number} */ own) =>
    ({stroke: col, width: 2.25, dash, points: {show: own < 40, size: 5, fill: col}, spanGaps: true});
  // a source as a legend names it: a long path by its end (the table above the charts names both in full), so four
  // charts in a row on a 1024 px projector keep their plots larger than their legends
  const keys = [...(smoothed ? [{label: `faint: raw · bold: ${ew}`, color: pal.dim, faint: true}] : []),
                {label: "this run: " + end(c.a.src, LEGEND_SRC), color: pal.accent},
                {label: "other run: " + end(c.b.src, LEGEND_SRC), color: pal.warn, dash: [6, 4]}];
  const bold = [line(pal.accent, undefined, c.a.versions.length), line(pal.warn, [6, 4], c.b.versions.length)];
  const series = smoothed ? [faint(line(pal.accent, undefined, 0)), faint(line(pal.warn, undefined, 0)), ...bold] : bold;
  const pctFmt = (/** @type {number} */ v) => (v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : "");
  const tokens = (/** @type {number | null} */ v) => (v === null ? "–" : count(v));
  // more versions than the plot has pixels, unsmoothed: each pixel draws its versions' lowest and highest
  const dense = !smoothed && xs.length > 2 * bins ? `${count(xs.length)} versions, more than its pixels: smooth them above` : "";
  /** Both runs' value at each version, read out at the crosshair (the dot on this run's line).
   *  @param {string} title @param {(s: VersionStats) => number | null} f @param {Partial<Spec>} more
   *  @param {(v: number | null) => string} show @returns {Spec} */
  const chart = (title, f, more, show = val) => {
    const [ya, yb] = both(f);
    const [ea, eb] = [ema(ya, smooth), ema(yb, smooth)];
    const r = reduceLines(xs, smoothed ? [ya, yb, ea, eb] : [ya, yb], smoothed ? ["line", "line", "line", "line"] : ["line", "line"], bins);
    const said = (/** @type {(number | null)[]} */ ys, /** @type {(number | null)[]} */ es, /** @type {number} */ i) =>
      show(ys[i]) + (smoothed ? ` (${ew}: ${show(es[i])})` : "");
    const hover = {xs, y: smoothed ? ea : ya, head: (/** @type {number} */ i) => `version ${xs[i]}`,
                   rows: (/** @type {number} */ i) => [{label: "this run", value: sa[i] ? said(ya, ea, i) : "no such version", color: pal.accent},
                                                       {label: "other run", value: sb[i] ? said(yb, eb, i) : "no such version", color: pal.warn}]};
    return {title, xs: r.xs, ys: r.ys, drawn: xs.length, keys, series, hover, ...more};
  };
  return {
    "cmp-reward-plot": chart("Reward mean per version", (s) => s.reward_mean, {note: dense}),
    "cmp-pass-plot": chart("Pass rate per version", (s) => s.pass_rate, {yRange: [-0.04, 1.04], fmt: pctFmt, note: "passed every held-out test"}, pct),
    "cmp-spread-plot": chart("Groups with zero spread", (s) => share(s.zero_spread, s.groups), {yRange: [-0.04, 1.04], fmt: pctFmt, note: "GRPO learns nothing from them"}, pct),
    "cmp-tokens-plot": chart("Trained tokens per version", (s) => s.trained_tokens, {}, tokens),
  };
}

/**
 * Mount the charts into `grid`: drawn now, and again when its width, the type (presentation) or the scheme
 * (light/dark) changes. `open(version)` is what a click on a chart (or Enter on a focused one) does.
 * Returns the functions that redraw them with new numbers or another smoothing.
 * @param {HTMLElement} grid @param {Open} [open]
 */
export function mount(grid, open) {
  /** @type {{versions: VersionStats[], task: TaskTrack | null}} */
  let data = {versions: [], task: null};
  let smooth = 0;
  const drawn = mountWith(grid, (cw, pal) => {
    const all = specs(data.versions, cw, pal, smooth);
    if (data.task) all["run-task-plot"] = taskSpec(data.task, cw, pal, smooth);
    return {all, count: data.versions.length};
  }, open);
  return {
    /** @param {VersionStats[]} versions @param {TaskTrack | null} task */
    update(versions, task) { data = {versions, task}; drawn.redraw(true); },
    /** @param {number} w an EMA weight, 0 (raw) to 0.99 */
    smooth(w) { smooth = w; drawn.redraw(true); },
  };
}

/** Two runs overlaid into `grid` (see compareSpecs), redrawn as `mount`'s charts are. @param {HTMLElement} grid */
export function mountCompare(grid) {
  /** @type {RunCompare | null} */
  let data = null;
  let smooth = 0;
  const drawn = mountWith(grid, (cw, pal) => ({all: data ? compareSpecs(data, cw, pal, smooth) : {}, count: data ? data.a.versions.length + data.b.versions.length : 0}));
  return {
    /** @param {RunCompare} c */
    update(c) { data = c; drawn.redraw(true); },
    /** @param {number} w the run page's EMA weight, 0 (raw) to 0.99 */
    smooth(w) { smooth = w; if (data) drawn.redraw(true); },
  };
}

/**
 * @param {HTMLElement} grid
 * @param {(cw: number, pal: ReturnType<typeof palette>) => {all: Record<string, Spec>, count: number}} build
 * @param {Open} [open]
 */
function mountWith(grid, build, open) {
  let key = "";
  function redraw(force = false) {
    const pal = palette(grid);
    const width = Math.floor(grid.getBoundingClientRect().width);
    const page = document.getElementById("run-page");
    const presenting = !!page && page.classList.contains("rp-present");
    // A short window (1280x720, 1024x768) puts the charts in one row, each lower, so the versions table below
    // starts on the first screen; every chart keeps its title, legend and axes. Presenting, the type is large:
    // four in a row would leave each a plot smaller than its legend, so two in a row (one when narrow), taller.
    const short = !presenting && innerHeight < 850 && width >= 900;
    const k = `${width}|${pal.font}|${pal.fg}|${short}|${presenting}|${innerHeight}`;
    if (!force && k === key) return;
    key = k;
    if (!width) return;
    const columns = short ? 4 : width >= 900 ? 2 : 1;
    const cw = Math.floor(width / columns) - 12;
    const height = presenting ? Math.round(Math.max(170, Math.min(320, innerHeight * 0.3))) :
      // (the smoothing bar above them takes a line of it: the table's first rows stay on the first screen)
      short ? Math.round(Math.max(100, Math.min(150, innerHeight * 0.18) - 20)) :
      Math.round(Math.max(150, Math.min(260, pal.font * 13)));
    const {all, count} = build(cw, pal);
    grid.style.setProperty("--rp-columns", String(columns));
    grid.replaceChildren(...Object.entries(all).map(([id, spec]) => cell(id, spec)));
    for (const [id, spec] of Object.entries(all)) draw(/** @type {HTMLElement} */ (grid.querySelector("#" + id)), spec, pal, height, open);
    grid.dataset.drawn = String(count);
  }
  let pending = 0;
  const later = () => { if (!pending) pending = requestAnimationFrame(() => { pending = 0; redraw(); }); };
  new ResizeObserver(later).observe(grid);
  const onResize = () => { if (!document.body.contains(grid)) removeEventListener("resize", onResize); else later(); };
  addEventListener("resize", onResize);  // the window's height alone decides the short layout
  const watch = new MutationObserver(() => { if (!document.body.contains(grid)) watch.disconnect(); else later(); });
  watch.observe(document.body, {attributes: true, attributeFilter: ["class"]});
  const page = document.getElementById("run-page");
  if (page) watch.observe(page, {attributes: true, attributeFilter: ["class"]});
  return {redraw};
}
