// -- token pane: chunks as they scroll into view, colours by mode, a keyboard cursor --------------
import {el} from "../dom.js";
import {errorText, fmt, lpAlpha, refused} from "./format.js";
import {advantageClass} from "./advantage.js";
import {isTrainerMode} from "./toolbar.js";
/** @import {Trainer} from "./trainer.js" */
/** @import {FirstChunk, ScopeRange, Story} from "./place.js" */

const KEEP_CHUNKS = 12;  // chunks kept rendered: the rest are emptied, keeping their height

/** How a whitespace character shows inside a token: a mark in <i class="ws">; a newline also breaks the line. */
const WS = /** @type {Record<string, string>} */ ({" ": "·", "\t": "→", "\r": "␍", "\n": "↵"});
const HAS_WS = /[ \t\r\n]/;

/** The token pane of one mounted view. @typedef {ReturnType<typeof tokenPane>} TokenPane */

/** @param {HTMLElement} box @param {Outline} O @param {TraceApi} api @param {ViewPlace} st
 *  @param {() => ScopeRange} scopeRange @param {FirstChunk | null} firstChunk @param {Trainer | null} trainer */
export function tokenPane(box, O, api, st, scopeRange, firstChunk, trainer) {
  /** @type {Map<number, Chunk>} */
  let chunks = new Map();
  /** @type {Set<number>} */
  let rendered = new Set();
  /** @type {IntersectionObserver | null} */
  let observer = null;
  let epoch = 0;
  /** @type {number | null} */
  let cursor = null;
  let preloaded = firstChunk;
  let landings = 0;  // data-landed counts the paints and landings done (the browser tests wait on it, not on time)
  const landed = () => { box.dataset.landed = String(++landings); };
  // data-landing counts what is still under way: chunk requests in flight, landings not yet settled, and a
  // paint's chunks until the pane has seen which of them are in view. "0": the tokens on screen are all there.
  let landing = 0;
  /** @param {number} d */
  const underWay = (d) => { landing += d; box.dataset.landing = String(landing); };
  underWay(0);
  let unseen = false;  // the observer of the last paint has not yet said which chunks are in view

  /** @param {number} pos */
  function driftClass(pos) {
    const t = O.turns[st.turn];
    if (pos >= t.prompt_tokens) return "d-out";
    if (t.drift_at !== null && pos >= t.drift_at && pos < t.carried) return "d-rewritten";
    if (pos < t.shared) return "d-carried";
    return "d-new";
  }

  // A chunk holds thousands of tokens and a paint draws several chunks: its spans are clones of nodes made once.
  const tokenSpan = el("span"), wsMark = el("i", {class: "ws"}), lineBreak = el("br");
  /** A token's text into its span, each whitespace character shown by its mark. @param {HTMLElement} span @param {string} s */
  function fill(span, s) {
    if (!HAS_WS.test(s)) { span.textContent = s; return; }
    let from = 0;
    for (let i = 0; i < s.length; i++) {
      const w = WS[s[i]];
      if (w === undefined) continue;
      if (i > from) span.append(s.slice(from, i));
      const m = wsMark.cloneNode();
      m.textContent = w;
      span.append(m);
      if (s[i] === "\n") span.append(lineBreak.cloneNode());
      from = i + 1;
    }
    if (from < s.length) span.append(s.slice(from));
  }

  /** The chunk's token spans, coloured by the mode on screen. @param {Chunk} c @returns {DocumentFragment} */
  function spans(c) {
    const out = document.createDocumentFragment();
    for (let k = 0; k < c.ids.length; k++) {
      const pos = c.start + k, kind = c.kind[k], lp = c.logprob[k];
      let cls = "t k" + kind;
      /** @type {string | null} */
      let alpha = null;
      if (st.mode === "logprob") {
        if (lp === null) cls += " nolp"; else alpha = lpAlpha(lp);
      } else if (st.mode === "drift" && st.scope !== "row") cls += " " + driftClass(pos);
      else if (st.mode === "mask" && st.scope !== "row" && driftClass(pos) === "d-rewritten") cls += " dmark";  // the drift, without a mode change
      else if (trainer && isTrainerMode(O, st.mode) && st.scope !== "row") cls += trainer.tokenClass(pos);
      else if (st.mode === "advantage") { const a = advantageClass(O, O.turns[st.turn], c.mask[k], st.scope === "row"); cls += a.cls; alpha = a.alpha; }
      if (st.found && st.turn === st.foundTurn && pos >= st.found[0] && pos < st.found[1]) cls += " tv-found";
      const span = /** @type {HTMLElement} */ (tokenSpan.cloneNode());
      span.className = cls;
      span.setAttribute("data-mask", c.mask[k]);
      span.setAttribute("data-i", String(pos));
      if (alpha !== null) span.style.setProperty("--a", alpha);
      if (kind !== "2") fill(span, c.text[k]);
      out.append(span);
    }
    return out;
  }

  /** @param {number} center */
  function evictFarFrom(center) {
    const order = [...rendered].sort((a, b) => Math.abs(b - center) - Math.abs(a - center));
    while (rendered.size > KEEP_CHUNKS) {
      const c = order.shift();
      if (c === undefined) break;  // every chunk left is kept
      const div = /** @type {HTMLElement | null} */ (box.querySelector(`.tv-chunk[data-c="${c}"]`));
      if (div) { div.style.height = div.offsetHeight + "px"; div.replaceChildren(); }
      rendered.delete(c); chunks.delete(c);
    }
  }

  /** @param {HTMLElement} div @param {Chunk} c */
  function renderChunk(div, c) {
    div.replaceChildren(spans(c));
    div.style.minHeight = ""; div.style.height = "";
    rendered.add(Number(div.dataset.c));
    if (rendered.size > KEEP_CHUNKS) evictFarFrom(Number(div.dataset.c));
    if (cursor !== null) mark(cursor);
  }

  /** A chunk's line saying why its tokens are not there. @param {HTMLElement} div @param {string} why */
  const failed = (div, why) => div.replaceChildren(el("span", {class: "tv-err", text: why}));

  /** @param {HTMLElement} div */
  async function load(div) {
    const idx = Number(div.dataset.c), my = epoch;
    if (rendered.has(idx) || div.dataset.loading === "1") return;
    div.dataset.loading = "1";
    underWay(1);
    try {
      const c = chunks.get(idx) || await api.chunk({turn: st.turn, scope: st.scope, index: idx, row: st.row});
      if (my !== epoch) return;  // the view moved on while this chunk was on its way
      if (refused(c)) { failed(div, c.error); return; }
      chunks.set(idx, c);
      renderChunk(div, c);
    } catch (e) {
      if (my === epoch) failed(div, `could not load tokens: ${errorText(e)}`);
    } finally { div.dataset.loading = ""; underWay(-1); }
  }

  /** @param {Story | null} story */
  function paint(story) {  // all chunks as placeholders; load the story's chunk first and land on it (story: see goTo)
    epoch++;
    chunks = new Map(); rendered = new Set(); cursor = null;
    if (observer) observer.disconnect();
    if (unseen) { unseen = false; underWay(-1); }  // the last paint's observer will not report
    const {start, size, waiting} = scopeRange();
    const t = O.turns[st.turn];
    const n = Math.ceil(size / O.chunk_size);
    const parts = document.createDocumentFragment();
    if (st.scope === "new" && t.shared > 0) {
      parts.append(el("button", {class: "tv-collapsed", "data-testid": "collapsed-prefix",
        text: `▸ ${fmt(t.shared)} tokens shared with turn ${O.turns[st.turn - 1] ? O.turns[st.turn - 1].index : t.index - 1}: show the full context`}));
    }
    if (waiting) parts.append(el("div", {class: "tv-dim", text: "asking TRL how it packs this rollout…"}));
    for (let c = 0; c < n; c++) {
      const est = Math.max(1.6, Math.min(O.chunk_size, size - c * O.chunk_size) / 14) * 1.6;  // about 14 tokens a line
      parts.append(el("div", {class: "tv-chunk", "data-c": c, style: `min-height:${est.toFixed(1)}em`}));
    }
    if (!n && !waiting) parts.append(el("div", {class: "tv-dim", text: "no tokens in this scope"}));
    box.replaceChildren(parts);
    box.classList.toggle("untrained", !t.trained && st.scope !== "row");
    box.dataset.paint = st.mode;
    if (preloaded && preloaded.turn === st.turn && preloaded.scope === st.scope) {
      chunks.set(preloaded.index, preloaded.chunk);
      const div = box.querySelector(`.tv-chunk[data-c="${preloaded.index}"]`);
      if (div) renderChunk(/** @type {HTMLElement} */ (div), preloaded.chunk);
    }
    preloaded = null;  // only the first paint has it
    const seen = new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting) load(/** @type {HTMLElement} */ (e.target));
      if (unseen && observer === seen) { unseen = false; underWay(-1); }  // its first report names every chunk
    }, {root: box, rootMargin: "600px 0px"});
    observer = seen;
    if (n) { unseen = true; underWay(1); }
    box.querySelectorAll(".tv-chunk").forEach((div) => seen.observe(div));
    box.scrollTop = 0;  // after every change to the pane: this layout serves the fit and the landing too
    fit(true);
    if (story && story.at >= start) goTo(story);
    else {
      const first = box.querySelector(".tv-chunk");
      if (first) load(/** @type {HTMLElement} */ (first)).then(landed); else landed();
    }
  }

  // A reader who scrolls wins: a landing still settling (its chunk on the way) gives up.
  let moved = false;
  for (const ev of ["wheel", "pointerdown", "touchstart"]) box.addEventListener(ev, () => { moved = true; }, {passive: true});

  // Land on a turn's story once its chunk is painted: `at` (the drift, else the first generated token) a few
  // lines below the top; when the story up to `end` (the turn's last token) fits in the pane, all of it on
  // screen; when it does not but the generated tokens (`gen` to `end`) do, those, ending on the last line;
  // and a `focus` (the first token outside the clip band) is kept on screen. Lines are snapped to the pane's
  // line grid, so no line is cut at the edges.
  /** @param {Story | number} to */
  function goTo(to) {
    const story = typeof to === "number" ? {at: to} : to;
    moved = false;
    const {start} = scopeRange();
    const idx = Math.floor(Math.max(0, story.at - start) / O.chunk_size);
    const div = box.querySelector(`.tv-chunk[data-c="${idx}"]`);
    if (!div) { landed(); return Promise.resolve(); }
    const settle = () => {
      const tok = box.querySelector(`.t[data-i="${story.at}"]`);
      if (!tok || moved) return;
      const cs = getComputedStyle(box), lh = parseFloat(cs.lineHeight) || tok.getBoundingClientRect().height;
      const padTop = parseFloat(cs.paddingTop) || 0, room = box.clientHeight - padTop - (parseFloat(cs.paddingBottom) || 0);
      /** @param {number | null | undefined} i */
      const at = (i) => i !== null && i !== undefined ? box.querySelector(`.t[data-i="${i}"]`) : null;
      /** @param {Element} t */
      const top = (t) => t.getBoundingClientRect().top - (lh - t.getBoundingClientRect().height) / 2;  // its line's top
      /** @param {Element} a @param {Element} b */
      const lines = (a, b) => Math.round((top(b) - top(a)) / lh) + 1;  // lines from a's line to b's, both counted
      const fits = Math.floor(room / lh + 0.01);
      /** @param {Element} t @param {number} line */
      const put = (t, line) => { box.scrollTop += top(t) - box.getBoundingClientRect().top - box.clientTop - padTop - line * lh; };
      const last = at(story.end), gen = at(story.gen), focus = at(story.focus);
      let line = Math.floor(Math.min(fits / 3, 6));  // the story's line, counted from the top
      if (last && lines(tok, last) <= fits) line = Math.min(line, fits - lines(tok, last));
      else if (last && gen && lines(gen, last) <= fits) { put(last, fits - 1); return; }
      if (focus && lines(tok, focus) > fits - line) { put(focus, Math.max(0, fits - 1 - Math.floor(fits / 4))); return; }
      put(tok, Math.max(0, line));
    };
    underWay(1);  // until its last settling pass
    return new Promise((done) => whenLaidOut(() => {  // resolved once the story is on screen
      box.scrollTop += div.getBoundingClientRect().top - box.getBoundingClientRect().top;
      load(/** @type {HTMLElement} */ (div)).then(() => { settle(); done(undefined); setTimeout(() => { settle(); landed(); underWay(-1); }, 200); });
    }));
  }

  /** @param {() => void} fn */
  function whenLaidOut(fn) {  // the app may mount the view before it has a size: scroll once it has one
    if (box.isConnected && box.clientHeight > 0) { fn(); return; }
    const ro = new ResizeObserver(() => {
      if (box.isConnected && box.clientHeight > 0) { ro.disconnect(); fn(); }
    });
    ro.observe(box);
  }

  function recolour() {  // same tokens, new colours: re-render from the cached chunks
    box.dataset.paint = st.mode;
    for (const idx of rendered) {
      const div = box.querySelector(`.tv-chunk[data-c="${idx}"]`), c = chunks.get(idx);
      if (div && c) div.replaceChildren(spans(c));
    }
    if (cursor !== null) mark(cursor);
  }

  /** @param {number} pos */
  function info(pos) {
    const idx = Math.floor((pos - scopeRange().start) / O.chunk_size), c = chunks.get(idx);
    if (!c) return "";
    const k = pos - c.start, lp = c.logprob[k];
    const lpText = lp === null ? "no logprob" : `logprob ${lp.toFixed(4)} (p = ${Math.exp(lp).toFixed(3)})`;
    const text = c.kind[k] === "2" ? "(joined with the token before)" : JSON.stringify(c.text[k]);
    const extra = trainer && isTrainerMode(O, st.mode) && st.scope !== "row" ? trainer.info(pos) : "";
    return `position ${fmt(pos)} · id ${c.ids[k]} · mask ${c.mask[k]} · ${lpText}\n${text}${extra}`;
  }

  /** @param {number} pos */
  function mark(pos) {
    box.querySelectorAll(".t.cursor").forEach((x) => x.classList.remove("cursor"));
    const s = /** @type {HTMLElement | null} */ (box.querySelector(`.t[data-i="${pos}"]`));
    if (s) s.classList.add("cursor");
    return s;
  }

  /** @param {number} pos */
  function setCursor(pos) { cursor = pos; return mark(pos); }  // a click puts the cursor there: arrows go on from it

  /** @param {number} delta */
  function moveCursor(delta) {  // arrow keys inside the pane: the cursor walks tokens, loading chunks as needed
    const {start, size} = scopeRange();
    if (!size) return null;
    cursor = cursor === null ? Math.max(start, Math.min(start + size - 1, (O.turns[st.turn] || {}).prompt_tokens || start))
                             : Math.max(start, Math.min(start + size - 1, cursor + delta));
    const s = mark(cursor);
    if (s) { s.scrollIntoView({block: "nearest"}); return s; }
    goTo(cursor);
    return null;
  }

  /** @param {boolean} on */
  function fit(on) {  // end the pane at the window's bottom edge, so its story is on the first screen
    if (!on) { box.style.maxHeight = ""; box.style.height = ""; return; }
    whenLaidOut(() => {  // set in place: clearing first would shrink the pane and lose its scroll position
      const room = window.innerHeight - box.getBoundingClientRect().top - 12;
      if (box.closest(".present")) {  // presentation: the rest of the window, in whole lines
        const cs = getComputedStyle(box), lh = parseFloat(cs.lineHeight) || 38;
        const chrome = box.offsetHeight - box.clientHeight + (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.paddingBottom) || 0);
        const lines = Math.max(4, Math.floor((Math.max(room, 0.4 * window.innerHeight) - chrome) / lh));
        box.style.maxHeight = ""; box.style.height = lines * lh + chrome + "px";
      } else {
        box.style.height = "";
        // with the page scrolled the pane keeps its size (a turn change must not move what the reader sees); a pane
        // of five lines or more ends at the window's edge (a taller header, e.g. wrapped badges, must not push its
        // story off), in whole lines: a landing snapped to the top line then cuts none at the bottom either
        const cs = getComputedStyle(box), lh = parseFloat(cs.lineHeight) || 22;
        const chrome = box.offsetHeight - box.clientHeight + (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.paddingBottom) || 0);
        const whole = (/** @type {number} */ px) => Math.floor((px - chrome) / lh) * lh + chrome;
        if (window.scrollY === 0) box.style.maxHeight = room >= 120 ? whole(Math.min(room, 0.7 * window.innerHeight)) + "px" : "";
      }
    });
  }

  // A jump the reader asked for (g, the "↓ generated" button): the story landed in the pane, and the pane brought
  // into the window when it is not all in it (a long header leaves it below the fold of a short screen; the pane
  // is at most 70% of the window's height, so it fits)
  /** @param {Story | number} to */
  function jump(to) {
    return goTo(to).then(() => {
      const r = box.getBoundingClientRect();
      if (r.top >= 0 && r.bottom <= window.innerHeight) return;
      window.scrollBy(0, r.top < 0 ? r.top - 8 : Math.min(r.bottom - window.innerHeight + 8, r.top - 8));
    });
  }

  // A landing whose data came late (the trainer's numbers): land again unless the reader has moved since.
  /** @param {Story | null} story */
  const reland = (story) => (!moved && story ? goTo(story) : Promise.resolve());
  return {paint, recolour, goTo, jump, reland, info, moveCursor, setCursor, fit, cursorPos: () => cursor};
}
