// Built from viewer/assets/src/run_page.js by `python -m viewer.assets.build`: edit the source, not this file.
"use strict";
var RunPage = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // src/run_page.js
  var run_page_exports = {};
  __export(run_page_exports, {
    mountInApp: () => mountInApp
  });

  // src/dom.js
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === void 0 || v === false) continue;
      if (k === "text") e.textContent = String(v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) if (c !== null && c !== void 0) e.append(c);
    return e;
  }
  function intoSight(e) {
    if (e.getBoundingClientRect().top > window.innerHeight * 0.6) e.scrollIntoView({ block: "start" });
  }
  function keyScrolled(box) {
    const at = document.activeElement;
    if (at && box.contains(at) && /^(INPUT|TEXTAREA|SELECT)$/.test(at.tagName)) return;
    if (!box.hasAttribute("tabindex")) box.tabIndex = -1;
    box.focus({ preventScroll: true });
  }
  function presentLabel() {
    return [el("span", { class: "present-off", text: "present" }), el("span", { class: "present-on", text: "leave (Esc)" })];
  }
  function goTo(u, push) {
    if (push) history.pushState(push, "", u.toString());
    else history.replaceState(history.state, "", u.toString());
    document.dispatchEvent(new Event("rtv-place"));
  }
  var WORKING_MS = 300;
  function working(text) {
    const shown = setTimeout(() => {
      let box = document.getElementById("rtv-working");
      if (!box) {
        box = el("div", {
          id: "rtv-working",
          role: "status",
          "aria-live": "polite",
          "data-testid": "working",
          style: "position:fixed;left:50%;bottom:18px;transform:translateX(-50%);z-index:10001;padding:8px 16px;border-radius:8px;background:#1e293b;color:#f8fafc;border:1px solid #94a3b8;font-size:15px;box-shadow:0 2px 10px rgba(0,0,0,.35)"
        });
        document.body.append(box);
      }
      box.textContent = text;
      box.hidden = false;
    }, WORKING_MS);
    const done = () => {
      clearTimeout(shown);
      clearTimeout(limit);
      document.removeEventListener("rtv-shown", done);
      const box = document.getElementById("rtv-working");
      if (box) box.hidden = true;
    };
    const limit = setTimeout(done, 12e4);
    document.addEventListener("rtv-shown", done);
  }
  function sentValue(props) {
    document.dispatchEvent(new Event("rtv-shown"));
    return typeof props.value === "string" ? JSON.parse(props.value) : props.value;
  }
  function short(value, limit) {
    if (value.length <= limit) return value;
    const cs = Array.from(value);
    return cs.length <= limit ? value : cs.slice(0, limit - 1).join("") + "…";
  }
  function end(value, limit) {
    if (value.length <= limit) return value;
    const cs = Array.from(value);
    return cs.length <= limit ? value : "…" + cs.slice(cs.length - (limit - 1)).join("");
  }

  // src/values.js
  var count = (v) => v === null || v === void 0 ? "-" : v.toLocaleString("en-US");
  var many = (n, what, whats = what + "s") => `${count(n)} ${n === 1 ? what : whats}`;
  var sign = (v) => v === null || v === void 0 ? "none" : v > 0 ? "pos" : v < 0 ? "neg" : "zero";
  function groupsListed(t) {
    if (t.group_count <= t.groups.length || !t.groups.length) return "";
    const first = t.groups[0].version, last = t.groups[t.groups.length - 1].version;
    return `showing ${t.groups.length} of ${count(t.group_count)} groups, at version${first === last ? ` ${first}` : `s ${first}–${last}`}`;
  }

  // src/group_map.js
  function strip(s, at) {
    const out = s.text.map((tok, k) => {
      const pos = s.start + k, here = at !== null && pos === at;
      const cls = "gm-t" + (s.mask[k] === "1" ? " gen" : "") + (here ? " div" : "") + (at !== null && pos > at ? " after" : "");
      return el("span", { class: cls, "data-mask": s.mask[k], title: here ? `first difference, position ${count(pos)}` : null, text: tok });
    });
    if (at !== null && at >= s.prompt_tokens) out.push(el("span", { class: "gm-t div end", title: "this prompt ends here", text: "⟂ end" }));
    return out;
  }
  function output(s, at) {
    const out = s.out_text.map((tok, k) => {
      const here = at !== null && k === at;
      return el("span", {
        class: "gm-t gen" + (here ? " div" : "") + (at !== null && k > at ? " after" : ""),
        "data-mask": s.out_mask[k],
        "data-k": k,
        title: here ? `first difference: generated token ${count(k)}` : null,
        "data-testid": here ? "divergence" : null,
        text: tok
      });
    });
    if (at !== null && at >= s.out_total) {
      out.push(el("span", { class: "gm-t div end", "data-testid": "divergence", title: "this turn ends here", text: "⟂ end" }));
    }
    if (s.out_total > s.out_text.length) {
      out.push(el("span", { class: "gm-dim", text: ` … ${count(s.out_total - s.out_text.length)} more generated tokens` }));
    }
    return out;
  }
  var sideName = (s) => s.label || `rollout ${s.rollout}`;
  function drawCompare(c) {
    const k = c.output_diverge_at;
    const where = k === null ? `their generated tokens are identical (${many(c.a.out_total, "token")})` : k === 0 ? "their generated tokens differ from the first one" : `their generated tokens are the same for ${many(k, "token")}, then differ (at generated token ${count(k)})`;
    const p = c.prompt_diverge_at;
    const prompt = p === null ? el("div", { class: "gm-dim", "data-testid": "prompt-note", text: `their prompts are identical (${many(c.a.prompt_tokens, "token")})` }) : el(
      "details",
      { class: "gm-prompt-note", "data-testid": "prompt-note" },
      el("summary", { text: `their prompts already differ at position ${count(p)} (of ${count(c.a.prompt_tokens)} and ${count(c.b.prompt_tokens)}): show where` }),
      ...[c.a, c.b].flatMap((x) => [
        el("div", { class: "gm-side-h", text: `rollout ${x.rollout}` }),
        el("div", { class: "gm-strip" }, ...strip(x, p))
      ])
    );
    const side = (s) => el(
      "div",
      { class: "gm-side", "data-testid": "compare-side" },
      el(
        "div",
        { class: "gm-side-h" },
        `${sideName(s)} · turn ${s.turn}${s.fate ? ` · ${s.fate}` : ""} `,
        el("span", { class: "gm-dim", text: `${count(s.out_total)} generated tokens` })
      ),
      el("div", { class: "gm-strip gm-out" }, ...output(s, k))
    );
    const calls = (s) => el(
      "div",
      { class: "gm-calls" + (s.failed ? " failed" : "") },
      el("b", { text: sideName(s) }),
      el("ul", null, ...s.tools.length ? s.tools.map((t) => el("li", { text: short(t, 200) })) : [el("li", { class: "gm-dim", text: "no tool call" })])
    );
    return el(
      "div",
      { class: "gm-cmp" },
      el(
        "div",
        { class: "gm-cmp-h" },
        el("b", { text: `turn ${c.turn}` }),
        `: ${where} `,
        el("span", { class: "gm-dim", text: "(each side from its first generated token, mask 1 underlined; the first difference boxed)" })
      ),
      c.note ? el("div", { class: "gm-note", "data-testid": "compare-note", text: c.note }) : null,
      el("div", { class: "gm-sides" }, side(c.a), side(c.b)),
      prompt,
      el("div", { class: "gm-callrow" }, calls(c.a), calls(c.b))
    );
  }
  function showCompare(out, got) {
    if (got && got.compare) out.replaceChildren(drawCompare(got.compare));
    else out.textContent = got && got.error || "could not compare";
  }

  // src/run_charts.js
  function reduceLines(xs, ys, keep, bins) {
    const n = xs.length;
    bins = Math.max(1, Math.floor(bins));
    if (n <= 2 * bins) return { xs: xs.slice(), ys: ys.map((y) => y.slice()) };
    const ox = (
      /** @type {number[]} */
      []
    );
    const oy = ys.map(() => (
      /** @type {(number | null)[]} */
      []
    ));
    for (let b = 0; b < bins; b++) {
      const i0 = Math.floor(b * n / bins), i1 = Math.floor((b + 1) * n / bins);
      if (i1 <= i0) continue;
      ox.push(xs[i0], xs[i1 - 1]);
      ys.forEach((y, s) => {
        let lo = null, hi = null, ilo = -1, ihi = -1;
        for (let i = i0; i < i1; i++) {
          const v = y[i];
          if (v === null || v === void 0 || !Number.isFinite(v)) continue;
          if (lo === null || v < lo) {
            lo = v;
            ilo = i;
          }
          if (hi === null || v > hi) {
            hi = v;
            ihi = i;
          }
        }
        const k = keep[s];
        if (k === "lo") oy[s].push(lo, lo);
        else if (k === "hi") oy[s].push(hi, hi);
        else if (ilo <= ihi) oy[s].push(lo, hi);
        else oy[s].push(hi, lo);
      });
    }
    return { xs: ox, ys: oy };
  }
  function binBars(xs, ys, bins) {
    const n = xs.length;
    const per = Math.max(1, Math.ceil(n / Math.max(1, Math.floor(bins))));
    if (per === 1) return { xs: xs.slice(), ys: ys.map((y) => y.slice()), per };
    const ox = (
      /** @type {number[]} */
      []
    );
    const oy = ys.map(() => (
      /** @type {number[]} */
      []
    ));
    for (let i0 = 0; i0 < n; i0 += per) {
      ox.push(xs[i0]);
      const i1 = Math.min(n, i0 + per);
      ys.forEach((y, s) => {
        let t = 0;
        for (let i = i0; i < i1; i++) t += y[i] || 0;
        oy[s].push(t / (i1 - i0));
      });
    }
    return { xs: ox, ys: oy, per };
  }
  var faint = (s) => ({ ...s, width: 1, alpha: 0.3, points: { show: false } });
  var fin = (v) => typeof v === "number" && Number.isFinite(v) ? v : null;
  function ema(ys, w) {
    if (!(w > 0)) return ys.slice();
    let last = 0, n = 0;
    return ys.map((y) => {
      if (y === null || !Number.isFinite(y)) return null;
      last = last * w + (1 - w) * y;
      n++;
      return last / (1 - Math.pow(w, n));
    });
  }
  function bandEdges(lo, hi) {
    const wide = lo.map((l, i) => l !== null && hi[i] !== null && /** @type {number} */
    hi[i] > l);
    return [lo.map((l, i) => wide[i] ? l : null), hi.map((h, i) => wide[i] ? h : null)];
  }
  function padded(lo, hi) {
    if (lo === null || hi === null) return [0, 1];
    if (lo === hi) {
      const d2 = Math.abs(lo) * 0.1 || 0.5;
      return [lo - d2, hi + d2];
    }
    const d = hi * 0.06 - lo * 0.06;
    return [Math.max(-Number.MAX_VALUE, lo - d), Math.min(Number.MAX_VALUE, hi + d)];
  }
  function compact(v) {
    const a = Math.abs(v);
    if (a >= 1e15 || a > 0 && a < 1e-3) return v.toExponential(1);
    if (a >= 1e9) return +(v / 1e9).toFixed(1) + "G";
    if (a >= 1e6) return +(v / 1e6).toFixed(1) + "M";
    if (a >= 1e4) return +(v / 1e3).toFixed(1) + "k";
    return String(+v.toFixed(3));
  }
  var CAUSE_TONE = {
    "in-queue": "wait",
    "read-ahead": "wait",
    "in-batcher": "wait",
    "resume-skip": "wait",
    "unknown": "none",
    "stale": "warn",
    "oversize": "warn",
    "no rows": "warn",
    "failed": "bad"
  };
  var TONE_ORDER = ["bad", "warn", "none", "wait"];
  var CAUSE_COLOUR = {
    "in-queue": "wait",
    "read-ahead": "ahead",
    "in-batcher": "batcher",
    "resume-skip": "skip",
    "unknown": "none",
    "stale": "warn",
    "oversize": "oversize",
    "no rows": "warn2",
    "failed": "bad"
  };
  function palette(box) {
    const cs = getComputedStyle(box);
    const v = (name, dflt) => cs.getPropertyValue(name).trim() || dflt;
    return {
      fg: v("--fg", "#111827"),
      dim: v("--fg-dim", "#4b5563"),
      grid: v("--line-soft", "#e5e7eb"),
      accent: v("--c-mean", "#4338ca"),
      band: v("--c-band", "rgba(67,56,202,.22)"),
      range: v("--c-range", "rgba(67,56,202,.09)"),
      good: v("--c-good", "#15803d"),
      bad: v("--c-bad", "#dc2626"),
      warn: v("--c-warn", "#d97706"),
      warn2: v("--c-warn2", "#a16207"),
      wait: v("--c-wait", "#94a3b8"),
      none: v("--c-none", "#64748b"),
      ahead: v("--c-ahead", "#38bdf8"),
      batcher: v("--c-batcher", "#a78bfa"),
      skip: v("--c-skip", "#2dd4bf"),
      oversize: v("--c-oversize", "#ca8a04"),
      bg: v("--bg", "#ffffff"),
      font: parseFloat(cs.fontSize) || 14,
      family: cs.fontFamily || "sans-serif"
    };
  }
  function cell(id, spec) {
    const title = el(
      "figcaption",
      { class: "rp-chart-title", text: spec.title },
      spec.note ? el("span", { class: "rp-chart-note", text: " · " + spec.note }) : null
    );
    const legend = el("div", { class: "rp-legend" }, ...spec.keys.map((k) => {
      const sw = el("i", { class: "rp-sw rp-sw-" + (k.kind || "line") + (k.dash ? " dashed" : "") + (k.faint ? " faint" : "") });
      sw.style.setProperty("--sw", k.color);
      return el("span", {}, sw, k.label);
    }));
    return el(
      "figure",
      {
        class: "rp-chart",
        id,
        "data-testid": "run-chart",
        tabindex: spec.hover ? "0" : null,
        "aria-label": spec.hover ? `${spec.title}: arrow keys read a version, Enter opens it` : null
      },
      title,
      legend,
      el("div", { class: "rp-canvas" })
    );
  }
  function val(v) {
    if (v === null || v === void 0 || !Number.isFinite(v)) return "–";
    return Math.abs(v) >= 1e4 || v !== 0 && Math.abs(v) < 1e-3 ? compact(v) : String(+v.toFixed(3));
  }
  var pct = (v) => v === null || v === void 0 || !Number.isFinite(v) ? "–" : Math.round(v * 100) + "%";
  var WHOLE_STEPS = [
    1,
    2,
    5,
    10,
    20,
    50,
    100,
    200,
    500,
    1e3,
    2e3,
    5e3,
    1e4,
    2e4,
    5e4,
    1e5,
    2e5,
    5e5,
    1e6,
    2e6,
    5e6,
    1e7,
    2e7,
    5e7,
    1e8,
    2e8,
    5e8,
    1e9
  ];
  function nearest(xs, x) {
    let lo = 0, hi = xs.length - 1;
    while (hi - lo > 1) {
      const m = lo + hi >> 1;
      if (xs[m] <= x) lo = m;
      else hi = m;
    }
    return Math.abs(xs[hi] - x) < Math.abs(x - xs[lo]) ? hi : lo;
  }
  function attachHover(box, u, hv, open) {
    if (!hv.xs.length) return;
    const over = u.over;
    const cross = el("div", { class: "rp-cross", "aria-hidden": "true", hidden: true });
    const dot = el("div", { class: "rp-dot", "aria-hidden": "true", hidden: true });
    const read = el("div", { class: "rp-read", "data-testid": "chart-readout", role: "status", hidden: true });
    over.append(cross, dot);
    box.append(read);
    over.classList.toggle("rp-opens", !!open);
    let at = -1;
    const under = (ev) => nearest(hv.xs, u.posToVal(ev.clientX - over.getBoundingClientRect().left, "x"));
    function show(i) {
      at = Math.max(0, Math.min(hv.xs.length - 1, i));
      const x = u.valToPos(hv.xs[at], "x");
      cross.style.left = `${x}px`;
      cross.hidden = false;
      const y = hv.y ? hv.y[at] : null;
      dot.hidden = y === null || y === void 0;
      if (y !== null && y !== void 0) {
        dot.style.left = `${x}px`;
        dot.style.top = `${u.valToPos(y, "y")}px`;
      }
      read.replaceChildren(el("b", { text: hv.head(at) }), ...hv.rows(at).map((r) => {
        const sw = r.color ? el("i", { class: "rp-sw rp-sw-band" }) : null;
        if (sw && r.color) sw.style.setProperty("--sw", r.color);
        return el("div", { class: "rp-read-row" }, sw, el("span", { class: "rp-read-k", text: r.label }), el("span", { class: "rp-read-v", text: r.value }));
      }));
      if (open) read.append(el("div", { class: "rp-read-hint", text: "click or Enter: open this version" }));
      read.hidden = false;
      const ob = over.getBoundingClientRect(), bb = box.getBoundingClientRect();
      const w = read.offsetWidth;
      let left = ob.left - bb.left + x + 14;
      if (left + w > bb.width - 2) left = ob.left - bb.left + x - 14 - w;
      read.style.left = `${Math.max(2, left)}px`;
      read.style.top = `${Math.max(0, ob.top - bb.top + 2)}px`;
      box.dataset.hover = String(hv.xs[at]);
    }
    function hide() {
      cross.hidden = dot.hidden = read.hidden = true;
      delete box.dataset.hover;
    }
    let readAt = NaN;
    over.addEventListener("pointermove", (ev) => {
      readAt = ev.clientX;
      show(under(ev));
    });
    over.addEventListener("pointerleave", () => {
      readAt = NaN;
      if (document.activeElement !== box) hide();
    });
    over.addEventListener("click", (ev) => {
      const i = at >= 0 && Math.abs(ev.clientX - readAt) <= 1 ? at : under(ev);
      show(i);
      if (open) open(hv.xs[i]);
    });
    box.addEventListener("focus", () => show(at < 0 ? hv.xs.length - 1 : at));
    box.addEventListener("blur", hide);
    box.addEventListener("keydown", (ev) => {
      const step = ev.shiftKey ? 10 : 1;
      const moves = { ArrowLeft: -step, ArrowRight: step, PageUp: -10 * step, PageDown: 10 * step, Home: -Infinity, End: Infinity };
      if (ev.key in moves) {
        const d = moves[ev.key];
        show(d === -Infinity ? 0 : d === Infinity ? hv.xs.length - 1 : (at < 0 ? hv.xs.length - 1 : at) + d);
      } else if (ev.key === "Enter" && open && at >= 0) open(hv.xs[at]);
      else return;
      ev.preventDefault();
    });
  }
  function draw(box, spec, pal, height, open) {
    const plot = (
      /** @type {HTMLElement} */
      box.querySelector(".rp-canvas")
    );
    const old = (
      /** @type {any} */
      plot.__uplot
    );
    if (old) old.destroy();
    const width = Math.max(120, Math.floor(plot.getBoundingClientRect().width || box.getBoundingClientRect().width));
    const font = `${Math.round(pal.font * 0.86)}px ${pal.family}`;
    const fmt = spec.fmt || compact;
    const axis = { stroke: pal.dim, font, grid: { stroke: pal.grid, width: 1 }, ticks: { stroke: pal.grid, width: 1 } };
    const xs = spec.xs;
    const half = spec.bars && xs.length > 1 ? (xs[xs.length - 1] - xs[0]) / (xs.length - 1) / 2 : 0.5;
    const ctx = document.createElement("canvas").getContext("2d");
    if (ctx) ctx.font = font;
    const textWidth = (t) => ctx ? ctx.measureText(t).width : t.length * pal.font * 0.6;
    const ends = xs.length ? [xs[0], xs[xs.length - 1]] : [0, 1];
    const space = Math.ceil(Math.max(...ends.map((x) => textWidth(String(Math.round(x))))) + pal.font * 1.2);
    let labels = [];
    let yticks = [];
    const opts = {
      width,
      height,
      legend: { show: false },
      cursor: { show: false },
      padding: [8, Math.round(pal.font * 1.6), 0, 0],
      scales: {
        x: { time: false, range: () => [xs.length ? xs[0] - half : 0, xs.length ? xs[xs.length - 1] + half : 1] },
        y: { range: (_u, lo, hi) => spec.yRange || (spec.bars ? [0, padded(0, Math.max(hi, 1))[1]] : padded(lo, hi)) }
      },
      axes: [
        {
          ...axis,
          size: Math.round(pal.font * 2.4),
          space,
          incrs: WHOLE_STEPS,
          values: (_u, ticks) => {
            const out = ticks.map((t) => Number.isInteger(t) ? String(t) : "");
            labels = ticks.map((t, i) => [t, out[i]]);
            return out;
          }
        },
        // a bar chart counts (rollouts, tokens): its ticks whole numbers, never 2.5 rollouts
        // ticks as close as their labels allow (uPlot's 30 px left a 76 px plot of 0.33-0.39 one tick: no scale)
        {
          ...axis,
          size: Math.round(pal.font * 3.6),
          space: Math.round(pal.font * 1.5),
          ...spec.bars ? { incrs: WHOLE_STEPS } : {},
          values: (_u, ticks) => {
            yticks = ticks;
            return ticks.map(fmt);
          }
        }
      ],
      series: [{}, ...spec.series],
      bands: (spec.bands || []).map(([hi, lo, fill]) => ({ series: [hi, lo], fill })),
      // the x labels as drawn, each with its extent in CSS pixels: what a test checks for collisions
      hooks: { draw: [(u2) => {
        box.dataset.xticks = JSON.stringify(labels.filter(([, t]) => t).map(([x, t]) => {
          const c = u2.valToPos(x, "x"), w = textWidth(t);
          return { text: t, left: c - w / 2, right: c + w / 2 };
        }));
        box.dataset.yticks = JSON.stringify(yticks);
      }] }
    };
    const u = new uPlot(opts, [xs, ...spec.ys], plot);
    plot.__uplot = u;
    box.dataset.points = String(xs.length);
    box.dataset.drawn = String(spec.drawn);
    if (spec.band) box.dataset.band = spec.band;
    if (spec.hover) attachHover(box, u, spec.hover, open);
  }
  function specs(vs, width, pal, smooth) {
    const xs = vs.map((s) => s.version);
    const bins = Math.max(8, Math.floor(width / 2));
    const bars = Math.max(4, Math.floor(width / 4));
    const smoothed = smooth > 0;
    const ew = `EMA ${+smooth.toFixed(2)}`;
    const line = (c, w = 2, dash = void 0) => ({ stroke: c, width: w, dash, points: { show: false }, spanGaps: false });
    const raw = (s) => smoothed ? faint(s) : s;
    const hidden = { stroke: "transparent", width: 0, points: { show: false } };
    const counts = (s) => ({ label: "counts", value: `${many(s.groups, "group")} · ${many(s.rollouts, "rollout")}` });
    const mean = vs.map((s) => fin(s.reward_mean));
    const meanS = ema(mean, smooth);
    const [sdLo, sdHi] = bandEdges(vs.map((s) => sdEdge(s, -1)), vs.map((s) => sdEdge(s, 1)));
    const [rMin, rMax] = bandEdges(vs.map((s) => fin(s.reward_min)), vs.map((s) => fin(s.reward_max)));
    const banded = rMin.some((v) => v !== null);
    const r = reduceLines(
      xs,
      [rMin, sdLo, mean, sdHi, rMax, ...smoothed ? [meanS] : []],
      ["lo", "lo", "line", "hi", "hi", ...smoothed ? (
        /** @type {Keep[]} */
        ["line"]
      ) : []],
      bins
    );
    const share = (part, whole) => whole ? part / whole : null;
    const untrained2 = (s) => Object.values(s.dropped).reduce((a, b) => a + b, 0);
    const shares = [
      vs.map((s) => fin(s.pass_rate)),
      vs.map((s) => share(s.zero_spread, s.groups)),
      vs.map((s) => share(s.unscorable, s.rollouts)),
      vs.map((s) => share(s.timeouts, s.rollouts)),
      vs.map((s) => share(untrained2(s), s.rollouts))
    ];
    const sharesS = shares.map((y) => ema(y, smooth));
    const sh = reduceLines(xs, smoothed ? [...shares, ...sharesS] : shares, shares.flatMap(() => smoothed ? ["line", "line"] : ["line"]), bins);
    const tk = binBars(xs, [vs.map((s) => s.trained_tokens)], bars);
    const causes = Array.from(new Set(vs.flatMap((s) => Object.keys(s.dropped)))).sort((a, b) => TONE_ORDER.indexOf(tone(a)) - TONE_ORDER.indexOf(tone(b)) || a.localeCompare(b));
    const dr = binBars(xs, causes.map((c) => vs.map((s) => s.dropped[c] || 0)), bars);
    const stacks = causes.map((_, i) => dr.xs.map((_x, j) => causes.slice(i).reduce((t, _c, k) => t + dr.ys[i + k][j], 0)));
    const per = (n) => n > 1 ? `each bar: the mean of ${n} versions` : "";
    const inBar = (i, p, means) => {
      if (p <= 1) return [];
      const j = Math.floor(i / p);
      return [{ label: "its bar", value: `versions ${xs[j * p]}–${xs[Math.min(xs.length, (j + 1) * p) - 1]}: ${val(means[j])} on average` }];
    };
    const bar = (c) => ({
      fill: c,
      stroke: c,
      width: 0,
      points: { show: false },
      paths: uPlot.paths.bars({ size: [0.86, Infinity], align: 0 })
    });
    const causeColours = {
      wait: pal.wait,
      ahead: pal.ahead,
      batcher: pal.batcher,
      skip: pal.skip,
      none: pal.none,
      warn: pal.warn,
      oversize: pal.oversize,
      warn2: pal.warn2,
      bad: pal.bad
    };
    const colorOf = (c) => causeColours[CAUSE_COLOUR[c] || "none"];
    const shareKeys = [
      { label: "passed every test", color: pal.good, width: 2.5 },
      { label: "groups with zero spread (nothing learnt)", color: pal.warn2, dash: [6, 4] },
      { label: "unscorable", color: pal.none, dash: [2, 3] },
      { label: "timed out", color: pal.warn },
      { label: "never trained (any cause)", color: pal.dim, dash: [8, 3, 2, 3] }
    ];
    const shareLines = [
      line(pal.good, 2.5),
      line(pal.warn2, 2, [6, 4]),
      line(pal.none, 2, [2, 3]),
      line(pal.warn, 1.75),
      line(pal.dim, 1.5, [8, 3, 2, 3])
    ];
    const head = (i) => `version ${xs[i]}`;
    const withEma = (v, ys, i, f = pct) => smoothed ? `${v} (${ew}: ${f(ys[i])})` : v;
    return {
      "run-reward-plot": {
        title: "Reward per version",
        note: banded ? "" : "no band: at every version every rollout has the same reward",
        xs: r.xs,
        ys: r.ys,
        drawn: vs.length,
        band: banded ? "drawn" : "none",
        keys: [
          { label: smoothed ? "mean (raw)" : "mean", color: pal.accent, faint: smoothed },
          ...smoothed ? [{ label: `mean, ${ew}`, color: pal.accent }] : [],
          ...banded ? [
            { label: "mean ± 1 sd", color: pal.band, kind: (
              /** @type {"band"} */
              "band"
            ) },
            { label: "min … max", color: pal.range, kind: (
              /** @type {"band"} */
              "band"
            ) }
          ] : []
        ],
        series: [hidden, hidden, raw(line(pal.accent, 2.25)), hidden, hidden, ...smoothed ? [line(pal.accent, 2.25)] : []],
        bands: banded ? [[5, 1, pal.range], [4, 2, pal.band]] : [],
        hover: { xs, y: smoothed ? meanS : mean, head, rows: (i) => {
          const s = vs[i];
          return [
            { label: "mean", value: withEma(val(s.reward_mean), meanS, i, val), color: pal.accent },
            { label: "± 1 sd", value: `${val(sdEdge(s, -1))} … ${val(sdEdge(s, 1))} (sd ${val(s.reward_sd)})`, color: pal.band },
            { label: "min … max", value: `${val(s.reward_min)} … ${val(s.reward_max)}`, color: pal.range },
            { label: "zero spread", value: `${s.zero_spread}/${many(s.groups, "group")}` },
            counts(s)
          ];
        } }
      },
      "run-share-plot": {
        title: "What became of each version's rollouts",
        note: "share, 0–100%",
        xs: sh.xs,
        ys: sh.ys,
        drawn: vs.length,
        yRange: [-0.04, 1.04],
        fmt: (v) => v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : "",
        keys: smoothed ? [{ label: `faint: raw · bold: ${ew}`, color: pal.dim, faint: true }, ...shareKeys] : shareKeys,
        series: smoothed ? [...shareLines.map(raw), ...shareLines] : shareLines,
        hover: { xs, y: (smoothed ? sharesS : shares)[0], head, rows: (i) => {
          const s = vs[i], u = untrained2(s);
          return [
            { label: "passed every test", value: withEma(`${pct(s.pass_rate)} (${s.passed} of ${s.verified} verified)`, sharesS[0], i), color: pal.good },
            { label: "zero spread", value: withEma(`${s.zero_spread}/${many(s.groups, "group")}`, sharesS[1], i), color: pal.warn2 },
            { label: "unscorable", value: withEma(`${s.unscorable}/${s.rollouts}`, sharesS[2], i), color: pal.none },
            { label: "timed out", value: withEma(`${s.timeouts}/${s.rollouts}`, sharesS[3], i), color: pal.warn },
            { label: "never trained", value: withEma(`${u}/${s.rollouts}`, sharesS[4], i), color: pal.dim },
            counts(s)
          ];
        } }
      },
      "run-tokens-plot": {
        title: "Trained tokens per version",
        note: per(tk.per),
        xs: tk.xs,
        ys: tk.ys,
        drawn: vs.length,
        bars: true,
        keys: [{ label: "tokens in TRL's loss", color: pal.accent, kind: "bar" }],
        series: [bar(pal.accent)],
        hover: { xs, head, rows: (i) => [
          { label: "trained tokens", value: count(vs[i].trained_tokens), color: pal.accent },
          ...inBar(i, tk.per, tk.ys[0]),
          { label: "trained", value: `${vs[i].trained}/${vs[i].rollouts} rollouts` },
          counts(vs[i])
        ] }
      },
      "run-dropped-plot": {
        title: "Rollouts never trained, by cause",
        note: per(dr.per),
        xs: dr.xs,
        ys: stacks,
        drawn: vs.length,
        bars: true,
        keys: causes.length ? causes.map((c) => ({ label: c + (tone(c) === "wait" ? " (waiting, harmless)" : ""), color: colorOf(c), kind: (
          /** @type {"bar"} */
          "bar"
        ) })) : [{ label: "none: every rollout was trained", color: pal.good, kind: "bar" }],
        series: causes.map((c) => ({ ...bar(colorOf(c)), stroke: pal.bg, width: causes.length > 1 ? 1 : 0 })),
        hover: { xs, head, rows: (i) => [
          ...causes.map((c) => ({ label: c, value: count(vs[i].dropped[c] || 0), color: colorOf(c) })),
          { label: "never trained", value: `${untrained2(vs[i])}/${vs[i].rollouts} rollouts` },
          ...inBar(i, dr.per, stacks.length ? stacks[0] : []),
          counts(vs[i])
        ] }
      }
    };
  }
  function tone(c) {
    return CAUSE_TONE[c] || "none";
  }
  function sdEdge(s, side) {
    const m = fin(s.reward_mean), sd = fin(s.reward_sd);
    if (m === null) return null;
    const v = m + side * (sd || 0);
    return Number.isFinite(v) ? v : side * Number.MAX_VALUE;
  }
  function taskSpec(t, width, pal, smooth) {
    const xs = t.pass_rates.map((p) => p.version);
    const ys = t.pass_rates.map((p) => p.pass_rate);
    const smoothed = smooth > 0, ysS = ema(ys, smooth);
    const r = reduceLines(xs, smoothed ? [ys, ysS] : [ys], smoothed ? ["line", "line"] : ["line"], Math.max(8, Math.floor(width / 2)));
    const rawLine = { stroke: pal.good, width: 2.5, points: { show: true, size: 5, fill: pal.good } };
    return {
      title: "This task's pass rate per version",
      xs: r.xs,
      ys: r.ys,
      drawn: xs.length,
      yRange: [-0.04, 1.04],
      fmt: (v) => v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : "",
      keys: [
        { label: "rollouts passing every held-out test" + (smoothed ? " (raw)" : ""), color: pal.good, faint: smoothed },
        ...smoothed ? [{ label: `EMA ${+smooth.toFixed(2)}`, color: pal.good }] : []
      ],
      series: smoothed ? [{ ...rawLine, width: 1, alpha: 0.3 }, { stroke: pal.good, width: 2.5, points: { show: false } }] : [rawLine],
      hover: { xs, y: smoothed ? ysS : ys, head: (i) => `version ${xs[i]}`, rows: (i) => {
        const p = t.pass_rates[i];
        return [
          { label: "pass rate", value: pct(ys[i]) + (smoothed ? ` (EMA ${+smooth.toFixed(2)}: ${pct(ysS[i])})` : ""), color: pal.good },
          { label: "counts", value: `${many(p.groups, "group")} · ${p.passed}/${p.verified} passed` }
        ];
      } }
    };
  }
  var LEGEND_SRC = 28;
  function compareSpecs(c, width, pal, smooth) {
    const xs = Array.from(new Set([...c.a.versions, ...c.b.versions].map((s) => s.version))).sort((x, y) => x - y);
    const bins = Math.max(8, Math.floor(width / 2));
    const at = (vs) => {
      const m = new Map(vs.map((s) => [s.version, s]));
      return xs.map((x) => m.get(x) || null);
    };
    const sa = at(c.a.versions), sb = at(c.b.versions);
    const share = (part, whole) => whole ? part / whole : null;
    const both = (f) => [sa.map((s) => s ? fin(f(s)) : null), sb.map((s) => s ? fin(f(s)) : null)];
    const smoothed = smooth > 0;
    const ew = `EMA ${+smooth.toFixed(2)}`;
    const line = (col, dash, own) => ({ stroke: col, width: 2.25, dash, points: { show: own < 40, size: 5, fill: col }, spanGaps: true });
    const keys = [
      ...smoothed ? [{ label: `faint: raw · bold: ${ew}`, color: pal.dim, faint: true }] : [],
      { label: "this run: " + end(c.a.src, LEGEND_SRC), color: pal.accent },
      { label: "other run: " + end(c.b.src, LEGEND_SRC), color: pal.warn, dash: [6, 4] }
    ];
    const bold = [line(pal.accent, void 0, c.a.versions.length), line(pal.warn, [6, 4], c.b.versions.length)];
    const series = smoothed ? [faint(line(pal.accent, void 0, 0)), faint(line(pal.warn, void 0, 0)), ...bold] : bold;
    const pctFmt = (v) => v >= 0 && v <= 1 ? Math.round(v * 100) + "%" : "";
    const tokens = (v) => v === null ? "–" : count(v);
    const dense = !smoothed && xs.length > 2 * bins ? `${count(xs.length)} versions, more than its pixels: smooth them above` : "";
    const chart = (title, f, more, show = val) => {
      const [ya, yb] = both(f);
      const [ea, eb] = [ema(ya, smooth), ema(yb, smooth)];
      const r = reduceLines(xs, smoothed ? [ya, yb, ea, eb] : [ya, yb], smoothed ? ["line", "line", "line", "line"] : ["line", "line"], bins);
      const said = (ys, es, i) => show(ys[i]) + (smoothed ? ` (${ew}: ${show(es[i])})` : "");
      const hover = {
        xs,
        y: smoothed ? ea : ya,
        head: (i) => `version ${xs[i]}`,
        rows: (i) => [
          { label: "this run", value: sa[i] ? said(ya, ea, i) : "no such version", color: pal.accent },
          { label: "other run", value: sb[i] ? said(yb, eb, i) : "no such version", color: pal.warn }
        ]
      };
      return { title, xs: r.xs, ys: r.ys, drawn: xs.length, keys, series, hover, ...more };
    };
    return {
      "cmp-reward-plot": chart("Reward mean per version", (s) => s.reward_mean, { note: dense }),
      "cmp-pass-plot": chart("Pass rate per version", (s) => s.pass_rate, { yRange: [-0.04, 1.04], fmt: pctFmt, note: "passed every held-out test" }, pct),
      "cmp-spread-plot": chart("Groups with zero spread", (s) => share(s.zero_spread, s.groups), { yRange: [-0.04, 1.04], fmt: pctFmt, note: "GRPO learns nothing from them" }, pct),
      "cmp-tokens-plot": chart("Trained tokens per version", (s) => s.trained_tokens, {}, tokens)
    };
  }
  function mount(grid, open) {
    let data = { versions: [], task: null };
    let smooth = 0;
    const drawn = mountWith(grid, (cw, pal) => {
      const all = specs(data.versions, cw, pal, smooth);
      if (data.task) all["run-task-plot"] = taskSpec(data.task, cw, pal, smooth);
      return { all, count: data.versions.length };
    }, open);
    return {
      /** @param {VersionStats[]} versions @param {TaskTrack | null} task */
      update(versions, task) {
        data = { versions, task };
        drawn.redraw(true);
      },
      /** @param {number} w an EMA weight, 0 (raw) to 0.99 */
      smooth(w) {
        smooth = w;
        drawn.redraw(true);
      }
    };
  }
  function mountCompare(grid) {
    let data = null;
    let smooth = 0;
    const drawn = mountWith(grid, (cw, pal) => ({ all: data ? compareSpecs(data, cw, pal, smooth) : {}, count: data ? data.a.versions.length + data.b.versions.length : 0 }));
    return {
      /** @param {RunCompare} c */
      update(c) {
        data = c;
        drawn.redraw(true);
      },
      /** @param {number} w the run page's EMA weight, 0 (raw) to 0.99 */
      smooth(w) {
        smooth = w;
        if (data) drawn.redraw(true);
      }
    };
  }
  function mountWith(grid, build, open) {
    let key = "";
    function redraw(force = false) {
      const pal = palette(grid);
      const width = Math.floor(grid.getBoundingClientRect().width);
      const page2 = document.getElementById("run-page");
      const presenting = !!page2 && page2.classList.contains("rp-present");
      const short2 = !presenting && innerHeight < 850 && width >= 900;
      const k = `${width}|${pal.font}|${pal.fg}|${short2}|${presenting}|${innerHeight}`;
      if (!force && k === key) return;
      key = k;
      if (!width) return;
      const columns = short2 ? 4 : width >= 900 ? 2 : 1;
      const cw = Math.floor(width / columns) - 12;
      const height = presenting ? Math.round(Math.max(170, Math.min(320, innerHeight * 0.3))) : (
        // (the smoothing bar above them takes a line of it: the table's first rows stay on the first screen)
        short2 ? Math.round(Math.max(100, Math.min(150, innerHeight * 0.18) - 20)) : Math.round(Math.max(150, Math.min(260, pal.font * 13)))
      );
      const { all, count: count2 } = build(cw, pal);
      grid.style.setProperty("--rp-columns", String(columns));
      grid.replaceChildren(...Object.entries(all).map(([id, spec]) => cell(id, spec)));
      for (const [id, spec] of Object.entries(all)) draw(
        /** @type {HTMLElement} */
        grid.querySelector("#" + id),
        spec,
        pal,
        height,
        open
      );
      grid.dataset.drawn = String(count2);
    }
    let pending = 0;
    const later = () => {
      if (!pending) pending = requestAnimationFrame(() => {
        pending = 0;
        redraw();
      });
    };
    new ResizeObserver(later).observe(grid);
    const onResize = () => {
      if (!document.body.contains(grid)) removeEventListener("resize", onResize);
      else later();
    };
    addEventListener("resize", onResize);
    const watch = new MutationObserver(() => {
      if (!document.body.contains(grid)) watch.disconnect();
      else later();
    });
    watch.observe(document.body, { attributes: true, attributeFilter: ["class"] });
    const page = document.getElementById("run-page");
    if (page) watch.observe(page, { attributes: true, attributeFilter: ["class"] });
    return { redraw };
  }

  // src/run_versus.js
  var num = (v) => v === null ? "–" : v.toFixed(3);
  var pct2 = (v) => v === null ? "–" : Math.round(100 * v) + "%";
  function setUrl(changes) {
    const u = new URL(window.location.href);
    for (const [k, v] of Object.entries(changes)) if (v) u.searchParams.set(k, v);
    else u.searchParams.delete(k);
    history.replaceState(history.state, "", u.toString());
  }
  function rowLink(src, row) {
    const u = new URL(window.location.href);
    u.search = "";
    u.searchParams.set("src", src);
    u.searchParams.set("row", row);
    return u.toString();
  }
  function sides(c) {
    const row = (label, f) => el("tr", {}, el("th", { text: label }), el("td", { text: f(c.a) }), el("td", { text: f(c.b) }));
    return el(
      "table",
      { class: "rp-vssides", "data-testid": "run-vs-sides" },
      el("thead", {}, el("tr", {}, el("th"), el("th", { text: "this run" }), el("th", { text: "other run" }))),
      el(
        "tbody",
        {},
        row("source", (s) => s.src),
        row("model", (s) => s.model),
        row("versions", (s) => count(s.versions.length)),
        row("groups · rollouts", (s) => `${count(s.groups)} · ${count(s.rollouts)}`),
        row("reward mean", (s) => num(s.reward_mean)),
        row("pass rate", (s) => pct2(s.pass_rate))
      )
    );
  }
  function taskSide(src, t, who) {
    if (!t) return el("div", { class: "rp-dim", text: `${who}: no rollout of this task` });
    const rows = t.groups.map((g) => el(
      "tr",
      { "data-testid": "run-vs-group" },
      el("td", {}, el("b", { text: `v${g.version}` }), ` g${g.group_id}`),
      el("td", { class: "rp-num", text: pct2(g.pass_rate) }),
      el("td", {}, ...g.rollouts.map((r) => {
        const text = `#${r.rollout} ${r.reward === null ? "×" : (r.reward > 0 ? "+" : "") + r.reward.toFixed(2)} ${r.status}${r.passed ? " ✓" : ""}`;
        const cls = "rp-vsr rp-r " + sign(r.reward) + (r.passed ? " passed" : "");
        return r.path ? el("a", {
          class: cls,
          href: rowLink(src, r.path),
          "data-src": src,
          "data-row": r.path,
          "data-testid": "run-vs-rollout",
          title: `open rollout ${r.rollout} of group ${g.group_id} at version ${g.version} (${r.status})`,
          text
        }) : el("span", { class: cls, title: "failed before it produced an artifact", text });
      }))
    ));
    return el(
      "div",
      { class: "rp-vsside" },
      el("div", { class: "rp-tasksum", text: `${who} · ${many(t.versions, "version")} · ` + (t.first_solved === null ? "never solved" : `first solved at version ${t.first_solved}`) + (groupsListed(t) ? ` · ${groupsListed(t)}` : "") }),
      el(
        "table",
        {},
        el("thead", {}, el("tr", {}, ...["version · group", "pass rate", "rollouts (reward, fate; ✓ passed)"].map((x) => el("th", { text: x })))),
        el("tbody", {}, ...rows)
      )
    );
  }
  function mount2(box, api) {
    const input = (
      /** @type {HTMLInputElement} */
      el("input", {
        type: "text",
        class: "rp-vsinput",
        "data-testid": "run-vs-input",
        "aria-label": "the other run",
        placeholder: "another run: a bundled example, a Hub dataset id, or a folder on your machine"
      })
    );
    const go = el("button", { type: "button", class: "rp-vsgo", "data-testid": "run-vs-go" }, "compare");
    const clear = el("button", { type: "button", class: "rp-vsclear", "data-testid": "run-vs-clear", hidden: true }, "close");
    const status = el("div", { class: "rp-dim", role: "status", "data-testid": "run-vs-status" });
    const out = el("div", { class: "rp-vsout", "data-testid": "run-vs-out" });
    const grid = el("div", { class: "rp-charts", "data-testid": "run-vs-charts" });
    const taskBox = el("div", { class: "rp-vstask", "data-testid": "run-vs-task" });
    const section = el(
      "section",
      { class: "rp-versus", "data-testid": "run-versus" },
      el("h3", { text: "Compare with another run" }),
      el("div", { class: "rp-vsbar" }, input, go, clear),
      status,
      out
    );
    box.replaceChildren(section);
    const charts = mountCompare(grid);
    let src = "", asked = 0;
    async function load(vs, task) {
      const my = ++asked;
      setUrl({ vs, vs_task: task });
      clear.hidden = !vs;
      if (!vs) {
        out.replaceChildren();
        status.textContent = "";
        box.dataset.answered = String(my);
        return;
      }
      status.textContent = "opening the other run…";
      const got = await api.versus({ src, vs, task });
      if (my !== asked) return;
      const c = got && got.compare;
      if (!c) {
        status.textContent = got && got.error || "could not compare the runs";
        out.replaceChildren();
        box.dataset.answered = String(my);
        return;
      }
      status.textContent = `${many(c.tasks.length, "task")} in both runs`;
      const notes = c.notes.length ? el("ul", { class: "rp-notes", "data-testid": "run-vs-notes" }, ...c.notes.map((n) => el("li", { text: n }))) : null;
      const pick = (
        /** @type {HTMLSelectElement} */
        el("select", { class: "rp-vspick", "data-testid": "run-vs-task-pick", "aria-label": "a task both runs ran" })
      );
      pick.append(new Option("follow a task in both runs…", ""));
      for (const t of c.tasks) pick.append(new Option(`${t.title} (this run: ${many(t.a_versions, "version")} · other: ${many(t.b_versions, "version")})`, t.task_id));
      pick.value = c.task ? c.task.task_id : "";
      pick.addEventListener("change", () => load(vs, pick.value));
      taskBox.replaceChildren(...c.task ? [el("div", { class: "rp-vsgrid" }, taskSide(c.a.src, c.a_task, "this run"), taskSide(c.b.src, c.b_task, "other run"))] : []);
      const taskbar = c.tasks.length ? el("div", { class: "rp-taskbar" }, pick) : el("div", { class: "rp-taskbar rp-dim", "data-testid": "run-vs-no-tasks", text: "the two runs share no task: none to follow in both" });
      out.replaceChildren(sides(c), ...notes ? [notes] : [], grid, taskbar, taskBox);
      charts.update(c);
      box.dataset.answered = String(my);
    }
    const ask = () => load(input.value.trim(), "").then(() => intoSight(section));
    go.addEventListener("click", ask);
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") ask();
    });
    clear.addEventListener("click", () => {
      input.value = "";
      load("", "");
    });
    out.addEventListener("click", (ev) => {
      const a = (
        /** @type {HTMLElement | null} */
        /** @type {HTMLElement} */
        ev.target.closest("a.rp-vsr")
      );
      if (!a || a.dataset.src !== src || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
      ev.preventDefault();
      api.openRow(src, a.dataset.row || "");
    });
    return {
      /** The run page's smoothing, for these charts too. @param {number} w an EMA weight, 0 (raw) to 0.99 */
      smooth(w) {
        charts.smooth(w);
      },
      /** The run this page shows, and what the URL asks to compare it with. @param {string} run */
      start(run) {
        src = run;
        const q = new URL(window.location.href).searchParams;
        input.value = q.get("vs") || "";
        load(input.value.trim(), q.get("vs_task") || "");
      }
    };
  }

  // src/run_page.js
  var FIRST_VERSIONS = 100;
  var LONG_RUN = 500;
  var LONG_RUN_SMOOTH = 0.9;
  var finite = (v) => typeof v === "number" && Number.isFinite(v) ? v : null;
  var untrained = (s) => Object.values(s.dropped).reduce((a, b) => a + b, 0);
  var COLUMNS = [
    ["version", "version", (s) => s.version],
    ["groups", "groups", (s) => s.groups],
    ["rollouts", "rollouts", (s) => s.rollouts],
    ["reward mean (min … max)", "reward_mean", (s) => finite(s.reward_mean)],
    ["pass rate", "pass_rate", (s) => finite(s.pass_rate)],
    ["zero spread", "zero_spread", (s) => s.groups ? s.zero_spread / s.groups : null],
    ["trained tokens", "trained_tokens", (s) => s.trained_tokens],
    ["never trained", "dropped", untrained],
    ["timed out", "timeouts", (s) => s.timeouts],
    ["trainer mismatch", "mismatch_max", (s) => s.rescored ? finite(s.mismatch_max) : null]
  ];
  function parseSort(v) {
    const key = (v || "").replace(/^-/, "");
    return COLUMNS.some((c) => c[1] === key) ? { key, desc: (v || "").startsWith("-") } : { key: "", desc: false };
  }
  function sortedVersions(vs, sort) {
    const col = COLUMNS.find((c) => c[1] === sort.key);
    if (!col) return vs;
    const dir = sort.desc ? -1 : 1;
    return vs.map((s, i) => ({ s, i, v: col[2](s) })).sort((a, b) => a.v === null ? b.v === null ? a.i - b.i : 1 : b.v === null ? -1 : (a.v - b.v) * dir || a.i - b.i).map((x) => x.s);
  }
  var num2 = (v, d = void 0) => v === null || v === void 0 ? "–" : Number(v).toFixed(d === void 0 ? 3 : d);
  var pct3 = (v) => v === null || v === void 0 ? "–" : Math.round(100 * v) + "%";
  var signed2 = (v) => v === null || v === void 0 ? "–" : (v > 0 ? "+" : "") + Number(v).toFixed(2);
  function setUrl2(changes, push) {
    const u = new URL(window.location.href);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === void 0 || v === "") u.searchParams.delete(k);
      else u.searchParams.set(k, String(v));
    }
    goTo(u, push);
  }
  function renderHead(box, h) {
    const n = (n2) => n2.toLocaleString("en-US");
    const facts = `${n(h.versions)} policy versions · ${n(h.groups)} groups · ${n(h.rollouts)} rollouts · TRL ${h.trl}` + (h.started_at ? ` · started ${h.started_at.slice(0, 16).replace("T", " ")}` : "");
    const slow = h.every_s > 0;
    const badge = !h.followed ? "● recorded live · a copy, not followed" : slow ? `● recording · read every ~${Math.round(h.every_s)} s` : "● recording · following";
    const title = !h.followed ? "a segment of this run had not ended when this copy was made (a zip, or a Hub run pinned to a commit): it is not read again; open the run's folder, or its Hub branch, to follow it" : "a segment of this run has not ended: new versions appear here as the recorder writes them" + (slow ? `; this run is read again every ~${Math.round(h.every_s)} s (a run this large, or on the Hub, is not read at every poll): what is recorded meanwhile appears then` : "");
    const live = h.live ? el("span", { class: h.followed ? "rp-live" : "rp-live rp-copy", "data-testid": "run-live", title }, badge) : null;
    const notes = h.notes.length ? el(
      "ul",
      { class: "rp-notes", "data-testid": "run-notes" },
      ...h.notes.map((n2) => el("li", { text: n2 }))
    ) : el("div", { class: "rp-ok", "data-testid": "run-notes" }, "nothing looks off");
    const problems = h.problems.length ? el(
      "details",
      { class: "rp-problems" },
      el("summary", { text: `${h.problems.length} reader notes and problems` }),
      ...h.problems.map((p) => el("div", { text: p }))
    ) : null;
    box.replaceChildren(el(
      "div",
      { class: "rp rp-head", "data-testid": "run-head", "data-serial": String(h.serial) },
      // the words wrap among themselves; the button keeps to their right, never a line of its own
      el(
        "div",
        { class: "rp-title" },
        el(
          "div",
          { class: "rp-titletext" },
          el("b", { text: "Run " }),
          el("span", { class: "rp-model", text: h.model }),
          el("span", { class: "rp-facts", text: facts }),
          live
        ),
        el("button", { type: "button", class: "rp-present", title: "presentation mode (p): large type, j/k move, Enter opens" }, ...presentLabel())
      ),
      notes,
      problems
    ));
    box.querySelector(".rp-present")?.addEventListener("click", () => document.dispatchEvent(new CustomEvent("rp-present")));
  }
  var LISTED_REWARDS = 8;
  function rewardsCell(rewards) {
    if (rewards.length <= LISTED_REWARDS) {
      return el("span", { class: "rp-rewards" }, ...rewards.map((r) => el("span", { class: "rp-r " + sign(r), text: r === null ? "×" : signed2(r), title: r === null ? "no reward" : String(r) })));
    }
    const known = rewards.filter((r) => r !== null).map(Number).sort((a, b) => b - a);
    const lo = Math.min(0, ...known), hi = Math.max(0, ...known);
    const none = rewards.length - known.length;
    const strip2 = el(
      "span",
      {
        class: "rp-strip",
        role: "img",
        "aria-label": `${rewards.length} rewards` + (known.length ? ` from ${signed2(known[known.length - 1])} to ${signed2(known[0])}` : "") + (none ? `, ${none} without a reward` : ""),
        title: rewards.map((r) => r === null ? "×" : signed2(r)).join(" ")
      },
      ...known.map((r) => {
        const bar = el("i", { class: sign(r) });
        bar.style.height = `${hi > lo ? Math.max(8, Math.round(100 * (r - lo) / (hi - lo))) : 50}%`;
        return bar;
      }),
      ...Array.from({ length: none }, () => el("i", { class: "rp-none" }))
    );
    const range = known.length ? `${signed2(known[known.length - 1])} … ${signed2(known[0])}` : "no reward";
    return el("span", { class: "rp-rewards rp-stripped" }, strip2, el("span", { class: "rp-dimnum", text: range + (none ? ` · ${none} ×` : "") }));
  }
  function groupTable(groups) {
    const head = el("tr", {}, ...["group", "task", "rewards", "mean", "passed", "trained tokens", "never trained", ""].map((t) => el("th", { text: t })));
    const rows = groups.map((g) => {
      const rewards = rewardsCell(g.rewards);
      const follow = g.task_id ? el("button", {
        type: "button",
        class: "rp-follow",
        "data-task": g.task_id,
        title: "follow this task across versions"
      }, "follow task") : "";
      const tr = el(
        "tr",
        { class: "rp-grow rp-cur", "data-path": g.path, "data-testid": "run-group", tabindex: "0" },
        el("td", {}, el("button", { type: "button", class: "rp-open", text: `g${g.group_id}`, title: "open the group map" })),
        el("td", { class: "rp-task", text: g.title }),
        el("td", {}, rewards),
        el("td", { class: "rp-num " + sign(g.reward_mean), text: num2(g.reward_mean) }),
        // out of its rollouts with a verifier score, as the version's pass rate above counts them
        el("td", { class: "rp-num", text: `${g.passed}/${g.verified}`, title: `${g.passed} of the ${many(g.verified, "rollout")} with a verifier score passed every held-out test` + (g.verified < g.k ? ` (${g.k - g.verified} of the ${g.k} have none)` : "") }),
        el("td", { class: "rp-num", text: String(g.trained_tokens) }),
        el("td", { class: "rp-num", text: String(g.dropped) }),
        el("td", {}, follow)
      );
      if (g.zero_spread) tr.append(el("td", { class: "rp-flag", text: "zero spread", title: "every advantage is 0: GRPO learns nothing here" }));
      return tr;
    });
    return el("table", { class: "rp-groups", "data-testid": "run-groups" }, el("thead", {}, head), el("tbody", {}, ...rows));
  }
  function versionsTable(body, state) {
    const head = el("tr", {}, ...COLUMNS.map(([t, key]) => {
      const on = state.sort.key === key;
      return el(
        "th",
        {
          "aria-sort": on ? state.sort.desc ? "descending" : "ascending" : "none",
          "data-sort": key,
          title: t === "trainer mismatch" ? "over the re-scored rollouts of the version (python -m viewer rescore): the largest |log ratio| trainer − engine, and the share of their tokens outside TRL's clip band [0.8, 1.2]" : ""
        },
        el(
          "button",
          {
            type: "button",
            class: "rp-sort" + (on ? " on" : ""),
            "data-sort": key,
            title: `sort every version by ${t}${on ? " (again: reverse)" : ""}`
          },
          t,
          el("span", { class: "rp-sortdir", "aria-hidden": "true", text: on ? state.sort.desc ? " ▼" : " ▲" : "" })
        )
      );
    }));
    const tb = el("tbody");
    const row = (s) => {
      const open = state.version === s.version;
      const dropped = Object.entries(s.dropped).map(([c, n]) => `${c} ${n}`).join(", ");
      tb.append(el(
        "tr",
        {
          class: "rp-vrow rp-cur" + (open ? " open" : ""),
          "data-version": String(s.version),
          "data-testid": "run-version",
          tabindex: "0",
          "aria-expanded": String(open)
        },
        el("td", {}, el("span", { class: "rp-caret", text: open ? "▾ " : "▸ " }), el("b", { text: String(s.version) })),
        el("td", { class: "rp-num", text: String(s.groups) }),
        el("td", { class: "rp-num", text: String(s.rollouts) }),
        el("td", { class: "rp-num " + sign(s.reward_mean), text: `${num2(s.reward_mean)} (${num2(s.reward_min, 2)} … ${num2(s.reward_max, 2)})` }),
        el("td", {
          class: "rp-num",
          text: `${pct3(s.pass_rate)} (${s.passed}/${s.verified})`,
          title: `${s.passed} of the ${s.verified} rollouts with a verifier score passed every held-out test` + (s.verified < s.rollouts ? ` (${s.rollouts - s.verified} without one: a failed session is never verified)` : "")
        }),
        el("td", { class: "rp-num", text: `${s.zero_spread}/${s.groups}` }),
        el("td", { class: "rp-num", text: String(s.trained_tokens) }),
        el("td", { class: "rp-num", text: String(untrained(s)), title: dropped || "none" }),
        el("td", { class: "rp-num", text: String(s.timeouts) }),
        el("td", { class: "rp-num", "data-testid": "run-mismatch", text: s.rescored ? `${num2(s.mismatch_max, 3)} · ${pct3(s.outside_share)} outside (${s.rescored} re-scored)` : "-" })
      ));
      if (open) tb.append(el("tr", { class: "rp-vgroups" }, el(
        "td",
        { colspan: "10" },
        state.groups ? groupTable(state.groups) : el("span", { class: "rp-dim", text: "loading…" })
      )));
    };
    const all = sortedVersions(body.versions, state.sort);
    const listed = all.slice(0, state.shown);
    listed.forEach(row);
    const at = all.findIndex((s) => s.version === state.version);
    if (at >= listed.length) {
      tb.append(el("tr", { class: "rp-gap" }, el("td", {
        colspan: "10",
        class: "rp-dim",
        text: `⋯ ${at - listed.length} versions not listed ⋯ the open version, ${at + 1} of ${all.length} in this order:`
      })));
      row(all[at]);
    }
    if (all.length > listed.length) {
      tb.append(el("tr", { class: "rp-more" }, el("td", { colspan: "10" }, el("button", {
        type: "button",
        class: "rp-showall",
        "data-testid": "run-show-all"
      }, `show all ${all.length} versions (${all.length - listed.length} more)`))));
    }
    return el(
      "table",
      { class: "rp-versions", "data-testid": "run-versions", "data-sort": state.sort.key ? (state.sort.desc ? "-" : "") + state.sort.key : "" },
      el("thead", {}, head),
      tb
    );
  }
  function taskPanel(body) {
    const pick = el("select", { class: "rp-taskpick", "data-testid": "run-task-pick" });
    pick.append(new Option("follow a task across versions…", ""));
    for (const t2 of body.tasks) pick.append(new Option(`${t2.title} (${many(t2.versions, "version")})`, t2.task_id));
    pick.value = body.task ? body.task.task_id : "";
    const parts = [el("div", { class: "rp-taskbar" }, pick)];
    const t = body.task;
    if (t) {
      parts.push(el("div", { class: "rp-tasksum", "data-testid": "run-task-summary", text: `${t.title} · at ${many(t.versions, "version")} · ` + (t.first_solved === null ? "never solved (no rollout passed every held-out test)" : `first solved at version ${t.first_solved}`) }));
      const rows = t.groups.map((g) => el(
        "tr",
        { class: "rp-tgroup", "data-testid": "run-task-group", "data-path": g.path },
        el("td", {}, el("b", { text: `v${g.version}` })),
        el("td", {}, el("button", { type: "button", class: "rp-open", text: `g${g.group_id}`, title: "open the group map" })),
        el("td", { class: "rp-num", text: pct3(g.pass_rate) }),
        el("td", {}, ...g.rollouts.map((r) => el(
          "label",
          { class: "rp-pickr" + (r.passed ? " passed" : "") },
          el("input", {
            type: "checkbox",
            class: "rp-pick",
            "data-path": r.path || "",
            disabled: !r.path,
            "data-testid": "run-task-rollout",
            "aria-label": `version ${g.version} rollout ${r.rollout}`
          }),
          el("span", { class: "rp-r " + sign(r.reward), text: `#${r.rollout} ${r.reward === null ? r.status : signed2(r.reward)}` })
        )))
      ));
      const cut = groupsListed(t);
      if (cut) parts.push(el("div", { class: "rp-dim", "data-testid": "run-task-cut", text: `${cut}: open a version (a chart or the table) for the task's groups near it` }));
      parts.push(el("table", { class: "rp-taskgroups" }, el("thead", {}, el("tr", {}, ...["version", "group", "pass rate", "rollouts (tick two to compare)"].map((x) => el("th", { text: x })))), el("tbody", {}, ...rows)));
      parts.push(el("div", { class: "rp-cmpbar" }, el("button", {
        type: "button",
        class: "rp-compare",
        disabled: true,
        "data-testid": "run-compare"
      }, "compare the two ticked"), el(
        "label",
        {},
        " at turn ",
        el("input", { type: "number", class: "rp-cturn", min: "0", value: "0", size: "3" })
      )));
      parts.push(el("div", { class: "ci" }, el("div", { class: "gm-comparebox rp-cmpbox", "data-testid": "run-compare-box" })));
    }
    return el("section", { class: "rp-taskbox", "data-testid": "run-task" }, el("h3", { text: "Follow one task" }), ...parts);
  }
  function mountBody(box, api) {
    const state = {
      src: null,
      body: null,
      version: null,
      groups: null,
      task: null,
      cursor: -1,
      body_task: null,
      shown: FIRST_VERSIONS,
      sort: { key: "", desc: false }
    };
    const chartsBox = el("div", { class: "rp-charts", "data-testid": "run-charts" });
    const list = el("div", { class: "rp-list" });
    const versusBox = el("div", { class: "rp-vsmount" });
    const smoothIn = (
      /** @type {HTMLInputElement} */
      el("input", {
        type: "range",
        min: "0",
        max: "0.99",
        step: "0.01",
        value: "0",
        class: "rp-smooth",
        "data-testid": "run-smooth",
        "aria-label": "smoothing of the line charts: EMA weight, 0 is raw"
      })
    );
    const smoothOut = el("output", { class: "rp-smooth-v", text: "0" });
    const chartBar = el(
      "div",
      { class: "rp-chartbar" },
      el(
        "label",
        { title: "exponential moving average as W&B and TensorBoard draw it; the raw curve stays, faint" },
        "smoothing (EMA) ",
        smoothIn,
        " ",
        smoothOut
      ),
      el("span", { class: "rp-hint", text: "point at a chart to read a version · click it (or Enter on a focused chart) to open it" })
    );
    const top = el("div", { class: "rp rp-body", "data-testid": "run-body" }, chartBar, chartsBox, list, versusBox);
    box.replaceChildren(top);
    const charts = mount(chartsBox, (v) => {
      if (state.version !== v) openVersion(v);
      const rs = cursorRows();
      const i = rs.findIndex((r) => r.classList.contains("rp-vrow") && r.dataset.version === String(v));
      if (i < 0) return;
      state.cursor = i;
      rs.forEach((r, j) => r.classList.toggle("rp-cursor", j === i));
      rs[i].scrollIntoView({ block: "nearest" });
    });
    const autoSmooth = (versions) => versions >= LONG_RUN ? LONG_RUN_SMOOTH : 0;
    function smoothTo(w) {
      const v = Math.max(0, Math.min(0.99, Number.isFinite(w) ? w : 0));
      smoothIn.value = String(v);
      smoothOut.textContent = v.toFixed(2);
      charts.smooth(v);
      versus.smooth(v);
      return v;
    }
    smoothIn.addEventListener("input", () => smoothTo(Number(smoothIn.value)));
    smoothIn.addEventListener("change", () => setUrl2({ smooth: String(smoothTo(Number(smoothIn.value))) }));
    const versus = mount2(versusBox, { versus: (req) => api.versus(req), openRow: (src, row) => {
      setUrl2({ row, rollout: null, turn: null, group: null, segment: null }, { ci: "row" });
      api.open({ action: "open", src, row });
    } });
    function draw2() {
      const b = state.body;
      if (!b) return;
      top.dataset.serial = String(b.serial);
      const was = box.querySelector(".rp-vbox");
      const scrolled = was ? was.scrollTop : 0;
      list.replaceChildren(
        el("h3", { text: "Versions → groups" }),
        el("div", { class: "rp-dim", text: "Click a version for its groups, a group for its map (then a rollout for its tokens). pass = every held-out test passed · zero spread = every advantage 0 · never trained = no row of it in the loss" }),
        el("div", { class: "rp-vbox" }, versionsTable(b, state)),
        taskPanel(b)
      );
      const vb = box.querySelector(".rp-vbox");
      if (vb) vb.scrollTop = scrolled;
      const rs = box.querySelectorAll("tr.rp-cur");
      if (state.cursor >= rs.length) state.cursor = rs.length - 1;
      if (state.cursor >= 0) rs[state.cursor].classList.add("rp-cursor");
    }
    async function openVersion(v, again = false) {
      if (!again) {
        state.version = state.version === v ? null : v;
        state.groups = null;
        setUrl2({ version: state.version });
        draw2();
        if (state.version === null) return;
      }
      if (!again && state.task && state.body_task && groupsListed(state.body_task)) followTask(state.task);
      const got = await api.version({ src: state.src, version: v });
      if (state.version !== v) return;
      state.groups = got && got.groups || [];
      draw2();
      if (again) return;
      showOpen();
    }
    function showOpen() {
      const vb = box.querySelector(".rp-vbox");
      const row = box.querySelector("tr.rp-vrow.open");
      if (!vb || !row) return;
      const b = vb.getBoundingClientRect(), r = row.getBoundingClientRect();
      const first = box.querySelector("tr.rp-grow");
      const below = first ? first.getBoundingClientRect().bottom : r.bottom;
      if (r.top < b.top || below > b.bottom) vb.scrollTop += r.top - b.top;
      if (first && first.getBoundingClientRect().bottom > innerHeight) row.scrollIntoView({ block: "start" });
    }
    const groupPlace = (path) => {
      const m = /-v(\d+)-g(\d+)$/.exec(path || "");
      return m ? { version: Number(m[1]), group: Number(m[2]) } : null;
    };
    const groupName = (path) => {
      const p = groupPlace(path);
      return p ? `version ${p.version} · group ${p.group}` : "the group";
    };
    function openGroup(path) {
      state.opened = path;
      setUrl2({ row: path, rollout: null, turn: null, group: null, segment: null }, { ci: "row" });
      working(`opening ${groupName(path)}…`);
      api.open({ action: "open", src: state.src, row: path });
    }
    const at = (ev) => (
      /** @type {HTMLElement} */
      ev.target
    );
    const near = (ev, sel) => (
      /** @type {HTMLElement | null} */
      at(ev).closest(sel)
    );
    const ticks = () => (
      /** @type {HTMLInputElement[]} */
      Array.from(box.querySelectorAll(".rp-pick:checked"))
    );
    const one = (sel) => (
      /** @type {HTMLInputElement | null} */
      box.querySelector(sel)
    );
    box.addEventListener("click", (ev) => {
      const follow = near(ev, ".rp-follow");
      if (follow) {
        followTask(follow.dataset.task);
        return;
      }
      const grow = near(ev, "tr.rp-grow, tr.rp-tgroup");
      if (grow && (near(ev, ".rp-open") || grow.classList.contains("rp-grow") && !near(ev, "button, input, label"))) {
        openGroup(grow.dataset.path);
        return;
      }
      const vrow = near(ev, "tr.rp-vrow");
      if (vrow) {
        openVersion(Number(vrow.dataset.version));
        return;
      }
      const sortBy = near(ev, ".rp-sort");
      if (sortBy) {
        sortOn(sortBy.dataset.sort || "");
        return;
      }
      if (near(ev, ".rp-compare")) compare();
      if (near(ev, ".rp-showall")) {
        state.shown = Infinity;
        draw2();
      }
    });
    box.addEventListener("change", (ev) => {
      if (near(ev, ".rp-taskpick")) {
        followTask(
          /** @type {HTMLSelectElement} */
          at(ev).value
        );
        return;
      }
      const c = (
        /** @type {HTMLInputElement | null} */
        near(ev, ".rp-pick")
      );
      if (!c) return;
      const ticked = ticks();
      const other = ticked.find((x) => x !== c);
      if (c.checked && ticked.length > 2 && other) other.checked = false;
      const button = one(".rp-compare");
      if (button) button.disabled = ticks().length !== 2;
    });
    function sortOn(key) {
      state.sort = state.sort.key === key ? { key, desc: !state.sort.desc } : { key, desc: false };
      setUrl2({ vsort: (state.sort.desc ? "-" : "") + key });
      state.cursor = -1;
      draw2();
      box.querySelector(`.rp-sort[data-sort="${key}"]`)?.focus();
      const vb = box.querySelector(".rp-vbox");
      if (vb) vb.scrollTop = 0;
    }
    function followTask(task) {
      state.task = task || null;
      setUrl2({ task: state.task });
      working(state.task ? "following the task across versions…" : "leaving the task…");
      api.open({ action: "task", src: state.src, task: state.task || "", version: state.version });
    }
    async function compare() {
      const [a, b] = ticks().map((c) => c.dataset.path || "");
      const out = one(".rp-cmpbox");
      if (!out || !a || !b) return;
      out.textContent = "comparing…";
      const turn = Math.max(0, Number(one(".rp-cturn")?.value) || 0);
      showCompare(out, await api.compare({ src: state.src, a, b, turn }));
    }
    const root = () => document.getElementById("run-page");
    const shown = () => {
      const r = root();
      return !!r && r.getClientRects().length > 0;
    };
    const presenting = () => {
      const r = root();
      return !!r && r.classList.contains("rp-present") && document.body.classList.contains("tv-present");
    };
    function present(on) {
      const r = root();
      if (!r) return;
      const v = on === void 0 ? !presenting() : on;
      r.classList.toggle("rp-present", v);
      document.body.classList.toggle("tv-present", v);
      if (v) keyScrolled(r);
    }
    const cursorRows = () => (
      /** @type {HTMLElement[]} */
      Array.from(box.querySelectorAll("tr.rp-cur"))
    );
    function move(d) {
      const rs = cursorRows();
      if (!rs.length) return;
      state.cursor = Math.max(0, Math.min(rs.length - 1, state.cursor + d));
      rs.forEach((r, i) => r.classList.toggle("rp-cursor", i === state.cursor));
      rs[state.cursor].scrollIntoView({ block: "nearest" });
    }
    function enter() {
      const r = cursorRows()[state.cursor];
      if (!r) return false;
      if (r.classList.contains("rp-vrow")) openVersion(Number(r.dataset.version));
      else openGroup(r.dataset.path);
      return true;
    }
    async function backTo(path, tries = 60, opening = true) {
      if (!shown()) {
        if (tries) requestAnimationFrame(() => backTo(path, tries - 1, opening));
        return;
      }
      state.opened = null;
      const rows = (
        /** @type {HTMLElement[]} */
        Array.from(box.querySelectorAll("tr.rp-grow"))
      );
      const place = groupPlace(path);
      if (opening && place && !rows.some((r) => r.dataset.path === path) && state.version !== place.version) {
        await openVersion(place.version);
        backTo(path, 0, false);
        return;
      }
      const row = rows.find((r) => r.dataset.path === path) || box.querySelector("tr.rp-vrow.open");
      if (!row) return;
      row.scrollIntoView({ block: "center" });
      box.querySelectorAll(".rp-came").forEach((r) => r.classList.remove("rp-came"));
      row.classList.add("rp-came");
    }
    function help(on) {
      let h = (
        /** @type {HTMLElement | null} */
        box.querySelector(".rp-help")
      );
      if (!h) {
        const row = (k, what) => el("tr", {}, el("td", {}, el("kbd", { text: k })), el("td", { text: what }));
        h = el(
          "div",
          { class: "rp rp-help", role: "dialog", "aria-label": "keyboard shortcuts", "data-testid": "run-help" },
          el("b", { text: "Keyboard" }),
          el(
            "table",
            {},
            row("j / k", "move the row cursor (versions, then a version's groups)"),
            row("Enter", "open the cursor's version or group"),
            row("← →", "on a focused chart: read the version before or after"),
            row("Enter", "on a focused chart: open the version it reads"),
            row("p", "presentation mode"),
            row("?", "this help"),
            row("Esc", "close help / leave presentation")
          )
        );
        h.hidden = true;
        box.append(h);
      }
      h.hidden = on === void 0 ? !h.hidden : !on;
    }
    document.addEventListener("rp-present", () => present());
    const onKey = (ev) => {
      if (!document.body.contains(box)) {
        window.removeEventListener("keydown", onKey, true);
        return;
      }
      if (!state.body || !shown()) return;
      const target = at(ev);
      const tag = target && target.tagName || "";
      if (/INPUT|TEXTAREA|SELECT/.test(tag) || target && target.isContentEditable || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const on = presenting(), k = ev.key;
      if (target && target.closest(".rp-chart") && /^(Enter|ArrowLeft|ArrowRight|Home|End|PageUp|PageDown)$/.test(k)) return;
      const helpOpen = !!box.querySelector(".rp-help:not([hidden])");
      if (k === "p") present();
      else if (k === "?") help();
      else if (k === "Escape" && helpOpen) help(false);
      else if (k === "Escape" && on) present(false);
      else if (k === "j" || on && k === "ArrowDown") move(1);
      else if (k === "k" || on && k === "ArrowUp") move(-1);
      else if (k === "Enter" && state.cursor >= 0 && !/^(BUTTON|A)$/.test(tag)) {
        if (!enter()) return;
      } else return;
      ev.preventDefault();
      ev.stopImmediatePropagation();
    };
    window.addEventListener("keydown", onKey, true);
    new MutationObserver(() => {
      const ci = (
        /** @type {HTMLElement | null} */
        document.querySelector("#collection-index .ci")
      );
      if (ci && ci.dataset.mode === "index" && new URL(window.location.href).searchParams.has("group")) {
        setUrl2({ group: null, segment: null });
      }
      if (ci && ci.dataset.mode === "index" && state.opened) backTo(state.opened);
    }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ["data-mode"] });
    return {
      box,
      /** @param {RunBody} b */
      render(b) {
        const same = state.src === b.src;
        state.body = b;
        state.src = b.src;
        if (!b.refresh || !same) {
          state.version = b.open_version;
          state.groups = b.open_version === null ? null : b.groups;
          state.task = b.task ? b.task.task_id : null;
        } else if (state.task && !b.task) {
          b.task = state.body_task;
        }
        state.body_task = b.task;
        if (!same) {
          state.sort = parseSort(b.sort);
          smoothTo(b.smooth ?? autoSmooth(b.versions.length));
        }
        const linked = !same && new URL(window.location.href).searchParams.get("row");
        if (linked && !state.opened) state.opened = linked.replace(/\/rollout-\d+$/, "");
        draw2();
        if (!same && state.version !== null) showOpen();
        if (!same) versus.start(b.src);
        charts.update(b.versions, b.task);
        if (b.refresh && state.version !== null) openVersion(state.version, true);
      }
    };
  }
  function mountInApp(element, props, server, watch, trigger, part) {
    const api = {
      version: (req) => server.run_version(req),
      compare: (req) => server.run_compare(req),
      versus: (req) => server.run_versus(req),
      open: (req) => trigger("click", req)
    };
    let view = null;
    function start() {
      const box = element.querySelector(".rp-mount");
      if (!box || !props.value) return;
      const value = sentValue(props);
      if (part === "head") {
        renderHead(box, value);
        return;
      }
      if (!view || view.box !== box) view = mountBody(box, api);
      view.render(value);
    }
    start();
    watch("value", start);
  }
  return __toCommonJS(run_page_exports);
})();
