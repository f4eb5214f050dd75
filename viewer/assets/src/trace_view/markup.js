// -- the view's skeleton: the boxes every part fills, the actions, the keyboard help ---------------------
// The rollout's panels are drawn into their boxes by panels.js; everything inserted here is escaped.
import {esc} from "./format.js";

/** The view's markup before any part has drawn in it. @param {Outline} O @param {boolean} canExport */
export function viewHtml(O, canExport) {
  const modes = O.modes.map((m) => m.id);
  return `
    <div class="tv" data-testid="trace-view">
      <div class="tv-live-box" hidden></div>
      <div class="tv-note-box" role="note" data-testid="export-note" hidden></div>
      <div class="tv-top">
        <div class="tv-summary-box"></div>
        <span class="tv-actions">
          ${canExport ? `<button class="tv-export-btn" title="download one HTML file that opens offline on what is on screen" aria-haspopup="dialog" aria-expanded="false" data-testid="export">export</button>` : ""}
          <button class="tv-present-btn" title="presentation mode (p)" aria-pressed="false">present</button>
          <button class="tv-help-btn" title="keyboard shortcuts (?)" aria-label="keyboard shortcuts" aria-expanded="false">?</button>
        </span>
        <div class="tv-export-menu" hidden role="dialog" aria-label="export" data-testid="export-menu">
          <b>Export one HTML file</b> <span class="tv-dim">that opens offline, with no request, on the turn, mode, scope and trainer part on screen</span>
          <div class="tv-export-choices"><button data-export="rollout" data-testid="export-rollout">the whole rollout</button><button data-export="turn" data-testid="export-turn">the turn on screen (with its full context)</button></div>
          <div class="tv-export-status" role="status"></div>
        </div>
      </div>
      <div class="tv-headerbox"></div>
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
        <section><h3>Tests</h3><div class="tv-tests-box"></div></section>
        <section><h3>Reward</h3><div class="tv-reward-box"></div></section>
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
}
