// The token view: a small outline arrives once; tokens are fetched in chunks as they scroll into view.
// One shared hover listener serves every token; far-away chunks are emptied so page memory stays bounded.
// Used twice: inside the Gradio app (chunks come from a server function) and in exported HTML files
// (chunks come from data embedded in the page). Every string inserted as HTML is escaped here or was
// escaped by the server (the *_html fragments).
const TraceView = (() => {
  const MODES = ["mask", "logprob", "drift"];
  const KEEP_CHUNKS = 12;
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
  const shown = (s) => esc(s).replace(/ /g, "<i class='ws'>·</i>").replace(/\t/g, "<i class='ws'>→</i>")
    .replace(/\r/g, "<i class='ws'>␍</i>").replace(/\n/g, "<i class='ws'>↵</i><br>");
  const lpColor = (lp) => {  // p = 1 white .. p -> 0 red
    const p = Math.exp(lp);
    const a = Math.min(1, Math.max(0, 1 - p));
    return `rgba(220, 38, 38, ${(0.08 + 0.85 * a).toFixed(3)})`;
  };
  const fmt = (n) => Number(n).toLocaleString("en-US");

  function mount(root, outline, api, initial) {
    const O = outline;
    const st = {turn: 0, mode: "mask", scope: "new", row: 0, ...initial};
    st.turn = Math.min(Math.max(0, st.turn | 0), O.turns.length - 1);
    if (!MODES.includes(st.mode)) st.mode = "mask";
    if (!["new", "full", "row"].includes(st.scope)) st.scope = "new";
    let training = null;  // TRL rows, fetched on first use
    let chunks = new Map(), rendered = new Set(), observer = null, epoch = 0;

    root.innerHTML = `
      <div class="tv" data-testid="trace-view">
        <div class="tv-headerbox">${O.header_html}</div>
        <div class="tv-main">
          <nav class="tv-nav" aria-label="turns"></nav>
          <section class="tv-turn">
            <div class="tv-toolbar">
              <b class="tv-turn-title"></b>
              <span class="tv-group" role="group" aria-label="mode">${MODES.map((m) => `<button data-mode="${m}">${m}</button>`).join("")}</span>
              <span class="tv-group" role="group" aria-label="scope"><button data-scope="new">new in turn</button><button data-scope="full">full context</button><button data-scope="row">training rows</button></span>
              <button class="tv-jump-btn" title="jump to the generated tokens (g)">↓ generated</button>
              <button class="tv-present-btn" title="presentation mode (p)">present</button>
              <button class="tv-help-btn" title="keyboard shortcuts (?)">?</button>
            </div>
            <div class="tv-legend"></div>
            <div class="tv-boundary-box"></div>
            <div class="tv-rowbar" hidden></div>
            <div class="tv-tokens" tabindex="0" data-testid="tokens"></div>
            <h4 class="tv-sub">Tool calls</h4>
            <div class="tv-tools-box"></div>
          </section>
        </div>
        <div class="tv-lower">
          <section><h3>Tests</h3>${O.tests_html}</section>
          <section><h3>Reward</h3>${O.reward_html}</section>
        </div>
        <div class="tv-tip" hidden></div>
        <div class="tv-help" hidden role="dialog" aria-label="keyboard shortcuts">
          <b>Keyboard</b>
          <table>
            <tr><td><kbd>j</kbd> <kbd>→</kbd></td><td>next turn</td></tr>
            <tr><td><kbd>k</kbd> <kbd>←</kbd></td><td>previous turn</td></tr>
            <tr><td><kbd>m</kbd></td><td>next mode (mask, logprob, drift)</td></tr>
            <tr><td><kbd>s</kbd></td><td>next scope (new in turn, full context, training rows)</td></tr>
            <tr><td><kbd>g</kbd></td><td>jump to the generated tokens</td></tr>
            <tr><td><kbd>p</kbd></td><td>presentation mode</td></tr>
            <tr><td><kbd>?</kbd></td><td>this help</td></tr>
            <tr><td><kbd>Esc</kbd></td><td>close help / leave presentation</td></tr>
          </table>
        </div>
      </div>`;
    const $ = (sel) => root.querySelector(sel);
    const nav = $(".tv-nav"), box = $(".tv-tokens"), tip = $(".tv-tip"), help = $(".tv-help");

    nav.innerHTML = O.turns.map((t, pos) => {
      const occ = O.max_ctx ? Math.round(100 * (t.np + t.no) / O.max_ctx) : 0;
      const drift = t.drift !== null ? `<span class="tv-driftmark" title="prefix drift at ${t.drift}">⚠ drift</span>` : "";
      const fail = t.failed ? `<span class="tv-failmark" title="a tool call failed">✗</span>` : "";
      return `<button class="tv-navitem${t.trained ? " trained" : ""}" data-turn="${pos}" data-testid="nav-turn">
        <span class="tv-nav-h">turn ${t.i} ${t.trained ? "<span class='tv-pill tr'>trained</span>" : "<span class='tv-pill'>not trained</span>"} ${drift}${fail}</span>
        <span class="tv-nav-tools">${t.tools.length ? t.tools.map(esc).join(", ") : "no tool call"}</span>
        <span class="tv-nav-n">prompt ${fmt(t.np)} · out ${fmt(t.no)} · new ${fmt(t.added)}</span>
        <span class="tv-occ" title="context ${fmt(t.np + t.no)} of the rollout's longest ${fmt(O.max_ctx)}"><span style="width:${occ}%"></span></span>
      </button>`;
    }).join("");

    function scopeRange() {
      const t = O.turns[st.turn];
      if (st.scope === "row") {
        const r = training && training.rows[st.row];
        return {start: 0, size: r ? r.n : 0};
      }
      const start = st.scope === "new" ? t.shared : 0;
      return {start, size: t.np + t.no - start};
    }

    function driftClass(pos) {
      const t = O.turns[st.turn];
      if (st.scope === "row") return "";
      if (pos >= t.np) return "d-out";
      if (t.drift !== null && pos >= t.drift && pos < t.held) return "d-rewritten";
      if (pos < t.shared) return "d-carried";
      return "d-new";
    }

    function spanHtml(c) {
      const out = [];
      for (let k = 0; k < c.ids.length; k++) {
        const pos = c.start + k, m = c.mask[k], kind = c.kind[k], lp = c.lp[k];
        let cls = "t k" + kind, style = "";
        if (st.mode === "logprob") {
          if (lp === null) cls += " nolp"; else style = ` style="background:${lpColor(lp)}"`;
        } else if (st.mode === "drift") cls += " " + driftClass(pos);
        const txt = kind === "2" ? "" : shown(c.text[k]);
        out.push(`<span class="${cls}" data-mask="${m}" data-i="${pos}"${style}>${txt}</span>`);
      }
      return out.join("");
    }

    function renderChunk(el, c) {
      el.innerHTML = spanHtml(c);
      el.style.minHeight = "";
      el.style.height = "";
      rendered.add(Number(el.dataset.c));
      if (rendered.size > KEEP_CHUNKS) evictFarFrom(Number(el.dataset.c));
    }

    function evictFarFrom(center) {
      const order = [...rendered].sort((a, b) => Math.abs(b - center) - Math.abs(a - center));
      while (rendered.size > KEEP_CHUNKS) {
        const c = order.shift();
        const el = box.querySelector(`.tv-chunk[data-c="${c}"]`);
        if (el) { el.style.height = el.offsetHeight + "px"; el.innerHTML = ""; }
        rendered.delete(c);
        chunks.delete(c);
      }
    }

    async function loadChunk(el) {
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

    function paintTokens() {
      epoch++;
      chunks = new Map(); rendered = new Set();
      if (observer) observer.disconnect();
      const {start, size} = scopeRange();
      const t = O.turns[st.turn];
      const n = Math.ceil(size / O.chunk);
      let html = "";
      if (st.scope === "new" && t.shared > 0) {
        html += `<button class="tv-collapsed" data-testid="collapsed-prefix">▸ ${fmt(t.shared)} tokens shared with turn ${t.i - 1} — show full context</button>`;
      }
      if (st.scope === "row" && !training) html += `<div class="tv-dim">asking TRL how it packs this rollout…</div>`;
      for (let c = 0; c < n; c++) {
        const est = Math.max(1.6, Math.min(O.chunk, size - c * O.chunk) / 14) * 1.6;  // about 14 tokens a line
        html += `<div class="tv-chunk" data-c="${c}" style="min-height:${est.toFixed(1)}em"></div>`;
      }
      if (!n && !(st.scope === "row" && !training)) html += `<div class="tv-dim">no tokens in this scope</div>`;
      box.innerHTML = html;
      box.scrollTop = 0;
      box.classList.toggle("untrained", !t.trained && st.scope !== "row");
      box.className = box.className.replace(/\bmode-\w+/g, "").trim() + " mode-" + st.mode;
      observer = new IntersectionObserver((entries) => {
        for (const e of entries) if (e.isIntersecting) loadChunk(e.target);
      }, {root: box, rootMargin: "600px 0px"});
      box.querySelectorAll(".tv-chunk").forEach((el) => observer.observe(el));
      const first = box.querySelector(".tv-chunk");
      if (first) loadChunk(first);  // do not wait for the observer's first callback
    }

    function repaintModeOnly() {  // same tokens, new colours: re-render from cached chunks
      box.className = box.className.replace(/\bmode-\w+/g, "").trim() + " mode-" + st.mode;
      for (const idx of rendered) {
        const el = box.querySelector(`.tv-chunk[data-c="${idx}"]`), c = chunks.get(idx);
        if (el && c) el.innerHTML = spanHtml(c);
      }
    }

    function legend() {
      const t = O.turns[st.turn];
      const L = {
        mask: `<span class="sw m0"></span>context (mask 0) <span class="sw m1"></span>generated (mask 1${t.trained || st.scope === "row" ? ", trained" : ", turn not trained"})`,
        logprob: `<span class="sw lp-hi"></span>p ≈ 1 <span class="sw lp-lo"></span>p ≈ 0 <span class="sw nolp"></span>no logprob recorded`,
        drift: `<span class="sw d-carried"></span>carried over exactly <span class="sw d-rewritten"></span>rewritten (drift) <span class="sw d-new"></span>new context <span class="sw d-out"></span>generated`,
      }[st.mode];
      const a = t.audit, warn = [];
      if (a.ones_in_prompt) warn.push(`${fmt(a.ones_in_prompt)} prompt tokens have mask 1`);
      if (a.zeros_in_output) warn.push(`${fmt(a.zeros_in_output)} generated tokens have mask 0`);
      if (a.trained_without_logprobs) warn.push("trained turn without logprobs");
      return L + (warn.length ? ` <span class="tv-badge warn">mask audit: ${esc(warn.join("; "))}</span>` : "");
    }

    async function showTraining() {
      if (!training) {
        training = await api.training();
        if (st.scope === "row") update(false);
        return;
      }
    }

    function update(scrollNav = true) {
      const t = O.turns[st.turn];
      root.querySelectorAll(".tv-navitem").forEach((el) => el.classList.toggle("active", Number(el.dataset.turn) === st.turn));
      root.querySelectorAll("[data-mode]").forEach((el) => el.classList.toggle("on", el.dataset.mode === st.mode));
      root.querySelectorAll("[data-scope]").forEach((el) => el.classList.toggle("on", el.dataset.scope === st.scope));
      $(".tv-turn-title").textContent = st.scope === "row" ? "TRL training rows" : `turn ${t.i}${t.trained ? "" : " (not trained)"}`;
      $(".tv-legend").innerHTML = legend();
      $(".tv-boundary-box").innerHTML = st.scope === "row" ? "" : t.boundary_html + t.engine_html;
      $(".tv-tools-box").innerHTML = t.tools_html;
      const rb = $(".tv-rowbar");
      rb.hidden = st.scope !== "row";
      if (st.scope === "row") {
        if (!training) { showTraining(); rb.innerHTML = ""; }
        else rb.innerHTML = training.html + (training.rows.length ? `<div class="tv-group">${training.rows.map((r, k) =>
          `<button data-row="${k}" class="${k === st.row ? "on" : ""}">row ${k}: turns ${r.turns.join(", ")}</button>`).join("")}</div>` : "");
      }
      paintTokens();
      if (scrollNav) { const a = nav.querySelector(".active"); if (a && a.scrollIntoView) a.scrollIntoView({block: "nearest"}); }
      if (api.onState) api.onState({...st});
    }

    function jumpToOutput() {  // scroll the first generated token's chunk into view; the observer loads it
      const t = O.turns[st.turn];
      if (st.scope === "row") return;
      const {start} = scopeRange();
      const idx = Math.floor(Math.max(0, t.np - start) / O.chunk);
      const el = box.querySelector(`.tv-chunk[data-c="${idx}"]`);
      if (!el) return;
      el.scrollIntoView({block: "start"});
      const settle = () => {  // chunks above may load and change height: re-centre once they have
        const first = box.querySelector(`.t[data-i="${t.np}"]`);
        if (first) first.scrollIntoView({block: "center"});
      };
      loadChunk(el).then(() => { settle(); setTimeout(settle, 250); });
    }

    function go(turn) { st.turn = Math.min(Math.max(0, turn), O.turns.length - 1); if (st.scope === "row") st.scope = "new"; update(); }
    function setMode(m) { st.mode = m; root.querySelectorAll("[data-mode]").forEach((el) => el.classList.toggle("on", el.dataset.mode === st.mode)); $(".tv-legend").innerHTML = legend(); repaintModeOnly(); if (api.onState) api.onState({...st}); }
    function setScope(s) { st.scope = s; update(false); }
    function present(on) {
      const v = on === undefined ? !document.body.classList.contains("tv-present") : on;
      document.body.classList.toggle("tv-present", v);
    }

    root.addEventListener("click", (ev) => {
      const b = ev.target.closest("button");
      if (!b || !root.contains(b)) return;
      if (b.dataset.turn !== undefined) go(Number(b.dataset.turn));
      else if (b.dataset.mode) setMode(b.dataset.mode);
      else if (b.dataset.scope) setScope(b.dataset.scope);
      else if (b.dataset.row !== undefined) { st.row = Number(b.dataset.row); update(false); }
      else if (b.classList.contains("tv-collapsed")) setScope("full");
      else if (b.classList.contains("tv-present-btn")) present();
      else if (b.classList.contains("tv-jump-btn")) jumpToOutput();
      else if (b.classList.contains("tv-help-btn")) help.hidden = !help.hidden;
    });

    // one hover listener for every token
    const tokenInfo = (span) => {
      const pos = Number(span.dataset.i), idx = Math.floor((pos - scopeRange().start) / O.chunk), c = chunks.get(idx);
      if (!c) return "";
      const k = pos - c.start, lp = c.lp[k];
      const lpText = lp === null ? "no logprob" : `logprob ${lp.toFixed(4)} (p = ${Math.exp(lp).toFixed(3)})`;
      const text = c.kind[k] === "2" ? "(joined with the token before)" : JSON.stringify(c.text[k]);
      return `position ${fmt(pos)} · id ${c.ids[k]} · mask ${c.mask[k]} · ${lpText}\n${text}`;
    };
    box.addEventListener("mouseover", (ev) => {
      const s = ev.target.closest(".t");
      if (!s) return;
      tip.textContent = tokenInfo(s);
      tip.hidden = false;
      const r = s.getBoundingClientRect();
      tip.style.left = Math.min(r.left, window.innerWidth - 360) + "px";
      tip.style.top = (r.bottom + 6) + "px";
    });
    box.addEventListener("mouseleave", () => { tip.hidden = true; });
    box.addEventListener("click", (ev) => {
      const s = ev.target.closest(".t");
      if (!s) return;
      box.querySelectorAll(".t.pinned").forEach((x) => x.classList.remove("pinned"));
      s.classList.add("pinned");
      tip.textContent = tokenInfo(s);
      tip.hidden = false;
    });

    const onKey = (ev) => {
      if (!document.body.contains(root)) { document.removeEventListener("keydown", onKey); return; }
      const tag = (ev.target && ev.target.tagName) || "";
      if (/INPUT|TEXTAREA|SELECT/.test(tag) || ev.target.isContentEditable || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key;
      if (k === "j" || k === "ArrowRight") go(st.turn + 1);
      else if (k === "k" || k === "ArrowLeft") go(st.turn - 1);
      else if (k === "m") setMode(MODES[(MODES.indexOf(st.mode) + 1) % MODES.length]);
      else if (k === "s") setScope({new: "full", full: "row", row: "new"}[st.scope]);
      else if (k === "p") present();
      else if (k === "g") jumpToOutput();
      else if (k === "?") help.hidden = !help.hidden;
      else if (k === "Escape") { help.hidden = true; present(false); }
      else return;
      ev.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    if (st.scope === "row") showTraining();
    update();
    return {go, setMode, setScope, state: () => ({...st})};
  }

  return {mount};
})();
