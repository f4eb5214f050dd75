// -- a watched capture: running badge with elapsed time and stage, follow, a group's rollouts ----------
import {el} from "../dom.js";
import {fmt, refused, target} from "./format.js";
import {mount} from "./mount.js";

/** What the badge's buttons do: follow the newest turn, follow another rollout of the group, cancel the run.
 *  @typedef {{follow: () => void, sibling: (k: number) => void, cancel: (() => void) | null}} LiveActions */

/** @param {HTMLElement} bar @param {LiveActions} on */
export function followBar(bar, on) {
  /** @type {Live | null} */
  let L = null;
  /** @type {ReturnType<typeof setInterval> | undefined} */
  let timer;
  let started = 0, shownKey = "";
  /** @type {boolean | null} */
  let shownFollow = null;
  /** @param {number} s */
  const clock = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
  /** @type {Record<Live["state"], string>} */
  const words = {running: "running", done: "captured", cancelled: "cancelled", failed: "failed"};
  function tick() {
    const t = bar.querySelector(".tv-live-clock");
    if (t && L) t.textContent = clock(L.state === "running" ? (Date.now() - started) / 1000 : L.elapsed_s);
  }
  /** @param {Live} next @param {boolean} isFollowing */
  function show(next, isFollowing) {
    L = next;
    started = Date.now() - 1000 * next.elapsed_s;
    const running = L.state === "running";
    const what = running ? `${L.stage} · ${fmt(L.calls)} turn${L.calls === 1 ? "" : "s"} so far`
      : L.state === "done" ? "the written artifact is on screen"
      : L.state === "cancelled" ? "what was seen before the capture stopped: nothing was written"
      : L.message || "the capture failed";
    const cancel = running && !!on.cancel;
    bar.hidden = false;
    // drawn afresh only when what it says changed: a button under the pointer stays put
    const key = JSON.stringify([L.state, L.recorded_at, what, next.rollout, L.siblings, cancel]);
    if (key !== shownKey) {
      shownKey = key; shownFollow = null;
      const sibs = L.siblings.length ? el("span", {class: "tv-group", role: "group", "aria-label": "rollout to follow"}, ...L.siblings.map((s) =>
        el("button", {"data-live-rollout": s.rollout, "aria-pressed": String(s.rollout === next.rollout), class: s.rollout === next.rollout ? "on" : "",
                      title: `follow rollout ${s.rollout} of the group (${s.stage})`, text: `rollout ${s.rollout}: ${s.turns} turn${s.turns === 1 ? "" : "s"}`}))) : null;
      bar.replaceChildren(el("div", {class: `tv-live ${L.state}`, "data-testid": "live-badge", "data-state": L.state, "data-recorded-at": L.recorded_at || "", role: "status"},
        el("span", {class: "tv-live-dot", "aria-hidden": "true"}), el("b", {text: words[L.state]}), " · ", el("span", {class: "tv-live-clock"}), " · ",
        el("span", {text: what}), " ", L.state === "cancelled" || L.state === "failed" ? null : el("span", {class: "tv-live-follow"}), sibs, " ",
        cancel ? el("button", {class: "tv-live-cancel", "data-testid": "live-cancel", title: "stop the agent and the sandbox; what was seen stays, nothing is written", text: "cancel"}) : null));
    }
    following(isFollowing);
    tick();
    clearInterval(timer);
    if (running) timer = setInterval(() => { if (!bar.isConnected) clearInterval(timer); else tick(); }, 1000);
  }
  /** @param {boolean} on */
  function following(on) {
    const f = bar.querySelector(".tv-live-follow");
    if (!f || !L || shownFollow === on) return;
    shownFollow = on;
    if (L.state !== "running") { f.replaceChildren(); return; }
    f.replaceChildren(on ? el("span", {class: "tv-dim", "data-testid": "following", text: "following the newest turn"})
      : el("button", {class: "tv-follow-btn", "data-testid": "follow", title: "go to the newest turn and stay on it as turns arrive", text: "follow ↓"}));
  }
  bar.addEventListener("click", (ev) => {
    const b = target(ev).closest("button");
    if (!b) return;
    ev.stopPropagation();
    if (b.classList.contains("tv-follow-btn")) on.follow();
    else if (b.classList.contains("tv-live-cancel") && on.cancel) { b.disabled = true; on.cancel(); }
    else if (b.dataset.liveRollout !== undefined) on.sibling(Number(b.dataset.liveRollout));
  });
  return {show, following};
}

// The page side of a watched capture (viewer/ui/live.py): ask about twice a second for the run's record
// and, when the rollout changed, its new value; grow the view in place. Stops when the run has ended,
// or when this element shows something else.
const LIVE_POLL_MS = 500;  // with the proxy watched once a second (capture/live.py), a call is painted within 2 s
/** An `Opened` record of a capture being watched. @param {Opened} o @returns {o is Opened & {live: Live}} */
export const isLive = (o) => !!o.live;

/** A watched capture (watchRun): its run, how a new value of it is shown, which rollout of the group it follows;
 *  polls: the questions asked (the tests count them).
 *  @typedef {{run: string, apply: (next: Opened) => boolean, sibling: (k: number) => void, polls: number}} Watched */
/** mountInApp's state: the rollout on screen (its server key, its source) and the capture watched.
 *  @typedef {{key: string | null, src: string | null, live: Watched | null}} AppState */

/** @param {AppState} app @param {HTMLElement} element @param {Opened & {live: Live}} opened @param {ViewServer} server
 *  @param {(o: Opened, keep?: ViewPlace | null) => ReturnType<typeof mount>} remount */
export function watchRun(app, element, opened, server, remount) {
  let L = opened.live, changed = L.changed, rollout = L.rollout, stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let view = remount(opened);
  /** @type {Watched} */
  const me = {run: L.run, apply, sibling, polls: 0};
  /** @param {Opened} next */
  function apply(next) {  // a value of this run: newer content grows the view, a new record updates the badge
    const nl = next.live;
    if (!nl) return false;  // a value of this run always carries its record
    if (nl.changed > changed || nl.rollout !== L.rollout) {
      changed = nl.changed;
      const other = nl.rollout !== L.rollout;
      app.key = next.key; app.src = next.src;
      if (other || !view.grow(next)) view = remount(next, other ? null : view.state());
    }
    L = nl;
    view.showLive(L);
    if (L.state !== "running") stop();
    return true;
  }
  /** @param {number} k */
  function sibling(k) { rollout = k; changed = 0; clearTimeout(timer); poll(); }
  function stop() { stopped = true; clearTimeout(timer); }
  async function poll() {
    if (stopped || app.live !== me || !element.isConnected) return;
    try {
      me.polls++;
      const r = await server.live({run: L.run, rollout, version: changed});
      if (refused(r)) { view.showLive({...L, state: "failed", message: r.error}); stop(); return; }
      if (r.opened) apply(JSON.parse(r.opened));
      else if (r.live) { L = r.live; view.showLive(L); if (L.state !== "running") stop(); }
    } catch (e) { /* a missed answer: ask again next time */ }
    if (!stopped) timer = setTimeout(poll, LIVE_POLL_MS);
  }
  app.live = me;
  if (L.state === "running") timer = setTimeout(poll, LIVE_POLL_MS); else stop();
  return me;
}
