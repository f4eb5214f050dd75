// The DOM helpers the pages share (collection_index.js, find_panel.js, run_page.js): an element with its
// attributes and children, and a move to a new place in the URL that every page's part hears of. Text reaches the
// page only as textContent or an attribute's value, never as markup.
// viewer/assets `read` puts this file before each page that uses it (USES), inside that page's own script.

/** @typedef {string | number | boolean | null | undefined} AttrValue */

/**
 * An element `tag` with `attrs` (`text` is its textContent; null, undefined and false are left out, true is an
 * empty attribute) and `children` (null and undefined are left out).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Record<string, AttrValue> | null} [attrs] @param {...(Node | string | null | undefined)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.textContent = String(v); else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/**
 * The page's place is `u` now: a history entry with state `push` (Back returns through it), or, without, in place
 * of the current one. Parts that depend on the place (the search panel folds away on a group or a rollout) hear of
 * it as "rtv-place" on document, as they hear of Back as "popstate" on window.
 * @param {URL} u @param {object | null} [push]
 */
function goTo(u, push) {
  if (push) history.pushState(push, "", u.toString()); else history.replaceState(history.state, "", u.toString());
  document.dispatchEvent(new Event("rtv-place"));
}
