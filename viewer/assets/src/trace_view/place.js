// -- the reader's place: where a mount starts, which tokens a scope holds, where a turn's story is ----------
// Pure functions of the outline and the place (`ViewPlace`, pages.d.ts): the view's parts read them, none
// keeps its own copy.
import {isTrainerMode} from "./toolbar.js";
/** @import {Trainer} from "./trainer.js" */

/** The tokens a scope pages through: [start, start + size); `waiting` while TRL's rows are on their way.
 *  @typedef {{start: number, size: number, waiting: boolean}} ScopeRange */
/** Where a turn's story is (the token pane's goTo lands on it): `at` (a search hit, the drift, else the first
 *  generated token), `gen` (the first generated token: when the story from `at` does not fit, the landing shows
 *  the generated tokens instead; none in drift mode, whose story is the drift), `end` (the story's last token),
 *  `focus` (a token the trainer's mode outlines, kept on screen).
 *  @typedef {{at: number, gen?: number, end?: number, focus?: number | null}} Story */
/** The chunk an `Opened` record brings along, and the place it belongs to.
 *  @typedef {{turn: number, scope: string, index: number, chunk: Chunk}} FirstChunk */

/** The outline a mount shows: the trainer's modes only when a rescore part and a way to ask for its numbers
 *  are both there (an export has none). @param {Outline} outline @param {boolean} hasTrainer @returns {Outline} */
export function outlineFor(outline, hasTrainer) {
  return hasTrainer ? outline : {...outline, modes: outline.modes.filter((m) => !m.trainer)};
}

/** The place a mount opens on: the record's initial place, with a mode or scope this rollout lacks replaced.
 *  @param {Partial<ViewPlace> | null} initial @param {Outline} O @returns {ViewPlace} */
export function startPlace(initial, O) {
  /** @type {ViewPlace} */
  const st = {turn: 0, mode: "mask", scope: "new", row: 0, follow: false, ...(initial || {})};
  if (!O.modes.some((m) => m.id === st.mode)) st.mode = "mask";
  if (!O.scopes.some((s) => s.id === st.scope)) st.scope = "new";
  return st;
}

/** @param {Outline} O @param {ViewPlace} st @param {Training | null} training @returns {ScopeRange} */
export function scopeRange(O, st, training) {
  const t = O.turns[st.turn];
  if (st.scope === "row") {
    const r = training && training.rows[st.row];
    return {start: 0, size: r ? r.tokens : 0, waiting: !training};
  }
  const start = st.scope === "new" ? t.shared : 0;
  return {start, size: t.prompt_tokens + t.output_tokens - start, waiting: false};
}

/** The first chunk, placed in the scope the mount opens on. @param {Chunk | null} chunk @param {Outline} O
 *  @param {ViewPlace} st @returns {FirstChunk | null} */
export function firstChunkOf(chunk, O, st) {
  return chunk ? {turn: st.turn, scope: st.scope, index: Math.floor((chunk.start - scopeRange(O, st, null).start) / O.chunk_size), chunk} : null;
}

/** The turn's story on screen, or null in row scope (a TRL row has none).
 *  @param {Outline} O @param {ViewPlace} st @param {Trainer | null} trainer @returns {Story | null} */
export function storyOf(O, st, trainer) {
  if (st.scope === "row") return null;
  const t = O.turns[st.turn];
  const found = st.found && st.turn === st.foundTurn ? st.found : null;
  const hit = found ? found[0] : null;
  const drift = t.drift_at !== null && st.mode === "drift" && hit === null;  // the drift itself, not what follows
  return {at: hit !== null ? hit : t.drift_at !== null ? t.drift_at : t.prompt_tokens, gen: drift ? undefined : t.prompt_tokens,
          end: found ? Math.min(found[1], t.prompt_tokens + t.output_tokens) - 1 : t.prompt_tokens + t.output_tokens - 1,
          focus: trainer && isTrainerMode(O, st.mode) ? trainer.focus(st.turn) : null};
}
