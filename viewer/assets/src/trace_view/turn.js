// -- the turn on screen: moving the place (turn, mode, scope), drawing what goes with it, telling the page ----
// Each function takes the mounted view (`View`, mount.js) and changes its place, then redraws what that change
// touches: a new turn or scope repaints the tokens, a new mode only recolours them.
import {drawRollout, rowButtons, toolsBox, trainingBox, turnNotes} from "./panels.js";
import {navPart, turnFate} from "./navigator.js";
import {isTrainerMode, legendNodes, notInRows} from "./toolbar.js";
import {outlineFor, storyOf} from "./place.js";
/** @import {View} from "./mount.js" */

/** Everything about the turn on screen, then its tokens. @param {View} v */
export function update(v) {
  sides(v);
  v.pane.paint(storyOf(v.O, v.st, v.trainer));  // fits the pane too: the lines above the tokens differ per turn
  tellState(v);
}

/** TRL's training rows, asked for once; the row scope paints when they land. @param {View} v */
export async function fetchTraining(v) {
  if (v.training) return;
  v.training = await v.api.training(v.O.run || null);
  if (v.rowFor !== null) { v.st.row = rowOf(v.training, v.rowFor); v.rowFor = null; }
  if (v.st.scope === "row") update(v);
}

/** The training row that trains turn `turn`: the one the row scope opens on (the first, when none does).
 *  @param {Training | null} training @param {number} turn */
const rowOf = (training, turn) => Math.max(0, training ? training.rows.findIndex((r) => r.turns.includes(turn)) : 0);

/** The trainer panel shows only with a trainer mode: the tokens keep the first screen otherwise. @param {View} v */
function trainerNeed(v) {
  const {O, st, trainer, $} = v;
  const on = !!trainer && isTrainerMode(O, st.mode);
  $(".tv-trainer-box").hidden = !on;
  $(".tv-nav").classList.toggle("tv-tr-on", on);  // each turn's trainer line, with the trainer's modes only
  if (on && trainer) trainer.show();
  if (on && trainer && st.scope !== "row") trainer.need(st.turn);
}

/** The trainer's numbers arrived: the legend says so, and a trainer mode colours and lands with them. @param {View} v */
export function trainerLanded(v) {
  const {O, st, pane, $} = v;
  $(".tv-legend").replaceChildren(legendNodes(O, st, v.trainer, v.training));
  if (isTrainerMode(O, st.mode)) { trainerNeed(v); pane.recolour(); pane.reland(storyOf(O, st, v.trainer)); }
}

/** Everything about the turn on screen except its tokens. @param {View} v */
function sides(v) {
  const {O, st, training, $} = v;
  const t = O.turns[st.turn], rowMode = st.scope === "row";
  const row = rowMode && training ? training.rows[st.row] : null;
  if (rowMode && notInRows(O, st.mode)) { v.outOfRows = st.mode; st.mode = "mask"; }  // given back on leaving
  trainerNeed(v);
  // rows are numbered from 0, as TRL numbers them: "row 0 of 2" would read as a count, so the count is apart
  v.bar.show(st, rowMode ? (row && training ? `TRL training row ${st.row} (${training.rows.length} in all): ` +
                                             `turn${row.turns.length === 1 ? "" : "s"} ${row.turns.join(", ")}${row.fate ? ` · ${row.fate.label}` : ""}` : "TRL training rows")
                         : `turn ${t.index}${turnFate(O, t, st.turn)}`);
  v.nav.show(st, rowMode ? (row ? row.turns : []) : null);
  $(".tv-legend").replaceChildren(legendNodes(O, st, v.trainer, v.training));
  $(".tv-boundary-box").replaceChildren(...(rowMode ? [] : turnNotes(t).filter((n) => n !== null)));
  $(".tv-tools-part").hidden = rowMode;
  $(".tv-tools-box").replaceChildren(...(rowMode ? [] : [toolsBox(t)]));
  const rb = $(".tv-rowbar");
  rb.hidden = !rowMode;
  if (rowMode) {
    if (!training) { rb.replaceChildren(); fetchTraining(v); }
    else rb.replaceChildren(trainingBox(training), ...(training.rows.length ? [rowButtons(training, st.row)] : []));
  }
}

/** What an export needs to open where the reader is: the place, the trainer panel's settings, the group's
 *  advantage, and a run's rollout (its export carries its place and the trainer's fate). @param {View} v */
export function exportPlace(v) {
  const {O, st, trainer} = v;
  return {...st, trainer: trainer ? trainer.state() : null, advantage: O.advantage === undefined ? null : O.advantage,
          run: O.run || null};
}

/** The page hears the place (the app writes it in the URL), once the mount is no longer quiet. @param {View} v */
export function tellState(v) {
  const {st, trainer, api} = v;
  // a search hit's marks stay in the URL while its turn is on screen, so a reload or a shared link keeps them
  const found = st.found && st.turn === st.foundTurn ? `${st.found[0]}-${st.found[1]}` : "";
  if (v.mounted && api.onState) api.onState({turn: st.turn, mode: st.mode, scope: st.scope, found, ...(trainer ? {part: trainer.state().part} : {})});
}

/** @param {View} v @param {number} turn @param {boolean} auto: the view moved itself (following a capture) */
export function go(v, turn, auto = false) {
  const {O, st} = v;
  st.turn = Math.min(Math.max(0, turn), O.turns.length - 1);
  if (!auto && v.live) { st.follow = st.turn === O.turns.length - 1; v.liveBar.following(st.follow); }
  if (st.scope === "row") st.scope = "new";
  update(v);
}

/** @param {View} v @param {string} m */
export function setMode(v, m) {
  const {O, st, pane, $} = v;
  if (st.scope === "row" && notInRows(O, m)) return;
  st.mode = m;
  trainerNeed(v);
  v.bar.show(st, $(".tv-turn-title").textContent || "");
  $(".tv-legend").replaceChildren(legendNodes(O, st, v.trainer, v.training));
  pane.recolour();
  const presenting = v.view.classList.contains("present");
  if (presenting) pane.fit(true);  // the legend's height changed
  // presenting, the story lands again; the drift mode's story is the drift, landed on (the reader asked to see it)
  if (presenting || (m === "drift" && O.turns[st.turn].drift_at !== null)) pane.goTo(storyOf(O, st, v.trainer) || 0);
  tellState(v);
}

/** The training rows open on the row of the turn on screen; leaving them gives back a mode they have not (a
 *  drift or trainer mode, shown as mask there) unless the reader picked another meanwhile.
 *  @param {View} v @param {string} s */
export function setScope(v, s) {
  const {st} = v;
  if (s === "row" && st.scope !== "row") { st.row = rowOf(v.training, st.turn); v.rowFor = v.training ? null : st.turn; }
  if (s !== "row" && st.scope === "row" && v.outOfRows !== null) {
    if (st.mode === "mask") st.mode = v.outOfRows;
    v.outOfRows = null;
  }
  st.scope = s;
  update(v);
}

// A watched capture grew (or finished): same rollout, more turns or fuller panels. The reader keeps
// their place; a reader following the newest turn moves to it. False when only a fresh mount can show
// it (the modes changed: a rescore part arrived with the final artifact).
/** @param {View} v @param {Opened} next */
export function growView(v, next) {
  const {O, st, $} = v;
  const N = next.outline;
  if (!!N.trainer !== v.hasTrainer) return false;
  Object.assign(O, outlineFor(N, v.hasTrainer));
  drawRollout($, O);
  v.nav = navPart($(".tv-nav"), O);
  v.training = null;  // TRL packs the longer rollout afresh
  if (st.follow && st.turn !== O.turns.length - 1) { go(v, O.turns.length - 1, true); return true; }
  sides(v);
  if (st.scope === "row") v.pane.paint(null);
  return true;
}
