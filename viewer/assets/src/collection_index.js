// The collection index: the filter form, the table and the pager, over one IndexPage (viewer/index/contract.py),
// or a group's map (viewer/assets/src/group_map.js). Sorting, filtering and paging ask the server
// (server.index, which skips the queue) for a new IndexPage; opening a row and coming back are Gradio
// events (trigger "click" with an action) because they change the token view too. The filter state
// lives in the URL: filters change it in place (replaceState), opening a row pushes an entry, so the
// browser's Back button returns to the index with the same filters. Collection text only ever reaches
// the page through textContent, attribute values and option values.
// Presentation (`p`, as in the token view): the index or group map covers the window in large type, j/k
// move a row cursor and Enter opens its row; a rollout opened from it stays in presentation.
import {el, findingsCell, goTo, keyScrolled, middle, presentLabel, problemsBox, sentValue, short, working} from "./dom.js";
import {advantage, mountGroupMap} from "./group_map.js";
import {many} from "./values.js";

// The URL's parameter names (the filters', the token view's place) come in every IndexPage.
const SELECTS = {drift: ["none", "drift", "unknown"], timed_out: ["yes", "no"], kind: ["artifact", "group", "run"],
                 valid: ["yes", "no"]};


/** @typedef {{index(req: {src: string, query: string}): Promise<IndexPage>,
 *            compare(req: {src: string, row: string | null, a: number, b: number, turn: number}): Promise<{compare?: Compare, error?: string}>,
 *            open(req: object): void, back(req: {src: string, query: string}): void}} IndexApi */
/** @typedef {HTMLInputElement | HTMLSelectElement} FilterInput */

/** @param {string} key @param {string} label @param {FilterInput} input */
function field(key, label, input) {
  input.name = key;
  input.dataset.key = key;
  input.id = "ci-f-" + key;
  return el("label", {class: "ci-field", for: input.id}, el("span", {text: label}), input);
}

/** @param {string} key @param {string} label @param {string[]} choices @param {string} [anyLabel] */
function select(key, label, choices, anyLabel) {
  const s = el("select", {"data-testid": "filter-" + key});
  s.append(new Option(anyLabel || "any", ""));
  for (const c of choices) s.append(new Option(c, c));
  return field(key, label, s);
}

/** @param {string} key @param {string} label @param {string} type @param {Record<string, string>} [extra] */
function input(key, label, type, extra) {
  return field(key, label, el("input", {type, "data-testid": "filter-" + key, ...(extra || {})}));
}

/** @param {HTMLElement} box */
function skeleton(box) {
  const back = el("div", {class: "ci-backbar", hidden: ""},
                  el("button", {type: "button", class: "ci-back", "data-testid": "back-to-index"}, "← back to the index"),
                  el("span", {class: "ci-backinfo"}));
  const form = el("form", {class: "ci-form", "data-testid": "index-filters", role: "search"},
    select("model", "model", [], "any model"),
    input("task", "task", "text", {placeholder: "id or title", size: "10"}),
    input("reward_min", "reward ≥", "number", {step: "any", size: "5"}),
    input("reward_max", "reward ≤", "number", {step: "any", size: "5"}),
    select("drift", "drift", SELECTS.drift),
    // agent turns TRL's completion mask trains a token of (in a run: would train; the trainer column says if it did)
    input("trained_min", "in mask ≥", "number", {step: "1", min: "0", size: "3", title: "agent turns in TRL's mask, at least"}),
    input("trained_max", "in mask ≤", "number", {step: "1", min: "0", size: "3", title: "agent turns in TRL's mask, at most"}),
    select("finding", "finding", [], "any or none"),
    select("timed_out", "timed out", SELECTS.timed_out),
    select("tool", "used tool", []),
    select("no_tool", "never used", []),
    select("kind", "kind", SELECTS.kind),
    select("valid", "valid", SELECTS.valid),
    input("q", "search titles", "search", {placeholder: "text in title, id, path", size: "18"}),
    el("button", {type: "reset", class: "ci-clear", "data-testid": "clear-filters"}, "clear filters"));
  const main = el("div", {class: "ci-main"},
    el("div", {class: "ci-head"}, el("span", {class: "ci-counts", "data-testid": "index-counts", "aria-live": "polite"}),
       el("button", {type: "button", class: "ci-present", title: "presentation mode (p): large type, j/k move between rows, Enter opens one"}, ...presentLabel()),
       el("span", {class: "ci-pager"},
          el("button", {type: "button", class: "ci-prev", "data-testid": "prev-page"}, "‹ previous"),
          el("span", {class: "ci-pageno"}),
          el("button", {type: "button", class: "ci-next", "data-testid": "next-page"}, "next ›"))),
    form, el("div", {class: "ci-error"}), el("div", {class: "ci-notesbox"}), el("div", {class: "ci-tablebox"}));
  const group = el("div", {class: "ci-groupbox", hidden: ""});
  const root = el("div", {class: "ci", "data-testid": "collection-index"}, back, group, main);
  box.replaceChildren(root);
  return {root, back, group, main, form};
}

// -- the table: one IndexTable (viewer/index/render.py formats every value) ----------------------------
/** A heading: a sort button when it sorts (click again to reverse), marked when it is the page's sort. @param {IndexColumn} c @param {string} sort */
function heading(c, sort) {
  if (!c.sort) return el("th", {scope: "col", title: c.tip, text: c.label});  // not a sort of viewer/index/filters.py
  const desc = sort.startsWith("-"), on = sort.replace(/^-+/, "") === c.sort;
  return el("th", {scope: "col", "aria-sort": on ? (desc ? "descending" : "ascending") : "none"},
    el("button", {type: "button", class: "ci-sort" + (on ? " on" : ""), "data-sort": c.sort, title: c.tip || "sort by " + c.label},
       c.label, el("span", {class: "ci-arrow", "aria-hidden": "true", text: on ? (desc ? "▼" : "▲") : ""})));
}

/** @param {IndexRow} r */
function reward(r) {
  return el("td", {class: "ci-num"}, el("span", {class: "ci-reward " + r.reward_sign, text: r.reward}),
    r.spread ? el("div", {class: "ci-spread", title: "lowest..highest reward in the group", text: r.spread}) : null);
}

/** The cells every table has after its first ones: the task, the numbers, drift, findings. @param {IndexRow} r @param {boolean} run */
function middleCells(r, run) {
  return [
    el("td", {class: "ci-task", title: r.title}, el("code", {text: r.task}), " ", el("span", {class: "ci-title", text: r.title})),
    reward(r), el("td", {class: "ci-num", text: r.env_reward}), el("td", {class: "ci-num", text: r.agent_turns}),
    el("td", {class: "ci-num", text: r.trained_turns}), el("td", {class: "ci-num", text: r.tokens}),
    el("td", null, el("span", {class: "ci-drift " + r.drift, text: r.drift})), findingsCell(r.findings, run || r.kind !== "run", "index-findings")];
}

/** @param {IndexRow} r @param {number} columns */
function collectionRow(r, columns) {
  const label = r.path || "(the collection itself)";
  const k = r.k === null ? "?" : String(r.k);
  const badge = r.kind === "group" ? el("span", {class: "ci-kind group", text: `group · K=${k}`})
    : r.kind === "run" ? el("span", {class: "ci-kind run", "data-testid": "run-row", text: `recorded run · ${k} groups`})
    : r.kind === "rollout" ? el("span", {class: "ci-kind rollout", text: `rollout ${r.rollout ?? "?"} · adv ${r.advantage || "-"}`}) : null;
  const tr = el("tr", {class: ["ci-row", r.kind, r.valid ? "" : "invalid"].filter(Boolean).join(" "), "data-path": r.path,
                       "data-testid": "index-row"},
    el("td", {class: "ci-where"}, el("button", {type: "button", class: "ci-open", "data-path": r.path, title: `open ${label}`,
                                                text: middle(label, 34)}), badge),
    el("td", {class: "ci-status"}, r.valid ? el("span", {class: "ci-ok", text: "ok"})
                                           : el("span", {class: "ci-bad", title: r.problem || "", text: "invalid"})),
    el("td", {class: "ci-model", title: r.model_full, text: short(r.model, 32)}),
    ...middleCells(r, false),
    el("td", null, r.timed_out === "yes" ? el("span", {class: "ci-timeout", text: "yes"}) : r.timed_out),
    el("td", {class: "ci-tools", text: short(r.tools, 80)}), el("td", {class: "ci-date", text: r.captured}));
  if (r.valid) return [tr];
  // An invalid row's first problem gets a line of its own under the row: too long for a cell.
  return [tr, el("tr", {class: "ci-problem-row", "data-path": r.path}, el("td", {colspan: columns},
    el("span", {class: "ci-problem", text: `first problem: ${short(r.problem || "invalid", 300)}`})))];
}

/** A recorded run's row: its place, TRL's status, the trainer's fate beside what the mask would train. @param {IndexRow} r */
function runRow(r) {
  // its place (version, group, rollout), the folder on hover: a cut path hides exactly those
  const place = `v${r.version} · group ${r.group_id}` + (r.kind === "group" ? "" : ` · rollout ${r.rollout}`);
  const badge = r.kind === "group" ? el("span", {class: "ci-kind group", text: `K=${r.k === null ? "?" : r.k}`})
    : el("span", {class: "ci-kind rollout", text: `adv ${r.advantage || "-"}`});
  const status = r.status || "-";
  return el("tr", {class: `ci-row ${r.kind}`, "data-path": r.path, "data-testid": "index-row"},
    el("td", {class: "ci-where"}, el("button", {type: "button", class: "ci-open ci-place", "data-path": r.path, title: `open ${r.path}`,
                                                "data-testid": "run-place", text: place}), badge),
    el("td", {class: `ci-status run-status ${status.split(",")[0]}`, "data-testid": "run-status", text: status}),
    el("td", {class: `ci-fate ${r.fate_kind}`, "data-testid": "index-fate", title: r.fate_why, text: r.fate || "-"}),
    ...middleCells(r, true),
    el("td", {class: "ci-tools", text: short(r.tools, 80)}), el("td", {class: "ci-date", text: r.captured}));
}

/** @param {IndexTable} t @param {string} sort */
function drawTable(t, sort) {
  const n = t.columns.length;
  const rows = t.rows.flatMap((r) => (t.run ? [runRow(r)] : collectionRow(r, n)));
  if (!rows.length) rows.push(el("tr", null, el("td", {class: "ci-empty", colspan: n, text: "no row matches these filters"})));
  return el("table", {class: "ci-table", "data-testid": "index-table"},
    el("thead", null, el("tr", null, ...t.columns.map((c) => heading(c, sort)))), el("tbody", null, ...rows));
}

/** Notes on the index (cuts, offline, ignored filter values). @param {string[]} notes */
const drawNotes = (notes) => (notes.length ? el("ul", {class: "ci-notes", "data-testid": "index-notes"},
  ...notes.map((n) => el("li", {text: n}))) : null);

/** What the back bar says about the opened row. @param {BackBar} b @returns {(Node | string)[]} */
function backInfo(b) {
  if (b.kind === "row") {  // its kind, where it lives, how many rows the index shows
    const filters = b.filters.map(([k, v]) => `${k}=${v}`).join(" · ");
    return [el("span", {class: "ci-here"}, `${b.what} `, el("code", {text: short(b.path || "(the collection itself)", 120)})),
      el("span", {class: "ci-dim", text: ` · the index has ${many(b.matched, "row")}` +
                                         (filters ? ` matching ${short(filters, 160)}` : "")})];
  }
  if (b.kind === "rollout") {  // a rollout opened from its group map
    return [el("span", {class: "ci-here"}, `rollout ${b.rollout} of ${b.k} in group `, el("code", {text: short(b.path, 120)})),
      el("span", {class: "ci-dim"}, ...(b.advantage === null ? [] : [" · advantage ", advantage(b.advantage)]))];
  }
  // a recorded run's rollout: where it sits (its status, advantage and fate are the token view's headline, below)
  const crumbs = b.crumbs.flatMap((c, i) => [i ? " › " : "", el("span", {class: "ci-crumb", text: c})]).filter((x) => x !== "");
  return [el("span", {class: "ci-here", "data-testid": "crumbs"}, ...crumbs),
    el("span", {class: "ci-dim", text: ` · ${many(b.k, "rollout")} in the group`})];
}

/** @param {HTMLElement} box @param {IndexApi} api */
function mount(box, api) {
  const ui = skeleton(box);
  /** @type {IndexPage | null} */
  let page = null;
  // The page shown: every event below comes after the first render (mountInApp renders right after mounting).
  const shown = () => /** @type {IndexPage} */ (page);
  let asked = 0;  // responses to older requests are dropped
  /** @type {string | null} */
  let lastAsked = null;  // the query of the newest request
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typing;
  const inputs = () => /** @type {NodeListOf<FilterInput>} */ (ui.form.querySelectorAll("[data-key]"));
  /** @param {string} sel */
  const part = (sel) => /** @type {HTMLElement} */ (ui.root.querySelector(sel));
  /** @param {string} sel */
  const button = (sel) => /** @type {HTMLButtonElement} */ (ui.root.querySelector(sel));

  /** @param {{sort?: string, page?: number}} [overrides] */
  function formQuery(overrides) {
    const p = new URLSearchParams();
    for (const e of inputs()) if (e.value !== "") p.set(e.dataset.key || "", e.value.trim());
    const sort = overrides && "sort" in overrides ? overrides.sort : (page ? page.sort : "path");
    if (sort && sort !== "path") p.set("sort", sort);
    const n = overrides && overrides.page !== undefined ? overrides.page : 0;
    if (n > 0) p.set("page", String(n + 1));
    return p.toString();
  }

  /** @param {IndexPage} pg */
  function syncForm(pg) {
    // the finding filter: any finding, none, or one of the rules this source trips (once its findings are known)
    const findings = pg.findings_known ? ["any", "none", ...pg.finding_rules] : [];
    const findingField = ui.form.querySelector('[data-key="finding"]')?.closest(".ci-field");
    if (findingField instanceof HTMLElement) findingField.hidden = !pg.findings_known;
    for (const [key, choices] of /** @type {[string, string[]][]} */ ([["model", pg.models], ["tool", pg.tools], ["no_tool", pg.tools], ["finding", findings]])) {
      const s = /** @type {HTMLSelectElement} */ (ui.form.querySelector(`[data-key="${key}"]`));
      const want = ["", ...choices];
      const have = Array.from(s.options).map((o) => o.value);
      if (want.join("\n") !== have.join("\n")) {
        const first = s.options[0];
        s.replaceChildren(first);
        for (const c of choices) s.append(new Option(c, c));
      }
    }
    for (const e of inputs()) {
      if (e === document.activeElement && e.tagName === "INPUT") continue;  // never rewrite what the visitor types
      const v = pg.filters[e.dataset.key || ""] || "";
      if (e instanceof HTMLSelectElement && v && !Array.from(e.options).some((o) => o.value === v)) e.append(new Option(v, v));
      e.value = v;
    }
  }

  /** @param {IndexPage} pg @param {boolean} push */
  function writeUrl(pg, push) {
    const u = new URL(window.location.href);
    for (const k of [...pg.query_keys, "page", "row", "rollout", ...COMPARE_KEYS]) u.searchParams.delete(k);
    if (pg.mode === "none") { goTo(u); return; }
    u.searchParams.set("src", pg.src);
    for (const [k, v] of new URLSearchParams(pg.query)) u.searchParams.set(k, v);
    if (pg.mode === "index") {
      for (const k of pg.view_keys) u.searchParams.delete(k);
      if (pg.page > 0) u.searchParams.set("page", String(pg.page + 1));
    } else if (pg.row !== null) {
      // the root of a source that is one group is its map without a row= (the router finds it): no empty row=
      if (pg.row) u.searchParams.set("row", pg.row); else u.searchParams.delete("row");
      if (pg.mode === "group") for (const k of pg.view_keys) u.searchParams.delete(k);
      if (pg.rollout !== null && pg.rollout !== undefined) u.searchParams.set("rollout", String(pg.rollout));
    }
    goTo(u, push ? {ci: pg.mode} : null);
  }

  /** @param {IndexPage} pg @param {boolean} fromUrl */
  function render(pg, fromUrl) {
    if (pg.goto) {  // a recorded run's row: its own page (the run page) opens on its source
      const u = new URL(window.location.href);
      u.search = "";
      u.searchParams.set("src", pg.goto);
      window.location.assign(u.toString());
      return;
    }
    const again = page && pg.mode === page.mode && pg.row === page.row && pg.src === page.src;
    const first = !page;
    page = pg;
    if (!again) cursor = -1;
    ui.root.dataset.mode = pg.mode;
    ui.root.classList.toggle("present", presentable() && document.body.classList.contains("tv-present"));
    if (ui.root.classList.contains("present")) keyScrolled(ui.root);
    ui.root.hidden = pg.mode === "none";
    // A source that is itself one group has no index above its map: no way "back" from the map.
    ui.back.hidden = pg.mode === "group" ? !pg.row : pg.mode !== "row";
    ui.main.hidden = pg.mode !== "index";
    ui.group.hidden = pg.mode !== "group";
    const fromGroup = pg.mode === "row" && pg.rollout !== null && pg.rollout !== undefined;
    const linked = pg.mode === "group" ? linkedCompare(pg.row, first) : null;  // read before the link is written anew
    part(".ci-back").textContent = fromGroup ? "← back to the group map" : "← back to the index";
    if (!fromUrl) writeUrl(pg, false);
    if (pg.mode === "group") {
      part(".ci-backinfo").textContent = "";
      gm.show(pg.problems && problemsBox(pg.problems), pg.group, linked);
      // a starting cursor: Enter opens the best rollout without a j first; a map drawn again (its findings come)
      // keeps the reader's row
      markRow(Math.max(cursor, 0), false);
      lateForFindings(pg);
      return;
    }
    if (pg.mode === "row") { part(".ci-backinfo").replaceChildren(...(pg.back ? backInfo(pg.back) : [])); return; }
    if (pg.mode !== "index") return;
    part(".ci-error").replaceChildren(...(pg.problems ? [problemsBox(pg.problems)] : []));
    part(".ci-notesbox").replaceChildren(drawNotes(pg.notes) || "");
    part(".ci-tablebox").replaceChildren(!pg.problems && pg.table ? drawTable(pg.table, pg.sort) : "");
    ui.form.hidden = !!pg.problems;
    const what = pg.kind === "hub" ? "Hub dataset" : pg.kind === "zip" ? "zip" : "folder";
    const range = pg.shown ? `${pg.first.toLocaleString()}–${(pg.first + pg.shown - 1).toLocaleString()} of ` : "";
    part(".ci-counts").textContent = pg.problems ? "" :
      `${what} ${pg.src}: showing ${range}${pg.matched.toLocaleString()} matching rows` +
      // a run's or a group's rows are its groups and their rollouts: said, so the head's count of rollouts is found
      (pg.matched_groups ? ` (${many(pg.matched_groups, "group")}, ` +
        `${many(pg.matched - pg.matched_groups, "rollout")})` : "") + " · " +
      `${pg.total.toLocaleString()} in the collection` + (pg.invalid ? ` · ${pg.invalid.toLocaleString()} invalid` : "") +
      // the run's head counts every rollout: the ones that failed before an artifact have no row, said here
      (pg.unlisted ? ` · ${many(pg.unlisted, "failed rollout")} ${pg.unlisted === 1 ? "has" : "have"} no ` +
        "artifact to list (counted in their group's K)" : "");
    part(".ci-pager").hidden = pg.pages <= 1;
    part(".ci-pageno").textContent = `page ${pg.page + 1} of ${pg.pages}`;
    button(".ci-prev").disabled = pg.page <= 0;
    button(".ci-next").disabled = pg.page >= pg.pages - 1;
    syncForm(pg);
    lateForFindings(pg);
  }

  /** @param {string} query */
  async function ask(query) {
    const mine = ++asked;
    lastAsked = query;
    ui.root.classList.add("ci-busy");
    try {
      const pg = await api.index({src: shown().src, query});
      if (mine === asked) render(pg, false);
    } finally {
      if (mine === asked) ui.root.classList.remove("ci-busy");
    }
  }

  /** An index or group map whose findings column waits for the search panel. @param {IndexPage} pg */
  const pending = (pg) => pg.mode === "index" ? !pg.findings_known : pg.mode === "group" && !!pg.group && !pg.group.findings_known;
  // The search panel computed this source's findings (viewer/assets/src/find_panel.js): ask for the page again, so the
  // findings column and filter fill in.
  const askAgain = () => {
    const pg = shown();
    if (pg.mode === "group") { api.open({src: pg.src, row: pg.row, query: pg.query}); return; }  // the map, drawn again
    // the visitor's latest ask, which may still be on its way: asking for the shown page would undo their change
    ask(lastAsked ?? pg.query + (pg.page > 0 ? `${pg.query ? "&" : ""}page=${pg.page + 1}` : ""));
  };
  /** @param {Event} ev */
  const onIndexed = (ev) => {
    if (!document.body.contains(ui.root)) { document.removeEventListener("fp-indexed", onIndexed); return; }
    const detail = /** @type {CustomEvent<{src: string}>} */ (ev).detail;
    if (page && pending(page) && detail && detail.src === page.src) askAgain();
  };
  document.addEventListener("fp-indexed", onIndexed);
  // A page made before the panel's findings were known that arrives after its signal (both are asked at once when
  // the page loads) asks once more: the signal came before there was a page to fill in
  /** @type {Set<string>} */
  const askedAgain = new Set();
  /** @param {IndexPage} pg */
  const lateForFindings = (pg) => {
    if (!pending(pg) || document.documentElement.dataset.fpIndexed !== pg.src) return;
    if (askedAgain.has(pg.src)) return;
    askedAgain.add(pg.src);
    askAgain();
  };

  /** @param {string} path */
  function open(path) {
    const pg = shown(), u = new URL(window.location.href);
    u.searchParams.set("row", path);
    for (const k of [...pg.view_keys, "rollout"]) u.searchParams.delete(k);
    goTo(u, {ci: "row"});
    working(`opening ${path.split("/").pop() || "the row"}…`);
    api.open({src: pg.src, row: path, query: pg.query});
  }

  function urlQuery() {  // the index's part of the current URL: filters and page
    const p = new URLSearchParams();
    for (const [k, v] of new URL(window.location.href).searchParams) if (shown().query_keys.includes(k) || k === "page") p.set(k, v);
    return p.toString();
  }

  function back() {
    if (page && page.mode === "row" && page.rollout !== null && page.rollout !== undefined) {  // to the group map
      if (history.state && history.state.ci === "rollout") { history.back(); return; }
      api.open({src: page.src, row: page.row, query: page.query});
      return;
    }
    if (history.state && history.state.ci === "row") { history.back(); return; }  // popstate comes back here
    const pg = shown(), u = new URL(window.location.href);
    for (const k of ["row", "rollout", ...pg.view_keys]) u.searchParams.delete(k);
    history.replaceState(null, "", u.toString());  // no entry to return to: this one forgets it came from a row
    document.dispatchEvent(new Event("rtv-place"));
    working("back to the index…");
    api.back({src: pg.src, query: urlQuery()});
  }

  ui.form.addEventListener("submit", (ev) => { ev.preventDefault(); ask(formQuery()); });
  ui.form.addEventListener("change", () => { clearTimeout(typing); ask(formQuery()); });
  ui.form.addEventListener("input", (ev) => {
    const type = /** @type {HTMLInputElement} */ (ev.target).type;
    if (type !== "text" && type !== "search") return;
    clearTimeout(typing);
    typing = setTimeout(() => ask(formQuery()), 300);
  });
  ui.form.addEventListener("reset", () => setTimeout(() => ask(formQuery({sort: shown().sort})), 0));
  ui.main.addEventListener("click", (ev) => {
    const target = /** @type {Element} */ (ev.target), pg = shown();
    const sortBtn = /** @type {HTMLElement | null} */ (target.closest(".ci-sort"));
    if (sortBtn) {
      const col = sortBtn.dataset.sort;
      ask(formQuery({sort: pg.sort === col ? "-" + col : col}));
      return;
    }
    if (target.closest(".ci-prev")) { ask(formQuery({page: pg.page - 1})); return; }
    if (target.closest(".ci-next")) { ask(formQuery({page: pg.page + 1})); return; }
    const row = /** @type {HTMLElement | null} */ (target.closest("tr[data-path]"));
    if (row && !target.closest("a, summary") && !(window.getSelection() || "").toString()) open(row.dataset.path || "");
  });
  part(".ci-back").addEventListener("click", back);

  // -- presentation and the row cursor ----------------------------------------------------------------
  let cursor = -1;
  const presentable = () => !!page && (page.mode === "group" || page.mode === "index");
  const rows = () => Array.from(/** @type {NodeListOf<HTMLTableRowElement>} */ (
    ui.root.querySelectorAll(shown().mode === "group" ? "tr.gm-row" : "tr.ci-row")));
  /** @param {boolean} [on] */
  function present(on) {
    const v = on === undefined ? !ui.root.classList.contains("present") : on;
    ui.root.classList.toggle("present", v);
    document.body.classList.toggle("tv-present", v);  // shared with the token view: a rollout opened from here keeps it
    if (v) keyScrolled(ui.root);
  }
  /** @param {number} i @param {boolean} scroll */
  function markRow(i, scroll) {
    const rs = rows();
    if (!rs.length) return;
    cursor = Math.max(0, Math.min(rs.length - 1, i));
    rs.forEach((r, k) => { r.classList.toggle("ci-cursor", k === cursor); r.setAttribute("aria-selected", String(k === cursor)); });
    if (scroll) rs[cursor].scrollIntoView({block: "nearest"});
  }
  const moveRow = (/** @type {number} */ d) => markRow(cursor + d, true);
  function openCursor() {
    const r = rows()[cursor];
    if (!r) return false;
    if (shown().mode === "group") { const b = /** @type {HTMLElement | null} */ (r.querySelector(".gm-open")); if (!b) return false; b.click(); }
    else open(r.dataset.path || "");
    return true;
  }
  ui.root.addEventListener("click", (ev) => { if (/** @type {Element} */ (ev.target).closest(".ci-present, .gm-present")) present(); });
  /** @param {KeyboardEvent} ev */
  const onKey = (ev) => {
    if (!document.body.contains(ui.root)) { document.removeEventListener("keydown", onKey); return; }
    if (!presentable() || ui.root.hidden) return;
    const target = /** @type {HTMLElement | null} */ (ev.target);
    const tag = (target && target.tagName) || "";
    if (/INPUT|TEXTAREA|SELECT/.test(tag) || (target && target.isContentEditable) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key, on = ui.root.classList.contains("present");
    if (k === "p") present();
    else if (k === "Escape" && on) present(false);
    else if (k === "j" || (on && k === "ArrowDown")) moveRow(1);
    else if (k === "k" || (on && k === "ArrowUp")) moveRow(-1);
    else if (k === "Enter" && cursor >= 0 && !/^(BUTTON|A)$/.test(tag)) { if (!openCursor()) return; }
    else return;
    ev.preventDefault();
  };
  document.addEventListener("keydown", onKey);
  const gm = mountGroupMap(ui.group, {
    compare: (a, b, turn) => api.compare({src: shown().src, row: shown().row, a, b, turn}),
    compared(a, b, turn) {  // kept in the link (in place: the map's history entry is the same page)
      const u = new URL(window.location.href);
      u.searchParams.set("cmp", `${a},${b}`);
      u.searchParams.set("cturn", String(turn));
      history.replaceState(history.state, "", u.toString());
    },
    openRollout(rollout, turn) {  // a row or cell of the map: that rollout at that turn
      const u = new URL(window.location.href);
      u.searchParams.set("rollout", String(rollout));
      u.searchParams.set("turn", String(turn));
      goTo(u, {ci: "rollout"});
      working(`opening rollout ${rollout} at turn ${turn}…`);
      const pg = shown();
      api.open({src: pg.src, row: pg.row, query: pg.query, rollout, turn});
    },
  });
  const onPop = () => {
    if (!document.body.contains(ui.root)) { window.removeEventListener("popstate", onPop); return; }
    if (!page || page.mode === "none") return;
    const u = new URL(window.location.href);
    const src = u.searchParams.get("src") || page.src;
    const row = u.searchParams.get("row");
    const rollout = u.searchParams.get("rollout");
    const here = page.rollout === null || page.rollout === undefined ? null : String(page.rollout);
    if (row !== null && rollout !== here) { api.open({src, row, query: urlQuery(), rollout, turn: u.searchParams.get("turn") || 0}); return; }
    if (row === null && page.mode !== "index") api.back({src, query: urlQuery()});
    else if (row !== null && (page.mode === "index" || row !== page.row)) api.open({src, row, query: urlQuery()});
    else if (row === null && page.mode === "index" && urlQuery() !== formQuery({page: page.page})) ask(urlQuery());
  };
  window.addEventListener("popstate", onPop);
  return {box, render, state: () => page};
}

// A group map's comparison in its link: `cmp=A,B` (two of its rollouts) and `cturn=T`, dropped when the page
// shows anything else
const COMPARE_KEYS = ["cmp", "cturn"];

/** The comparison the page's link names for the group map of `row`, or null: the link's own row, or on the page's
 *  first render a run page link's `group=` (the server found the map's row from it; the link has no row= yet).
 *  @param {string | null | undefined} row @param {boolean} first @returns {{a: number, b: number, turn: number} | null} */
function linkedCompare(row, first) {
  const u = new URL(window.location.href);
  const named = u.searchParams.get("row");
  const mine = named === null && first && u.searchParams.has("group") || (named || "") === (row || "");
  if (!mine) return null;
  const m = /^(\d{1,6}),(\d{1,6})$/.exec(u.searchParams.get("cmp") || "");
  const turn = Number(u.searchParams.get("cturn") || 0);
  return m && Number.isInteger(turn) && turn >= 0 && turn < 1e6 ? {a: Number(m[1]), b: Number(m[2]), turn} : null;
}

/**
 * @param {HTMLElement} element @param {{value: string}} props @param {IndexServer} server
 * @param {(name: string, fn: () => void) => void} watch @param {(name: string, data: object) => void} trigger
 */
export function mountInApp(element, props, server, watch, trigger) {
  /** @type {IndexApi} */
  const api = {
    index: (req) => server.index(req),
    compare: (req) => server.compare(req),
    open: (req) => trigger("click", {action: "open", ...req}),
    back: (req) => trigger("click", {action: "back", ...req}),
  };
  /** @type {ReturnType<typeof mount> | null} */
  let view = null;
  function start() {
    const box = /** @type {HTMLElement | null} */ (element.querySelector(".ci-mount"));
    if (!box || !props.value) return;
    if (!view || view.box !== box || !box.firstChild) view = mount(box, api);  // a re-rendered template is a new box
    view.render(sentValue(props), false);
  }
  start();
  watch("value", start);
}
