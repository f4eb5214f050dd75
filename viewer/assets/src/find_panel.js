// The search panel (viewer/ui/find_panel.py): a search box over every rollout of a collection or a run, the
// findings chart (rollouts with each finding, per version in a run, drawn on a canvas) and the hits. A hit
// opens the token view on its turn with the matched tokens marked (a Gradio "click" event {action: "open-hit"}).
// Every text from a trace reaches the page through textContent; nothing is parsed as HTML.
import {el, goTo, intoSight, sentValue, working} from "./dom.js";
import {many} from "./values.js";

// one colour per rule, readable on both schemes; the hits line is drawn in the text colour
const COLOURS = ["#dc2626", "#ea580c", "#ca8a04", "#65a30d", "#0891b2", "#2563eb", "#7c3aed", "#c026d3",
                 "#db2777", "#64748b", "#0d9488", "#9333ea"];

/** An answer that says why there is none. @param {{error?: string | null}} a @returns {a is {error: string}} */
const failed = (a) => !!a.error;
const MAX_LISTED = 100;  // hits a search lists (viewer/find/answers.py's default limit)

/** Where the chart puts things, shared by the drawing and by a click on it.
 *  @typedef {{w: number, h: number, left: number, top: number, pw: number, ph: number, max: number, bw: number,
 *    rules: RuleCount[], versions: string[] | null}} ChartPlace */

/** @param {number} w @param {number} h @param {FindSummary} summary @param {Record<string, number> | null} hits
 *  @returns {ChartPlace} */
function place(w, h, summary, hits) {
  const rules = summary.rules.filter((r) => r.total > 0);
  // with hits, room above the plot for their scale's label
  const left = 36, bottom = 22, top = hits ? 22 : 8, right = 8, pw = w - left - right, ph = h - top - bottom;
  const versions = summary.versions.length ? summary.versions.map(String) : null;
  if (!versions) {  // outside a run: one bar per rule
    return {w, h, left, top, pw, ph, rules, versions, max: Math.max(1, ...rules.map((r) => r.total)),
            bw: Math.min(pw / Math.max(1, rules.length), 140)};
  }
  const stack = versions.map((v) => rules.reduce((s, r) => s + (r.per_version[v] || 0), 0));
  return {w, h, left, top, pw, ph, rules, versions, max: Math.max(1, ...stack), bw: pw / versions.length};
}

/** The bar (a version, in a run) and the rule of the segment under a point of the chart, or null.
 *  @param {ChartPlace} at @param {number} x @param {number} y @returns {{version: string | null, rule: string | null} | null} */
function pick(at, x, y) {
  const i = Math.floor((x - at.left) / at.bw);
  if (x < at.left || i < 0 || y > at.top + at.ph) return null;
  if (!at.versions) return i < at.rules.length ? {version: null, rule: at.rules[i].rule} : null;
  if (i >= at.versions.length) return null;
  const v = at.versions[i];
  let base = at.top + at.ph;
  for (const r of at.rules) {
    const bh = at.ph * (r.per_version[v] || 0) / at.max;
    if (bh && y <= base && y >= base - bh) return {version: v, rule: r.rule};
    base -= bh;
  }
  return {version: v, rule: null};  // above the bar: the version alone
}

/** @param {HTMLCanvasElement} canvas @param {FindSummary} summary @param {Record<string, number> | null} hits */
function drawChart(canvas, summary, hits) {
  const dpr = window.devicePixelRatio || 1, w = canvas.clientWidth || 600, h = canvas.clientHeight || 160;
  canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
  const g = canvas.getContext("2d");
  if (!g) return;  // no 2D canvas in this browser: the status line and the hits still say it all
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const cs = getComputedStyle(canvas), fg = cs.color || "#111", dim = cs.getPropertyValue("--fp-dim") || "#888";
  g.font = "12px system-ui, sans-serif"; g.fillStyle = fg;
  const {left, top, pw, ph, max, bw, rules, versions} = place(w, h, summary, hits);
  if (!versions) {
    rules.forEach((r, i) => {
      const bh = ph * r.total / max;
      g.fillStyle = COLOURS[summary.rules.indexOf(r) % COLOURS.length];
      g.fillRect(left + i * bw + 4, top + ph - bh, Math.max(2, bw - 8), bh);
      g.fillStyle = fg; g.textAlign = "center";
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
    // hits per version on a scale of their own (a word found 15 times beside findings in 300 rollouts a version
    // would lie flat on the bars' scale): a stick at each version with hits, its height their count, the scale's
    // top written at the right
    const hitMax = Math.max(1, ...versions.map((v) => hits[v] || 0));
    g.strokeStyle = fg; g.fillStyle = fg; g.lineWidth = 2;
    versions.forEach((v, i) => {
      const n = hits[v] || 0;
      if (!n) return;
      const x = left + (i + 0.5) * bw, y = top + ph - ph * n / hitMax;
      g.beginPath(); g.moveTo(x, top + ph); g.lineTo(x, y); g.stroke();
      g.beginPath(); g.arc(x, y, 3, 0, 7); g.fill();
    });
    g.textAlign = "right";
    g.fillText(`● hits per version (own scale, top ${hitMax.toLocaleString("en-US")})`, left + pw, top - 8);
  }
  axis(g, left, top, pw, ph, max, fg, dim);
  g.fillStyle = fg; g.textAlign = "center";
  // a version written every `step` versions, a round number (1, 2 or 5 times a power of ten): 250, 500, … not 99, 197
  const raw = versions.length / Math.max(1, pw / 40);
  const ten = 10 ** Math.floor(Math.log10(Math.max(1, raw)));
  const step = [1, 2, 5, 10].map((m) => m * ten).find((s) => s >= raw) || 10 * ten;
  const round = versions.flatMap((v, i) => (Number(v) % step === 0 ? [i] : []));  // the bars' places
  const marked = round.length ? round : [0, versions.length - 1];
  const every = Math.max(1, Math.ceil(marked.length / Math.max(1, pw / 40)));  // versions that are not 1, 2, 3, …
  const written = marked.filter((_, j) => j % every === 0);
  const spans = written.map((i) => {  // centred under its bar, but never past the canvas's edge (the last version's "2000")
    const half = g.measureText(String(versions[i])).width / 2 + 2, x = Math.min(w - half, Math.max(half, left + (i + 0.5) * bw));
    g.fillText(versions[i], x, h - 6);
    return [Math.round(x - half + 2), Math.round(x + half - 2)];
  });
  canvas.dataset.ticks = written.map((i) => versions[i]).join(" ");  // what the axis says, for a reader without the pixels
  canvas.dataset.tickSpans = JSON.stringify(spans);  // where each is written (CSS pixels): inside the canvas
}

/** @param {CanvasRenderingContext2D} g @param {number} left @param {number} top @param {number} pw
 *  @param {number} ph @param {number} max @param {string} fg @param {string} dim */
function axis(g, left, top, pw, ph, max, fg, dim) {
  g.strokeStyle = dim; g.lineWidth = 1; g.beginPath();
  g.moveTo(left, top); g.lineTo(left, top + ph); g.lineTo(left + pw, top + ph); g.stroke();
  g.fillStyle = fg; g.textAlign = "right";
  g.fillText(String(max), left - 4, top + 10); g.fillText("0", left - 4, top + ph);
}

// Once the token view shows the hit's tokens, bring them on screen (the view sits below the index).
function revealFound() {
  const seen = () => {
    const t = document.querySelector("#trace-view .tv-tokens .t.tv-found");
    const turn = t && t.closest(".tv-turn");
    if (turn) turn.scrollIntoView({block: "start"});
    return !!t;
  };
  const mo = new MutationObserver(() => { if (seen()) mo.disconnect(); });
  mo.observe(document.body, {childList: true, subtree: true});
  setTimeout(() => mo.disconnect(), 60000);
}

/** What the panel asks for and tells: the server functions, and the Gradio event that opens a hit.
 *  @typedef {{summary: FindServer["find_summary"], search: FindServer["find_search"], open: (req: object) => void}} FindApi */

/** @param {HTMLElement} box @param {{src: string, serial: number}} value @param {FindApi} api */
function mount(box, value, api) {
  const src = value.src;
  // short enough to read whole in the box at 1024 px (the select beside it says where); the title says the rest
  const input = el("input", {type: "search", class: "fp-input", "data-testid": "find-input", "aria-label": "search text or /regex/",
    placeholder: "search the rollouts' text, or /regex/",
    title: "words or /regex/ in what the model generated, its tool calls and the tool outputs"});
  const where = el("select", {class: "fp-in", "data-testid": "find-in", "aria-label": "where to look"},
    el("option", {value: "", text: "everywhere"}), el("option", {value: "generated", text: "generated"}),
    el("option", {value: "tool-call", text: "tool calls"}), el("option", {value: "tool-output", text: "tool outputs"}));
  const versions = el("input", {type: "text", class: "fp-versions", "data-testid": "find-versions", placeholder: "versions A:B",
    "aria-label": "policy versions, A:B", size: "10"});
  const rule = el("select", {class: "fp-rule", "data-testid": "find-rule", "aria-label": "only rollouts with this finding"},
    el("option", {value: "", text: "any finding"}));
  const go = el("button", {type: "button", class: "fp-go", "data-testid": "find-go"}, "search");
  const status = el("div", {class: "fp-status", role: "status", "data-testid": "find-status", text: "reading the findings of every rollout…"});
  /** What the panel says, an error marked as one (a refused query, a source that cannot be searched).
   *  @param {string} text @param {boolean} [bad] */
  const tell = (text, bad = false) => { status.textContent = text; status.classList.toggle("fp-bad", bad); };
  const canvas = el("canvas", {class: "fp-chart", "data-testid": "find-chart", role: "img", "aria-label": "findings per version",
    title: "click a bar to list its rollouts (a coloured part: those with that finding)"});
  const legend = el("div", {class: "fp-legend", "data-testid": "find-legend"});
  const list = el("ol", {class: "fp-hits", "data-testid": "find-hits"});
  const more = el("div", {class: "fp-more", id: `fp-more-${value.serial}`}, status, el("div", {class: "fp-chartbox"}, canvas, legend), list);
  const unfold = el("button", {type: "button", class: "fp-unfold", "data-testid": "find-unfold", "aria-controls": more.id,
    "aria-expanded": "true", title: "show or hide the findings chart and the hits"}, "findings ▾");
  const panel = el("section", {class: "fp", "data-testid": "find-panel", "aria-label": "search and findings"},
    el("div", {class: "fp-bar"}, el("b", {text: "Find "}), input, where, versions, rule, go, unfold), more);
  box.replaceChildren(panel);
  // On a group's map or a rollout (a `row` in the URL, or a `rollout` of a source that is one group) the panel keeps
  // its search row and folds the rest away, so that the page asked for starts at the top of the window; the
  // button, or a search, unfolds it.
  /** @param {boolean} folded */
  const fold = (folded) => {
    panel.classList.toggle("fp-folded", folded);
    unfold.setAttribute("aria-expanded", String(!folded));
    unfold.textContent = folded ? "findings ▸" : "findings ▾";
  };
  const drilled = () => { const q = new URL(window.location.href).searchParams; return !!q.get("row") || q.has("rollout"); };
  const onPlace = () => {
    if (!document.body.contains(panel)) {  // a newer mount replaced this one
      document.removeEventListener("rtv-place", onPlace); window.removeEventListener("popstate", onPlace); return;
    }
    fold(drilled());
  };
  document.addEventListener("rtv-place", onPlace);
  window.addEventListener("popstate", onPlace);
  unfold.addEventListener("click", () => fold(!panel.classList.contains("fp-folded")));
  fold(drilled());
  /** @type {FindSummary | null} */
  let summary = null;
  /** @type {Record<string, number> | null} */
  let hitsPer = null;
  const redraw = () => { if (summary) drawChart(canvas, summary, hitsPer); };
  new ResizeObserver(redraw).observe(canvas);
  // the chart's text takes the scheme's colour: draw again when Gradio switches light/dark (body's class)
  new MutationObserver(redraw).observe(document.body, {attributes: true, attributeFilter: ["class"]});

  /** @param {FindSummary | FindPending | Refused} s */
  const show = (s) => {
    if ("pending" in s) {  // a Hub source: indexing downloads its rollouts, so it waits for the visitor to ask
      const build = el("button", {type: "button", class: "fp-build", "data-testid": "find-build"},
        `index ${s.rollouts} rollouts`);
      status.replaceChildren("Search and findings read every rollout of this Hub dataset: ", build);
      build.addEventListener("click", () => { tell("indexing the rollouts…"); api.summary({src, build: true}).then(show); });
      return;
    }
    if (failed(s)) { tell(s.error, true); return; }
    summary = s;
    // the index's findings column fills in; the source is noted too, for an index page that arrives after this
    document.documentElement.dataset.fpIndexed = src;
    document.dispatchEvent(new CustomEvent("fp-indexed", {detail: {src}}));
    const found = s.rules.filter((r) => r.total > 0);
    // one or two bars (a group, a collection, a run of one or two versions) need no 150 px of a projector's screen
    canvas.classList.toggle("fp-few", (s.versions.length || found.length) <= 2);
    for (const r of s.rules) rule.append(el("option", {value: r.rule, text: `${r.rule} (${r.total})`}));
    legend.replaceChildren(...found.map((r) => el("button", {type: "button", class: "fp-key", "data-rule": r.rule,
      title: "list the rollouts with this finding"}, el("i", {style: `background:${COLOURS[s.rules.indexOf(r) % COLOURS.length]}`}),
      `${r.rule} ${r.total}`)));
    versions.hidden = !s.versions.length;  // a source without policy versions (a rollout, a group) has none to pick
    if (versions.hidden) versions.value = "";
    tell(`${many(s.rollouts, "rollout")} with recorded text searchable` +
      (s.unsearchable ? ` (${s.unsearchable.toLocaleString("en-US")} failed before any text was recorded)` : "") + "; " + (found.length ?
      `findings of ${many(found.length, "rule")} (chart: rollouts with each, ` +
      (s.versions.length ? "per version)" : "in all)") : "no findings"));
    box.dataset.ready = "1";
    redraw();
  };
  api.summary({src}).then(show);
  legend.addEventListener("click", (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest(".fp-key");
    if (b) { rule.value = b.getAttribute("data-rule") || ""; run(); }
  });
  // a bar lists its rollouts: a segment those of its version with its finding, the space above a bar its version
  // with the finding (or the text) already asked
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
  /** @param {SearchAnswer} r @param {FindRequest} req @param {boolean} counting */
  function showHits(r, req, counting) {
    hitsPer = req.rule ? null : r.per_version;
    redraw();
    const per = Object.entries(r.per_version).map(([v, n]) => `v${v}: ${n}`).join(", ");
    tell((counting ? `${r.hits.length} listed so far; counting every rollout…` :
      `${many(r.rollouts, "rollout")} match${r.rollouts === 1 ? "es" : ""}` + (per ? ` (per version ${per})` : "") +
      `; ${r.hits.length} listed` + (r.partial ? " — partial: " : "")) + (r.notes.length ? " · " + r.notes.join(" · ") : ""));
    list.replaceChildren(...r.hits.map((h, i) => {
      const where = (h.version !== null ? `v${h.version} · ` : "") + (h.group !== null ? `group ${h.group} · ` : "") +
        (h.rollout !== null ? `rollout ${h.rollout} · ` : "") +
        `turn ${h.turn} · ${h.field} · token ${h.token}`;
      const ex = el("span", {class: "fp-excerpt"});
      const [a, b] = h.mark;
      /** @param {string} t */
      const flat = (t) => t.replace(/\n/g, "⏎ ");  // one or two lines per hit: newlines shown, not taken
      if (b > a) ex.append(flat(h.excerpt.slice(0, a)), el("mark", {text: flat(h.excerpt.slice(a, b))}), flat(h.excerpt.slice(b)));
      else ex.textContent = flat(h.excerpt);
      const open = el("button", {type: "button", class: "fp-hit", "data-testid": "find-hit", "data-i": String(i),
        title: `open ${h.path || "this rollout"} at turn ${h.turn}, the matched tokens marked`},
        el("span", {class: "fp-where", text: where}), el("span", {class: "fp-path", text: h.path}), ex);
      open.addEventListener("click", () => {
        // the hit's place is a link (as the index's rows are, a history entry Back returns through): its marks
        // are `found=A-B`, which a reload or a shared link opens again (viewer/page_link.py)
        const u = new URL(window.location.href);
        for (const k of ["rollout", "page", "mode", "part"]) u.searchParams.delete(k);
        u.searchParams.set("src", src); u.searchParams.set("row", h.path || "");
        u.searchParams.set("turn", String(h.turn)); u.searchParams.set("scope", "full");
        u.searchParams.set("found", `${h.token}-${h.token_end}`);
        goTo(u, {ci: "row"});
        working(`opening ${where}…`);
        api.open({action: "open-hit", src, row: h.path, turn: h.turn, found: [h.token, h.token_end]});
        revealFound();
      });
      return el("li", {}, open);
    }));
  }

  async function run() {
    const my = ++asked;
    const req = {src, pattern: input.value, fields: where.value ? [where.value] : [], versions: versions.value, rule: rule.value};
    if (!req.pattern.trim() && !req.rule) { tell("type text or /regex/, or pick a finding"); return; }
    fold(false);
    tell("searching…");
    // a run answers its first hits at once and the counts of the rest in a second answer
    const r = await api.search({...req, first: true});
    if (my !== asked) return;
    intoSight(panel);  // on a run page the panel lies below the run's charts: its answer below the fold
    if (failed(r)) { tell(r.error, true); list.replaceChildren(); box.dataset.answered = String(my); return; }
    showHits(r, req, r.resume !== null);
    if (r.resume !== null) {
      const rest = await api.search({...req, after: r.resume});
      if (my !== asked) return;
      if (failed(rest)) { tell(rest.error, true); box.dataset.answered = String(my); return; }
      /** @type {Record<string, number>} */
      const per = {...r.per_version};
      for (const [v, n] of Object.entries(rest.per_version)) per[v] = (per[v] || 0) + n;
      showHits({...rest, hits: r.hits.concat(rest.hits).slice(0, MAX_LISTED), rollouts: r.rollouts + rest.rollouts,
            per_version: per}, req, false);
    }
    box.dataset.answered = String(my);
  }
  go.addEventListener("click", run);
  for (const field of [input, versions]) field.addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
  rule.addEventListener("change", run);
}

/** @param {HTMLElement} element @param {{value: string}} props @param {FindServer} server
 *  @param {(name: string, fn: () => void) => void} watch @param {(name: string, data: object) => void} trigger */
export function mountInApp(element, props, server, watch, trigger) {
  /** @type {FindApi} */
  const api = {summary: (req) => server.find_summary(req), search: (req) => server.find_search(req),
               open: (req) => trigger("click", req)};
  /** @type {number | null} */
  let shown = null;
  function start() {
    const box = /** @type {HTMLElement | null} */ (element.querySelector(".fp-mount"));
    if (!box || !props.value) return;
    /** @type {{src: string, serial: number}} */
    const value = sentValue(props);
    if (shown === value.serial) return;
    shown = value.serial;
    box.hidden = !value.src;
    box.dataset.ready = ""; box.dataset.answered = "";
    if (value.src) mount(box, value, api); else box.replaceChildren();
  }
  start();
  watch("value", start);
}
