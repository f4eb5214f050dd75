// Built from viewer/assets/src/find_panel.js by `python -m viewer.assets.build`: edit the source, not this file.
"use strict";
var FindPanel = (() => {
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

  // src/find_panel.js
  var find_panel_exports = {};
  __export(find_panel_exports, {
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

  // src/values.js
  var count = (v) => v === null || v === void 0 ? "-" : v.toLocaleString("en-US");
  var many = (n, what, whats = what + "s") => `${count(n)} ${n === 1 ? what : whats}`;

  // src/find_panel.js
  var COLOURS = [
    "#dc2626",
    "#ea580c",
    "#ca8a04",
    "#65a30d",
    "#0891b2",
    "#2563eb",
    "#7c3aed",
    "#c026d3",
    "#db2777",
    "#64748b",
    "#0d9488",
    "#9333ea"
  ];
  var failed = (a) => !!a.error;
  var MAX_LISTED = 100;
  function place(w, h, summary, hits) {
    const rules = summary.rules.filter((r) => r.total > 0);
    const left = 36, bottom = 22, top = hits ? 22 : 8, right = 8, pw = w - left - right, ph = h - top - bottom;
    const versions = summary.versions.length ? summary.versions.map(String) : null;
    if (!versions) {
      return {
        w,
        h,
        left,
        top,
        pw,
        ph,
        rules,
        versions,
        max: Math.max(1, ...rules.map((r) => r.total)),
        bw: Math.min(pw / Math.max(1, rules.length), 140)
      };
    }
    const stack = versions.map((v) => rules.reduce((s, r) => s + (r.per_version[v] || 0), 0));
    return { w, h, left, top, pw, ph, rules, versions, max: Math.max(1, ...stack), bw: pw / versions.length };
  }
  function pick(at, x, y) {
    const i = Math.floor((x - at.left) / at.bw);
    if (x < at.left || i < 0 || y > at.top + at.ph) return null;
    if (!at.versions) return i < at.rules.length ? { version: null, rule: at.rules[i].rule } : null;
    if (i >= at.versions.length) return null;
    const v = at.versions[i];
    let base = at.top + at.ph;
    for (const r of at.rules) {
      const bh = at.ph * (r.per_version[v] || 0) / at.max;
      if (bh && y <= base && y >= base - bh) return { version: v, rule: r.rule };
      base -= bh;
    }
    return { version: v, rule: null };
  }
  function drawChart(canvas, summary, hits) {
    const dpr = window.devicePixelRatio || 1, w = canvas.clientWidth || 600, h = canvas.clientHeight || 160;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const g = canvas.getContext("2d");
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const cs = getComputedStyle(canvas), fg = cs.color || "#111", dim = cs.getPropertyValue("--fp-dim") || "#888";
    g.font = "12px system-ui, sans-serif";
    g.fillStyle = fg;
    const { left, top, pw, ph, max, bw, rules, versions } = place(w, h, summary, hits);
    if (!versions) {
      rules.forEach((r, i) => {
        const bh = ph * r.total / max;
        g.fillStyle = COLOURS[summary.rules.indexOf(r) % COLOURS.length];
        g.fillRect(left + i * bw + 4, top + ph - bh, Math.max(2, bw - 8), bh);
        g.fillStyle = fg;
        g.textAlign = "center";
        g.fillText(r.rule, left + (i + 0.5) * bw, h - 6, bw - 4);
      });
      axis(g, left, top, pw, ph, max, fg, dim);
      return;
    }
    versions.forEach((v, i) => {
      let y = top + ph;
      rules.forEach((r) => {
        const n = r.per_version[v] || 0;
        if (!n) return;
        const bh = ph * n / max;
        g.fillStyle = COLOURS[summary.rules.indexOf(r) % COLOURS.length];
        g.fillRect(left + i * bw + 1, y - bh, Math.max(1, bw - 2), bh);
        y -= bh;
      });
    });
    if (hits) {
      const hitMax = Math.max(1, ...versions.map((v) => hits[v] || 0));
      g.strokeStyle = fg;
      g.fillStyle = fg;
      g.lineWidth = 2;
      versions.forEach((v, i) => {
        const n = hits[v] || 0;
        if (!n) return;
        const x = left + (i + 0.5) * bw, y = top + ph - ph * n / hitMax;
        g.beginPath();
        g.moveTo(x, top + ph);
        g.lineTo(x, y);
        g.stroke();
        g.beginPath();
        g.arc(x, y, 3, 0, 7);
        g.fill();
      });
      g.textAlign = "right";
      g.fillText(`● hits per version (own scale, top ${hitMax.toLocaleString("en-US")})`, left + pw, top - 8);
    }
    axis(g, left, top, pw, ph, max, fg, dim);
    g.fillStyle = fg;
    g.textAlign = "center";
    const raw = versions.length / Math.max(1, pw / 40);
    const ten = 10 ** Math.floor(Math.log10(Math.max(1, raw)));
    const step = [1, 2, 5, 10].map((m) => m * ten).find((s) => s >= raw) || 10 * ten;
    const round = versions.flatMap((v, i) => Number(v) % step === 0 ? [i] : []);
    const marked = round.length ? round : [0, versions.length - 1];
    const every = Math.max(1, Math.ceil(marked.length / Math.max(1, pw / 40)));
    const written = marked.filter((_, j) => j % every === 0);
    const spans = written.map((i) => {
      const half = g.measureText(String(versions[i])).width / 2 + 2, x = Math.min(w - half, Math.max(half, left + (i + 0.5) * bw));
      g.fillText(versions[i], x, h - 6);
      return [Math.round(x - half + 2), Math.round(x + half - 2)];
    });
    canvas.dataset.ticks = written.map((i) => versions[i]).join(" ");
    canvas.dataset.tickSpans = JSON.stringify(spans);
  }
  function axis(g, left, top, pw, ph, max, fg, dim) {
    g.strokeStyle = dim;
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(left, top);
    g.lineTo(left, top + ph);
    g.lineTo(left + pw, top + ph);
    g.stroke();
    g.fillStyle = fg;
    g.textAlign = "right";
    g.fillText(String(max), left - 4, top + 10);
    g.fillText("0", left - 4, top + ph);
  }
  function revealFound() {
    const seen = () => {
      const t = document.querySelector("#trace-view .tv-tokens .t.tv-found");
      const turn = t && t.closest(".tv-turn");
      if (turn) turn.scrollIntoView({ block: "start" });
      return !!t;
    };
    const mo = new MutationObserver(() => {
      if (seen()) mo.disconnect();
    });
    mo.observe(document.body, { childList: true, subtree: true });
    setTimeout(() => mo.disconnect(), 6e4);
  }
  function mount(box, value, api) {
    const src = value.src;
    const input = el("input", {
      type: "search",
      class: "fp-input",
      "data-testid": "find-input",
      "aria-label": "search text or /regex/",
      placeholder: "search the rollouts' text, or /regex/",
      title: "words or /regex/ in what the model generated, its tool calls and the tool outputs"
    });
    const where = el(
      "select",
      { class: "fp-in", "data-testid": "find-in", "aria-label": "where to look" },
      el("option", { value: "", text: "everywhere" }),
      el("option", { value: "generated", text: "generated" }),
      el("option", { value: "tool-call", text: "tool calls" }),
      el("option", { value: "tool-output", text: "tool outputs" })
    );
    const versions = el("input", {
      type: "text",
      class: "fp-versions",
      "data-testid": "find-versions",
      placeholder: "versions A:B",
      "aria-label": "policy versions, A:B",
      size: "10"
    });
    const rule = el(
      "select",
      { class: "fp-rule", "data-testid": "find-rule", "aria-label": "only rollouts with this finding" },
      el("option", { value: "", text: "any finding" })
    );
    const go = el("button", { type: "button", class: "fp-go", "data-testid": "find-go" }, "search");
    const status = el("div", { class: "fp-status", role: "status", "data-testid": "find-status", text: "reading the findings of every rollout…" });
    const tell = (text, bad = false) => {
      status.textContent = text;
      status.classList.toggle("fp-bad", bad);
    };
    const canvas = el("canvas", {
      class: "fp-chart",
      "data-testid": "find-chart",
      role: "img",
      "aria-label": "findings per version",
      title: "click a bar to list its rollouts (a coloured part: those with that finding)"
    });
    const legend = el("div", { class: "fp-legend", "data-testid": "find-legend" });
    const list = el("ol", { class: "fp-hits", "data-testid": "find-hits" });
    const more = el("div", { class: "fp-more", id: `fp-more-${value.serial}` }, status, el("div", { class: "fp-chartbox" }, canvas, legend), list);
    const unfold = el("button", {
      type: "button",
      class: "fp-unfold",
      "data-testid": "find-unfold",
      "aria-controls": more.id,
      "aria-expanded": "true",
      title: "show or hide the findings chart and the hits"
    }, "findings ▾");
    const panel = el(
      "section",
      { class: "fp", "data-testid": "find-panel", "aria-label": "search and findings" },
      el("div", { class: "fp-bar" }, el("b", { text: "Find " }), input, where, versions, rule, go, unfold),
      more
    );
    box.replaceChildren(panel);
    const fold = (folded) => {
      panel.classList.toggle("fp-folded", folded);
      unfold.setAttribute("aria-expanded", String(!folded));
      unfold.textContent = folded ? "findings ▸" : "findings ▾";
    };
    const drilled = () => {
      const q = new URL(window.location.href).searchParams;
      return !!q.get("row") || q.has("rollout");
    };
    const onPlace = () => {
      if (!document.body.contains(panel)) {
        document.removeEventListener("rtv-place", onPlace);
        window.removeEventListener("popstate", onPlace);
        return;
      }
      fold(drilled());
    };
    document.addEventListener("rtv-place", onPlace);
    window.addEventListener("popstate", onPlace);
    unfold.addEventListener("click", () => fold(!panel.classList.contains("fp-folded")));
    fold(drilled());
    let summary = null;
    let hitsPer = null;
    const redraw = () => {
      if (summary) drawChart(canvas, summary, hitsPer);
    };
    new ResizeObserver(redraw).observe(canvas);
    new MutationObserver(redraw).observe(document.body, { attributes: true, attributeFilter: ["class"] });
    const show = (s) => {
      if ("pending" in s) {
        const build = el(
          "button",
          { type: "button", class: "fp-build", "data-testid": "find-build" },
          `index ${s.rollouts} rollouts`
        );
        status.replaceChildren("Search and findings read every rollout of this Hub dataset: ", build);
        build.addEventListener("click", () => {
          tell("indexing the rollouts…");
          api.summary({ src, build: true }).then(show);
        });
        return;
      }
      if (failed(s)) {
        tell(s.error, true);
        return;
      }
      summary = s;
      document.documentElement.dataset.fpIndexed = src;
      document.dispatchEvent(new CustomEvent("fp-indexed", { detail: { src } }));
      const found = s.rules.filter((r) => r.total > 0);
      canvas.classList.toggle("fp-few", (s.versions.length || found.length) <= 2);
      for (const r of s.rules) rule.append(el("option", { value: r.rule, text: `${r.rule} (${r.total})` }));
      legend.replaceChildren(...found.map((r) => el(
        "button",
        {
          type: "button",
          class: "fp-key",
          "data-rule": r.rule,
          title: "list the rollouts with this finding"
        },
        el("i", { style: `background:${COLOURS[s.rules.indexOf(r) % COLOURS.length]}` }),
        `${r.rule} ${r.total}`
      )));
      versions.hidden = !s.versions.length;
      if (versions.hidden) versions.value = "";
      tell(`${many(s.rollouts, "rollout")} with recorded text searchable` + (s.unsearchable ? ` (${s.unsearchable.toLocaleString("en-US")} failed before any text was recorded)` : "") + "; " + (found.length ? `findings of ${many(found.length, "rule")} (chart: rollouts with each, ` + (s.versions.length ? "per version)" : "in all)") : "no findings"));
      box.dataset.ready = "1";
      redraw();
    };
    api.summary({ src }).then(show);
    legend.addEventListener("click", (e) => {
      const b = (
        /** @type {HTMLElement} */
        e.target.closest(".fp-key")
      );
      if (b) {
        rule.value = b.getAttribute("data-rule") || "";
        run();
      }
    });
    canvas.addEventListener("click", (e) => {
      if (!summary) return;
      const r = canvas.getBoundingClientRect();
      const got = pick(place(canvas.clientWidth || 600, canvas.clientHeight || 160, summary, hitsPer), e.clientX - r.left, e.clientY - r.top);
      if (!got) return;
      if (got.version !== null) versions.value = got.version;
      if (got.rule !== null) rule.value = got.rule;
      run();
    });
    let asked = 0;
    function showHits(r, req, counting) {
      hitsPer = req.rule ? null : r.per_version;
      redraw();
      const per = Object.entries(r.per_version).map(([v, n]) => `v${v}: ${n}`).join(", ");
      tell((counting ? `${r.hits.length} listed so far; counting every rollout…` : `${many(r.rollouts, "rollout")} match${r.rollouts === 1 ? "es" : ""}` + (per ? ` (per version ${per})` : "") + `; ${r.hits.length} listed` + (r.partial ? " — partial: " : "")) + (r.notes.length ? " · " + r.notes.join(" · ") : ""));
      list.replaceChildren(...r.hits.map((h, i) => {
        const where2 = (h.version !== null ? `v${h.version} · ` : "") + (h.group !== null ? `group ${h.group} · ` : "") + (h.rollout !== null ? `rollout ${h.rollout} · ` : "") + `turn ${h.turn} · ${h.field} · token ${h.token}`;
        const ex = el("span", { class: "fp-excerpt" });
        const [a, b] = h.mark;
        const flat = (t) => t.replace(/\n/g, "⏎ ");
        if (b > a) ex.append(flat(h.excerpt.slice(0, a)), el("mark", { text: flat(h.excerpt.slice(a, b)) }), flat(h.excerpt.slice(b)));
        else ex.textContent = flat(h.excerpt);
        const open = el(
          "button",
          {
            type: "button",
            class: "fp-hit",
            "data-testid": "find-hit",
            "data-i": String(i),
            title: `open ${h.path || "this rollout"} at turn ${h.turn}, the matched tokens marked`
          },
          el("span", { class: "fp-where", text: where2 }),
          el("span", { class: "fp-path", text: h.path }),
          ex
        );
        open.addEventListener("click", () => {
          const u = new URL(window.location.href);
          for (const k of ["rollout", "page", "mode", "part"]) u.searchParams.delete(k);
          u.searchParams.set("src", src);
          u.searchParams.set("row", h.path || "");
          u.searchParams.set("turn", String(h.turn));
          u.searchParams.set("scope", "full");
          u.searchParams.set("found", `${h.token}-${h.token_end}`);
          goTo(u, { ci: "row" });
          working(`opening ${where2}…`);
          api.open({ action: "open-hit", src, row: h.path, turn: h.turn, found: [h.token, h.token_end] });
          revealFound();
        });
        return el("li", {}, open);
      }));
    }
    async function run() {
      const my = ++asked;
      const req = { src, pattern: input.value, fields: where.value ? [where.value] : [], versions: versions.value, rule: rule.value };
      if (!req.pattern.trim() && !req.rule) {
        tell("type text or /regex/, or pick a finding");
        return;
      }
      fold(false);
      tell("searching…");
      const r = await api.search({ ...req, first: true });
      if (my !== asked) return;
      intoSight(panel);
      if (failed(r)) {
        tell(r.error, true);
        list.replaceChildren();
        box.dataset.answered = String(my);
        return;
      }
      showHits(r, req, r.resume !== null);
      if (r.resume !== null) {
        const rest = await api.search({ ...req, after: r.resume });
        if (my !== asked) return;
        if (failed(rest)) {
          tell(rest.error, true);
          box.dataset.answered = String(my);
          return;
        }
        const per = { ...r.per_version };
        for (const [v, n] of Object.entries(rest.per_version)) per[v] = (per[v] || 0) + n;
        showHits({
          ...rest,
          hits: r.hits.concat(rest.hits).slice(0, MAX_LISTED),
          rollouts: r.rollouts + rest.rollouts,
          per_version: per
        }, req, false);
      }
      box.dataset.answered = String(my);
    }
    go.addEventListener("click", run);
    for (const field of [input, versions]) field.addEventListener("keydown", (e) => {
      if (e.key === "Enter") run();
    });
    rule.addEventListener("change", run);
  }
  function mountInApp(element, props, server, watch, trigger) {
    const api = {
      summary: (req) => server.find_summary(req),
      search: (req) => server.find_search(req),
      open: (req) => trigger("click", req)
    };
    let shown = null;
    function start() {
      const box = (
        /** @type {HTMLElement | null} */
        element.querySelector(".fp-mount")
      );
      if (!box || !props.value) return;
      const value = sentValue(props);
      if (shown === value.serial) return;
      shown = value.serial;
      box.hidden = !value.src;
      box.dataset.ready = "";
      box.dataset.answered = "";
      if (value.src) mount(box, value, api);
      else box.replaceChildren();
    }
    start();
    watch("value", start);
  }
  return __toCommonJS(find_panel_exports);
})();
