// -- the view's skeleton: the boxes every part fills, the actions, the keyboard help ---------------------
// Built as elements; text goes in as textContent. The rollout's panels are drawn into their boxes by panels.js.
import {el, presentLabel} from "../dom.js";

/** A help line: its keys (each a <kbd>, space between) and what they do. @param {string[]} keys @param {string} what
 *  @param {string} [after] words after the keys */
const helpRow = (keys, what, after = "") => el("tr", null,
  el("td", null, ...keys.flatMap((k, i) => [i ? " " : null, el("kbd", {text: k})]), after), el("td", {text: what}));

/** The view's elements before any part has drawn in them. @param {Outline} O @param {boolean} canExport
 *  @returns {HTMLDivElement} */
export function viewNodes(O, canExport) {
  const modes = O.modes.map((m) => m.id);
  return el("div", {class: "tv", "data-testid": "trace-view"},
    el("div", {class: "tv-live-box", hidden: true}),
    el("div", {class: "tv-note-box", role: "note", "data-testid": "export-note", hidden: true}),
    el("div", {class: "tv-top"},
      el("div", {class: "tv-summary-box"}),
      el("span", {class: "tv-actions"},
        canExport ? el("button", {class: "tv-export-btn", title: "download one HTML file that opens offline on what is on screen",
                                  "aria-haspopup": "dialog", "aria-expanded": "false", "data-testid": "export", text: "export"}) : null,
        el("button", {class: "tv-present-btn", title: "presentation mode (p)", "aria-pressed": "false"}, ...presentLabel()),
        el("button", {class: "tv-help-btn", title: "keyboard shortcuts (?)", "aria-label": "keyboard shortcuts", "aria-expanded": "false", text: "?"})),
      el("div", {class: "tv-export-menu", hidden: true, role: "dialog", "aria-label": "export", "data-testid": "export-menu"},
        el("b", {text: "Export one HTML file"}), " ",
        el("span", {class: "tv-dim", text: "that opens offline, with no request, on the turn, mode, scope and trainer part on screen"}),
        el("div", {class: "tv-export-choices"},
          el("button", {"data-export": "rollout", "data-testid": "export-rollout", text: "the whole rollout"}),
          el("button", {"data-export": "turn", "data-testid": "export-turn", text: "the turn on screen (with its full context)"})),
        el("div", {class: "tv-export-status", role: "status"}))),
    el("div", {class: "tv-headerbox"}),
    el("div", {class: "tv-main"},
      el("nav", {class: "tv-nav", "aria-label": "turns"}),
      el("section", {class: "tv-turn"},
        el("div", {class: "tv-toolbar"}),
        el("div", {class: "tv-legend"}),
        el("div", {class: "tv-boundary-box"}),
        el("div", {class: "tv-rowbar", hidden: true}),
        el("div", {class: "tv-tokens", tabindex: "0", role: "group", "aria-label": "tokens: arrow keys move a cursor", "data-testid": "tokens"}),
        el("div", {class: "tv-trainer-box", hidden: true}),
        el("div", {class: "tv-tools-part"}, el("h4", {class: "tv-sub", text: "Tool calls"}), el("div", {class: "tv-tools-box"})))),
    el("div", {class: "tv-lower"},
      el("section", null, el("h3", {text: "Tests"}), el("div", {class: "tv-tests-box"})),
      el("section", null, el("h3", {text: "Reward"}), el("div", {class: "tv-reward-box"}))),
    el("div", {class: "tv-tip", hidden: true, role: "status"}),
    el("div", {class: "tv-help", hidden: true, role: "dialog", "aria-label": "keyboard shortcuts"},
      el("b", {text: "Keyboard"}), " ",
      el("table", null, el("tbody", null,
        helpRow(["j", "→"], "next turn"),
        helpRow(["k", "←"], "previous turn"),
        helpRow(["←", "→"], "move the token cursor (its details follow)", " in the tokens"),
        helpRow(["m"], `next mode (${modes.join(", ")})`),
        helpRow(["s"], `next scope (${O.scopes.map((s) => s.label).join(", ")})`),
        helpRow(["g"], "jump to the generated tokens"),
        helpRow(["p"], "presentation mode"),
        helpRow(["?"], "this help"),
        helpRow(["Esc"], "close help / leave presentation")))));
}
