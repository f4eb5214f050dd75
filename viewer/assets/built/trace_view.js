// Built from viewer/assets/src/trace_view.js by `python -m viewer.assets.build`: edit the source, not this file.
"use strict";
var TraceView = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __export = (target2, all2) => {
    for (var name in all2)
      __defProp(target2, name, { get: all2[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key2 of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key2) && key2 !== except)
          __defProp(to, key2, { get: () => from[key2], enumerable: !(desc = __getOwnPropDesc(from, key2)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // src/trace_view.js
  var trace_view_exports = {};
  __export(trace_view_exports, {
    mountExport: () => mountExport,
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
  function keyScrolled(box) {
    const at = document.activeElement;
    if (at && box.contains(at) && /^(INPUT|TEXTAREA|SELECT)$/.test(at.tagName)) return;
    if (!box.hasAttribute("tabindex")) box.tabIndex = -1;
    box.focus({ preventScroll: true });
  }
  function presentLabel() {
    return [el("span", { class: "present-off", text: "present" }), el("span", { class: "present-on", text: "leave (Esc)" })];
  }
  function sentValue(props) {
    document.dispatchEvent(new Event("rtv-shown"));
    return typeof props.value === "string" ? JSON.parse(props.value) : props.value;
  }
  function problemsBox(p) {
    return el(
      "div",
      { class: "tv-error", role: "alert" },
      el("b", { text: `Cannot open ${p.source}` }),
      el("ul", null, ...p.items.map((t) => el("li", { text: t })))
    );
  }

  // src/trace_view/format.js
  var fmt = (n) => Number(n).toLocaleString("en-US");
  var lpAlpha = (lp) => (0.08 + 0.85 * Math.min(1, Math.max(0, 1 - Math.exp(lp)))).toFixed(3);
  var refused = (a) => !!a && typeof a === "object" && "error" in a;
  var all = (root, sel) => (
    /** @type {NodeListOf<HTMLElement>} */
    root.querySelectorAll(sel)
  );
  var target = (ev) => (
    /** @type {HTMLElement} */
    ev.target
  );
  var num = (x, d = 4) => x === null || x === void 0 ? "n/a" : Math.abs(x) > 0 && Math.abs(x) < 1e-3 ? x.toExponential(1) : x.toFixed(d);
  var errorText = (e) => String(typeof e === "object" && e !== null && "message" in e && e.message || e);

  // src/trace_view/navigator.js
  function fateOf(O, pos) {
    if (!O.run) return null;
    return O.run.turns[pos] || null;
  }
  function turnPill(O, t, pos) {
    const f = fateOf(O, pos);
    if (!O.run) return { text: t.trained ? "trained" : "not trained", on: t.trained };
    if (!t.trained) return { text: "not in mask", on: false };
    if (!f) return { text: "in mask", on: false };
    return f.trained ? { text: `trained · step ${f.steps.join(", ")}`, on: true } : { text: `never trained (${f.cause})`, on: false };
  }
  function turnFate(O, t, pos) {
    const f = fateOf(O, pos);
    if (!t.trained) return O.run ? " (not in TRL's mask)" : " (not trained)";
    if (!f) return "";
    return f.trained ? ` (trained at step ${f.steps.join(", ")})` : ` (in TRL's mask, never trained: ${f.cause})`;
  }
  function navPart(nav, O) {
    nav.replaceChildren(...O.turns.map((t, pos) => {
      const occ = O.max_context ? Math.round(100 * (t.prompt_tokens + t.output_tokens) / O.max_context) : 0;
      const drift = t.drift_at !== null ? el("span", { class: "tv-driftmark", title: `the prompt departs from the turn before at position ${fmt(t.drift_at)}`, text: "⚠ drift" }) : null;
      const fail = t.tool_failed ? el("span", { class: "tv-failmark", title: "a tool call failed", "aria-label": "a tool call failed", text: "✗" }) : null;
      const why = `${fmt(t.trained_tokens)} of ${fmt(t.output_tokens)} generated tokens trained` + (t.seed_trained !== t.trained ? `; the original capture script marks this turn ${t.seed_trained ? "trained" : "untrained"}` : "");
      const f = fateOf(O, pos), p = turnPill(O, t, pos), fate = f ? `; ${f.why}` : "";
      const pill = el("span", {
        class: `tv-pill${p.on ? " tr" : ""}${f && !f.trained && t.trained ? " never" : ""}`,
        "data-testid": "turn-pill",
        title: (O.run ? why.replace("trained", "in TRL's mask") : why) + fate,
        text: p.text
      });
      return el(
        "button",
        { class: `tv-navitem${t.trained ? " trained" : ""}`, "data-turn": pos, "data-testid": "nav-turn", "aria-current": "false" },
        el("span", { class: "tv-nav-h" }, el("span", { class: "tv-nav-turn", text: `turn ${t.index}` }), " ", pill, " ", drift, fail),
        el("span", { class: "tv-nav-tools", text: t.tools.length ? t.tools.join(", ") : "no tool call" }),
        el("span", { class: "tv-nav-n", text: `prompt ${fmt(t.prompt_tokens)} · out ${fmt(t.output_tokens)} · new ${fmt(t.added)}` }),
        el(
          "span",
          { class: "tv-occ", title: `context ${fmt(t.prompt_tokens + t.output_tokens)} of the rollout's longest ${fmt(O.max_context)}` },
          el("span", { style: `width:${occ}%` })
        )
      );
    }));
    return {
      /** @param {ViewPlace} st @param {number[] | null} rowTurns */
      show(st, rowTurns) {
        all(nav, ".tv-navitem").forEach((item) => {
          const k = Number(item.dataset.turn);
          const on = rowTurns ? rowTurns.includes(O.turns[k].index) : k === st.turn;
          item.classList.toggle("active", on);
          item.setAttribute("aria-current", on ? rowTurns ? "true" : "step" : "false");
        });
        const a = nav.querySelector(".active");
        if (a && a.scrollIntoView) requestAnimationFrame(() => {
          if (a.isConnected) a.scrollIntoView({ block: "nearest" });
        });
      }
    };
  }

  // src/trace_view/advantage.js
  function advantageClass(O, t, mask, rowScope) {
    const trained = mask === "1" && (rowScope || t && t.trained);
    if (!trained) return { cls: " adv-ctx", alpha: null };
    const a = O.advantage;
    if (a === null || a === void 0) return { cls: " adv-unknown", alpha: null };
    return { cls: a > 0 ? " adv-pos" : a < 0 ? " adv-neg" : " adv-zero", alpha: (0.18 + 0.7 * Math.min(1, Math.abs(a) / 2)).toFixed(3) };
  }
  var swatch = (cls) => el("span", { class: `sw ${cls}` });
  var key = (cls, words) => el("span", { class: "tv-nowrap" }, swatch(cls), words);
  function hypothetical(f) {
    if (!f) return [];
    return f.trained ? [" · ", el("span", { class: "tv-badge tv-fate trained", "data-testid": "push-fate", text: `${f.label}: this push was in the loss` })] : [" ", el("span", {
      class: "tv-badge warn tv-fate never",
      "data-testid": "push-fate",
      title: f.why,
      text: `hypothetical: ${f.label}, so this push never reached the model`
    })];
  }
  function advantageLegend(O, f) {
    const a = O.advantage;
    const failed = O.run && O.run.advantage === null;
    const val = failed ? el("span", { class: "tv-badge warn", "data-testid": "no-advantage", text: "TRL gave this rollout no advantage (it built no training row)" }) : a === null || a === void 0 ? el("span", { class: "tv-badge warn", "data-testid": "no-advantage", text: "no advantage here: this rollout was opened on its own, and a GRPO advantage comes with a group (open a group's map to see its rollouts' advantages)" }) : el("span", { class: "tv-nowrap" }, "· this rollout's advantage ", el("b", { text: `${Number(a) >= 0 ? "+" : ""}${Number(a).toFixed(3)}` }));
    return [
      key("adv-pos", "pushed up (advantage > 0)"),
      " ",
      key("adv-neg", "pushed down (< 0)"),
      " ",
      key("adv-zero", "no push (0)"),
      " ",
      key("adv-ctx", "not trained"),
      " ",
      val,
      ...hypothetical(f)
    ];
  }

  // src/trace_view/toolbar.js
  var modeOf = (O, id) => O.modes.find((m) => m.id === id);
  var isTrainerMode = (O, id) => {
    const m = modeOf(O, id);
    return !!m && m.trainer;
  };
  var notInRows = (O, id) => {
    const m = modeOf(O, id);
    return m ? m.not_in_rows : null;
  };
  function toolbarPart(bar, O) {
    const group = (kind, choices) => el("span", { class: "tv-group", role: "group", "aria-label": kind }, ...choices.map((c) => el("button", { [`data-${kind}`]: c.id, title: c.help, "aria-pressed": "false", text: c.label })));
    bar.replaceChildren(el("b", { class: "tv-turn-title" }), group("mode", O.modes), el(
      "span",
      { class: "tv-tail" },
      group("scope", O.scopes),
      el("button", {
        class: "tv-jump-btn",
        title: "jump to where this turn's story is: its drift, or its generated tokens (g)",
        "aria-label": "jump to the generated tokens",
        text: "↓ generated"
      })
    ));
    return {
      /** @param {ViewPlace} st @param {string} title */
      show(st, title) {
        const heading2 = bar.querySelector(".tv-turn-title");
        if (heading2) heading2.textContent = title;
        bar.querySelectorAll("[data-mode]").forEach((b) => {
          const on = b.dataset.mode === st.mode;
          b.classList.toggle("on", on);
          b.setAttribute("aria-pressed", String(on));
          const why = notInRows(O, b.dataset.mode || "");
          b.disabled = st.scope === "row" && !!why;
          if (b.disabled && why) b.title = why;
        });
        all(bar, "[data-scope]").forEach((b) => {
          const on = b.dataset.scope === st.scope;
          b.classList.toggle("on", on);
          b.setAttribute("aria-pressed", String(on));
        });
      }
    };
  }
  function fateHere(O, st, training) {
    if (st.scope !== "row") return fateOf(O, st.turn);
    const r = training ? training.rows[st.row] : null;
    return r ? r.fate : null;
  }
  function legendNodes(O, st, trainer, training) {
    const t = O.turns[st.turn], f = fateHere(O, st, training);
    const never = f && !f.trained ? `, in TRL's mask: never trained, ${f.cause || ""})` : null;
    const mask = () => [
      key("m0", "context the model read (mask 0)"),
      " ",
      ...st.scope === "row" ? [key("m1", `tokens the model generated (mask 1, underlined${never || ")"}`)] : t.trained ? [key("m1", `tokens the model generated (mask 1, underlined${never || ", trained)"}`)] : [key("m1", "tokens the model generated (mask 1, underlined)"), " ", key("m1u", "hatched: this turn is not trained")],
      ...st.scope !== "row" && t.drift_at !== null ? [" ", key("dmark", "rewritten at the turn boundary (drift)")] : []
    ];
    const modes = {
      mask,
      logprob: () => [key("lp-hi", "p ≈ 1"), " ", key("lp-lo", "p ≈ 0"), " ", key("nolp", "no logprob recorded (context, or none captured)")],
      drift: () => [
        key("d-carried", "carried over exactly"),
        " ",
        key("d-rewritten", "rewritten (drift)"),
        " ",
        key("d-new", "new context"),
        " ",
        key("d-out", "generated")
      ],
      advantage: () => advantageLegend(O, f)
    };
    const out = document.createDocumentFragment();
    if (isTrainerMode(O, st.mode) && trainer) out.append(...trainer.legend(f));
    else if (modes[st.mode]) out.append(...modes[st.mode]());
    if (st.scope === "row") return out;
    const warn = [];
    const a = t.audit;
    if (a.ones_in_prompt) warn.push(`${fmt(a.ones_in_prompt)} prompt tokens have mask 1`);
    if (a.zeros_in_output) warn.push(`${fmt(a.zeros_in_output)} generated tokens have mask 0`);
    if (a.trained_without_logprobs) warn.push("trained turn without logprobs");
    if (warn.length) out.append(" ", el("span", { class: "tv-badge warn", text: `mask audit: ${warn.join("; ")}` }));
    return out;
  }

  // src/trace_view/token_pane.js
  var KEEP_CHUNKS = 12;
  var WS = (
    /** @type {Record<string, string>} */
    { " ": "·", "	": "→", "\r": "␍", "\n": "↵" }
  );
  var HAS_WS = /[ \t\r\n]/;
  function tokenPane(box, O, api, st, scopeRange2, firstChunk, trainer) {
    let chunks = /* @__PURE__ */ new Map();
    let rendered = /* @__PURE__ */ new Set();
    let observer = null;
    let epoch = 0;
    let cursor = null;
    let preloaded = firstChunk;
    let landings = 0;
    const landed = () => {
      box.dataset.landed = String(++landings);
    };
    let landing = 0;
    const underWay = (d) => {
      landing += d;
      box.dataset.landing = String(landing);
    };
    underWay(0);
    let unseen = false;
    function driftClass(pos) {
      const t = O.turns[st.turn];
      if (pos >= t.prompt_tokens) return "d-out";
      if (t.drift_at !== null && pos >= t.drift_at && pos < t.carried) return "d-rewritten";
      if (pos < t.shared) return "d-carried";
      return "d-new";
    }
    const tokenSpan = el("span"), wsMark = el("i", { class: "ws" }), lineBreak = el("br");
    function fill(span, s) {
      if (!HAS_WS.test(s)) {
        span.textContent = s;
        return;
      }
      let from = 0;
      for (let i = 0; i < s.length; i++) {
        const w = WS[s[i]];
        if (w === void 0) continue;
        if (i > from) span.append(s.slice(from, i));
        const m = wsMark.cloneNode();
        m.textContent = w;
        span.append(m);
        if (s[i] === "\n") span.append(lineBreak.cloneNode());
        from = i + 1;
      }
      if (from < s.length) span.append(s.slice(from));
    }
    function spans(c) {
      const out = document.createDocumentFragment();
      for (let k = 0; k < c.ids.length; k++) {
        const pos = c.start + k, kind = c.kind[k], lp = c.logprob[k];
        let cls = "t k" + kind;
        let alpha = null;
        if (st.mode === "logprob") {
          if (lp === null) cls += " nolp";
          else alpha = lpAlpha(lp);
        } else if (st.mode === "drift" && st.scope !== "row") cls += " " + driftClass(pos);
        else if (st.mode === "mask" && st.scope !== "row" && driftClass(pos) === "d-rewritten") cls += " dmark";
        else if (trainer && isTrainerMode(O, st.mode) && st.scope !== "row") cls += trainer.tokenClass(pos);
        else if (st.mode === "advantage") {
          const a = advantageClass(O, O.turns[st.turn], c.mask[k], st.scope === "row");
          cls += a.cls;
          alpha = a.alpha;
        }
        if (st.found && st.turn === st.foundTurn && pos >= st.found[0] && pos < st.found[1]) cls += " tv-found";
        const span = (
          /** @type {HTMLElement} */
          tokenSpan.cloneNode()
        );
        span.className = cls;
        span.setAttribute("data-mask", c.mask[k]);
        span.setAttribute("data-i", String(pos));
        if (alpha !== null) span.style.setProperty("--a", alpha);
        if (kind !== "2") fill(span, c.text[k]);
        out.append(span);
      }
      return out;
    }
    function evictFarFrom(center) {
      const order = [...rendered].sort((a, b) => Math.abs(b - center) - Math.abs(a - center));
      while (rendered.size > KEEP_CHUNKS) {
        const c = order.shift();
        if (c === void 0) break;
        const div = (
          /** @type {HTMLElement | null} */
          box.querySelector(`.tv-chunk[data-c="${c}"]`)
        );
        if (div) {
          div.style.height = div.offsetHeight + "px";
          div.replaceChildren();
        }
        rendered.delete(c);
        chunks.delete(c);
      }
    }
    function renderChunk(div, c) {
      div.replaceChildren(spans(c));
      div.style.minHeight = "";
      div.style.height = "";
      rendered.add(Number(div.dataset.c));
      if (rendered.size > KEEP_CHUNKS) evictFarFrom(Number(div.dataset.c));
      if (cursor !== null) mark(cursor);
    }
    const failed = (div, why) => div.replaceChildren(el("span", { class: "tv-err", text: why }));
    async function load(div) {
      const idx = Number(div.dataset.c), my = epoch;
      if (rendered.has(idx) || div.dataset.loading === "1") return;
      div.dataset.loading = "1";
      underWay(1);
      try {
        const c = chunks.get(idx) || await api.chunk({ turn: st.turn, scope: st.scope, index: idx, row: st.row });
        if (my !== epoch) return;
        if (refused(c)) {
          failed(div, c.error);
          return;
        }
        chunks.set(idx, c);
        renderChunk(div, c);
      } catch (e) {
        if (my === epoch) failed(div, `could not load tokens: ${errorText(e)}`);
      } finally {
        div.dataset.loading = "";
        underWay(-1);
      }
    }
    function paint(story) {
      epoch++;
      chunks = /* @__PURE__ */ new Map();
      rendered = /* @__PURE__ */ new Set();
      cursor = null;
      if (observer) observer.disconnect();
      if (unseen) {
        unseen = false;
        underWay(-1);
      }
      const { start, size, waiting } = scopeRange2();
      const t = O.turns[st.turn];
      const n = Math.ceil(size / O.chunk_size);
      const parts = document.createDocumentFragment();
      if (st.scope === "new" && t.shared > 0) {
        parts.append(el("button", {
          class: "tv-collapsed",
          "data-testid": "collapsed-prefix",
          text: `▸ ${fmt(t.shared)} tokens shared with turn ${O.turns[st.turn - 1] ? O.turns[st.turn - 1].index : t.index - 1}: show the full context`
        }));
      }
      if (waiting) parts.append(el("div", { class: "tv-dim", text: "asking TRL how it packs this rollout…" }));
      for (let c = 0; c < n; c++) {
        const est = Math.max(1.6, Math.min(O.chunk_size, size - c * O.chunk_size) / 14) * 1.6;
        parts.append(el("div", { class: "tv-chunk", "data-c": c, style: `min-height:${est.toFixed(1)}em` }));
      }
      if (!n && !waiting) parts.append(el("div", { class: "tv-dim", text: "no tokens in this scope" }));
      box.replaceChildren(parts);
      box.classList.toggle("untrained", !t.trained && st.scope !== "row");
      box.dataset.paint = st.mode;
      if (preloaded && preloaded.turn === st.turn && preloaded.scope === st.scope) {
        chunks.set(preloaded.index, preloaded.chunk);
        const div = box.querySelector(`.tv-chunk[data-c="${preloaded.index}"]`);
        if (div) renderChunk(
          /** @type {HTMLElement} */
          div,
          preloaded.chunk
        );
      }
      preloaded = null;
      const seen = new IntersectionObserver((entries) => {
        for (const e of entries) if (e.isIntersecting) load(
          /** @type {HTMLElement} */
          e.target
        );
        if (unseen && observer === seen) {
          unseen = false;
          underWay(-1);
        }
      }, { root: box, rootMargin: "600px 0px" });
      observer = seen;
      if (n) {
        unseen = true;
        underWay(1);
      }
      box.querySelectorAll(".tv-chunk").forEach((div) => seen.observe(div));
      box.scrollTop = 0;
      fit(true);
      if (story && story.at >= start) goTo(story);
      else {
        const first = box.querySelector(".tv-chunk");
        if (first) load(
          /** @type {HTMLElement} */
          first
        ).then(landed);
        else landed();
      }
    }
    let moved = false;
    for (const ev of ["wheel", "pointerdown", "touchstart"]) box.addEventListener(ev, () => {
      moved = true;
    }, { passive: true });
    function goTo(to) {
      const story = typeof to === "number" ? { at: to } : to;
      moved = false;
      const { start } = scopeRange2();
      const idx = Math.floor(Math.max(0, story.at - start) / O.chunk_size);
      const div = box.querySelector(`.tv-chunk[data-c="${idx}"]`);
      if (!div) {
        landed();
        return Promise.resolve();
      }
      const settle = () => {
        const tok = box.querySelector(`.t[data-i="${story.at}"]`);
        if (!tok || moved) return;
        const cs = getComputedStyle(box), lh = parseFloat(cs.lineHeight) || tok.getBoundingClientRect().height;
        const padTop = parseFloat(cs.paddingTop) || 0, room = box.clientHeight - padTop - (parseFloat(cs.paddingBottom) || 0);
        const at = (i) => i !== null && i !== void 0 ? box.querySelector(`.t[data-i="${i}"]`) : null;
        const top = (t) => t.getBoundingClientRect().top - (lh - t.getBoundingClientRect().height) / 2;
        const lines = (a, b) => Math.round((top(b) - top(a)) / lh) + 1;
        const fits = Math.floor(room / lh + 0.01);
        const put = (t, line2) => {
          box.scrollTop += top(t) - box.getBoundingClientRect().top - box.clientTop - padTop - line2 * lh;
        };
        const last = at(story.end), gen = at(story.gen), focus = at(story.focus);
        let line = Math.floor(Math.min(fits / 3, 6));
        if (last && lines(tok, last) <= fits) line = Math.min(line, fits - lines(tok, last));
        else if (last && gen && lines(gen, last) <= fits) {
          put(last, fits - 1);
          return;
        }
        if (focus && lines(tok, focus) > fits - line) {
          put(focus, Math.max(0, fits - 1 - Math.floor(fits / 4)));
          return;
        }
        put(tok, Math.max(0, line));
      };
      underWay(1);
      return new Promise((done) => whenLaidOut(() => {
        box.scrollTop += div.getBoundingClientRect().top - box.getBoundingClientRect().top;
        load(
          /** @type {HTMLElement} */
          div
        ).then(() => {
          settle();
          done(void 0);
          setTimeout(() => {
            settle();
            landed();
            underWay(-1);
          }, 200);
        });
      }));
    }
    function whenLaidOut(fn) {
      if (box.isConnected && box.clientHeight > 0) {
        fn();
        return;
      }
      const ro = new ResizeObserver(() => {
        if (box.isConnected && box.clientHeight > 0) {
          ro.disconnect();
          fn();
        }
      });
      ro.observe(box);
    }
    function recolour() {
      box.dataset.paint = st.mode;
      for (const idx of rendered) {
        const div = box.querySelector(`.tv-chunk[data-c="${idx}"]`), c = chunks.get(idx);
        if (div && c) div.replaceChildren(spans(c));
      }
      if (cursor !== null) mark(cursor);
    }
    function info(pos) {
      const idx = Math.floor((pos - scopeRange2().start) / O.chunk_size), c = chunks.get(idx);
      if (!c) return "";
      const k = pos - c.start, lp = c.logprob[k];
      const lpText = lp === null ? "no logprob" : `logprob ${lp.toFixed(4)} (p = ${Math.exp(lp).toFixed(3)})`;
      const text = c.kind[k] === "2" ? "(joined with the token before)" : JSON.stringify(c.text[k]);
      const extra = trainer && isTrainerMode(O, st.mode) && st.scope !== "row" ? trainer.info(pos) : "";
      return `position ${fmt(pos)} · id ${c.ids[k]} · mask ${c.mask[k]} · ${lpText}
${text}${extra}`;
    }
    function mark(pos) {
      box.querySelectorAll(".t.cursor").forEach((x) => x.classList.remove("cursor"));
      const s = (
        /** @type {HTMLElement | null} */
        box.querySelector(`.t[data-i="${pos}"]`)
      );
      if (s) s.classList.add("cursor");
      return s;
    }
    function setCursor(pos) {
      cursor = pos;
      return mark(pos);
    }
    function moveCursor(delta) {
      const { start, size } = scopeRange2();
      if (!size) return null;
      cursor = cursor === null ? Math.max(start, Math.min(start + size - 1, (O.turns[st.turn] || {}).prompt_tokens || start)) : Math.max(start, Math.min(start + size - 1, cursor + delta));
      const s = mark(cursor);
      if (s) {
        s.scrollIntoView({ block: "nearest" });
        return s;
      }
      goTo(cursor);
      return null;
    }
    function fit(on) {
      if (!on) {
        box.style.maxHeight = "";
        box.style.height = "";
        return;
      }
      whenLaidOut(() => {
        const room = window.innerHeight - box.getBoundingClientRect().top - 12;
        if (box.closest(".present")) {
          const cs = getComputedStyle(box), lh = parseFloat(cs.lineHeight) || 38;
          const chrome = box.offsetHeight - box.clientHeight + (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.paddingBottom) || 0);
          const lines = Math.max(4, Math.floor((Math.max(room, 0.4 * window.innerHeight) - chrome) / lh));
          box.style.maxHeight = "";
          box.style.height = lines * lh + chrome + "px";
        } else {
          box.style.height = "";
          const cs = getComputedStyle(box), lh = parseFloat(cs.lineHeight) || 22;
          const chrome = box.offsetHeight - box.clientHeight + (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.paddingBottom) || 0);
          const whole = (px) => Math.floor((px - chrome) / lh) * lh + chrome;
          if (window.scrollY === 0) box.style.maxHeight = room >= 120 ? whole(Math.min(room, 0.7 * window.innerHeight)) + "px" : "";
        }
      });
    }
    function jump(to) {
      return goTo(to).then(() => {
        const r = box.getBoundingClientRect();
        if (r.top >= 0 && r.bottom <= window.innerHeight) return;
        window.scrollBy(0, r.top < 0 ? r.top - 8 : Math.min(r.bottom - window.innerHeight + 8, r.top - 8));
      });
    }
    const reland = (story) => !moved && story ? goTo(story) : Promise.resolve();
    return { paint, recolour, goTo, jump, reland, info, moveCursor, setCursor, fit, cursorPos: () => cursor };
  }

  // src/trace_view/trainer.js
  var SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, ...children) {
    const e = (
      /** @type {SVGElement} */
      document.createElementNS(SVG, tag)
    );
    for (const [k, v] of Object.entries(attrs)) if (k === "text") e.textContent = String(v);
    else e.setAttribute(k, String(v));
    e.append(...children);
    return e;
  }
  function trainerPart(box, nav, O, api, st, onData, onPart = () => {
  }) {
    const outline = O.trainer, asker = api.trainer;
    if (!outline || !asker) throw new Error("the trainer's view needs a rescore part and server.trainer");
    const T = outline, ask = asker;
    const parts = T.parts;
    const group = O.advantage === null || O.advantage === void 0 ? null : Number(O.advantage);
    const offered = [
      ...group !== null ? [["group", `group A = ${group.toFixed(3)}`, "the advantage TRL gave this rollout in its group"]] : [],
      ["+1", "A = +1", "if this rollout had been above its group"],
      ["-1", "A = −1", "if this rollout had been below its group"]
    ];
    const advChoices = offered.filter(([v]) => !T.advantages || T.advantages.includes(v));
    const linked = api.linkPart ? api.linkPart() : null;
    const ts = {
      part: linked !== null && parts.some((p) => p.name === linked) ? linked : T.part !== null && parts.some((p) => p.name === T.part) ? T.part : parts[0].name,
      eps: 0,
      adv: advChoices[0][0]
    };
    const partLabel = () => (parts.find((p) => p.name === ts.part) || parts[0]).label;
    const turnCache = /* @__PURE__ */ new Map();
    const sumCache = /* @__PURE__ */ new Map();
    const advantage = () => ts.adv === "group" ? group : ts.adv === "-1" ? -1 : 1;
    const eps = () => T.eps_choices[ts.eps];
    const keyOf = () => `${ts.part}|${ts.eps}|${advantage()}`;
    const query = () => ({ part: ts.part, eps: eps(), advantage: advantage() });
    function need(turn) {
      const k = keyOf() + "|" + turn;
      if (turnCache.has(k)) return;
      turnCache.set(k, null);
      ask({ ...query(), turn }).then((d) => {
        turnCache.set(k, d);
        onData();
      }).catch((e) => {
        turnCache.set(k, { error: errorText(e) });
        onData();
      });
    }
    const data = (turn) => turnCache.get(keyOf() + "|" + turn) || null;
    function level(lr, out) {
      if (out === "1") return 4;
      const a = Math.abs(lr);
      return a < 1e-3 ? 0 : a < 0.01 ? 1 : a < 0.05 ? 2 : 3;
    }
    function tokenClass(pos) {
      const d = data(st.turn);
      if (!d || refused(d)) return " tr-ctx";
      const k = pos - d.start;
      if (k < 0 || k >= d.entropy.length) return " tr-ctx";
      if (st.mode === "entropy") {
        const e = d.entropy[k];
        return e === null ? " nolp" : " en-" + (e < 0.1 ? 0 : e < 0.5 ? 1 : e < 1.5 ? 2 : e < 3 ? 3 : 4);
      }
      const lr = d.log_ratio[k];
      if (lr === null) return " nolp";
      if (st.mode === "mismatch") {
        const l = level(lr, d.outside[k]);
        return l === 0 ? " mm-0" : ` mm-${lr < 0 ? "n" : "p"}${l}${l === 4 ? " tr-out" : ""}`;
      }
      if (d.trained[k] !== "1") return " tr-off";
      if (d.clipped[k] !== "0") return " ls-clip";
      const A = Math.abs(d.advantage) || 1, loss = d.loss[k], rel = Math.abs(Number(loss)) / A;
      return ` ls-${loss !== null && loss < 0 ? "u" : "d"}${rel < 0.95 ? 1 : rel <= 1.05 ? 2 : 3}`;
    }
    function legend(f) {
      const [lo, hi] = eps(), band = `[${(1 - lo).toFixed(2)}, ${(1 + hi).toFixed(2)}]`;
      const d = data(st.turn);
      const wait = !d ? [" ", el("span", { class: "tv-dim", text: "(loading the trainer's numbers…)" })] : refused(d) ? [" ", el("span", { class: "tv-err", text: d.error })] : [];
      const miss = () => key("nolp", "no engine logprob");
      const part = [el("span", { class: "tv-part", "data-testid": "legend-part" }, "part ", el("b", { text: partLabel() })), " · "];
      if (st.mode === "mismatch") return [
        ...part,
        "log ratio = trainer − engine: ",
        key("mm-n4 tr-out", "below the clip band"),
        " ",
        key("mm-n2", "trainer lower"),
        " ",
        key("mm-0", "|log r| < 1e-3"),
        " ",
        key("mm-p2", "trainer higher"),
        " ",
        key("mm-p4 tr-out", "above the band"),
        " · ",
        el("span", { class: "tv-nowrap" }, el("b", { "data-testid": "clip-band", text: `clip band ${band}` }), ` (ε ${lo} / ${hi})`),
        " ",
        miss(),
        ...wait
      ];
      if (st.mode === "entropy") return [
        ...part,
        "trainer entropy (nats): ",
        key("en-0", "< 0.1"),
        " ",
        key("en-1", "< 0.5"),
        " ",
        key("en-2", "< 1.5"),
        " ",
        key("en-3", "< 3"),
        " ",
        key("en-4", "≥ 3"),
        ...wait
      ];
      const A = advantage();
      const supposed = ts.adv === "group" ? "" : group === null ? " (supposed: a rollout opened on its own has no group advantage; the trainer's view below picks ±1)" : " (supposed, not its group's; the trainer's view below picks it)";
      return [
        ...part,
        `per-token loss −min(r·A, clip(r)·A), A = ${A !== null && A > 0 ? "+" : ""}${num(A, 3)}${supposed}: `,
        key("ls-u2", "raised (loss < 0)"),
        " ",
        key("ls-d2", "lowered (loss > 0)"),
        " ",
        key("ls-clip", `clipped by TRL, no gradient (band ${band})`),
        " ",
        key("tr-off", "not in the loss"),
        " ",
        miss(),
        el("br"),
        el("span", { class: "tv-dim", text: "paler / stronger shade: |loss| below / above |A|" }),
        ...wait,
        ...hypothetical(f)
      ];
    }
    function info(pos) {
      const d = data(st.turn);
      if (!d || refused(d)) return "";
      const k = pos - d.start;
      if (k < 0 || k >= d.entropy.length) return "";
      const lr = d.log_ratio[k], [lo, hi] = eps();
      const ratio = lr === null ? "ratio n/a (no engine logprob)" : `ratio ${Math.exp(lr).toFixed(5)} (log ratio ${num(lr, 5)}) · ${d.outside[k] === "1" ? "OUTSIDE" : "inside"} the clip band [${1 - lo}, ${1 + hi}]`;
      const kl = d.kl_k3[k] === null ? "n/a" : d.kl_k3[k] === 0 ? "< 1e-8" : num(d.kl_k3[k], 6);
      const loss = d.trained[k] !== "1" ? "not in TRL's loss" : d.loss[k] === null ? "loss n/a" : `loss ${num(d.loss[k], 5)} (A = ${advantage()})${d.clipped[k] === "l" ? " · clipped low" : d.clipped[k] === "h" ? " · clipped high" : ""}`;
      const alts = d.topk_text[k].map((t, j) => `${JSON.stringify(t)} ${d.topk_probs[k][j].toFixed(3)}`).join(" · ");
      return `
trainer logprob ${num(d.trainer_lp[k])} · engine logprob ${num(d.engine_lp[k])}
${ratio}
k3 KL ${kl} · entropy ${num(d.entropy[k], 3)} · top-1: ${d.top1[k] === "1" ? "yes" : "no"}
${loss}
top-${d.topk_text[k].length}: ${alts}`;
    }
    function histogram(counts, S) {
      const edges = S.histogram_edges && S.histogram_edges.length ? S.histogram_edges : T.histogram_edges;
      const isBand = (e) => S.band && (Math.abs(e - S.band[0]) < 1e-9 || Math.abs(e - S.band[1]) < 1e-9);
      const n = counts.length, bw = 22, h = 70, left = 30, top = 14, max = Math.max(1, ...counts);
      const x = (i) => left + i * bw;
      const lab = { "-1": "-1", "-0.1": "-0.1", "-0.01": "-0.01", "0.01": "0.01", "0.1": "0.1", "1": "1" };
      const label = (tx, ty, anchor, words) => svg("text", { class: "ax", x: tx, y: ty, "text-anchor": anchor, text: words });
      const s = svg(
        "svg",
        { role: "img", "aria-label": "histogram of log ratios", width: x(n) + 12, height: top + h + 30, "data-testid": "trainer-histogram" },
        svg("line", { class: "axl", x1: left, y1: top + h, x2: x(n), y2: top + h }),
        svg("line", { class: "axl", x1: left, y1: top, x2: left, y2: top + h }),
        label(left - 4, top + 8, "end", max),
        label(left - 4, top + h, "end", 0)
      );
      counts.forEach((c, i) => {
        const bh = c ? Math.max(1.5, h * c / max) : 0, mid = i === Math.floor(n / 2);
        const lo = i === 0 ? "−∞" : num(edges[i - 1], 3), hi = i === n - 1 ? "∞" : num(edges[i], 3);
        const outside = i > 0 && edges[i - 1] >= S.band[1] - 1e-12 || i < n - 1 && edges[i] <= S.band[0] + 1e-12;
        s.append(svg(
          "rect",
          { class: `${outside ? "b-out " : ""}${mid ? "b-0" : i < n / 2 ? "b-n" : "b-p"}`, x: x(i) + 2, y: top + h - bh, width: bw - 4, height: bh, "data-count": c },
          svg("title", { text: `${c} tokens with log ratio in [${lo}, ${hi})${outside ? ": outside the clip band" : ""}` })
        ));
      });
      edges.forEach((e, j) => {
        const name = lab[String(e)];
        if (name) s.append(label(x(j + 1), top + h + 11, "middle", name));
        if (isBand(e)) s.append(
          svg("line", { class: "band", "data-testid": "band-line", "data-edge": e, x1: x(j + 1), y1: top - 4, x2: x(j + 1), y2: top + h }),
          label(x(j + 1), top - 5, "middle", num(Math.exp(e), 2))
        );
      });
      s.append(
        label(x(Math.floor(n / 2)) + bw / 2, top + h + 11, "middle", 0),
        label((left + x(n)) / 2, top + h + 25, "middle", "log ratio (trainer − engine), tokens per bin")
      );
      const [blo, bhi] = S.band;
      return el("figure", { class: "tv-hist" }, s, el("figcaption", { text: `log-spaced bins; dashed: the clip band, ratio [${num(Math.exp(blo), 2)}, ${num(Math.exp(bhi), 2)}] = log ratio [${num(blo, 3)}, ${num(bhi, 3)}]; the bars beyond the lines are the tokens outside it` }));
    }
    function showSummary(S) {
      const out = box.querySelector(".tv-trainer-out");
      if (!out) return;
      if (refused(S)) {
        out.replaceChildren(el("span", { class: "tv-err", text: S.error }));
        return;
      }
      const R = S.rollout, [lo, hi] = S.eps;
      out.replaceChildren(
        el(
          "div",
          { class: "tv-trainer-stats", "data-testid": "trainer-stats" },
          `rollout, ${fmt(R.tokens)} generated tokens: max |log ratio| `,
          el("b", { text: num(R.max_abs_log_ratio) }),
          " · mean k3 KL ",
          el("b", { text: num(R.mean_kl_k3, 5) }),
          " · mean entropy ",
          el("b", { text: num(R.mean_entropy, 3) }),
          ` · outside clip [${1 - lo}, ${1 + hi}] `,
          el("b", { text: fmt(R.outside_clip) }),
          ` · trainer's top-1 ${fmt(R.top1)} · clipped (A = ${S.advantage}) ${fmt(R.clipped_low + R.clipped_high)}`,
          ...R.with_engine < R.tokens ? [" · ", el("span", { class: "tv-err", text: `${fmt(R.tokens - R.with_engine)} without an engine logprob` })] : []
        ),
        histogram(R.histogram, S)
      );
      all(nav, ".tv-navitem").forEach((item) => {
        const t = S.turns[Number(item.dataset.turn)];
        let span = (
          /** @type {HTMLElement | null} */
          item.querySelector(".tv-nav-tr")
        );
        if (!span) {
          span = el("span", { class: "tv-nav-tr", "data-testid": "nav-trainer" });
          item.appendChild(span);
        }
        if (!t) {
          span.textContent = "";
          return;
        }
        span.title = `the trainer's view of this turn (part ${partLabel()}): the largest |log ratio| (log trainer p − log engine p) over its generated tokens, and how many of them fall outside TRL's clip band [${1 - lo}, ${1 + hi}]`;
        span.replaceChildren(`trainer: max |log r| ${num(t.max_abs_log_ratio, 3)} · `, el("span", { class: t.outside_clip ? "hot" : "", text: `${fmt(t.outside_clip)} outside the band` }));
      });
    }
    function summary() {
      const k = keyOf();
      const cached = sumCache.get(k);
      if (cached) {
        showSummary(cached);
        return;
      }
      ask({ ...query(), summary: true }).then((S) => {
        sumCache.set(k, S);
        if (k === keyOf()) showSummary(S);
      }).catch((e) => showSummary({ error: errorText(e) }));
    }
    function controls() {
      const btn = (attr, v, label, on, title = "") => el("button", { [`data-${attr}`]: v, class: on ? "on" : "", "aria-pressed": String(on), title, text: label });
      const group2 = (name, buttons) => el("span", { class: "tv-group", role: "group", "aria-label": name }, ...buttons);
      const lab = (words) => el("span", { class: "tv-lab", text: words });
      box.replaceChildren(el(
        "div",
        { class: "tv-trainer", "data-testid": "trainer-panel" },
        el(
          "div",
          { class: "tv-trainer-ctl" },
          el("b", { text: "Trainer's view" }),
          parts.length > 1 ? lab("part") : null,
          group2("rescore part", parts.map((p) => btn("tpart", p.name, p.label, p.name === ts.part, `${p.model}, ${p.dtype} on ${p.device}, temperature ${p.temperature}, top-${p.top_k}`))),
          lab("clip ε"),
          group2("clip band", T.eps_choices.map((e, i) => btn("teps", i, `${e[0]} / ${e[1]}`, i === ts.eps, i ? "DAPO's clip-higher" : "TRL's default"))),
          lab("advantage"),
          group2("advantage", advChoices.map(([v, l, t]) => btn("tadv", v, l, v === ts.adv, t)))
        ),
        el("div", { class: "tv-trainer-out" })
      ));
      summary();
    }
    box.addEventListener("click", (ev) => {
      const b = target(ev).closest("button");
      if (!b || !box.contains(b)) return;
      if (b.dataset.tpart !== void 0) {
        ts.part = b.dataset.tpart;
        onPart();
      } else if (b.dataset.teps !== void 0) ts.eps = Number(b.dataset.teps);
      else if (b.dataset.tadv !== void 0) ts.adv = b.dataset.tadv;
      else return;
      controls();
      onData();
    });
    let built = false;
    function show() {
      if (!built) {
        built = true;
        controls();
      }
    }
    function focus(turn) {
      const d = data(turn);
      if (!d || refused(d) || st.mode !== "mismatch" && st.mode !== "loss") return null;
      const k = st.mode === "loss" ? [...d.clipped].findIndex((c) => c !== "0") : d.outside.indexOf("1");
      return k < 0 ? null : d.start + k;
    }
    return { need, show, ready: (turn) => !!data(turn), tokenClass, legend, info, focus, state: () => ({ ...ts }) };
  }

  // src/trace_view/place.js
  function outlineFor(outline, hasTrainer) {
    return hasTrainer ? outline : { ...outline, modes: outline.modes.filter((m) => !m.trainer) };
  }
  function startPlace(initial, O) {
    const st = { turn: 0, mode: "mask", scope: "new", row: 0, follow: false, ...initial || {} };
    if (!O.modes.some((m) => m.id === st.mode)) st.mode = "mask";
    if (!O.scopes.some((s) => s.id === st.scope)) st.scope = "new";
    return st;
  }
  function scopeRange(O, st, training) {
    const t = O.turns[st.turn];
    if (st.scope === "row") {
      const r = training && training.rows[st.row];
      return { start: 0, size: r ? r.tokens : 0, waiting: !training };
    }
    const start = st.scope === "new" ? t.shared : 0;
    return { start, size: t.prompt_tokens + t.output_tokens - start, waiting: false };
  }
  function firstChunkOf(chunk, O, st) {
    return chunk ? { turn: st.turn, scope: st.scope, index: Math.floor((chunk.start - scopeRange(O, st, null).start) / O.chunk_size), chunk } : null;
  }
  function storyOf(O, st, trainer) {
    if (st.scope === "row") return null;
    const t = O.turns[st.turn];
    const found = st.found && st.turn === st.foundTurn ? st.found : null;
    const hit = found ? found[0] : null;
    const drift = t.drift_at !== null && st.mode === "drift" && hit === null;
    return {
      at: hit !== null ? hit : t.drift_at !== null ? t.drift_at : t.prompt_tokens,
      gen: drift ? void 0 : t.prompt_tokens,
      end: found ? Math.min(found[1], t.prompt_tokens + t.output_tokens) - 1 : t.prompt_tokens + t.output_tokens - 1,
      focus: trainer && isTrainerMode(O, st.mode) ? trainer.focus(st.turn) : null
    };
  }

  // src/trace_view/markup.js
  var helpRow = (keys, what, after = "") => el(
    "tr",
    null,
    el("td", null, ...keys.flatMap((k, i) => [i ? " " : null, el("kbd", { text: k })]), after),
    el("td", { text: what })
  );
  function viewNodes(O, canExport) {
    const modes = O.modes.map((m) => m.id);
    return el(
      "div",
      { class: "tv", "data-testid": "trace-view" },
      el("div", { class: "tv-live-box", hidden: true }),
      el("div", { class: "tv-note-box", role: "note", "data-testid": "export-note", hidden: true }),
      el(
        "div",
        { class: "tv-top" },
        el("div", { class: "tv-summary-box" }),
        el(
          "span",
          { class: "tv-actions" },
          canExport ? el("button", {
            class: "tv-export-btn",
            title: "download one HTML file that opens offline on what is on screen",
            "aria-haspopup": "dialog",
            "aria-expanded": "false",
            "data-testid": "export",
            text: "export"
          }) : null,
          el("button", { class: "tv-present-btn", title: "presentation mode (p)", "aria-pressed": "false" }, ...presentLabel()),
          el("button", { class: "tv-help-btn", title: "keyboard shortcuts (?)", "aria-label": "keyboard shortcuts", "aria-expanded": "false", text: "?" })
        ),
        el(
          "div",
          { class: "tv-export-menu", hidden: true, role: "dialog", "aria-label": "export", "data-testid": "export-menu" },
          el("b", { text: "Export one HTML file" }),
          " ",
          el("span", { class: "tv-dim", text: "that opens offline, with no request, on the turn, mode, scope and trainer part on screen" }),
          el(
            "div",
            { class: "tv-export-choices" },
            el("button", { "data-export": "rollout", "data-testid": "export-rollout", text: "the whole rollout" }),
            el("button", { "data-export": "turn", "data-testid": "export-turn", text: "the turn on screen (with its full context)" })
          ),
          el("div", { class: "tv-export-status", role: "status" })
        )
      ),
      el("div", { class: "tv-headerbox" }),
      el(
        "div",
        { class: "tv-main" },
        el("nav", { class: "tv-nav", "aria-label": "turns" }),
        el(
          "section",
          { class: "tv-turn" },
          el("div", { class: "tv-toolbar" }),
          el("div", { class: "tv-legend" }),
          el("div", { class: "tv-boundary-box" }),
          el("div", { class: "tv-rowbar", hidden: true }),
          el("div", { class: "tv-tokens", tabindex: "0", role: "group", "aria-label": "tokens: arrow keys move a cursor", "data-testid": "tokens" }),
          el("div", { class: "tv-trainer-box", hidden: true }),
          el("div", { class: "tv-tools-part" }, el("h4", { class: "tv-sub", text: "Tool calls" }), el("div", { class: "tv-tools-box" }))
        )
      ),
      el(
        "div",
        { class: "tv-lower" },
        el("section", null, el("h3", { text: "Tests" }), el("div", { class: "tv-tests-box" })),
        el("section", null, el("h3", { text: "Reward" }), el("div", { class: "tv-reward-box" }))
      ),
      el("div", { class: "tv-tip", hidden: true, role: "status" }),
      el(
        "div",
        { class: "tv-help", hidden: true, role: "dialog", "aria-label": "keyboard shortcuts" },
        el("b", { text: "Keyboard" }),
        " ",
        el("table", null, el(
          "tbody",
          null,
          helpRow(["j", "→"], "next turn"),
          helpRow(["k", "←"], "previous turn"),
          helpRow(["←", "→"], "move the token cursor (its details follow)", " in the tokens"),
          helpRow(["m"], `next mode (${modes.join(", ")})`),
          helpRow(["s"], `next scope (${O.scopes.map((s) => s.label).join(", ")})`),
          helpRow(["g"], "jump to the generated tokens"),
          helpRow(["p"], "presentation mode"),
          helpRow(["?"], "this help"),
          helpRow(["Esc"], "close help / leave presentation")
        ))
      )
    );
  }

  // src/values.js
  function signed(v, d = 3) {
    const a = Math.abs(v), exact = a.toFixed(100), cut = exact.slice(0, exact.indexOf(".") + 1 + d);
    const tie = exact[cut.length] === "5" && /^0*$/.test(exact.slice(cut.length + 1));
    const body = tie && Number(cut[cut.length - 1]) % 2 === 0 ? cut : a.toFixed(d);
    return (v < 0 || Object.is(v, -0) ? "-" : "+") + body;
  }
  var count = (v) => v === null || v === void 0 ? "-" : v.toLocaleString("en-US");
  var many = (n, what, whats = what + "s") => `${count(n)} ${n === 1 ? what : whats}`;
  var sign = (v) => v === null || v === void 0 ? "none" : v > 0 ? "pos" : v < 0 ? "neg" : "zero";
  var fateKind = (f) => f.trained ? "trained" : f.partly ? "partly" : "never";

  // src/trace_view/panels.js
  var reward = (v) => v === null ? "unscorable" : signed(v);
  function more(total, shown, what) {
    return total > shown ? el("div", { class: "tv-dim", text: `… and ${fmt(total - shown)} more ${what}, not shown here` }) : null;
  }
  function folded(F) {
    const head = el("pre", { class: "tv-pre", text: F.head });
    if (!F.rest && !F.unsent) return [head];
    return [head, el(
      "details",
      { class: "tv-fold" },
      el("summary", { text: `show all ${fmt(F.chars)} characters${F.label ? ` of ${F.label}` : ""}` }),
      el("pre", { class: "tv-pre", text: F.rest }),
      F.unsent ? el("div", { class: "tv-dim", text: `… ${fmt(F.unsent)} more characters are in the artifact, not shown here` }) : null
    )];
  }
  function markdown(nodes) {
    return nodes.map((n) => {
      if (n.tag === "text") return n.text;
      if (n.tag === "code") return el("code", { text: n.text });
      if (n.tag === "a") return el("a", { href: n.href, title: n.text || null, rel: "noopener noreferrer nofollow", target: "_blank" }, ...markdown(n.children));
      if (n.tag === "ol") return el("ol", { start: n.start }, ...markdown(n.children));
      return el(n.tag, null, ...markdown(n.children));
    });
  }
  var table = (cls, ...rows) => el("table", { class: cls }, el("tbody", null, ...rows));
  var fateBadge = (f) => el("span", {
    class: `tv-badge tv-fate ${fateKind(f)}`,
    "data-testid": "fate",
    title: f.why,
    text: f.label
  });
  function summaryLine(S, run) {
    const value = S.no_reward !== null ? el("span", { class: "tv-reward-value none", "data-testid": S.recorded ? "status" : null, text: S.no_reward }) : el("span", {
      class: `tv-reward-value ${sign(S.reward)}`,
      title: S.recorded ? "TRL's reward: the sum of its reward columns" : null,
      text: `reward ${reward(S.reward)}`
    });
    return el(
      "div",
      { class: "tv-summary", "data-testid": "summary" },
      el("span", { text: S.tests }),
      " · ",
      value,
      " · ",
      el("span", { title: S.recorded ? "what TRL's completion mask would train, were its rows in the loss" : null, text: S.trained }),
      ...S.recorded && run ? [" ", fateBadge(run.fate)] : []
    );
  }
  function runBadge(run) {
    const where = `run ${run.run} · version ${run.version} · group ${run.group_id} · rollout ${run.rollout} of ${run.k} · segment ${run.segment}`;
    const adv = run.advantage === null ? "TRL gave it no advantage" : `TRL's advantage ${signed(run.advantage)}`;
    return el("span", {
      class: "tv-badge",
      "data-testid": "run-context",
      title: where,
      text: `${run.crumbs.slice(1).join(" › ")} · ${run.status} · ${adv}`
    });
  }
  function headerBox(H, run) {
    const c = H.counts, other = c.calls - c.turns;
    const mask = c.recorded ? `${fmt(c.trained)} in ${c.trained_by}'s mask` : `${fmt(c.trained)} trained by ${c.trained_by}`;
    const counts = `${many(c.turns, "agent turn")} · ${mask} · ${many(c.calls, "model call")} recorded` + (other > 0 ? ` (${fmt(other)} by opencode itself, e.g. the session title)` : "");
    const size = `${fmt(H.tokens)} tokens · longest context ${fmt(H.longest)}`;
    const tokenizer = H.tokenizer !== null ? `tokenizer: ${H.tokenizer}` : el("details", { class: "tv-inline" }, el("summary", { text: "no tokenizer files: showing ids" }), H.no_tokenizer.join("; "));
    return el(
      "div",
      { class: "tv-header" },
      el(
        "div",
        { class: "tv-h-row" },
        el("span", { class: "tv-model", text: H.model }),
        ...H.recipe_differs ? [" ", el("span", { class: "tv-badge warn", title: "recomputed from the recipe", text: `recipe gives ${reward(H.recomputed)}` })] : [],
        el("span", {
          class: `tv-badge ${H.drift ? "warn" : "ok"}`,
          "data-testid": "continuity",
          title: "does each turn start with exactly the tokens of the turn before?",
          text: H.continuity
        }),
        // the short badges before the long counts: they share a line at 1024 px rather than take one each
        run ? runBadge(run) : null,
        H.timed_out ? el("span", { class: "tv-badge warn", text: "timed out" }) : null,
        el("span", { class: "tv-badge", "data-testid": "counts", title: c.tip, text: counts }),
        H.disagree !== null ? el("span", { class: "tv-badge warn", "data-testid": "trained-disagree", title: H.disagree_tip, text: H.disagree }) : null
      ),
      // Whole on the first screen up to three lines; a click shows the rest (CSS clamps the closed summary).
      H.produced_by ? el(
        "details",
        { class: "tv-produced" },
        el("summary", { title: "how this artifact was made (click for all of it)", text: H.produced_by })
      ) : null,
      el(
        "div",
        { class: "tv-h-row2" },
        el(
          "details",
          { class: "tv-task" },
          el("summary", { text: `task ${H.task}: instruction` }),
          el("div", { class: "tv-md" }, ...H.instruction_text ? folded(H.instruction_text) : markdown(H.instruction))
        ),
        el("div", { class: "tv-meta" }, ...typeof tokenizer === "string" ? [`${tokenizer} · ${size}`] : [tokenizer, ` · ${size}`])
      ),
      H.notices.length ? el("ul", { class: "tv-notices" }, ...H.notices.map((n) => el("li", { text: n }))) : null
    );
  }
  function verdict(t, none) {
    if (t.status === null) return [el("span", { class: "tv-dim", text: none })];
    return [
      el("span", { class: `tv-badge ${t.passed ? "ok" : "warn"}`, text: t.status }),
      ...t.detail ? [" ", el("span", { class: "tv-dim", text: t.detail })] : []
    ];
  }
  var heading = (title, aside) => el("h4", null, `${title} `, el("span", { class: "tv-dim", text: aside }));
  var absent = () => el("i", { text: "not in this artifact" });
  function testsBox(T) {
    if (T.verifier) return verifierBox(T.verifier);
    const count2 = `${T.held_out_count} held-out tests${T.passed !== null ? `, ${T.passed} passed` : ""}`;
    const held = T.held_out === null ? [absent()] : [
      el(
        "table",
        { class: "tv-table tv-heldout" },
        el("colgroup", null, el("col", { class: "n" }), el("col", { class: "io" }), el("col", { class: "io" }), el("col")),
        el(
          "tbody",
          null,
          el(
            "tr",
            null,
            el("th", { text: "#" }),
            el("th", { title: "what the program reads on stdin, line by line", text: "stdin" }),
            el("th", { text: "expected stdout" }),
            el("th", { text: "result" })
          ),
          ...T.held_out.map((t, i) => el(
            "tr",
            { "data-testid": "held-out-test" },
            el("td", { text: i }),
            el("td", null, ...folded(t.input)),
            el("td", null, ...folded(t.output)),
            el("td", null, ...verdict(t, T.no_result))
          ))
        )
      ),
      more(T.held_out_count, T.held_out.length, "held-out tests")
    ];
    return el(
      "div",
      { class: "tv-tests" },
      el("div", null, heading("Visible example tests", "what the agent could see and run"), ...T.visible ? folded(T.visible) : [absent()]),
      el("div", null, heading("Held-out tests", `${count2}; these produce the reward, the agent never sees them`), ...held)
    );
  }
  function verifierBox(V) {
    const row = (name, value, testid = null) => el("tr", { "data-testid": testid }, el("td", { text: name }), el("td", { class: "num", text: value }));
    return el(
      "div",
      { class: "tv-tests tv-verify", "data-testid": "verifier" },
      el(
        "div",
        null,
        heading("What the verifier reported", "OpenEnv's VerifyResult for this session, in place of a capture's held-out tests"),
        table(
          "tv-table",
          row("env reward", V.env_reward === null ? "none" : reward(V.env_reward)),
          V.done !== null ? row("done", V.done ? "yes" : "no") : null,
          ...V.metrics.map((m) => row(m.name, m.value, "verify-metric"))
        ),
        more(V.metric_count, V.metrics.length, "metrics"),
        V.none_why ? el("p", { class: "tv-dim", "data-testid": "verify-none", text: V.none_why }) : null
      ),
      el(
        "div",
        null,
        heading("What TRL made of it", "its reward functions' columns (they read the env reward) and their sum"),
        // A column TRL holds as NaN (its function returned None) is no verdict on the rollout: "none", not "unscorable"
        table(
          "tv-table",
          ...V.columns.map((c) => row(c.name, c.value === null ? "none" : reward(c.value))),
          el(
            "tr",
            null,
            el("td", null, el("b", { text: "TRL's reward" }), " (the sum of its columns)"),
            el("td", { class: "num", text: V.reward === null ? "none (unscorable)" : reward(V.reward) })
          ),
          el("tr", null, el("td", { text: "status" }), el("td", null, V.status, ...V.cause ? [" ", el("span", { class: "tv-dim", text: V.cause })] : []))
        )
      )
    );
  }
  function rewardBox(R) {
    if (R.waiting !== null) return el("div", { class: "tv-reward" }, el("p", { class: "tv-dim", text: R.waiting }));
    const scale = Math.max(1, ...R.steps.map((s) => s.value === null ? 0 : Math.abs(s.value)));
    const steps = R.steps.map((s) => el(
      "tr",
      { "data-testid": "reward-step" },
      el("td", { text: s.label }),
      el("td", { class: "num", text: s.delta === null ? "" : signed(s.delta) }),
      // no value: a step's is "none" (a reward function that returned None gives no verdict), the final one's unscorable
      el("td", { class: "num", text: s.value === null ? s.label === "final" ? "unscorable" : "none" : signed(s.value) }),
      el("td", null, el("div", {
        class: `tv-bar${(s.value || 0) < 0 ? " neg" : ""}`,
        style: `width:${(s.value === null ? 0 : Math.abs(s.value) / scale * 100).toFixed(1)}%`
      })),
      el("td", { class: "tv-dim", text: s.why })
    ));
    const check = R.matches ? `recorded reward matches ${R.by}` : el("b", { text: `recorded ${reward(R.recorded)} but ${R.by} give${R.by.endsWith("s") ? "" : "s"} ${reward(R.recomputed)}` });
    const tools = R.tools.map((t) => el("li", { text: `${t.name}: ${fmt(t.calls)}` }));
    return el(
      "div",
      { class: "tv-reward" },
      table("tv-table", el(
        "tr",
        null,
        el("th", { text: "step" }),
        el("th", { text: "change" }),
        el("th", { text: "reward" }),
        el("th", { title: "the reward after this step, as a bar (longest = the largest |reward|)", text: "size" }),
        el("th", { text: "why" })
      ), ...steps),
      typeof check === "string" ? el("p", { text: `${check} · timed out: ${R.timed_out ? "yes" : "no"}` }) : el("p", null, check, ` · timed out: ${R.timed_out ? "yes" : "no"}`),
      el("h4", { text: "Tool calls by name" }),
      el("ul", null, ...tools.length ? [...tools, more(R.tool_names, R.tools.length, "tool names")] : [el("li", { text: "none" })])
    );
  }
  function drawRollout($, O) {
    const run = O.run || null;
    $(".tv-summary-box").replaceChildren(summaryLine(O.summary, run));
    $(".tv-headerbox").replaceChildren(headerBox(O.header, run));
    $(".tv-tests-box").replaceChildren(testsBox(O.tests));
    $(".tv-reward-box").replaceChildren(rewardBox(O.reward));
  }
  function trainedNote(t) {
    const n = t.trained_note;
    if (!n) return null;
    if (n.missing) return el("div", {
      class: "tv-trainednote",
      "data-testid": "trained-note",
      text: `${n.trl}'s training trace holds no call that generated this turn's tokens: none of them is trained.`
    });
    const script = n.script_trained ? "marks this turn trained because it made a tool call" : "marks this turn untrained because it made no tool call";
    return el(
      "div",
      { class: "tv-trainednote", "data-testid": "trained-note" },
      `${n.trl} trains `,
      el("b", { text: `${fmt(t.trained_tokens)} of this turn's ${many(t.output_tokens, "generated token")}` }),
      `; the original capture script ${script}.`
    );
  }
  function boundary(b) {
    if (b === null) return el("div", { class: "tv-boundary", text: "first turn: everything in its prompt is new context" });
    if (b.continuous) return el("div", {
      class: "tv-boundary ok",
      text: `turn ${b.before} → ${b.after}: the prompt starts with all ${fmt(b.held)} tokens of turn ${b.before} (token-in = token-out)`
    });
    const where = `inside turn ${b.before}'s ${b.in_output ? "output" : "prompt"}`;
    return el(
      "div",
      { class: "tv-boundary drift" },
      el("b", { text: `turn ${b.before} → ${b.after}: drift at position ${fmt(b.at)}` }),
      ` (${where}; ${fmt(b.held - b.at)} of turn ${b.before}'s tokens are not carried over) `,
      el("span", { class: "tv-cause", text: `· likely cause: ${b.cause}` }),
      el(
        "div",
        { class: "tv-sides" },
        el("span", { class: "tv-side-h", text: `turn ${b.before} had` }),
        " ",
        el("code", { class: "tv-tok", title: `ids ${b.held_ids.join(" ")}`, text: b.held_text }),
        " ",
        el("span", { class: "tv-side-h", text: `turn ${b.after}'s prompt has` }),
        " ",
        el("code", { class: "tv-tok", title: `ids ${b.next_ids.join(" ")}`, text: b.next_text })
      )
    );
  }
  function engine(e) {
    if (e.status === "same") return el("div", {
      class: "tv-engine ok",
      text: `engine prompt ids and the re-tokenized prompt agree (${fmt(e.engine_len || 0)} tokens)`
    });
    if (e.status === "differ") {
      const side = (name, tokens) => el("div", null, el("div", { class: "tv-side-h", text: name }), el("code", { class: "tv-tok", text: tokens }));
      return el(
        "div",
        { class: "tv-engine drift" },
        el("b", { text: `engine ids and re-tokenized prompt differ at position ${fmt(e.diverge_at || 0)}` }),
        ` (engine ${fmt(e.engine_len || 0)} tokens, re-tokenized ${fmt(e.retok_len || 0)})`,
        el("div", { class: "tv-sides" }, side("engine", e.engine_text), side("re-tokenized", e.retok_text))
      );
    }
    const why = e.status === "no_engine_ids" ? "the artifact has no engine prompt ids" : "the artifact has no re-tokenized prompt";
    return el("div", { class: "tv-engine none", text: `engine ids not checked: ${why}` });
  }
  var turnNotes = (t) => [trainedNote(t), boundary(t.boundary), engine(t.engine)];
  function toolsBox(t) {
    if (!t.call_count) return el("div", { class: "tv-tools empty", text: "no tool call in this turn" });
    return el(
      "div",
      { class: "tv-tools" },
      ...t.calls.map((c) => el(
        "div",
        { class: `tv-call${c.failed ? " failed" : ""}` },
        el(
          "div",
          { class: "tv-call-h" },
          el("b", { text: c.name }),
          " ",
          el("span", { class: "tv-dim", text: c.call_id }),
          " ",
          c.failed ? el("span", { class: "tv-badge warn", text: "failed" }) : c.result === null ? el("span", { class: "tv-badge", text: "no result recorded" }) : null,
          c.arguments_ok ? null : el("span", { class: "tv-badge warn", text: "arguments are not valid JSON" })
        ),
        el("div", { class: "tv-side-h", text: "arguments" }),
        ...folded(c.arguments),
        ...c.result ? [el("div", { class: "tv-side-h", text: "result" }), ...folded(c.result)] : []
      )),
      more(t.call_count, t.calls.length, "tool calls")
    );
  }
  function otherCalls(T) {
    if (!T.other_call_count) return null;
    const items = T.other_calls.map((c) => `call ${c.call}: ${fmt(c.trained_tokens)} of ${many(c.output_tokens, "generated token")} trained`).join("; ");
    return el("p", {
      class: "tv-dim",
      "data-testid": "other-calls",
      text: `${T.trl}'s training trace also holds ${many(T.other_call_count, "call")} that the recipe does not count as agent turns (${items}).`
    });
  }
  var TERMS = [
    ["clean", "the next turn's prompt starts with exactly this turn's tokens: TRL appends it to the same row"],
    ["realigned", "a small drift inside the last answer: TRL overwrites it as context and stays in the row"],
    ["forked", "any other drift: TRL starts a new row (with fork threshold 0, as in loop-owning training, every drift forks)"]
  ];
  function rowFate(f) {
    if (!f) return el("td", { class: "tv-dim", title: "this row is not the one the run recorded at its place in the queue", text: "not known" });
    return el("td", null, el("span", { class: `tv-fate ${f.trained ? "trained" : "never"}`, "data-testid": "row-fate", title: f.why, text: f.label }));
  }
  function trainingBox(T) {
    if (T.unavailable !== null) return el("div", { class: "tv-error", text: T.unavailable });
    if (T.omitted !== null) return el("div", { class: "tv-training drift", "data-testid": "no-rows", text: T.omitted });
    const rule = el("p", { class: "tv-dim", "data-testid": "training-rule", text: T.rule });
    if (T.error) return el("div", { class: "tv-training drift" }, rule);
    if (T.rows_error !== null) return el("div", { class: "tv-training drift" }, T.rows_error, rule);
    if (!T.rows.length) return el(
      "div",
      { class: "tv-training drift", "data-testid": "no-rows" },
      el("b", { text: `${T.trl} drops this rollout` }),
      ": no token of any turn is trained, so it contributes no training row and no gradient.",
      rule,
      otherCalls(T)
    );
    const t = T.tally;
    return el(
      "div",
      { class: "tv-training" },
      el(
        "p",
        null,
        "TRL packs this rollout into ",
        el("b", { text: many(T.rows.length, "training row") }),
        // TRL's turns are every model call it chains (a title call too): the header counts the agent turns' boundaries
        `: ${t.clean} clean, ${t.realign} realigned, ${t.fork} forked of the ${many(t.transitions, "boundary", "boundaries")} between the ${t.transitions + 1} model calls it chains` + // said, so its count is not read against the header's boundaries of the agent turns alone
        (T.other_call_count ? ` (${many(t.transitions + 1 - T.other_call_count, "agent turn")} and ${many(T.other_call_count, "call")} the recipe does not count as one)` : "") + `; drift ${t.drift_tokens} tokens in total, at most ${t.drift_max}. Only the tokens of TRL's completion mask get a loss.`
      ),
      rule,
      otherCalls(T),
      el("dl", { class: "tv-terms" }, ...TERMS.flatMap(([term, means]) => [el("dt", { text: term }), el("dd", { text: means })])),
      table(
        "tv-table",
        el(
          "tr",
          null,
          el("th", { text: "row" }),
          el("th", { text: "tokens" }),
          el("th", { title: "tokens in TRL's completion mask", text: T.trainer ? "in mask" : "trained" }),
          el("th", { text: "turns" }),
          T.trainer ? el("th", { title: "whether the trainer trained the row: the global step, or why never (the run's consumption log)", text: "trainer" }) : null
        ),
        ...T.rows.slice(0, T.listed).map((r, k) => el(
          "tr",
          null,
          el("td", { text: k }),
          el("td", { class: "num", text: fmt(r.tokens) }),
          el("td", { class: "num", text: fmt(r.trained) }),
          el("td", { text: r.turns.join(", ") }),
          T.trainer ? rowFate(r.fate) : null
        ))
      ),
      more(T.rows.length, T.listed, "rows")
    );
  }
  function rowButtons(T, on) {
    return el("div", { class: "tv-group", role: "group", "aria-label": "training row" }, ...T.rows.map((r, k) => el("button", {
      "data-row": k,
      class: k === on ? "on" : "",
      "aria-pressed": String(k === on),
      text: `row ${k}: turns ${r.turns.join(", ")}${r.fate ? ` · ${r.fate.trained ? `step ${r.fate.steps.join(", ")}` : `never (${r.fate.cause})`}` : ""}`
    })));
  }

  // src/trace_view/turn.js
  function update(v) {
    sides(v);
    v.pane.paint(storyOf(v.O, v.st, v.trainer));
    tellState(v);
  }
  async function fetchTraining(v) {
    if (v.training) return;
    v.training = await v.api.training(v.O.run || null);
    if (v.rowFor !== null) {
      v.st.row = rowOf(v.training, v.rowFor);
      v.rowFor = null;
    }
    if (v.st.scope === "row") update(v);
  }
  var rowOf = (training, turn) => Math.max(0, training ? training.rows.findIndex((r) => r.turns.includes(turn)) : 0);
  function trainerNeed(v) {
    const { O, st, trainer, $ } = v;
    const on = !!trainer && isTrainerMode(O, st.mode);
    $(".tv-trainer-box").hidden = !on;
    $(".tv-nav").classList.toggle("tv-tr-on", on);
    if (on && trainer) trainer.show();
    if (on && trainer && st.scope !== "row") trainer.need(st.turn);
  }
  function trainerLanded(v) {
    const { O, st, pane, $ } = v;
    $(".tv-legend").replaceChildren(legendNodes(O, st, v.trainer, v.training));
    if (isTrainerMode(O, st.mode)) {
      trainerNeed(v);
      pane.recolour();
      pane.reland(storyOf(O, st, v.trainer));
    }
  }
  function sides(v) {
    const { O, st, training, $ } = v;
    const t = O.turns[st.turn], rowMode = st.scope === "row";
    const row = rowMode && training ? training.rows[st.row] : null;
    if (rowMode && notInRows(O, st.mode)) {
      v.outOfRows = st.mode;
      st.mode = "mask";
    }
    trainerNeed(v);
    v.bar.show(st, rowMode ? row && training ? `TRL training row ${st.row} (${training.rows.length} in all): turn${row.turns.length === 1 ? "" : "s"} ${row.turns.join(", ")}${row.fate ? ` · ${row.fate.label}` : ""}` : "TRL training rows" : `turn ${t.index}${turnFate(O, t, st.turn)}`);
    v.nav.show(st, rowMode ? row ? row.turns : [] : null);
    $(".tv-legend").replaceChildren(legendNodes(O, st, v.trainer, v.training));
    $(".tv-boundary-box").replaceChildren(...rowMode ? [] : turnNotes(t).filter((n) => n !== null));
    $(".tv-tools-part").hidden = rowMode;
    $(".tv-tools-box").replaceChildren(...rowMode ? [] : [toolsBox(t)]);
    const rb = $(".tv-rowbar");
    rb.hidden = !rowMode;
    if (rowMode) {
      if (!training) {
        rb.replaceChildren();
        fetchTraining(v);
      } else rb.replaceChildren(trainingBox(training), ...training.rows.length ? [rowButtons(training, st.row)] : []);
    }
  }
  function exportPlace(v) {
    const { O, st, trainer } = v;
    return {
      ...st,
      trainer: trainer ? trainer.state() : null,
      advantage: O.advantage === void 0 ? null : O.advantage,
      run: O.run || null
    };
  }
  function tellState(v) {
    const { st, trainer, api } = v;
    const found = st.found && st.turn === st.foundTurn ? `${st.found[0]}-${st.found[1]}` : "";
    if (v.mounted && api.onState) api.onState({ turn: st.turn, mode: st.mode, scope: st.scope, found, ...trainer ? { part: trainer.state().part } : {} });
  }
  function go(v, turn, auto = false) {
    const { O, st } = v;
    st.turn = Math.min(Math.max(0, turn), O.turns.length - 1);
    if (!auto && v.live) {
      st.follow = st.turn === O.turns.length - 1;
      v.liveBar.following(st.follow);
    }
    if (st.scope === "row") st.scope = "new";
    update(v);
  }
  function setMode(v, m) {
    const { O, st, pane, $ } = v;
    if (st.scope === "row" && notInRows(O, m)) return;
    st.mode = m;
    trainerNeed(v);
    v.bar.show(st, $(".tv-turn-title").textContent || "");
    $(".tv-legend").replaceChildren(legendNodes(O, st, v.trainer, v.training));
    pane.recolour();
    const presenting = v.view.classList.contains("present");
    if (presenting) pane.fit(true);
    if (presenting || m === "drift" && O.turns[st.turn].drift_at !== null) pane.goTo(storyOf(O, st, v.trainer) || 0);
    tellState(v);
  }
  function setScope(v, s) {
    const { st } = v;
    if (s === "row" && st.scope !== "row") {
      st.row = rowOf(v.training, st.turn);
      v.rowFor = v.training ? null : st.turn;
    }
    if (s !== "row" && st.scope === "row" && v.outOfRows !== null) {
      if (st.mode === "mask") st.mode = v.outOfRows;
      v.outOfRows = null;
    }
    st.scope = s;
    update(v);
  }
  function growView(v, next) {
    const { O, st, $ } = v;
    const N = next.outline;
    if (!!N.trainer !== v.hasTrainer) return false;
    Object.assign(O, outlineFor(N, v.hasTrainer));
    drawRollout($, O);
    v.nav = navPart($(".tv-nav"), O);
    v.training = null;
    if (st.follow && st.turn !== O.turns.length - 1) {
      go(v, O.turns.length - 1, true);
      return true;
    }
    sides(v);
    if (st.scope === "row") v.pane.paint(null);
    return true;
  }

  // src/trace_view/chrome.js
  function present(v, on) {
    const { view, pane, $ } = v;
    const shown = on === void 0 ? !view.classList.contains("present") : on;
    view.classList.toggle("present", shown);
    document.body.classList.toggle("tv-present", shown);
    $(".tv-present-btn").setAttribute("aria-pressed", String(shown));
    pane.fit(true);
    if (shown) {
      keyScrolled($(".tv-tokens"));
      pane.goTo(storyOf(v.O, v.st, v.trainer) || 0);
    }
  }
  function toggleHelp(v, on) {
    const help = v.$(".tv-help");
    help.hidden = on === void 0 ? !help.hidden : !on;
    v.$(".tv-help-btn").setAttribute("aria-expanded", String(!help.hidden));
  }
  function exportMenu(v) {
    const { $, api } = v;
    let exportUrl = "";
    function toggle(on) {
      const m = $(".tv-export-menu");
      m.hidden = on === void 0 ? !m.hidden : !on;
      $(".tv-export-btn").setAttribute("aria-expanded", String(!m.hidden));
    }
    async function save(what) {
      const ask = api.export;
      if (!ask) return;
      const out = $(".tv-export-status");
      out.textContent = "writing the file…";
      let got;
      try {
        got = await ask({ what, ...exportPlace(v) });
      } catch (e) {
        got = { error: errorText(e) };
      }
      if (!got || refused(got)) {
        out.replaceChildren(el("span", { class: "tv-err", text: refused(got) ? got.error : "no answer from the server" }));
        return;
      }
      if (exportUrl) URL.revokeObjectURL(exportUrl);
      exportUrl = URL.createObjectURL(new Blob([got.html], { type: "text/html" }));
      out.replaceChildren(
        el("a", { href: exportUrl, download: got.name, "data-testid": "export-link", text: got.name }),
        ` · ${got.size}`,
        ...got.note ? [el("div", { class: "tv-dim", text: got.note })] : []
      );
      const link = out.querySelector("a");
      if (link) link.click();
    }
    return { toggle, save };
  }
  function showTip(tip, span, text) {
    tip.textContent = text;
    tip.hidden = !text;
    const r = span.getBoundingClientRect();
    tip.style.left = Math.max(4, Math.min(r.left, window.innerWidth - tip.offsetWidth - 8)) + "px";
    tip.style.top = (r.bottom + tip.offsetHeight + 12 > window.innerHeight ? r.top - tip.offsetHeight - 6 : r.bottom + 6) + "px";
  }

  // src/trace_view/input.js
  function listenToButtons(v, menu) {
    const { view, st, pane } = v;
    view.addEventListener("click", (ev) => {
      const b = target(ev).closest("button");
      if (!b || !view.contains(b) || b.disabled) return;
      if (b.dataset.turn !== void 0) go(v, Number(b.dataset.turn));
      else if (b.dataset.mode) setMode(v, b.dataset.mode);
      else if (b.dataset.scope) setScope(v, b.dataset.scope);
      else if (b.dataset.row !== void 0) {
        st.row = Number(b.dataset.row);
        update(v);
      } else if (b.classList.contains("tv-collapsed")) setScope(v, "full");
      else if (b.classList.contains("tv-present-btn")) present(v);
      else if (b.classList.contains("tv-jump-btn")) pane.jump(storyOf(v.O, st, v.trainer) || 0);
      else if (b.classList.contains("tv-help-btn")) toggleHelp(v);
      else if (b.classList.contains("tv-export-btn")) menu.toggle();
      else if (b.dataset.export) menu.save(b.dataset.export);
    });
  }
  function listenToTokens(v) {
    const { box, pane } = v, tip = v.$(".tv-tip");
    const tell = (s) => showTip(tip, s, pane.info(Number(s.dataset.i)));
    box.addEventListener("mouseover", (ev) => {
      const s = (
        /** @type {HTMLElement | null} */
        target(ev).closest(".t")
      );
      if (s) tell(s);
    });
    box.addEventListener("mouseleave", () => {
      if (pane.cursorPos() === null) tip.hidden = true;
    });
    box.addEventListener("click", (ev) => {
      const s = (
        /** @type {HTMLElement | null} */
        target(ev).closest(".t")
      );
      if (!s) return;
      box.querySelectorAll(".t.pinned").forEach((x) => x.classList.remove("pinned"));
      s.classList.add("pinned");
      pane.setCursor(Number(s.dataset.i));
      tell(s);
    });
    box.addEventListener("keydown", (ev) => {
      if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
      ev.preventDefault();
      ev.stopPropagation();
      box.querySelectorAll(".t.pinned").forEach((x) => x.classList.remove("pinned"));
      const s = pane.moveCursor(ev.key === "ArrowRight" ? 1 : -1);
      if (s) tell(s);
    });
  }
  function listenToKeys(v, menu) {
    const { view, st, O, modes, scopes } = v;
    const onKey = (ev) => {
      if (!view.isConnected) {
        document.removeEventListener("keydown", onKey);
        return;
      }
      const on = (
        /** @type {HTMLElement | null} */
        ev.target
      );
      const tag = on && on.tagName || "";
      if (/INPUT|TEXTAREA|SELECT/.test(tag) || on && on.isContentEditable || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key;
      if (k === "j" || k === "ArrowRight") go(v, st.turn + 1);
      else if (k === "k" || k === "ArrowLeft") go(v, st.turn - 1);
      else if (k === "m") {
        const usable = modes.filter((m) => !(st.scope === "row" && notInRows(O, m)));
        setMode(v, usable[(usable.indexOf(st.mode) + 1) % usable.length]);
      } else if (k === "s") setScope(v, scopes[(scopes.indexOf(st.scope) + 1) % scopes.length]);
      else if (k === "p") present(v);
      else if (k === "g") v.pane.jump(storyOf(O, st, v.trainer) || 0);
      else if (k === "?") toggleHelp(v);
      else if (k === "Escape") {
        toggleHelp(v, false);
        if (v.api.export) menu.toggle(false);
        present(v, false);
      } else return;
      ev.preventDefault();
    };
    document.addEventListener("keydown", onKey);
  }

  // src/trace_view/settle.js
  function settleLayout(v) {
    const { view, box, pane, st } = v;
    let touched = false;
    for (const ev of ["pointerdown", "wheel", "keydown", "touchstart"]) view.addEventListener(ev, () => {
      touched = true;
    }, { once: true, passive: true });
    const showFound = () => {
      const t = st.found && st.turn === st.foundTurn && !touched ? box.querySelector(".t.tv-found") : null;
      if (t) t.scrollIntoView({ block: "nearest" });
    };
    const story = () => storyOf(v.O, st, v.trainer);
    for (const ms of [250, 800, 2e3]) setTimeout(() => {
      if (!touched && !view.classList.contains("present")) {
        pane.fit(true);
        pane.goTo(story() || 0).then(showFound);
      }
    }, ms);
    let resizing = 0;
    const onResize = () => {
      if (!view.isConnected) {
        window.removeEventListener("resize", onResize);
        return;
      }
      cancelAnimationFrame(resizing);
      resizing = requestAnimationFrame(() => {
        pane.fit(true);
        pane.reland(story()).then(showFound);
      });
    };
    window.addEventListener("resize", onResize);
  }

  // src/trace_view/mount.js
  function mount(root, opened, api, quiet = false) {
    const hasTrainer = !!(opened.outline.trainer && api.trainer);
    const O = outlineFor(opened.outline, hasTrainer);
    const st = startPlace(opened.initial, O);
    root.replaceChildren(viewNodes(O, !!api.export));
    const $ = (sel) => (
      /** @type {HTMLElement} */
      root.querySelector(sel)
    );
    drawRollout($, O);
    const view = $(".tv");
    const liveBar = followBar($(".tv-live-box"), {
      follow: () => {
        st.follow = true;
        liveBar.following(true);
        go(v, O.turns.length - 1, true);
      },
      sibling: (k) => api.sibling && api.sibling(k),
      cancel: api.cancelRun ? () => api.cancelRun && api.cancelRun() : null
    });
    st.follow = !!opened.live;
    const showLive = (L) => liveBar.show(L, st.follow);
    if (opened.live) showLive(opened.live);
    if (!O.turns.length) {
      $(".tv-main").replaceChildren(el("div", { class: opened.live ? "tv-dim" : "tv-error", role: "status", "data-testid": "no-turns", text: O.notice || "no agent turn" }));
      return { state: () => ({ ...st }), grow: (_next) => false, showLive };
    }
    st.turn = Math.min(Math.max(0, st.turn | 0), O.turns.length - 1);
    st.foundTurn = st.turn;
    const nav = navPart($(".tv-nav"), O), bar = toolbarPart($(".tv-toolbar"), O);
    if (opened.note) {
      $(".tv-note-box").textContent = opened.note;
      $(".tv-note-box").hidden = false;
    }
    const first = firstChunkOf(opened.first_chunk, O, st);
    const trainer = hasTrainer ? trainerPart($(".tv-trainer-box"), $(".tv-nav"), O, api, st, () => trainerLanded(v), () => tellState(v)) : null;
    const pane = tokenPane($(".tv-tokens"), O, api, st, () => scopeRange(O, st, v.training), first, trainer);
    const v = {
      O,
      st,
      api,
      live: !!opened.live,
      hasTrainer,
      modes: O.modes.map((m) => m.id),
      scopes: O.scopes.map((s) => s.id),
      $,
      view,
      box: $(".tv-tokens"),
      liveBar,
      nav,
      bar,
      trainer,
      pane,
      training: null,
      outOfRows: null,
      rowFor: null,
      // the mode the training rows set aside; the turn whose row they open on
      // The URL follows the reader, not the first paint: the app reads the page's own URL on load (a deep
      // link), which a rewrite at mount would replace before it is read.
      mounted: !quiet
    };
    const menu = exportMenu(v);
    listenToButtons(v, menu);
    listenToTokens(v);
    listenToKeys(v, menu);
    if (st.scope === "row") fetchTraining(v);
    update(v);
    v.mounted = true;
    settleLayout(v);
    if (document.body.classList.contains("tv-present")) present(v, true);
    return {
      go: (turn, auto = false) => go(v, turn, auto),
      setMode: (m) => setMode(v, m),
      setScope: (s) => setScope(v, s),
      present: (on) => present(v, on),
      grow: (next) => growView(v, next),
      showLive,
      state: () => exportPlace(v)
    };
  }

  // src/trace_view/live.js
  function followBar(bar, on) {
    let L = null;
    let timer;
    let started = 0, shownKey = "";
    let shownFollow = null;
    const clock = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
    const words = { running: "running", done: "captured", cancelled: "cancelled", failed: "failed" };
    function tick() {
      const t = bar.querySelector(".tv-live-clock");
      if (t && L) t.textContent = clock(L.state === "running" ? (Date.now() - started) / 1e3 : L.elapsed_s);
    }
    function show(next, isFollowing) {
      L = next;
      started = Date.now() - 1e3 * next.elapsed_s;
      const running = L.state === "running";
      const what = running ? `${L.stage} · ${fmt(L.calls)} turn${L.calls === 1 ? "" : "s"} so far` : L.state === "done" ? "the written artifact is on screen" : L.state === "cancelled" ? "what was seen before the capture stopped: nothing was written" : L.message || "the capture failed";
      const cancel = running && !!on.cancel;
      bar.hidden = false;
      const key2 = JSON.stringify([L.state, L.recorded_at, what, next.rollout, L.siblings, cancel]);
      if (key2 !== shownKey) {
        shownKey = key2;
        shownFollow = null;
        const sibs = L.siblings.length ? el("span", { class: "tv-group", role: "group", "aria-label": "rollout to follow" }, ...L.siblings.map((s) => el("button", {
          "data-live-rollout": s.rollout,
          "aria-pressed": String(s.rollout === next.rollout),
          class: s.rollout === next.rollout ? "on" : "",
          title: `follow rollout ${s.rollout} of the group (${s.stage})`,
          text: `rollout ${s.rollout}: ${s.turns} turn${s.turns === 1 ? "" : "s"}`
        }))) : null;
        bar.replaceChildren(el(
          "div",
          { class: `tv-live ${L.state}`, "data-testid": "live-badge", "data-state": L.state, "data-recorded-at": L.recorded_at || "", role: "status" },
          el("span", { class: "tv-live-dot", "aria-hidden": "true" }),
          el("b", { text: words[L.state] }),
          " · ",
          el("span", { class: "tv-live-clock" }),
          " · ",
          el("span", { text: what }),
          " ",
          L.state === "cancelled" || L.state === "failed" ? null : el("span", { class: "tv-live-follow" }),
          sibs,
          " ",
          cancel ? el("button", { class: "tv-live-cancel", "data-testid": "live-cancel", title: "stop the agent and the sandbox; what was seen stays, nothing is written", text: "cancel" }) : null
        ));
      }
      following(isFollowing);
      tick();
      clearInterval(timer);
      if (running) timer = setInterval(() => {
        if (!bar.isConnected) clearInterval(timer);
        else tick();
      }, 1e3);
    }
    function following(on2) {
      const f = bar.querySelector(".tv-live-follow");
      if (!f || !L || shownFollow === on2) return;
      shownFollow = on2;
      if (L.state !== "running") {
        f.replaceChildren();
        return;
      }
      f.replaceChildren(on2 ? el("span", { class: "tv-dim", "data-testid": "following", text: "following the newest turn" }) : el("button", { class: "tv-follow-btn", "data-testid": "follow", title: "go to the newest turn and stay on it as turns arrive", text: "follow ↓" }));
    }
    bar.addEventListener("click", (ev) => {
      const b = target(ev).closest("button");
      if (!b) return;
      ev.stopPropagation();
      if (b.classList.contains("tv-follow-btn")) on.follow();
      else if (b.classList.contains("tv-live-cancel") && on.cancel) {
        b.disabled = true;
        on.cancel();
      } else if (b.dataset.liveRollout !== void 0) on.sibling(Number(b.dataset.liveRollout));
    });
    return { show, following };
  }
  var LIVE_POLL_MS = 500;
  var isLive = (o) => !!o.live;
  function watchRun(app, element, opened, server, remount) {
    let L = opened.live, changed = L.changed, rollout = L.rollout, stopped = false;
    let timer;
    let view = remount(opened);
    const me = { run: L.run, apply, sibling, polls: 0 };
    function apply(next) {
      const nl = next.live;
      if (!nl) return false;
      if (nl.changed > changed || nl.rollout !== L.rollout) {
        changed = nl.changed;
        const other = nl.rollout !== L.rollout;
        app.key = next.key;
        app.src = next.src;
        if (other || !view.grow(next)) view = remount(next, other ? null : view.state());
      }
      L = nl;
      view.showLive(L);
      if (L.state !== "running") stop();
      return true;
    }
    function sibling(k) {
      rollout = k;
      changed = 0;
      clearTimeout(timer);
      poll();
    }
    function stop() {
      stopped = true;
      clearTimeout(timer);
    }
    async function poll() {
      if (stopped || app.live !== me || !element.isConnected) return;
      try {
        me.polls++;
        const r = await server.live({ run: L.run, rollout, version: changed });
        if (refused(r)) {
          view.showLive({ ...L, state: "failed", message: r.error });
          stop();
          return;
        }
        if (r.opened) apply(JSON.parse(r.opened));
        else if (r.live) {
          L = r.live;
          view.showLive(L);
          if (L.state !== "running") stop();
        }
      } catch (e) {
      }
      if (!stopped) timer = setTimeout(poll, LIVE_POLL_MS);
    }
    app.live = me;
    if (L.state === "running") timer = setTimeout(poll, LIVE_POLL_MS);
    else stop();
    return me;
  }

  // src/trace_view/adapters.js
  function mountInApp(element, props, server, watch) {
    const app = { key: null, src: null, live: null };
    function trainer(q2) {
      return server.trainer({ ...q2, key: app.key });
    }
    const api = {
      chunk: (q2) => server.chunk({ ...q2, key: app.key }),
      training: (run) => server.training({ key: app.key, run }),
      trainer,
      export: (q2) => server.export({ ...q2, key: app.key }),
      sibling: (k) => {
        if (app.live) app.live.sibling(k);
      },
      cancelRun: () => {
        if (app.live) server.live_cancel({ run: app.live.run });
      },
      linkPart: () => new URLSearchParams(window.location.search).get("part"),
      onState: (s) => {
        const u = new URL(window.location.href);
        if (app.src) u.searchParams.set("src", app.src);
        else u.searchParams.delete("src");
        if (!("part" in s)) u.searchParams.delete("part");
        for (const [k, v] of Object.entries(s)) if (v === "") u.searchParams.delete(k);
        else u.searchParams.set(k, String(v));
        window.history.replaceState(null, "", u.toString());
      }
    };
    const q = new URLSearchParams(window.location.search);
    const deepLink = (o) => ["src", ...Object.keys(o.initial)].some((k) => q.has(k));
    function start() {
      const box = element.querySelector(".tv-mount");
      if (!box || !props.value) return;
      const opened = sentValue(props);
      if ("problems" in opened) {
        app.live = null;
        box.replaceChildren(opened.problems ? problemsBox(opened.problems) : el("div", { class: "tv-cleared", hidden: true }));
        return;
      }
      if (opened.built && deepLink(opened)) {
        box.replaceChildren(el("div", { class: "tv-dim", style: "padding:12px", text: "opening the link…" }));
        return;
      }
      const watched = app.live;
      if (opened.live && watched && watched.run === opened.live.run) {
        watched.apply(opened);
        return;
      }
      const show = (o, keep) => {
        app.key = o.key;
        app.src = o.src;
        const v = mount(
          /** @type {HTMLElement} */
          box,
          keep ? { ...o, initial: { turn: keep.turn, mode: keep.mode, scope: keep.scope } } : o,
          api,
          !!o.built
        );
        window.__traceView = { ...v, state: () => ({ ...v.state(), key: app.key }), watching: () => app.live };
        return v;
      };
      if (isLive(opened)) watchRun(app, element, opened, server, show);
      else {
        app.live = null;
        show(opened);
      }
    }
    start();
    watch("value", start);
  }
  function mountExport(dataElement, root) {
    const D = JSON.parse(dataElement.textContent || "");
    const absent2 = "not included in this export: export this turn alone to get its full context";
    const folded2 = "not in this export (it holds a bounded number of tokens): open the rollout in the app to see these";
    const api = {
      chunk: async (q) => {
        const scope = (D.chunks[q.scope] || {})[q.scope === "row" ? String(q.row) : String(q.turn)];
        return scope && scope[String(q.index)] ? scope[String(q.index)] : { error: scope ? folded2 : absent2 };
      },
      training: async () => D.training
    };
    if (D.trainer) {
      const T = D.trainer;
      async function trainer(q) {
        return q.summary ? T.summary[q.part] : (T.turns[q.part] || {})[String(q.turn)] || { error: "this export has no trainer numbers for this turn" };
      }
      api.trainer = trainer;
    }
    if (window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches) document.body.classList.add("dark");
    return mount(root, { ...D.opened, note: D.note }, api);
  }
  return __toCommonJS(trace_view_exports);
})();
