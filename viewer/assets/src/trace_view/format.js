// Formatting shared by every part of the token view: numbers and the logprob colour. No part writes markup: each
// builds elements (dom.js el) and sets text as text.
/** @param {number} n */
export const fmt = (n) => Number(n).toLocaleString("en-US");
/** @param {number} lp */
export const lpAlpha = (lp) => (0.08 + 0.85 * Math.min(1, Math.max(0, 1 - Math.exp(lp)))).toFixed(3);  // p=1 faint .. p=0 strong
/** A server answer that is a refusal (`{error}`, pages.d.ts `Refused`) rather than its record.
 *  @param {unknown} a @returns {a is Refused} */
export const refused = (a) => !!a && typeof a === "object" && "error" in a;
/** The elements under `root` that `sel` matches: the view's selectors name HTML elements only.
 *  @param {ParentNode} root @param {string} sel */
export const all = (root, sel) => /** @type {NodeListOf<HTMLElement>} */ (root.querySelectorAll(sel));
/** The element a DOM event happened on. @param {Event} ev */
export const target = (ev) => /** @type {HTMLElement} */ (ev.target);
/** @param {number | null | undefined} x */
export const num = (x, d = 4) => x === null || x === undefined ? "n/a" : Math.abs(x) > 0 && Math.abs(x) < 1e-3 ? x.toExponential(1) : x.toFixed(d);
/** What a failure says: an Error's message, else the thrown value itself. @param {unknown} e */
export const errorText = (e) => String(typeof e === "object" && e !== null && "message" in e && e.message || e);
