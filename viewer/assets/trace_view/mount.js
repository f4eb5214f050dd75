// The token view. It receives one `Opened` record (viewer/contract.py: the outline, this visitor's
// initial place, the first chunk) and asks for more token chunks as they scroll into view. Parts, each
// a small function over one element: the navigator (turns), the toolbar (modes, scopes, actions), the
// token pane (chunks, colours, the keyboard cursor) and the tooltip. Two adapters at the end mount it
// inside the Gradio app (chunks from a server function) and in an exported HTML file (chunks embedded).
// Every string inserted as HTML is escaped here or was escaped by the server (the *_html fragments).

// -- the whole view --------------------------------------------------------------------------------
/** @param {HTMLElement} root @param {Opened & {note?: string | null}} opened @param {TraceApi} api */
function mount(root, opened, api, quiet = false) {  // quiet: leave the URL alone until the reader moves
  // The trainer's modes need a rescore part and a way to ask for its numbers (an export has none).
  const hasTrainer = !!(opened.outline.trainer && api.trainer);
  const O = hasTrainer ? opened.outline : {...opened.outline, modes: opened.outline.modes.filter((m) => !m.trainer)};
  const modes = O.modes.map((m) => m.id), scopes = O.scopes.map((s) => s.id);
  /** @type {ViewPlace} */
  const st = {turn: 0, mode: "mask", scope: "new", row: 0, follow: false, ...(opened.initial || {})};
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
  const $ = (sel) => /** @type {HTMLElement} */ (root.querySelector(sel));
  const view = $(".tv"), box = $(".tv-tokens"), tip = $(".tv-tip"), help = $(".tv-help");
  // Listeners sit on `view`, which a re-mount replaces; the one on `document` retires once `view` is gone.
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
  st.foundTurn = st.turn;  // a search hit's tokens (st.found) are marked on the turn it opened on
  /** @type {Training | null} */
  let training = null;  // TRL rows, fetched on first use
  let nav = navPart($(".tv-nav"), O);
  const bar = toolbarPart($(".tv-toolbar"), O);
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
    if (isTrainerMode(O, st.mode)) { trainerNeed(); pane.recolour(); pane.reland(story()); }
  }, () => tellState()) : null;
  function trainerNeed() {  // the panel shows only with a trainer mode: the tokens keep the first screen otherwise
    const on = !!trainer && isTrainerMode(O, st.mode);
    $(".tv-trainer-box").hidden = !on;
    $(".tv-nav").classList.toggle("tv-tr-on", on);  // each turn's trainer line, with the trainer's modes only
    if (on) trainer.show();
    if (on && st.scope !== "row") trainer.need(st.turn);
  }
  const pane = tokenPane(box, O, api, st, scopeRange, first, trainer);
  const story = () => {  // where the turn's story is: see the token pane's goTo
    if (st.scope === "row") return null;
    const t = O.turns[st.turn];
    const hit = st.found && st.turn === st.foundTurn ? st.found[0] : null;
    return {at: hit !== null ? hit : t.drift_at !== null ? t.drift_at : t.prompt_tokens, gen: t.prompt_tokens,
            end: hit !== null ? Math.min(st.found[1], t.prompt_tokens + t.output_tokens) - 1 : t.prompt_tokens + t.output_tokens - 1,
            focus: trainer && isTrainerMode(O, st.mode) ? trainer.focus(st.turn) : null};
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
    if (rowMode && notInRows(O, st.mode)) st.mode = "mask";
    trainerNeed();
    bar.show(st, rowMode ? (row ? `TRL training row ${st.row} of ${training.rows.length}: turns ${row.turns.join(", ")}` : "TRL training rows")
                         : `turn ${t.index}${turnFate(O, t)}`);
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
  /** @param {Opened} next */
  function grow(next) {
    const N = next.outline;
    if (!!N.trainer !== hasTrainer) return false;
    Object.assign(O, hasTrainer ? N : {...N, modes: N.modes.filter((m) => !m.trainer)});
    $(".tv-summary-box").innerHTML = O.summary_html;
    $(".tv-headerbox").innerHTML = O.header_html;
    $(".tv-tests-box").innerHTML = O.tests_html;
    $(".tv-reward-box").innerHTML = O.reward_html;
    nav = navPart($(".tv-nav"), O);
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
  const state = () => ({...st, trainer: trainer ? trainer.state() : null, advantage: O.advantage === undefined ? null : O.advantage,
                        run: O.run || null});  // a run's rollout: its export carries its place and the trainer's fate
  function tellState() {
    // a search hit's marks stay in the URL while its turn is on screen, so a reload or a shared link keeps them
    const found = st.found && st.turn === st.foundTurn ? `${st.found[0]}-${st.found[1]}` : "";
    if (mounted && api.onState) api.onState({turn: st.turn, mode: st.mode, scope: st.scope, found, ...(trainer ? {part: trainer.state().part} : {})});
  }

  function go(turn, auto = false) {
    st.turn = Math.min(Math.max(0, turn), O.turns.length - 1);
    if (!auto && opened.live) { st.follow = st.turn === O.turns.length - 1; liveBar.following(st.follow); }
    if (st.scope === "row") st.scope = "new";
    update();
  }
  function setMode(m) {
    if (st.scope === "row" && notInRows(O, m)) return;
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
  let exportUrl = "";
  async function doExport(what) {  // the server builds the page; the browser saves it (no file on the server)
    const out = $(".tv-export-status");
    out.textContent = "writing the file…";
    /** @type {Answer<Exported>} */
    let got;
    try { got = await api.export({what, ...state()}); } catch (e) { got = {error: String(e && e.message || e)}; }
    if (!got || refused(got)) { out.innerHTML = `<span class="tv-err">${esc(refused(got) ? got.error : "no answer from the server")}</span>`; return; }
    if (exportUrl) URL.revokeObjectURL(exportUrl);
    exportUrl = URL.createObjectURL(new Blob([got.html], {type: "text/html"}));
    out.innerHTML = `<a href="${esc(exportUrl)}" download="${esc(got.name)}" data-testid="export-link">${esc(got.name)}</a> · ${esc(got.size)}` +
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

  view.addEventListener("click", (ev) => {
    const b = target(ev).closest("button");
    if (!b || !view.contains(b) || b.disabled) return;
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
    const s = /** @type {HTMLElement} */ (target(ev).closest(".t"));
    if (s) showTip(s, pane.info(Number(s.dataset.i)));
  });
  box.addEventListener("mouseleave", () => { if (pane.cursorPos() === null) tip.hidden = true; });
  box.addEventListener("click", (ev) => {
    const s = /** @type {HTMLElement} */ (target(ev).closest(".t"));
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

  const onKey = (ev) => {  // one listener per mount: a re-mount into the same element retires this one
    if (!view.isConnected) { document.removeEventListener("keydown", onKey); return; }
    const tag = (ev.target && ev.target.tagName) || "";
    if (/INPUT|TEXTAREA|SELECT/.test(tag) || ev.target.isContentEditable || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key;
    if (k === "j" || k === "ArrowRight") go(st.turn + 1);
    else if (k === "k" || k === "ArrowLeft") go(st.turn - 1);
    else if (k === "m") { const usable = modes.filter((m) => !(st.scope === "row" && notInRows(O, m))); setMode(usable[(usable.indexOf(st.mode) + 1) % usable.length]); }
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
  for (const ev of ["pointerdown", "wheel", "keydown", "touchstart"]) view.addEventListener(ev, () => { touched = true; }, {once: true, passive: true});
  // A search hit's marks (a link's `found=`) are brought into the window too, until the reader touches anything.
  const showFound = () => {
    const t = st.found && st.turn === st.foundTurn && !touched ? box.querySelector(".t.tv-found") : null;
    if (t) t.scrollIntoView({block: "nearest"});
  };
  for (const ms of [250, 800, 2000]) setTimeout(() => { if (!touched && !view.classList.contains("present")) { pane.fit(true); pane.goTo(story() || 0).then(showFound); } }, ms);
  // A resize re-wraps the lines: fit the pane again and, unless the reader has scrolled it, land on its story
  // again (a search hit's marked tokens stay on screen). One listener per mount, retired with the view.
  let resizing = 0;
  const onResize = () => {
    if (!view.isConnected) { window.removeEventListener("resize", onResize); return; }
    cancelAnimationFrame(resizing);
    resizing = requestAnimationFrame(() => { pane.fit(true); pane.reland(story()).then(showFound); });
  };
  window.addEventListener("resize", onResize);
  if (document.body.classList.contains("tv-present")) present(true);  // a re-mount keeps presentation on
  return {go, setMode, setScope, present, grow, showLive, state};
}
