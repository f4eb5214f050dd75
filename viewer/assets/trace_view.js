// The token view. It receives one `Opened` record (viewer/contract.py: the outline, this visitor's
// initial place, the first chunk) and asks for more token chunks as they scroll into view. Parts, each
// a small function over one element: the navigator (turns), the toolbar (modes, scopes, actions), the
// token pane (chunks, colours, the keyboard cursor) and the tooltip. Two adapters at the end mount it
// inside the Gradio app (chunks from a server function) and in an exported HTML file (chunks embedded).
// Every string inserted as HTML is escaped here or was escaped by the server (the *_html fragments).
const TraceView = (() => {
  const KEEP_CHUNKS = 12;
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const shown = (s) => esc(s).replace(/ /g, "<i class='ws'>·</i>").replace(/\t/g, "<i class='ws'>→</i>")
    .replace(/\r/g, "<i class='ws'>␍</i>").replace(/\n/g, "<i class='ws'>↵</i><br>");
  const fmt = (n) => Number(n).toLocaleString("en-US");
  const lpAlpha = (lp) => (0.08 + 0.85 * Math.min(1, Math.max(0, 1 - Math.exp(lp)))).toFixed(3);  // p=1 faint .. p=0 strong

  // -- advantage mode (GRPO groups): every trained generated token carries its rollout's advantage ------
  // Kept apart from the other modes so the trainer-view modes can merge beside it; a loss mode may read
  // O.advantage too. Alpha grows with |advantage| (TRL's advantages are z-scores: 2 is already far out).
  function advantageClass(O, t, mask, rowScope) {
    const trained = mask === "1" && (rowScope || (t && t.trained));
    if (!trained) return {cls: " adv-ctx", style: ""};
    const a = O.advantage;
    if (a === null || a === undefined) return {cls: " adv-unknown", style: ""};
    const alpha = (0.18 + 0.7 * Math.min(1, Math.abs(a) / 2)).toFixed(3);
    return {cls: a > 0 ? " adv-pos" : a < 0 ? " adv-neg" : " adv-zero", style: ` style="--a:${alpha}"`};
  }

  function advantageLegend(O) {
    const a = O.advantage;
    const val = a === null || a === undefined
      ? "<span class='tv-badge warn' data-testid='no-advantage'>no advantage here: this rollout was opened on its own, and a GRPO advantage comes with a group (open a group's map to see its rollouts' advantages)</span>"
      : `<span class="tv-nowrap">this rollout's advantage <b>${Number(a) >= 0 ? "+" : ""}${Number(a).toFixed(3)}</b></span>`;
    return `<span class="sw adv-pos"></span>pushed up (advantage &gt; 0) <span class="sw adv-neg"></span>pushed down (&lt; 0) <span class="sw adv-zero"></span>no push (0) <span class="sw adv-ctx"></span>not trained · ${val}`;
  }

  // -- navigator: one button per turn --------------------------------------------------------------
  function navigator(nav, O) {
    nav.innerHTML = O.turns.map((t, pos) => {
      const occ = O.max_context ? Math.round(100 * (t.prompt_tokens + t.output_tokens) / O.max_context) : 0;
      const drift = t.drift_at !== null ? `<span class="tv-driftmark" title="the prompt departs from the turn before at position ${fmt(t.drift_at)}">⚠ drift</span>` : "";
      const fail = t.tool_failed ? `<span class="tv-failmark" title="a tool call failed" aria-label="a tool call failed">✗</span>` : "";
      // t.trained is what TRL trains (rollout_trace/analysis/training.py); the capture script's flag may disagree
      const why = `${fmt(t.trained_tokens)} of ${fmt(t.output_tokens)} generated tokens trained` +
        (t.seed_trained !== t.trained ? `; the original capture script marks this turn ${t.seed_trained ? "trained" : "untrained"}` : "");
      const pill = `<span class='tv-pill${t.trained ? " tr" : ""}' title="${esc(why)}">${t.trained ? "trained" : "not trained"}</span>`;
      return `<button class="tv-navitem${t.trained ? " trained" : ""}" data-turn="${pos}" data-testid="nav-turn" aria-current="false">
        <span class="tv-nav-h"><span class="tv-nav-turn">turn ${t.index}</span> ${pill} ${drift}${fail}</span>
        <span class="tv-nav-tools">${t.tools.length ? t.tools.map(esc).join(", ") : "no tool call"}</span>
        <span class="tv-nav-n">prompt ${fmt(t.prompt_tokens)} · out ${fmt(t.output_tokens)} · new ${fmt(t.added)}</span>
        <span class="tv-occ" title="context ${fmt(t.prompt_tokens + t.output_tokens)} of the rollout's longest ${fmt(O.max_context)}"><span style="width:${occ}%"></span></span>
      </button>`;
    }).join("");
    return {
      show(st, rowTurns) {  // the active turn, or in row scope every turn the row holds
        nav.querySelectorAll(".tv-navitem").forEach((el) => {
          const k = Number(el.dataset.turn);
          const on = rowTurns ? rowTurns.includes(O.turns[k].index) : k === st.turn;
          el.classList.toggle("active", on);
          el.setAttribute("aria-current", on ? (rowTurns ? "true" : "step") : "false");
        });
        const a = nav.querySelector(".active");  // scrolled into view at the next frame, not forcing a layout now
        if (a && a.scrollIntoView) requestAnimationFrame(() => { if (a.isConnected) a.scrollIntoView({block: "nearest"}); });
      },
    };
  }

  // -- toolbar: modes, scopes and actions; every toggle says whether it is pressed ------------------
  function toolbar(bar, O) {
    const group = (kind, choices) => `<span class="tv-group" role="group" aria-label="${kind}">${choices.map((c) =>
      `<button data-${kind}="${esc(c.id)}" title="${esc(c.help)}" aria-pressed="false">${esc(c.label)}</button>`).join("")}</span>`;
    bar.innerHTML = `<b class="tv-turn-title"></b>${group("mode", O.modes)}${group("scope", O.scopes)}
      <button class="tv-jump-btn" title="jump to where this turn's story is: its drift, or its generated tokens (g)" aria-label="jump to the generated tokens">↓ generated</button>`;
    return {
      show(st, title) {
        bar.querySelector(".tv-turn-title").textContent = title;
        bar.querySelectorAll("[data-mode]").forEach((el) => {
          const on = el.dataset.mode === st.mode;
          el.classList.toggle("on", on); el.setAttribute("aria-pressed", String(on));
          el.disabled = st.scope === "row" && ROW_OFF.has(el.dataset.mode);
          if (el.disabled) el.title = el.dataset.mode === "drift" ? "drift compares a turn with the turn before; a training row spans turns"
                                                                  : "the trainer's view is per turn; a training row spans turns";
        });
        bar.querySelectorAll("[data-scope]").forEach((el) => {
          const on = el.dataset.scope === st.scope;
          el.classList.toggle("on", on); el.setAttribute("aria-pressed", String(on));
        });
      },
    };
  }

  function legend(O, st, trainer) {
    const t = O.turns[st.turn];
    const L = TRAINER_MODES.has(st.mode) && trainer ? trainer.legend() : {
      mask: `<span class="sw m0"></span>context (mask 0) <span class="sw m1"></span>generated (mask 1, underlined${st.scope === "row" ? ")" : t.trained ? ", trained)" : ") <span class='sw m1u'></span>hatched: this turn is not trained"}`,
      logprob: `<span class="sw lp-hi"></span>p ≈ 1 <span class="sw lp-lo"></span>p ≈ 0 <span class="sw nolp"></span>no logprob recorded (context, or none captured)`,
      drift: `<span class="sw d-carried"></span>carried over exactly <span class="sw d-rewritten"></span>rewritten (drift) <span class="sw d-new"></span>new context <span class="sw d-out"></span>generated`,
      advantage: advantageLegend(O),
    }[st.mode];
    if (st.scope === "row") return L;
    const a = t.audit, warn = [];
    if (a.ones_in_prompt) warn.push(`${fmt(a.ones_in_prompt)} prompt tokens have mask 1`);
    if (a.zeros_in_output) warn.push(`${fmt(a.zeros_in_output)} generated tokens have mask 0`);
    if (a.trained_without_logprobs) warn.push("trained turn without logprobs");
    return L + (warn.length ? ` <span class="tv-badge warn">mask audit: ${esc(warn.join("; "))}</span>` : "");
  }

  // -- token pane: chunks as they scroll into view, colours by mode, a keyboard cursor --------------
  function tokenPane(box, O, api, st, scopeRange, firstChunk, trainer) {
    let chunks = new Map(), rendered = new Set(), observer = null, epoch = 0, cursor = null;
    let preloaded = firstChunk;

    function driftClass(pos) {
      const t = O.turns[st.turn];
      if (pos >= t.prompt_tokens) return "d-out";
      if (t.drift_at !== null && pos >= t.drift_at && pos < t.carried) return "d-rewritten";
      if (pos < t.shared) return "d-carried";
      return "d-new";
    }

    function spanHtml(c) {
      const out = [];
      for (let k = 0; k < c.ids.length; k++) {
        const pos = c.start + k, kind = c.kind[k], lp = c.logprob[k];
        let cls = "t k" + kind, style = "";
        if (st.mode === "logprob") {
          if (lp === null) cls += " nolp"; else style = ` style="--a:${lpAlpha(lp)}"`;
        } else if (st.mode === "drift" && st.scope !== "row") cls += " " + driftClass(pos);
        else if (trainer && TRAINER_MODES.has(st.mode) && st.scope !== "row") cls += trainer.tokenClass(pos);
        else if (st.mode === "advantage") { const a = advantageClass(O, O.turns[st.turn], c.mask[k], st.scope === "row"); cls += a.cls; style = a.style; }
        const txt = kind === "2" ? "" : shown(c.text[k]);
        out.push(`<span class="${cls}" data-mask="${c.mask[k]}" data-i="${pos}"${style}>${txt}</span>`);
      }
      return out.join("");
    }

    function evictFarFrom(center) {
      const order = [...rendered].sort((a, b) => Math.abs(b - center) - Math.abs(a - center));
      while (rendered.size > KEEP_CHUNKS) {
        const c = order.shift();
        const el = box.querySelector(`.tv-chunk[data-c="${c}"]`);
        if (el) { el.style.height = el.offsetHeight + "px"; el.innerHTML = ""; }
        rendered.delete(c); chunks.delete(c);
      }
    }

    function renderChunk(el, c) {
      el.innerHTML = spanHtml(c);
      el.style.minHeight = ""; el.style.height = "";
      rendered.add(Number(el.dataset.c));
      if (rendered.size > KEEP_CHUNKS) evictFarFrom(Number(el.dataset.c));
      if (cursor !== null) mark(cursor);
    }

    async function load(el) {
      const idx = Number(el.dataset.c), my = epoch;
      if (rendered.has(idx) || el.dataset.loading === "1") return;
      el.dataset.loading = "1";
      try {
        const c = chunks.get(idx) || await api.chunk({turn: st.turn, scope: st.scope, index: idx, row: st.row});
        if (my !== epoch) return;  // the view moved on while this chunk was on its way
        if (c && c.error) { el.innerHTML = `<span class="tv-err">${esc(c.error)}</span>`; return; }
        chunks.set(idx, c);
        renderChunk(el, c);
      } catch (e) {
        if (my === epoch) el.innerHTML = `<span class="tv-err">could not load tokens: ${esc(e && e.message || e)}</span>`;
      } finally { el.dataset.loading = ""; }
    }

    function paint(story) {  // all chunks as placeholders; load the story's chunk first and land on it (story: see goTo)
      epoch++;
      chunks = new Map(); rendered = new Set(); cursor = null;
      if (observer) observer.disconnect();
      const {start, size, waiting} = scopeRange();
      const t = O.turns[st.turn];
      const n = Math.ceil(size / O.chunk_size);
      let html = "";
      if (st.scope === "new" && t.shared > 0) {
        html += `<button class="tv-collapsed" data-testid="collapsed-prefix">▸ ${fmt(t.shared)} tokens shared with turn ${O.turns[st.turn - 1] ? O.turns[st.turn - 1].index : t.index - 1}: show the full context</button>`;
      }
      if (waiting) html += `<div class="tv-dim">asking TRL how it packs this rollout…</div>`;
      for (let c = 0; c < n; c++) {
        const est = Math.max(1.6, Math.min(O.chunk_size, size - c * O.chunk_size) / 14) * 1.6;  // about 14 tokens a line
        html += `<div class="tv-chunk" data-c="${c}" style="min-height:${est.toFixed(1)}em"></div>`;
      }
      if (!n && !waiting) html += `<div class="tv-dim">no tokens in this scope</div>`;
      box.innerHTML = html;
      box.classList.toggle("untrained", !t.trained && st.scope !== "row");
      box.dataset.paint = st.mode;
      if (preloaded && preloaded.turn === st.turn && preloaded.scope === st.scope) {
        chunks.set(preloaded.index, preloaded.chunk);
        const el = box.querySelector(`.tv-chunk[data-c="${preloaded.index}"]`);
        if (el) renderChunk(el, preloaded.chunk);
      }
      preloaded = null;  // only the first paint has it
      observer = new IntersectionObserver((entries) => {
        for (const e of entries) if (e.isIntersecting) load(e.target);
      }, {root: box, rootMargin: "600px 0px"});
      box.querySelectorAll(".tv-chunk").forEach((el) => observer.observe(el));
      box.scrollTop = 0;  // after every change to the pane: this layout serves the fit and the landing too
      fit(true);
      if (story && story.at >= start) goTo(story);
      else { const first = box.querySelector(".tv-chunk"); if (first) load(first); }
    }

    // A reader who scrolls wins: a landing still settling (its chunk on the way) gives up.
    let moved = false;
    for (const ev of ["wheel", "pointerdown", "touchstart"]) box.addEventListener(ev, () => { moved = true; }, {passive: true});

    // Land on a turn's story once its chunk is painted: `at` (the drift, else the first generated token) a few
    // lines below the top; when the story up to `end` (the turn's last token) fits in the pane, all of it on
    // screen; when it does not but the generated tokens (`gen` to `end`) do, those, ending on the last line;
    // and a `focus` (the first token outside the clip band) is kept on screen. Lines are snapped to the pane's
    // line grid, so no line is cut at the edges.
    function goTo(story) {
      if (typeof story === "number") story = {at: story};
      moved = false;
      const {start} = scopeRange();
      const idx = Math.floor(Math.max(0, story.at - start) / O.chunk_size);
      const el = box.querySelector(`.tv-chunk[data-c="${idx}"]`);
      if (!el) return;
      const settle = () => {
        const tok = box.querySelector(`.t[data-i="${story.at}"]`);
        if (!tok || moved) return;
        const cs = getComputedStyle(box), lh = parseFloat(cs.lineHeight) || tok.getBoundingClientRect().height;
        const padTop = parseFloat(cs.paddingTop) || 0, room = box.clientHeight - padTop - (parseFloat(cs.paddingBottom) || 0);
        const at = (i) => i !== null && i !== undefined ? box.querySelector(`.t[data-i="${i}"]`) : null;
        const top = (t) => t.getBoundingClientRect().top - (lh - t.getBoundingClientRect().height) / 2;  // its line's top
        const lines = (a, b) => Math.round((top(b) - top(a)) / lh) + 1;  // lines from a's line to b's, both counted
        const fits = Math.floor(room / lh + 0.01);
        const put = (t, line) => { box.scrollTop += top(t) - box.getBoundingClientRect().top - box.clientTop - padTop - line * lh; };
        const last = at(story.end), gen = at(story.gen), focus = at(story.focus);
        let line = Math.floor(Math.min(fits / 3, 6));  // the story's line, counted from the top
        if (last && lines(tok, last) <= fits) line = Math.min(line, fits - lines(tok, last));
        else if (last && gen && lines(gen, last) <= fits) { put(last, fits - 1); return; }
        if (focus && lines(tok, focus) > fits - line) { put(focus, Math.max(0, fits - 1 - Math.floor(fits / 4))); return; }
        put(tok, Math.max(0, line));
      };
      whenLaidOut(() => {
        box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top;
        load(el).then(() => { settle(); setTimeout(settle, 200); });
      });
    }

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
        const el = box.querySelector(`.tv-chunk[data-c="${idx}"]`), c = chunks.get(idx);
        if (el && c) el.innerHTML = spanHtml(c);
      }
      if (cursor !== null) mark(cursor);
    }

    function info(pos) {
      const idx = Math.floor((pos - scopeRange().start) / O.chunk_size), c = chunks.get(idx);
      if (!c) return "";
      const k = pos - c.start, lp = c.logprob[k];
      const lpText = lp === null ? "no logprob" : `logprob ${lp.toFixed(4)} (p = ${Math.exp(lp).toFixed(3)})`;
      const text = c.kind[k] === "2" ? "(joined with the token before)" : JSON.stringify(c.text[k]);
      const extra = trainer && TRAINER_MODES.has(st.mode) && st.scope !== "row" ? trainer.info(pos) : "";
      return `position ${fmt(pos)} · id ${c.ids[k]} · mask ${c.mask[k]} · ${lpText}\n${text}${extra}`;
    }

    function mark(pos) {
      box.querySelectorAll(".t.cursor").forEach((x) => x.classList.remove("cursor"));
      const s = box.querySelector(`.t[data-i="${pos}"]`);
      if (s) s.classList.add("cursor");
      return s;
    }

    function setCursor(pos) { cursor = pos; return mark(pos); }  // a click puts the cursor there: arrows go on from it

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
          // with the page scrolled the pane keeps its size (a turn change must not move what the reader sees)
          if (window.scrollY === 0) box.style.maxHeight = room >= 180 ? Math.min(room, 0.7 * window.innerHeight) + "px" : "";
        }
      });
    }

    // A landing whose data came late (the trainer's numbers): land again unless the reader has moved since.
    const reland = (story) => { if (!moved && story) goTo(story); };
    return {paint, recolour, goTo, reland, info, moveCursor, setCursor, fit, cursorPos: () => cursor};
  }

  // -- the trainer's view (issue 9): rescore parts, mismatch / entropy / loss colours, stats, histogram --
  // Everything about the trainer lives here so the rest of the view only asks it for a class, a legend,
  // tooltip lines and "is this turn's data here yet". Numbers come from server.trainer (TrainerTurn and
  // TrainerSummary in viewer/contract.py), cached per turn, part, band and advantage.
  const TRAINER_MODES = new Set(["mismatch", "entropy", "loss"]);
  const ROW_OFF = new Set(["drift", ...TRAINER_MODES]);  // modes a training row (several turns) cannot show
  const num = (x, d = 4) => x === null || x === undefined ? "n/a" : Math.abs(x) > 0 && Math.abs(x) < 1e-3 ? x.toExponential(1) : x.toFixed(d);

  function trainerPart(box, nav, O, api, st, onData) {
    const T = O.trainer, parts = T.parts;
    const group = O.advantage === null || O.advantage === undefined ? null : Number(O.advantage);
    // An export carries one band and one advantage and names the part it opens on (T.part, T.advantages).
    const advChoices = [...(group !== null ? [["group", `group A = ${group.toFixed(3)}`, "the advantage TRL gave this rollout in its group"]] : []),
      ["+1", "A = +1", "if this rollout had been above its group"], ["-1", "A = −1", "if this rollout had been below its group"]]
      .filter(([v]) => !T.advantages || T.advantages.includes(v));
    const ts = {part: parts.some((p) => p.name === T.part) ? T.part : parts[0].name, eps: 0, adv: advChoices[0][0]};
    const partLabel = () => (parts.find((p) => p.name === ts.part) || parts[0]).label;
    const turnCache = new Map(), sumCache = new Map();
    const advantage = () => ts.adv === "group" ? group : ts.adv === "-1" ? -1 : 1;
    const eps = () => T.eps_choices[ts.eps];
    const keyOf = () => `${ts.part}|${ts.eps}|${advantage()}`;
    const req = (extra) => ({part: ts.part, eps: eps(), advantage: advantage(), ...extra});

    function need(turn) {  // fetch a turn's numbers once per setting; onData repaints when they land
      const k = keyOf() + "|" + turn;
      if (turnCache.has(k)) return;
      turnCache.set(k, null);
      api.trainer(req({turn})).then((d) => { turnCache.set(k, d); onData(); })
        .catch((e) => { turnCache.set(k, {error: String(e && e.message || e)}); onData(); });
    }
    const data = (turn) => turnCache.get(keyOf() + "|" + turn) || null;

    function level(lr, out) {  // |log ratio| in bins that separate float noise, bf16 and worse
      if (out === "1") return 4;
      const a = Math.abs(lr);
      return a < 1e-3 ? 0 : a < 1e-2 ? 1 : a < 5e-2 ? 2 : 3;
    }
    function tokenClass(pos) {  // the class a token at absolute position `pos` of the turn gets
      const d = data(st.turn);
      if (!d || d.error) return " tr-ctx";
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
      const A = Math.abs(d.advantage) || 1, loss = d.loss[k], rel = Math.abs(loss) / A;
      return ` ls-${loss < 0 ? "u" : "d"}${rel < 0.95 ? 1 : rel <= 1.05 ? 2 : 3}`;
    }

    function legend() {
      const [lo, hi] = eps(), band = `[${(1 - lo).toFixed(2)}, ${(1 + hi).toFixed(2)}]`;
      const d = data(st.turn), wait = !d ? " <span class='tv-dim'>(loading the trainer's numbers…)</span>" : d.error ? ` <span class="tv-err">${esc(d.error)}</span>` : "";
      const miss = `<span class="sw nolp"></span>no engine logprob`;
      const part = `<span class="tv-part" data-testid="legend-part">part <b>${esc(partLabel())}</b></span> · `;
      if (st.mode === "mismatch") return part + `log ratio = trainer − engine: <span class="sw mm-n4 tr-out"></span>ratio below the clip band <span class="sw mm-n2"></span>trainer lower <span class="sw mm-0"></span>|log r| &lt; 1e-3 <span class="sw mm-p2"></span>trainer higher <span class="sw mm-p4 tr-out"></span>above the band; <b data-testid="clip-band">clip band ${band}</b> (ε ${lo} / ${hi}) ${miss}${wait}`;
      if (st.mode === "entropy") return part + `trainer entropy (nats): <span class="sw en-0"></span>&lt; 0.1 <span class="sw en-1"></span>&lt; 0.5 <span class="sw en-2"></span>&lt; 1.5 <span class="sw en-3"></span>&lt; 3 <span class="sw en-4"></span>≥ 3${wait}`;
      const A = advantage();
      return part + `per-token loss −min(r·A, clip(r)·A), A = ${A > 0 ? "+" : ""}${num(A, 3)}: <span class="sw ls-u2"></span>raised (loss &lt; 0) <span class="sw ls-d2"></span>lowered (loss &gt; 0), paler / stronger = |loss| below / above |A| <span class="sw ls-clip"></span>clipped by TRL, no gradient (band ${band}) <span class="sw tr-off"></span>not in the loss ${miss}${wait}`;
    }

    function info(pos) {  // tooltip lines for a generated token (plain text: the tooltip sets textContent)
      const d = data(st.turn);
      if (!d || d.error) return "";
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
    function histogram(counts, S) {
      const edges = S.histogram_edges && S.histogram_edges.length ? S.histogram_edges : T.histogram_edges;
      const isBand = (e) => S.band && (Math.abs(e - S.band[0]) < 1e-9 || Math.abs(e - S.band[1]) < 1e-9);
      const n = counts.length, bw = 22, h = 70, left = 30, top = 14, max = Math.max(1, ...counts);
      const x = (i) => left + i * bw;
      const lab = {"-1": "-1", "-0.1": "-0.1", "-0.01": "-0.01", "0.01": "0.01", "0.1": "0.1", "1": "1"};
      let s = `<svg role="img" aria-label="histogram of log ratios" width="${x(n) + 12}" height="${top + h + 30}" data-testid="trainer-histogram">`;
      s += `<line class="axl" x1="${left}" y1="${top + h}" x2="${x(n)}" y2="${top + h}"/><line class="axl" x1="${left}" y1="${top}" x2="${left}" y2="${top + h}"/>`;
      s += `<text class="ax" x="${left - 4}" y="${top + 8}" text-anchor="end">${max}</text><text class="ax" x="${left - 4}" y="${top + h}" text-anchor="end">0</text>`;
      counts.forEach((c, i) => {
        const bh = c ? Math.max(1.5, h * c / max) : 0, mid = i === Math.floor(n / 2);
        const lo = i === 0 ? "−∞" : num(edges[i - 1], 3), hi = i === n - 1 ? "∞" : num(edges[i], 3);
        const outside = (i > 0 && edges[i - 1] >= S.band[1] - 1e-12) || (i < n - 1 && edges[i] <= S.band[0] + 1e-12);
        s += `<rect class="${outside ? "b-out " : ""}${mid ? "b-0" : i < n / 2 ? "b-n" : "b-p"}" x="${x(i) + 2}" y="${top + h - bh}" width="${bw - 4}" height="${bh}" data-count="${c}"><title>${c} tokens with log ratio in [${lo}, ${hi})${outside ? ": outside the clip band" : ""}</title></rect>`;
      });
      edges.forEach((e, j) => {
        const name = lab[String(e)];
        if (name) s += `<text class="ax" x="${x(j + 1)}" y="${top + h + 11}" text-anchor="middle">${name}</text>`;
        if (isBand(e)) s += `<line class="band" data-testid="band-line" data-edge="${e}" x1="${x(j + 1)}" y1="${top - 4}" x2="${x(j + 1)}" y2="${top + h}"/><text class="ax" x="${x(j + 1)}" y="${top - 5}" text-anchor="middle">${num(Math.exp(e), 2)}</text>`;
      });
      s += `<text class="ax" x="${x(Math.floor(n / 2)) + bw / 2}" y="${top + h + 11}" text-anchor="middle">0</text>`;
      s += `<text class="ax" x="${(left + x(n)) / 2}" y="${top + h + 25}" text-anchor="middle">log ratio (trainer − engine), tokens per bin</text></svg>`;
      const [blo, bhi] = S.band;
      return `<figure class="tv-hist">${s}<figcaption>log-spaced bins; dashed: the clip band, ratio [${num(Math.exp(blo), 2)}, ${num(Math.exp(bhi), 2)}] = log ratio [${num(blo, 3)}, ${num(bhi, 3)}]; the bars beyond the lines are the tokens outside it</figcaption></figure>`;
    }

    function showSummary(S) {
      const out = box.querySelector(".tv-trainer-out");
      if (S.error) { out.innerHTML = `<span class="tv-err">${esc(S.error)}</span>`; return; }
      const R = S.rollout, [lo, hi] = S.eps;
      out.innerHTML = `<div class="tv-trainer-stats" data-testid="trainer-stats">rollout, ${fmt(R.tokens)} generated tokens:
        max |log ratio| <b>${num(R.max_abs_log_ratio)}</b> · mean k3 KL <b>${num(R.mean_kl_k3, 5)}</b> ·
        mean entropy <b>${num(R.mean_entropy, 3)}</b> · outside clip [${1 - lo}, ${1 + hi}] <b>${fmt(R.outside_clip)}</b> ·
        trainer's top-1 ${fmt(R.top1)} · clipped (A = ${S.advantage}) ${fmt(R.clipped_low + R.clipped_high)}
        ${R.with_engine < R.tokens ? ` · <span class="tv-err">${fmt(R.tokens - R.with_engine)} without an engine logprob</span>` : ""}</div>${histogram(R.histogram, S)}`;
      nav.querySelectorAll(".tv-navitem").forEach((el) => {  // per turn, under each navigator entry
        const t = S.turns[Number(el.dataset.turn)];
        let span = el.querySelector(".tv-nav-tr");
        if (!span) { span = document.createElement("span"); span.className = "tv-nav-tr"; span.dataset.testid = "nav-trainer"; el.appendChild(span); }
        if (!t) { span.textContent = ""; return; }
        span.title = `the trainer's view of this turn (part ${partLabel()}): the largest |log ratio| (log trainer p − log engine p) over its generated tokens, and how many of them fall outside TRL's clip band [${1 - lo}, ${1 + hi}]`;
        span.innerHTML = `trainer: max |log r| ${num(t.max_abs_log_ratio, 3)} · <span class="${t.outside_clip ? "hot" : ""}">${fmt(t.outside_clip)} outside the band</span>`;
      });
    }

    function summary() {
      const k = keyOf();
      if (sumCache.has(k)) { showSummary(sumCache.get(k)); return; }
      api.trainer(req({summary: true})).then((S) => { sumCache.set(k, S); if (k === keyOf()) showSummary(S); })
        .catch((e) => showSummary({error: String(e && e.message || e)}));
    }

    function controls() {
      const btn = (attr, v, label, on, title = "") => `<button data-${attr}="${esc(v)}" class="${on ? "on" : ""}" aria-pressed="${on}" title="${esc(title)}">${esc(label)}</button>`;
      const advs = advChoices;
      box.innerHTML = `<div class="tv-trainer" data-testid="trainer-panel"><div class="tv-trainer-ctl"><b>Trainer's view</b>
        ${parts.length > 1 ? `<span class="tv-lab">part</span>` : ""}<span class="tv-group" role="group" aria-label="rescore part">${parts.map((p) => btn("tpart", p.name, p.label, p.name === ts.part, `${p.model}, ${p.dtype} on ${p.device}, temperature ${p.temperature}, top-${p.top_k}`)).join("")}</span>
        <span class="tv-lab">clip ε</span><span class="tv-group" role="group" aria-label="clip band">${T.eps_choices.map((e, i) => btn("teps", i, `${e[0]} / ${e[1]}`, i === ts.eps, i ? "DAPO's clip-higher" : "TRL's default")).join("")}</span>
        <span class="tv-lab">advantage</span><span class="tv-group" role="group" aria-label="advantage">${advs.map(([v, l, t]) => btn("tadv", v, l, v === ts.adv, t)).join("")}</span></div>
        <div class="tv-trainer-out"></div></div>`;
      summary();
    }

    box.addEventListener("click", (ev) => {
      const b = ev.target.closest("button");
      if (!b || !box.contains(b)) return;
      if (b.dataset.tpart !== undefined) ts.part = b.dataset.tpart;
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
    function focus(turn) {  // the first token the mode outlines (outside the clip band; clipped in loss), or null
      const d = data(turn);
      if (!d || d.error || (st.mode !== "mismatch" && st.mode !== "loss")) return null;
      const k = st.mode === "loss" ? [...d.clipped].findIndex((c) => c !== "0") : d.outside.indexOf("1");
      return k < 0 ? null : d.start + k;
    }

    return {need, show, ready: (turn) => !!data(turn), tokenClass, legend, info, focus, state: () => ({...ts})};
  }

  // -- the whole view --------------------------------------------------------------------------------
  function mount(root, opened, api, quiet = false) {  // quiet: leave the URL alone until the reader moves
    // The trainer's modes need a rescore part and a way to ask for its numbers (an export has none).
    const hasTrainer = !!(opened.outline.trainer && api.trainer);
    const O = hasTrainer ? opened.outline : {...opened.outline, modes: opened.outline.modes.filter((m) => !TRAINER_MODES.has(m.id))};
    const modes = O.modes.map((m) => m.id), scopes = O.scopes.map((s) => s.id);
    const st = {turn: 0, mode: "mask", scope: "new", row: 0, ...(opened.initial || {})};
    if (!modes.includes(st.mode)) st.mode = "mask";
    if (!scopes.includes(st.scope)) st.scope = "new";
    root.innerHTML = `
      <div class="tv" data-testid="trace-view">
        <div class="tv-live-box" hidden></div>
        <div class="tv-note-box" role="note" data-testid="export-note" hidden></div>
        <div class="tv-top">
          <div class="tv-summary-box">${O.summary_html}</div>
          <span class="tv-actions">
            ${api.export ? `<button class="tv-export-btn" title="download one HTML file that opens offline on what is on screen" aria-haspopup="dialog" aria-expanded="false" data-testid="export">export</button>` : ""}
            <button class="tv-present-btn" title="presentation mode (p)" aria-pressed="false">present</button>
            <button class="tv-help-btn" title="keyboard shortcuts (?)" aria-label="keyboard shortcuts" aria-expanded="false">?</button>
          </span>
          <div class="tv-export-menu" hidden role="dialog" aria-label="export" data-testid="export-menu">
            <b>Export one HTML file</b> <span class="tv-dim">that opens offline, with no request, on the turn, mode, scope and trainer part on screen</span>
            <div class="tv-export-choices"><button data-export="rollout" data-testid="export-rollout">the whole rollout</button><button data-export="turn" data-testid="export-turn">the turn on screen (with its full context)</button></div>
            <div class="tv-export-status" role="status"></div>
          </div>
        </div>
        <div class="tv-headerbox">${O.header_html}</div>
        <div class="tv-main">
          <nav class="tv-nav" aria-label="turns"></nav>
          <section class="tv-turn">
            <div class="tv-toolbar"></div>
            <div class="tv-legend"></div>
            <div class="tv-boundary-box"></div>
            <div class="tv-rowbar" hidden></div>
            <div class="tv-tokens" tabindex="0" role="group" aria-label="tokens: arrow keys move a cursor" data-testid="tokens"></div>
            <div class="tv-trainer-box" hidden></div>
            <div class="tv-tools-part"><h4 class="tv-sub">Tool calls</h4><div class="tv-tools-box"></div></div>
          </section>
        </div>
        <div class="tv-lower">
          <section><h3>Tests</h3><div class="tv-tests-box">${O.tests_html}</div></section>
          <section><h3>Reward</h3><div class="tv-reward-box">${O.reward_html}</div></section>
        </div>
        <div class="tv-tip" hidden role="status"></div>
        <div class="tv-help" hidden role="dialog" aria-label="keyboard shortcuts">
          <b>Keyboard</b>
          <table>
            <tr><td><kbd>j</kbd> <kbd>→</kbd></td><td>next turn</td></tr>
            <tr><td><kbd>k</kbd> <kbd>←</kbd></td><td>previous turn</td></tr>
            <tr><td><kbd>←</kbd> <kbd>→</kbd> in the tokens</td><td>move the token cursor (its details follow)</td></tr>
            <tr><td><kbd>m</kbd></td><td>next mode (${modes.join(", ")})</td></tr>
            <tr><td><kbd>s</kbd></td><td>next scope (${O.scopes.map((s) => esc(s.label)).join(", ")})</td></tr>
            <tr><td><kbd>g</kbd></td><td>jump to the generated tokens</td></tr>
            <tr><td><kbd>p</kbd></td><td>presentation mode</td></tr>
            <tr><td><kbd>?</kbd></td><td>this help</td></tr>
            <tr><td><kbd>Esc</kbd></td><td>close help / leave presentation</td></tr>
          </table>
        </div>
      </div>`;
    const $ = (sel) => root.querySelector(sel);
    const view = $(".tv"), box = $(".tv-tokens"), tip = $(".tv-tip"), help = $(".tv-help");
    // Listeners on `root` and `document` outlive a re-mount into the same element: each checks it is current.
    const mountId = (root.__tvMounts = (root.__tvMounts || 0) + 1);
    const live = () => root.__tvMounts === mountId;
    const liveBar = followBar($(".tv-live-box"), {follow: () => { st.follow = true; liveBar.following(true); go(O.turns.length - 1, true); },
                                                   sibling: (k) => api.sibling && api.sibling(k),
                                                   cancel: api.cancelRun ? () => api.cancelRun() : null});
    st.follow = !!opened.live;  // a watched capture: the view follows its newest turn until the reader moves
    const showLive = (L) => liveBar.show(L, st.follow);
    if (opened.live) showLive(opened.live);
    if (!O.turns.length) {  // nothing to page through: say so, keep the tests and reward
      $(".tv-main").innerHTML = `<div class="${opened.live ? "tv-dim" : "tv-error"}" role="status" data-testid="no-turns">${esc(O.notice || "no agent turn")}</div>`;
      return {state: () => ({...st}), grow: () => false, showLive};
    }
    st.turn = Math.min(Math.max(0, st.turn | 0), O.turns.length - 1);
    let training = null;  // TRL rows, fetched on first use
    let nav = navigator($(".tv-nav"), O);
    const bar = toolbar($(".tv-toolbar"), O);
    if (opened.note) { $(".tv-note-box").textContent = opened.note; $(".tv-note-box").hidden = false; }

    function scopeRange() {
      const t = O.turns[st.turn];
      if (st.scope === "row") {
        const r = training && training.rows[st.row];
        return {start: 0, size: r ? r.tokens : 0, waiting: !training};
      }
      const start = st.scope === "new" ? t.shared : 0;
      return {start, size: t.prompt_tokens + t.output_tokens - start, waiting: false};
    }
    const first = opened.first_chunk ? {turn: st.turn, scope: st.scope, index: Math.floor((opened.first_chunk.start - scopeRange().start) / O.chunk_size), chunk: opened.first_chunk} : null;
    const trainer = hasTrainer ? trainerPart($(".tv-trainer-box"), $(".tv-nav"), O, api, st, () => {
      $(".tv-legend").innerHTML = legend(O, st, trainer);
      if (TRAINER_MODES.has(st.mode)) { trainerNeed(); pane.recolour(); pane.reland(story()); }
    }) : null;
    function trainerNeed() {  // the panel shows only with a trainer mode: the tokens keep the first screen otherwise
      const on = !!trainer && TRAINER_MODES.has(st.mode);
      $(".tv-trainer-box").hidden = !on;
      $(".tv-nav").classList.toggle("tv-tr-on", on);  // each turn's trainer line, with the trainer's modes only
      if (on) trainer.show();
      if (on && st.scope !== "row") trainer.need(st.turn);
    }
    const pane = tokenPane(box, O, api, st, scopeRange, first, trainer);
    const story = () => {  // where the turn's story is: see the token pane's goTo
      if (st.scope === "row") return null;
      const t = O.turns[st.turn];
      return {at: t.drift_at !== null ? t.drift_at : t.prompt_tokens, gen: t.prompt_tokens, end: t.prompt_tokens + t.output_tokens - 1,
              focus: trainer && TRAINER_MODES.has(st.mode) ? trainer.focus(st.turn) : null};
    };

    async function fetchTraining() {
      if (training) return;
      training = await api.training();
      if (st.scope === "row") update();
    }

    function update() {
      sides();
      pane.paint(story());  // fits the pane too: the lines above the tokens differ per turn
      tellState();
    }

    function sides() {  // everything about the turn on screen except its tokens
      const t = O.turns[st.turn], rowMode = st.scope === "row";
      const row = rowMode && training ? training.rows[st.row] : null;
      if (rowMode && ROW_OFF.has(st.mode)) st.mode = "mask";
      trainerNeed();
      bar.show(st, rowMode ? (row ? `TRL training row ${st.row} of ${training.rows.length}: turns ${row.turns.join(", ")}` : "TRL training rows")
                           : `turn ${t.index}${t.trained ? "" : " (not trained)"}`);
      nav.show(st, rowMode ? (row ? row.turns : []) : null);
      $(".tv-legend").innerHTML = legend(O, st, trainer);
      $(".tv-boundary-box").innerHTML = rowMode ? "" : t.trained_html + t.boundary_html + t.engine_html;
      $(".tv-tools-part").hidden = rowMode;
      $(".tv-tools-box").innerHTML = rowMode ? "" : t.tools_html;
      const rb = $(".tv-rowbar");
      rb.hidden = !rowMode;
      if (rowMode) {
        if (!training) { rb.innerHTML = ""; fetchTraining(); }
        else rb.innerHTML = training.html + (training.rows.length ? `<div class="tv-group" role="group" aria-label="training row">${training.rows.map((r, k) =>
          `<button data-row="${k}" class="${k === st.row ? "on" : ""}" aria-pressed="${k === st.row}">row ${k}: turns ${r.turns.join(", ")}</button>`).join("")}</div>` : "");
      }
    }

    // A watched capture grew (or finished): same rollout, more turns or fuller panels. The reader keeps
    // their place; a reader following the newest turn moves to it. False when only a fresh mount can show
    // it (the modes changed: a rescore part arrived with the final artifact).
    function grow(next) {
      const N = next.outline;
      if (!!N.trainer !== hasTrainer) return false;
      Object.assign(O, hasTrainer ? N : {...N, modes: N.modes.filter((m) => !TRAINER_MODES.has(m.id))});
      $(".tv-summary-box").innerHTML = O.summary_html;
      $(".tv-headerbox").innerHTML = O.header_html;
      $(".tv-tests-box").innerHTML = O.tests_html;
      $(".tv-reward-box").innerHTML = O.reward_html;
      nav = navigator($(".tv-nav"), O);
      training = null;  // TRL packs the longer rollout afresh
      if (st.follow && st.turn !== O.turns.length - 1) { go(O.turns.length - 1, true); return true; }
      sides();
      if (st.scope === "row") pane.paint(null);
      return true;
    }

    // The URL follows the reader, not the first paint: the app reads the page's own URL on load (a deep
    // link), which a rewrite at mount would replace before it is read.
    let mounted = !quiet;
    // What an export needs to open where the reader is: the place, the trainer panel's settings, the group's advantage.
    const state = () => ({...st, trainer: trainer ? trainer.state() : null, advantage: O.advantage === undefined ? null : O.advantage});
    function tellState() { if (mounted && api.onState) api.onState({turn: st.turn, mode: st.mode, scope: st.scope}); }

    function go(turn, auto = false) {
      st.turn = Math.min(Math.max(0, turn), O.turns.length - 1);
      if (!auto && opened.live) { st.follow = st.turn === O.turns.length - 1; liveBar.following(st.follow); }
      if (st.scope === "row") st.scope = "new";
      update();
    }
    function setMode(m) {
      if (st.scope === "row" && ROW_OFF.has(m)) return;
      st.mode = m;
      trainerNeed();
      bar.show(st, $(".tv-turn-title").textContent);
      $(".tv-legend").innerHTML = legend(O, st, trainer);
      pane.recolour();
      if (view.classList.contains("present")) { pane.fit(true); pane.goTo(story() || 0); }  // the legend's height changed
      tellState();
    }
    function setScope(s) { st.scope = s; st.row = 0; update(); }
    function present(on) {
      const v = on === undefined ? !view.classList.contains("present") : on;
      view.classList.toggle("present", v);
      document.body.classList.toggle("tv-present", v);  // app chrome (tabs, source row) hides on this
      $(".tv-present-btn").setAttribute("aria-pressed", String(v));
      pane.fit(true);
      if (v) pane.goTo(story() || 0);
    }
    function toggleExport(on) {
      const m = $(".tv-export-menu");
      m.hidden = on === undefined ? !m.hidden : !on;
      $(".tv-export-btn").setAttribute("aria-expanded", String(!m.hidden));
    }
    async function doExport(what) {  // the server writes the file once (into Gradio's cache); the browser downloads it
      const out = $(".tv-export-status");
      out.textContent = "writing the file…";
      let got;
      try { got = await api.export({what, ...state()}); } catch (e) { got = {error: String(e && e.message || e)}; }
      if (!got || got.error) { out.innerHTML = `<span class="tv-err">${esc(got ? got.error : "no answer from the server")}</span>`; return; }
      out.innerHTML = `<a href="${esc(api.fileUrl(got.path))}" download="${esc(got.name)}" data-testid="export-link">${esc(got.name)}</a> · ${esc(got.size)}` +
        (got.note ? `<div class="tv-dim">${esc(got.note)}</div>` : "");
      out.querySelector("a").click();
    }
    function toggleHelp(on) {
      help.hidden = on === undefined ? !help.hidden : !on;
      $(".tv-help-btn").setAttribute("aria-expanded", String(!help.hidden));
    }
    function showTip(span, text) {
      tip.textContent = text;
      tip.hidden = !text;
      const r = span.getBoundingClientRect();
      tip.style.left = Math.max(4, Math.min(r.left, window.innerWidth - tip.offsetWidth - 8)) + "px";
      tip.style.top = (r.bottom + tip.offsetHeight + 12 > window.innerHeight ? r.top - tip.offsetHeight - 6 : r.bottom + 6) + "px";
    }

    root.addEventListener("click", (ev) => {
      const b = ev.target.closest("button");
      if (!live() || !b || !root.contains(b) || b.disabled) return;
      if (b.dataset.turn !== undefined) go(Number(b.dataset.turn));
      else if (b.dataset.mode) setMode(b.dataset.mode);
      else if (b.dataset.scope) setScope(b.dataset.scope);
      else if (b.dataset.row !== undefined) { st.row = Number(b.dataset.row); update(); }
      else if (b.classList.contains("tv-collapsed")) setScope("full");
      else if (b.classList.contains("tv-present-btn")) present();
      else if (b.classList.contains("tv-jump-btn")) pane.goTo(story() || 0);
      else if (b.classList.contains("tv-help-btn")) toggleHelp();
      else if (b.classList.contains("tv-export-btn")) toggleExport();
      else if (b.dataset.export) doExport(b.dataset.export);
    });
    box.addEventListener("mouseover", (ev) => {
      const s = ev.target.closest(".t");
      if (s) showTip(s, pane.info(Number(s.dataset.i)));
    });
    box.addEventListener("mouseleave", () => { if (pane.cursorPos() === null) tip.hidden = true; });
    box.addEventListener("click", (ev) => {
      const s = ev.target.closest(".t");
      if (!s) return;
      box.querySelectorAll(".t.pinned").forEach((x) => x.classList.remove("pinned"));
      s.classList.add("pinned");
      pane.setCursor(Number(s.dataset.i));
      showTip(s, pane.info(Number(s.dataset.i)));
    });
    box.addEventListener("keydown", (ev) => {
      if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
      ev.preventDefault(); ev.stopPropagation();
      box.querySelectorAll(".t.pinned").forEach((x) => x.classList.remove("pinned"));  // the cursor is where the click was
      const s = pane.moveCursor(ev.key === "ArrowRight" ? 1 : -1);
      if (s) showTip(s, pane.info(Number(s.dataset.i)));
    });

    const onKey = (ev) => {  // one listener per live mount: a re-mount into the same element retires this one
      if (!document.body.contains(root) || !live()) { document.removeEventListener("keydown", onKey); return; }
      const tag = (ev.target && ev.target.tagName) || "";
      if (/INPUT|TEXTAREA|SELECT/.test(tag) || ev.target.isContentEditable || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key;
      if (k === "j" || k === "ArrowRight") go(st.turn + 1);
      else if (k === "k" || k === "ArrowLeft") go(st.turn - 1);
      else if (k === "m") { const usable = modes.filter((m) => !(st.scope === "row" && ROW_OFF.has(m))); setMode(usable[(usable.indexOf(st.mode) + 1) % usable.length]); }
      else if (k === "s") setScope(scopes[(scopes.indexOf(st.scope) + 1) % scopes.length]);
      else if (k === "p") present();
      else if (k === "g") pane.goTo(story() || 0);
      else if (k === "?") toggleHelp();
      else if (k === "Escape") { toggleHelp(false); if (api.export) toggleExport(false); present(false); }
      else return;
      ev.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    if (st.scope === "row") fetchTraining();
    update();
    mounted = true;
    // The app may still be laying itself out around the view: until the reader touches anything, re-fit
    // the pane and land on the story again as the layout settles.
    let touched = false;
    for (const ev of ["pointerdown", "wheel", "keydown", "touchstart"]) root.addEventListener(ev, () => { touched = true; }, {once: true, passive: true});
    for (const ms of [250, 800, 2000]) setTimeout(() => { if (!touched && !view.classList.contains("present")) { pane.fit(true); pane.goTo(story() || 0); } }, ms);
    if (document.body.classList.contains("tv-present")) present(true);  // a re-mount keeps presentation on
    return {go, setMode, setScope, present, grow, showLive, state};
  }

  // -- a watched capture: running badge with elapsed time and stage, follow, a group's rollouts ----------
  function followBar(el, on) {
    let L = null, timer = null, started = 0, shownHtml = "", shownFollow = null;
    const clock = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
    const words = {running: "running", done: "captured", cancelled: "cancelled", failed: "failed"};
    function tick() {
      const t = el.querySelector(".tv-live-clock");
      if (t && L) t.textContent = clock(L.state === "running" ? (Date.now() - started) / 1000 : L.elapsed_s);
    }
    function show(next, isFollowing) {
      L = next;
      started = Date.now() - 1000 * L.elapsed_s;
      const running = L.state === "running";
      const what = running ? `${esc(L.stage)} · ${fmt(L.calls)} turn${L.calls === 1 ? "" : "s"} so far`
        : L.state === "done" ? "the written artifact is on screen"
        : L.state === "cancelled" ? "what was seen before the capture stopped: nothing was written"
        : esc(L.message || "the capture failed");
      const sibs = L.siblings.length ? `<span class="tv-group" role="group" aria-label="rollout to follow">${L.siblings.map((s) =>
        `<button data-live-rollout="${s.rollout}" aria-pressed="${s.rollout === L.rollout}" class="${s.rollout === L.rollout ? "on" : ""}" title="follow rollout ${s.rollout} of the group (${esc(s.stage)})">rollout ${s.rollout}: ${s.turns} turn${s.turns === 1 ? "" : "s"}</button>`).join("")}</span>` : "";
      el.hidden = false;
      const html = `<div class="tv-live ${L.state}" data-testid="live-badge" data-state="${L.state}" data-recorded-at="${L.recorded_at || ""}" role="status">
        <span class="tv-live-dot" aria-hidden="true"></span><b>${words[L.state]}</b> · <span class="tv-live-clock"></span> · <span>${what}</span>
        ${L.state === "cancelled" || L.state === "failed" ? "" : `<span class="tv-live-follow"></span>`}${sibs}
        ${running && on.cancel ? `<button class="tv-live-cancel" data-testid="live-cancel" title="stop the agent and the sandbox; what was seen stays, nothing is written">cancel</button>` : ""}</div>`;
      if (html !== shownHtml) { el.innerHTML = html; shownHtml = html; shownFollow = null; }  // a button under the pointer stays put
      following(isFollowing);
      tick();
      clearInterval(timer);
      if (running) timer = setInterval(() => { if (!el.isConnected) clearInterval(timer); else tick(); }, 1000);
    }
    function following(on) {
      const f = el.querySelector(".tv-live-follow");
      if (!f || !L || shownFollow === on) return;
      shownFollow = on;
      f.innerHTML = L.state !== "running" ? "" : on ? "<span class='tv-dim' data-testid='following'>following the newest turn</span>"
        : "<button class='tv-follow-btn' data-testid='follow' title='go to the newest turn and stay on it as turns arrive'>follow ↓</button>";
    }
    el.addEventListener("click", (ev) => {
      const b = ev.target.closest("button");
      if (!b) return;
      ev.stopPropagation();
      if (b.classList.contains("tv-follow-btn")) on.follow();
      else if (b.classList.contains("tv-live-cancel")) { b.disabled = true; on.cancel(); }
      else if (b.dataset.liveRollout !== undefined) on.sibling(Number(b.dataset.liveRollout));
    });
    return {show, following};
  }

  // The page side of a watched capture (viewer/ui/live.py): ask about twice a second for the run's record
  // and, when the rollout changed, its new value; grow the view in place. Stops when the run has ended,
  // or when this element shows something else.
  const LIVE_POLL_MS = 500;
  function watchRun(element, opened, server, remount) {
    let L = opened.live, changed = L.changed, rollout = L.rollout, timer = null, stopped = false;
    let view = remount(opened);
    const me = {run: L.run, apply, sibling, polls: 0};  // polls: questions asked (the tests count them)
    function apply(next) {  // a value of this run: newer content grows the view, a new record updates the badge
      const nl = next.live;
      if (nl.changed > changed || nl.rollout !== L.rollout) {
        changed = nl.changed;
        const other = nl.rollout !== L.rollout;
        element.__tvKey = next.key; element.__tvSrc = next.src;
        if (other || !view.grow(next)) view = remount(next, other ? null : view.state());
      }
      L = nl;
      view.showLive(L);
      if (L.state !== "running") stop();
      return true;
    }
    function sibling(k) { rollout = k; changed = 0; clearTimeout(timer); poll(); }
    function stop() { stopped = true; clearTimeout(timer); }
    async function poll() {
      if (stopped || element.__tvLive !== me || !element.isConnected) return;
      try {
        me.polls++;
        const r = await server.live({run: L.run, rollout, version: changed});
        if (r.error) { view.showLive({...L, state: "failed", message: r.error}); stop(); return; }
        if (r.opened) apply(JSON.parse(r.opened));
        else { L = r.live; view.showLive(L); if (L.state !== "running") stop(); }
      } catch (e) { /* a missed answer: ask again next time */ }
      if (!stopped) timer = setTimeout(poll, LIVE_POLL_MS);
    }
    element.__tvLive = me;
    if (L.state === "running") timer = setTimeout(poll, LIVE_POLL_MS); else stop();
    return me;
  }

  // -- adapters ----------------------------------------------------------------------------------------
  function mountInApp(element, props, server, watch) {  // inside gr.HTML: chunks come from server functions
    const api = {
      chunk: (q) => server.chunk({...q, key: element.__tvKey}),
      training: () => server.training({key: element.__tvKey}),
      trainer: (q) => server.trainer({...q, key: element.__tvKey}),
      export: (q) => server.export({...q, key: element.__tvKey}),
      fileUrl: (path) => new URL("gradio_api/file=" + encodeURI(path).replace(/[?#]/g, encodeURIComponent),
                                 String((window.gradio_config && window.gradio_config.root) || window.location.origin).replace(/[/]?$/, "/")).toString(),
      sibling: (k) => element.__tvLive && element.__tvLive.sibling(k),
      cancelRun: () => element.__tvLive && server.live_cancel({run: element.__tvLive.run}),
      onState: (s) => {
        const u = new URL(window.location.href);
        if (element.__tvSrc) u.searchParams.set("src", element.__tvSrc); else u.searchParams.delete("src");
        for (const [k, v] of Object.entries(s)) u.searchParams.set(k, v);
        window.history.replaceState(null, "", u.toString());
      },
    };
    // The page is built with the default rollout in it. A deep link (?src, ?turn...) is answered by the
    // page-load event instead: skip the built value rather than paint the wrong view first.
    const q = new URLSearchParams(window.location.search);
    const deepLink = ["src", "turn", "mode", "scope"].some((k) => q.has(k));
    function start() {
      const box = element.querySelector(".tv-mount");
      if (!box || !props.value) return;
      const opened = JSON.parse(props.value);
      if (opened.built && deepLink) { box.innerHTML = "<div class='tv-dim' style='padding:12px'>opening the link…</div>"; return; }
      if (opened.error_html) {  // a message (or the index's empty value) replaces the view: its listeners retire
        element.__tvLive = null; box.__tvMounts = (box.__tvMounts || 0) + 1; box.innerHTML = opened.error_html; return;
      }
      const watched = element.__tvLive;
      if (opened.live && watched && watched.run === opened.live.run) { watched.apply(opened); return; }  // in place
      const show = (o, keep) => {
        element.__tvKey = o.key; element.__tvSrc = o.src;
        const v = mount(box, keep ? {...o, initial: {turn: keep.turn, mode: keep.mode, scope: keep.scope}} : o, api, !!o.built);
        window.__traceView = {...v, state: () => ({...v.state(), key: element.__tvKey}), watching: () => element.__tvLive};
        return v;
      };
      if (opened.live) watchRun(element, opened, server, show);
      else { element.__tvLive = null; show(opened); }
    }
    start();
    watch("value", start);
  }

  function mountExport(dataElement, root) {  // an exported file: every chunk it can show is embedded
    const D = JSON.parse(dataElement.textContent);
    const absent = "not included in this export: export this turn alone to get its full context";
    const folded = "not in this export (it holds a bounded number of tokens): open the rollout in the app to see these";
    const api = {
      chunk: async (q) => {  // chunks[scope][turn or row][chunk index]; a scope present in part was folded
        const scope = (D.chunks[q.scope] || {})[q.scope === "row" ? String(q.row) : String(q.turn)];
        return scope && scope[String(q.index)] ? scope[String(q.index)] : {error: scope ? folded : absent};
      },
      training: async () => D.training,
    };
    if (D.trainer) {  // every part at the band and advantage that were on screen (viewer/export.py)
      api.trainer = async (q) => q.summary ? D.trainer.summary[q.part]
        : ((D.trainer.turns[q.part] || {})[String(q.turn)] || {error: "this export has no trainer numbers for this turn"});
    }
    if (window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches) document.body.classList.add("dark");
    return mount(root, {...D.opened, note: D.note}, api);
  }

  return {mount, mountInApp, mountExport};
})();
