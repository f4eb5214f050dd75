// The DOM helpers the pages share (collection_index.js, find_panel.js, run_page.js, group_map.js): an element with its
// attributes and children, a text cut to a label's length, a move to a new place in the URL that every page's part
// hears of, the word that an action is under way, a component's value read as the server sent it, why a source
// cannot be shown. Text reaches the page only as textContent or an attribute's value, never as markup.
// Each page imports what it uses; the build (viewer/assets/build.py) puts a copy inside each page's one script.

/** @typedef {string | number | boolean | null | undefined} AttrValue */

/**
 * An element `tag` with `attrs` (`text` is its textContent; null, undefined and false are left out, true is an
 * empty attribute) and `children` (null and undefined are left out).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Record<string, AttrValue> | null} [attrs] @param {...(Node | string | null | undefined)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.textContent = String(v); else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/**
 * Bring an answer the reader asked for into sight: scrolled to the window's top when it starts in the window's lower
 * part or below it (an answer drawn below the fold looks as if nothing happened).
 * @param {HTMLElement} e
 */
export function intoSight(e) {
  if (e.getBoundingClientRect().top > window.innerHeight * 0.6) e.scrollIntoView({block: "start"});
}

/**
 * Give a presentation's scrolling box the keys a presenter's clicker sends (PageDown, PageUp, Space, Home, End): a
 * box fixed over the page that scrolls on its own hears them only when it has the focus (the page under it does
 * not move). A field inside it keeps the focus; a button does not (Space would press it: the presentation button's
 * own press leaves presentation).
 * @param {HTMLElement} box
 */
export function keyScrolled(box) {
  const at = document.activeElement;
  if (at && box.contains(at) && /^(INPUT|TEXTAREA|SELECT)$/.test(at.tagName)) return;
  if (!box.hasAttribute("tabindex")) box.tabIndex = -1;
  box.focus({preventScroll: true});
}

/**
 * A presentation button's label: "present", and while presenting "leave (Esc)" (each page's CSS shows one of them
 * by its presentation class), so the way out is on screen.
 * @returns {HTMLElement[]}
 */
export function presentLabel() {
  return [el("span", {class: "present-off", text: "present"}), el("span", {class: "present-on", text: "leave (Esc)"})];
}

/**
 * The page's place is `u` now: a history entry with state `push` (Back returns through it), or, without, in place
 * of the current one. Parts that depend on the place (the search panel folds away on a group or a rollout) hear of
 * it as "rtv-place" on document, as they hear of Back as "popstate" on window.
 * @param {URL} u @param {object | null} [push]
 */
export function goTo(u, push) {
  if (push) history.pushState(push, "", u.toString()); else history.replaceState(history.state, "", u.toString());
  document.dispatchEvent(new Event("rtv-place"));
}

const WORKING_MS = 300;  // an action that takes longer says so
/**
 * Says `text` at the foot of the window once an action (a Gradio event: its answer redraws a part of the page) has
 * taken WORKING_MS, until a part draws an answer from the server ("rtv-shown" on document) or two minutes pass.
 * @param {string} text
 */
export function working(text) {
  const shown = setTimeout(() => {
    let box = document.getElementById("rtv-working");
    if (!box) {  // on body, outside every component: styled here (a component's stylesheet is scoped to it)
      box = el("div", {id: "rtv-working", role: "status", "aria-live": "polite", "data-testid": "working",
        style: "position:fixed;left:50%;bottom:18px;transform:translateX(-50%);z-index:10001;padding:8px 16px;" +
               "border-radius:8px;background:#1e293b;color:#f8fafc;border:1px solid #94a3b8;font-size:15px;" +
               "box-shadow:0 2px 10px rgba(0,0,0,.35)"});
      document.body.append(box);
    }
    box.textContent = text;
    box.hidden = false;
  }, WORKING_MS);
  const done = () => {
    clearTimeout(shown); clearTimeout(limit);
    document.removeEventListener("rtv-shown", done);
    const box = document.getElementById("rtv-working");
    if (box) box.hidden = true;
  };
  const limit = setTimeout(done, 120_000);
  document.addEventListener("rtv-shown", done);
}

/**
 * A component's value as the server sent it: a JSON text (Gradio may also hand over the parsed object). Tells the
 * page's parts that an answer is being drawn ("rtv-shown").
 * @param {{value: unknown}} props @returns {any}
 */
export function sentValue(props) {
  document.dispatchEvent(new Event("rtv-shown"));
  return typeof props.value === "string" ? JSON.parse(props.value) : props.value;
}

/**
 * A row's findings cell (the index's and the group map's): one badge per rule it trips, "-" for none; unknown
 * (null): "…" while the search panel computes them (`pending`), else "-".
 * @param {string[] | null} rules @param {boolean} pending @param {string} testid @returns {HTMLTableCellElement}
 */
export function findingsCell(rules, pending, testid) {
  const cell = el("td", {class: "ci-findings", "data-testid": testid});
  if (rules === null) {
    cell.append(pending ? el("span", {class: "ci-dim", title: "not computed yet: the search panel computes the findings", text: "…"}) : "-");
  } else if (!rules.length) {
    cell.textContent = "-";
  } else {
    cell.append(...rules.map((x) => el("span", {class: "ci-finding", "data-rule": x, text: x})));
  }
  return cell;
}

/**
 * Why a source cannot be shown (viewer/contract.py `Problems`): "Cannot open <source>" over the list, as text.
 * @param {Problems} p @returns {HTMLDivElement}
 */
export function problemsBox(p) {
  return el("div", {class: "tv-error", role: "alert"}, el("b", {text: `Cannot open ${p.source}`}),
    el("ul", null, ...p.items.map((t) => el("li", {text: t}))));
}

/**
 * At most `limit` characters (code points, as Python counts them) of a one-line label, with an ellipsis when cut
 * (viewer/render/safe.py `short`).
 * @param {string} value @param {number} limit
 */
export function short(value, limit) {
  if (value.length <= limit) return value;
  const cs = Array.from(value);
  return cs.length <= limit ? value : cs.slice(0, limit - 1).join("") + "…";
}

/**
 * At most `limit` characters (code points), its start cut: a long path or source named by its end.
 * @param {string} value @param {number} limit
 */
export function end(value, limit) {
  if (value.length <= limit) return value;
  const cs = Array.from(value);
  return cs.length <= limit ? value : "…" + cs.slice(cs.length - (limit - 1)).join("");
}

/**
 * At most `limit` characters (code points), cut in the middle: a path's start and its last folder both stay.
 * @param {string} value @param {number} limit
 */
export function middle(value, limit) {
  if (value.length <= limit) return value;
  const cs = Array.from(value);
  if (cs.length <= limit) return value;
  const head = Math.floor((limit - 1) / 2);
  return cs.slice(0, head).join("") + "…" + cs.slice(cs.length - (limit - 1 - head)).join("");
}
