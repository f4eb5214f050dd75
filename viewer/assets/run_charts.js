// The run page's charts (viewer/assets/run_page.js mounts them), drawn on canvas by uPlot (vendor/uPlot.*,
// MIT, from npm's uplot 1.6.32) from the per-version numbers the body already holds (RunBody.versions), so
// the server sends each version once and no chart library is fetched after the data.
// A chart never draws more than its pixels: a line keeps each bin's lowest and highest value (the shape
// and every spike survive), a bar chart sums the versions of a bin into one bar and says how many it holds.
// Colours carry meaning and come from the page's palette (light and dark): good is green, a failure red,
// what is only waiting (in the queue, read ahead) a quiet grey. Titles and legends are HTML (they grow
// with the page's type in presentation), axes take the page's font size.
const RunCharts = (() => {
  /** @typedef {"line" | "lo" | "hi"} Keep */

  /**
   * Lines reduced to at most `bins` bins of consecutive points: two points per bin (its first and last x),
   * per series the bin's min and max in the order they occur ("line"), or its min twice ("lo", a band's
   * lower edge) or its max twice ("hi"). Fewer points than 2 x bins are returned as they are.
   * @param {number[]} xs @param {(number | null)[][]} ys @param {Keep[]} keep @param {number} bins
   * @returns {{xs: number[], ys: (number | null)[][]}}
   */
  function reduceLines(xs, ys, keep, bins) {
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
   * Bars summed over at most `bins` bins of consecutive versions; `per` is how many versions a bar holds.
   * @param {number[]} xs @param {number[][]} ys @param {number} bins
   * @returns {{xs: number[], ys: number[][], per: number}}
   */
  function binBars(xs, ys, bins) {
    const n = xs.length;
    const per = Math.max(1, Math.ceil(n / Math.max(1, Math.floor(bins))));
    if (per === 1) return {xs: xs.slice(), ys: ys.map((y) => y.slice()), per};
    const ox = /** @type {number[]} */ ([]);
    const oy = ys.map(() => /** @type {number[]} */ ([]));
    for (let i0 = 0; i0 < n; i0 += per) {
      ox.push(xs[i0]);
      ys.forEach((y, s) => { let t = 0; for (let i = i0; i < Math.min(n, i0 + per); i++) t += y[i] || 0; oy[s].push(t); });
    }
    return {xs: ox, ys: oy, per};
  }

  /** A finite number or null (uPlot leaves a gap); NaN and ±inf are not drawn. @param {unknown} v */
  const fin = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

  /** [lo, hi] padded by 6% so no line sits on the frame; safe at the float limit. @param {number | null} lo @param {number | null} hi */
  function padded(lo, hi) {
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

  /** The palette of the page (run_page.css, light or dark) at `box`. @param {Element} box */
  function palette(box) {
    const cs = getComputedStyle(box);
    /** @param {string} name @param {string} dflt */
    const v = (name, dflt) => cs.getPropertyValue(name).trim() || dflt;
    return {fg: v("--fg", "#111827"), dim: v("--fg-dim", "#4b5563"), grid: v("--line-soft", "#e5e7eb"),
            accent: v("--c-mean", "#4338ca"), band: v("--c-band", "rgba(67,56,202,.22)"),
            range: v("--c-range", "rgba(67,56,202,.09)"), good: v("--c-good", "#15803d"), bad: v("--c-bad", "#dc2626"),
            warn: v("--c-warn", "#d97706"), warn2: v("--c-warn2", "#a16207"), wait: v("--c-wait", "#94a3b8"),
            none: v("--c-none", "#64748b"), font: parseFloat(cs.fontSize) || 14, family: cs.fontFamily || "sans-serif"};
  }

  /**
   * @typedef {{label: string, color: string, kind?: "line" | "band" | "bar", dash?: number[], width?: number}} Key
   * @typedef {{title: string, note?: string, keys: Key[], xs: number[], ys: (number | null)[][], drawn: number,
   *            bars?: boolean, yRange?: [number, number], bands?: [number, number, string][], series: object[],
   *            fmt?: (v: number) => string}} Spec
   */

  /** A chart's cell: title, legend (HTML, so it grows with the page's type) and the canvas. @param {string} id @param {Spec} spec */
  function cell(id, spec) {
    const box = document.createElement("figure");
    box.className = "rp-chart";
    box.id = id;
    box.dataset.testid = "run-chart";
    const title = document.createElement("figcaption");
    title.className = "rp-chart-title";
    title.textContent = spec.title;
    if (spec.note) { const n = document.createElement("span"); n.className = "rp-chart-note"; n.textContent = " · " + spec.note; title.append(n); }
    const legend = document.createElement("div");
    legend.className = "rp-legend";
    for (const k of spec.keys) {
      const item = document.createElement("span");
      const sw = document.createElement("i");
      sw.className = "rp-sw rp-sw-" + (k.kind || "line") + (k.dash ? " dashed" : "");
      sw.style.setProperty("--sw", k.color);
      item.append(sw, document.createTextNode(k.label));
      legend.append(item);
    }
    const plot = document.createElement("div");
    plot.className = "rp-canvas";
    box.append(title, legend, plot);
    return box;
  }

  /**
   * Draw `spec` into `box` (a cell), as wide as it is; the previous drawing is removed.
   * @param {HTMLElement} box @param {Spec} spec @param {ReturnType<typeof palette>} pal @param {number} height
   */
  function draw(box, spec, pal, height) {
    const plot = /** @type {HTMLElement} */ (box.querySelector(".rp-canvas"));
    const old = /** @type {any} */ (plot).__uplot;
    if (old) old.destroy();
    const width = Math.max(120, Math.floor(plot.getBoundingClientRect().width || box.getBoundingClientRect().width));
    const font = `${Math.round(pal.font * 0.86)}px ${pal.family}`;
    const fmt = spec.fmt || compact;
    const axis = {stroke: pal.dim, font, grid: {stroke: pal.grid, width: 1}, ticks: {stroke: pal.grid, width: 1}};
    const xs = spec.xs;
    const half = spec.bars && xs.length > 1 ? (xs[xs.length - 1] - xs[0]) / (xs.length - 1) / 2 : 0.5;
    const opts = {
      width, height, legend: {show: false}, cursor: {show: false}, padding: [8, Math.round(pal.font * 1.6), 0, 0],
      scales: {x: {time: false, range: () => [xs.length ? xs[0] - half : 0, xs.length ? xs[xs.length - 1] + half : 1]},
               y: {range: (/** @type {any} */ _u, /** @type {number} */ lo, /** @type {number} */ hi) =>
                 spec.yRange || (spec.bars ? [0, padded(0, Math.max(hi, 1))[1]] : padded(lo, hi))}},
      // versions are short integers: ticks 2 characters apart keep every one labelled in a narrow chart
      axes: [{...axis, size: Math.round(pal.font * 2.4), space: Math.round(pal.font * 1.8), incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
                                                                  10000, 20000, 50000, 1e5, 2e5, 5e5, 1e6],
              values: (/** @type {any} */ _u, /** @type {number[]} */ ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : ""))},
             {...axis, size: Math.round(pal.font * 3.6), values: (/** @type {any} */ _u, /** @type {number[]} */ ticks) => ticks.map(fmt)}],
      series: [{}, ...spec.series],
      bands: (spec.bands || []).map(([hi, lo, fill]) => ({series: [hi, lo], fill})),
    };
    const u = new uPlot(opts, [xs, ...spec.ys], plot);
    /** @type {any} */ (plot).__uplot = u;
    box.dataset.points = String(xs.length);
    box.dataset.drawn = String(spec.drawn);
  }

  /**
   * The four charts of a run's versions (and the followed task's, when one is): specs for `width` pixels.
   * @param {VersionStats[]} vs @param {number} width @param {ReturnType<typeof palette>} pal
   * @returns {Record<string, Spec>}
   */
  function specs(vs, width, pal) {
    const xs = vs.map((s) => s.version);
    const bins = Math.max(8, Math.floor(width / 2));  // two points per bin: one point per pixel
    const bars = Math.max(4, Math.floor(width / 4));  // a bar at least 4 px wide
    const line = (/** @type {string} */ c, w = 2, /** @type {number[] | undefined} */ dash = undefined) =>
      ({stroke: c, width: w, dash, points: {show: false}, spanGaps: false});
    const hidden = {stroke: "transparent", width: 0, points: {show: false}};

    const r = reduceLines(xs, [vs.map((s) => fin(s.reward_min)), vs.map((s) => sdEdge(s, -1)), vs.map((s) => fin(s.reward_mean)),
                               vs.map((s) => sdEdge(s, 1)), vs.map((s) => fin(s.reward_max))], ["lo", "lo", "line", "hi", "hi"], bins);
    const share = (/** @type {number} */ part, /** @type {number} */ whole) => (whole ? part / whole : null);
    const untrained = (/** @type {VersionStats} */ s) => Object.values(s.dropped).reduce((a, b) => a + b, 0);
    const sh = reduceLines(xs, [vs.map((s) => fin(s.pass_rate)), vs.map((s) => share(s.zero_spread, s.groups)),
                                vs.map((s) => share(s.unscorable, s.rollouts)), vs.map((s) => share(s.timeouts, s.rollouts)),
                                vs.map((s) => share(untrained(s), s.rollouts))], ["line", "line", "line", "line", "line"], bins);
    const tk = binBars(xs, [vs.map((s) => s.trained_tokens)], bars);
    const causes = Array.from(new Set(vs.flatMap((s) => Object.keys(s.dropped))))
      .sort((a, b) => TONE_ORDER.indexOf(tone(a)) - TONE_ORDER.indexOf(tone(b)) || a.localeCompare(b));
    const dr = binBars(xs, causes.map((c) => vs.map((s) => s.dropped[c] || 0)), bars);
    // stacked: uPlot draws series in order, so the first is the whole stack and each next one covers it up to its top
    const stacks = causes.map((_, i) => dr.xs.map((_x, j) => causes.slice(i).reduce((t, _c, k) => t + dr.ys[i + k][j], 0)));
    const per = (/** @type {number} */ n) => (n > 1 ? `each bar: ${n} versions summed` : "");
    const bar = (/** @type {string} */ c) => ({fill: c, stroke: c, width: 0, points: {show: false},
                                               paths: uPlot.paths.bars({size: [0.86, Infinity], align: 0})});
    const colorOf = (/** @type {string} */ c) => /** @type {Record<string, string>} */ ({bad: pal.bad, warn: pal.warn, none: pal.none, wait: pal.wait})[tone(c)];
    return {
      "run-reward-plot": {
        title: "Reward per version", xs: r.xs, ys: r.ys, drawn: vs.length,
        keys: [{label: "mean", color: pal.accent}, {label: "mean ± 1 sd", color: pal.band, kind: "band"},
               {label: "min … max", color: pal.range, kind: "band"}],
        series: [hidden, hidden, line(pal.accent, 2.25), hidden, hidden],
        bands: [[5, 1, pal.range], [4, 2, pal.band]],
      },
      "run-share-plot": {
        title: "What became of each version's rollouts", note: "share, 0–100%", xs: sh.xs, ys: sh.ys, drawn: vs.length,
        yRange: [-0.04, 1.04], fmt: (v) => (v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : ""),
        keys: [{label: "passed every test", color: pal.good, width: 2.5}, {label: "groups with zero spread (nothing learnt)", color: pal.warn2, dash: [6, 4]},
               {label: "unscorable", color: pal.none, dash: [2, 3]}, {label: "timed out", color: pal.warn},
               {label: "never trained (any cause)", color: pal.dim, dash: [8, 3, 2, 3]}],
        series: [line(pal.good, 2.5), line(pal.warn2, 2, [6, 4]), line(pal.none, 2, [2, 3]), line(pal.warn, 1.75),
                 line(pal.dim, 1.5, [8, 3, 2, 3])],
      },
      "run-tokens-plot": {
        title: "Trained tokens per version", note: per(tk.per), xs: tk.xs, ys: tk.ys, drawn: vs.length, bars: true,
        keys: [{label: "tokens in TRL's loss", color: pal.accent, kind: "bar"}], series: [bar(pal.accent)],
      },
      "run-dropped-plot": {
        title: "Rollouts never trained, by cause", note: per(dr.per), xs: dr.xs, ys: stacks, drawn: vs.length, bars: true,
        keys: causes.length ? causes.map((c) => ({label: c + (tone(c) === "wait" ? " (waiting, harmless)" : ""), color: colorOf(c), kind: /** @type {"bar"} */ ("bar")}))
          : [{label: "none: every rollout was trained", color: pal.good, kind: "bar"}],
        series: causes.map((c) => bar(colorOf(c))),
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

  /** The followed task's pass rate per version. @param {TaskTrack} t @param {number} width @param {ReturnType<typeof palette>} pal @returns {Spec} */
  function taskSpec(t, width, pal) {
    const xs = t.pass_rates.map((p) => p.version);
    const r = reduceLines(xs, [t.pass_rates.map((p) => p.pass_rate)], ["line"], Math.max(8, Math.floor(width / 2)));
    return {title: "This task's pass rate per version", xs: r.xs, ys: r.ys, drawn: xs.length, yRange: [-0.04, 1.04],
            fmt: (v) => (v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : ""),
            keys: [{label: "rollouts passing every held-out test", color: pal.good}],
            series: [{stroke: pal.good, width: 2.5, points: {show: true, size: 5, fill: pal.good}}]};
  }

  /**
   * Two runs' numbers per version overlaid (a run page compared with another run, RunCompare): on the versions
   * either run has, each run's line joined across a version it lacks. A is solid, B dashed.
   * @param {RunCompare} c @param {number} width @param {ReturnType<typeof palette>} pal
   * @returns {Record<string, Spec>}
   */
  function compareSpecs(c, width, pal) {
    const xs = Array.from(new Set([...c.a.versions, ...c.b.versions].map((s) => s.version))).sort((x, y) => x - y);
    const bins = Math.max(8, Math.floor(width / 2));
    const at = (/** @type {VersionStats[]} */ vs) => { const m = new Map(vs.map((s) => [s.version, s])); return xs.map((x) => m.get(x) || null); };
    const sa = at(c.a.versions), sb = at(c.b.versions);
    const share = (/** @type {number} */ part, /** @type {number} */ whole) => (whole ? part / whole : null);
    /** @param {(s: VersionStats) => number | null} f */
    const both = (f) => [sa.map((s) => (s ? fin(f(s)) : null)), sb.map((s) => (s ? fin(f(s)) : null))];
    const line = (/** @type {string} */ col, /** @type {number[] | undefined} */ dash) =>
      ({stroke: col, width: 2.25, dash, points: {show: xs.length < 40, size: 5, fill: col}, spanGaps: true});
    const keys = [{label: "this run: " + c.a.src, color: pal.accent}, {label: "other run: " + c.b.src, color: pal.warn, dash: [6, 4]}];
    const series = [line(pal.accent, undefined), line(pal.warn, [6, 4])];
    const pctFmt = (/** @type {number} */ v) => (v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : "");
    /** @param {string} title @param {(s: VersionStats) => number | null} f @param {Partial<Spec>} more @returns {Spec} */
    const chart = (title, f, more) => {
      const r = reduceLines(xs, both(f), ["line", "line"], bins);
      return {title, xs: r.xs, ys: r.ys, drawn: xs.length, keys, series, ...more};
    };
    return {
      "cmp-reward-plot": chart("Reward mean per version", (s) => s.reward_mean, {}),
      "cmp-pass-plot": chart("Pass rate per version", (s) => s.pass_rate, {yRange: [-0.04, 1.04], fmt: pctFmt, note: "passed every held-out test"}),
      "cmp-spread-plot": chart("Groups with zero spread", (s) => share(s.zero_spread, s.groups), {yRange: [-0.04, 1.04], fmt: pctFmt, note: "GRPO learns nothing from them"}),
      "cmp-tokens-plot": chart("Trained tokens per version", (s) => s.trained_tokens, {}),
    };
  }

  /**
   * Mount the charts into `grid`: drawn now, and again when its width, the type (presentation) or the scheme
   * (light/dark) changes. Returns the function that redraws them with new numbers.
   * @param {HTMLElement} grid
   */
  function mount(grid) {
    /** @type {{versions: VersionStats[], task: TaskTrack | null}} */
    let data = {versions: [], task: null};
    const drawn = mountWith(grid, (cw, pal) => {
      const all = specs(data.versions, cw, pal);
      if (data.task) all["run-task-plot"] = taskSpec(data.task, cw, pal);
      return {all, count: data.versions.length};
    });
    return {
      /** @param {VersionStats[]} versions @param {TaskTrack | null} task */
      update(versions, task) { data = {versions, task}; drawn.redraw(true); },
    };
  }

  /** Two runs overlaid into `grid` (see compareSpecs), redrawn as `mount`'s charts are. @param {HTMLElement} grid */
  function mountCompare(grid) {
    /** @type {RunCompare | null} */
    let data = null;
    const drawn = mountWith(grid, (cw, pal) => ({all: data ? compareSpecs(data, cw, pal) : {}, count: data ? data.a.versions.length + data.b.versions.length : 0}));
    return {
      /** @param {RunCompare} c */
      update(c) { data = c; drawn.redraw(true); },
    };
  }

  /**
   * @param {HTMLElement} grid
   * @param {(cw: number, pal: ReturnType<typeof palette>) => {all: Record<string, Spec>, count: number}} build
   */
  function mountWith(grid, build) {
    let key = "";
    function redraw(force = false) {
      const pal = palette(grid);
      const width = Math.floor(grid.getBoundingClientRect().width);
      // A short window (1280x720, 1024x768) puts the charts in one row, each lower, so the versions table below
      // starts on the first screen; every chart keeps its title, legend and axes.
      const short = innerHeight < 850 && width >= 900;
      const k = `${width}|${pal.font}|${pal.fg}|${short}`;
      if (!force && k === key) return;
      key = k;
      if (!width) return;
      const columns = short ? 4 : width >= 900 ? 2 : 1;
      const cw = Math.floor(width / columns) - 12;
      const height = short ? Math.round(Math.max(110, Math.min(150, innerHeight * 0.18))) :
        Math.round(Math.max(150, Math.min(260, pal.font * 13)));
      const {all, count} = build(cw, pal);
      grid.style.setProperty("--rp-columns", String(columns));
      grid.replaceChildren(...Object.entries(all).map(([id, spec]) => cell(id, spec)));
      for (const [id, spec] of Object.entries(all)) draw(/** @type {HTMLElement} */ (grid.querySelector("#" + id)), spec, pal, height);
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

  return {mount, mountCompare, reduceLines, binBars, padded};
})();
