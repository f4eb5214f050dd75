// How the pages write a value the server sends, shared so each says it the same way: a reward or an advantage as
// viewer/numbers.py writes it (signed to three places, an exact tie to the even digit, as Python's format does), a
// count with separators, the class a value's colour comes from, the class a trainer's fate is drawn with, and what a
// followed task's list of groups leaves out.

/** @typedef {number | null | undefined} Num */

/**
 * `v` as Python's format(v, "+.Nf") writes it: signed, `d` decimals, an exact tie rounded to the even digit (toFixed
 * rounds it away from zero).
 * @param {number} v @param {number} [d]
 */
export function signed(v, d = 3) {
  const a = Math.abs(v), exact = a.toFixed(100), cut = exact.slice(0, exact.indexOf(".") + 1 + d);
  const tie = exact[cut.length] === "5" && /^0*$/.test(exact.slice(cut.length + 1));
  const body = tie && Number(cut[cut.length - 1]) % 2 === 0 ? cut : a.toFixed(d);
  return (v < 0 || Object.is(v, -0) ? "-" : "+") + body;
}

/** A reward or an advantage, "-" when not known (viewer/numbers.py `number`). @param {Num} v */
export const number = (v) => (v === null || v === undefined ? "-" : signed(v));
/** A count with thousands separators, "-" when not known (viewer/numbers.py `count`). @param {Num} v */
export const count = (v) => (v === null || v === undefined ? "-" : v.toLocaleString("en-US"));
/** `n` things with thousands separators: "1 version", "2,000 versions" (`whats`: a plural not made with an s, "boundaries").
 *  @param {number} n @param {string} what @param {string} [whats] */
export const many = (n, what, whats = what + "s") => `${count(n)} ${n === 1 ? what : whats}`;
/** The class a value's colour comes from (viewer/numbers.py `sign`). @param {Num} v */
export const sign = (v) => (v === null || v === undefined ? "none" : v > 0 ? "pos" : v < 0 ? "neg" : "zero");
/** The class a trainer's fate is drawn with: every row trained, some, or none. @param {Fate} f */
export const fateKind = (f) => (f.trained ? "trained" : f.partly ? "partly" : "never");

/**
 * What a followed task's groups list says when it lists some of them (viewer/run_stats.py `task_track`: those near
 * the open version); "" when it lists them all.
 * @param {TaskTrack} t
 */
export function groupsListed(t) {
  if (t.group_count <= t.groups.length || !t.groups.length) return "";
  const first = t.groups[0].version, last = t.groups[t.groups.length - 1].version;
  return `showing ${t.groups.length} of ${count(t.group_count)} groups, at version${first === last ? ` ${first}` : `s ${first}–${last}`}`;
}
