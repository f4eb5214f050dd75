// The run page (viewer/ui/run_view.py): the head (RunHead: what the run is, live badge, health notes) and the
// body (RunBody: versions → groups, one task followed across versions), both from typed records
// (viewer/run_stats.py). Every text from the run reaches the page through textContent or an attribute; two ticked
// rollouts of a followed task are compared by the group map's compare view (viewer/assets/src/group_map.js).
// A group opens in the collection index's group map (a Gradio event, trigger "click" {action: "open"}), with a
// history entry the index's Back returns through; the version and the followed task live in the URL.
// Presentation (`p`, as on the group map): the run page covers the window in large type, j/k move a row
// cursor over versions and groups, Enter opens one, Escape leaves. The charts above the versions list are
// drawn on canvas from the body's versions (viewer/assets/src/run_charts.js); below the list, another run can be
// compared with this one (viewer/assets/src/run_versus.js).
// The versions table sorts by any heading over every version the body holds (vsort= in the URL), and a chart's
// click opens a version through the same path as its row.
import {el, goTo, keyScrolled, presentLabel, sentValue, working} from "./dom.js";
import {showCompare} from "./group_map.js";
import {groupsListed, many, sign} from "./values.js";
import * as RunCharts from "./run_charts.js";
import * as RunVersus from "./run_versus.js";

/** @typedef {{version(req: {src: string | null, version: number}): Promise<{groups?: RunGroupRow[], error?: string}>,
 *            compare(req: {src: string | null, a: string, b: string, turn: number}): Promise<{compare?: Compare, error?: string}>,
 *            versus(req: {src: string, vs: string, task: string}): Promise<{compare?: RunCompare, error?: string}>,
 *            open(req: object): void}} RunApi */
/** @typedef {{src: string | null, body: RunBody | null, version: number | null, groups: RunGroupRow[] | null,
 *            task: string | null, cursor: number, body_task: TaskTrack | null, shown: number,
 *            opened?: string | null, sort: Sort}} BodyState */
/** @typedef {{key: string, desc: boolean}} Sort  key "": run order */
const FIRST_VERSIONS = 100;  // versions listed before "show all"
const LONG_RUN = 500;  // versions from which a link without smooth= draws the line charts smoothed
const LONG_RUN_SMOOTH = 0.9;  // the EMA weight it draws them with
/** @param {number | null | undefined} v */
const finite = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);
const untrained = (/** @type {VersionStats} */ s) => Object.values(s.dropped).reduce((a, b) => a + b, 0);
// The versions table's columns: heading, the key a link sorts by (viewer/run_stats.py SORT_KEYS) and the
// number it sorts by (null: no value, listed last either way).
/** @type {[string, string, (s: VersionStats) => number | null][]} */
const COLUMNS = [
  ["version", "version", (s) => s.version], ["groups", "groups", (s) => s.groups], ["rollouts", "rollouts", (s) => s.rollouts],
  ["reward mean (min … max)", "reward_mean", (s) => finite(s.reward_mean)], ["pass rate", "pass_rate", (s) => finite(s.pass_rate)],
  ["zero spread", "zero_spread", (s) => (s.groups ? s.zero_spread / s.groups : null)],
  ["trained tokens", "trained_tokens", (s) => s.trained_tokens], ["never trained", "dropped", untrained],
  ["timed out", "timeouts", (s) => s.timeouts], ["trainer mismatch", "mismatch_max", (s) => (s.rescored ? finite(s.mismatch_max) : null)],
];

/** A link's vsort= ("KEY" or "-KEY") as a Sort; anything else is run order. @param {string | null | undefined} v @returns {Sort} */
function parseSort(v) {
  const key = (v || "").replace(/^-/, "");
  return COLUMNS.some((c) => c[1] === key) ? {key, desc: (v || "").startsWith("-")} : {key: "", desc: false};
}

/** Every version in the sort's order (ties and run order by version as the run has them). @param {VersionStats[]} vs @param {Sort} sort */
function sortedVersions(vs, sort) {
  const col = COLUMNS.find((c) => c[1] === sort.key);
  if (!col) return vs;
  const dir = sort.desc ? -1 : 1;
  return vs.map((s, i) => ({s, i, v: col[2](s)}))
    .sort((a, b) => (a.v === null ? (b.v === null ? a.i - b.i : 1) : b.v === null ? -1 : (a.v - b.v) * dir || a.i - b.i))
    .map((x) => x.s);
}

/** @typedef {number | null | undefined} Num */
const num = (/** @type {Num} */ v, /** @type {number | undefined} */ d = undefined) => (v === null || v === undefined ? "–" : Number(v).toFixed(d === undefined ? 3 : d));
const pct = (/** @type {Num} */ v) => (v === null || v === undefined ? "–" : Math.round(100 * v) + "%");
const signed = (/** @type {Num} */ v) => (v === null || v === undefined ? "–" : (v > 0 ? "+" : "") + Number(v).toFixed(2));

/** @param {Record<string, string | number | null | undefined>} changes @param {object} [push] */
function setUrl(changes, push) {
  const u = new URL(window.location.href);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined || v === "") u.searchParams.delete(k); else u.searchParams.set(k, String(v));
  }
  goTo(u, push);
}

// -- head --------------------------------------------------------------------------------------------
/** @param {Element} box @param {RunHead} h */
function renderHead(box, h) {
  /** @param {number} n */
  const n = (n) => n.toLocaleString("en-US");  // 1,024,000 as the index writes it
  const facts = `${n(h.versions)} policy versions · ${n(h.groups)} groups · ${n(h.rollouts)} rollouts · TRL ${h.trl}` +
    (h.started_at ? ` · started ${h.started_at.slice(0, 16).replace("T", " ")}` : "");
  // a large run is read again less often than the page asks (RunHead.every_s): the badge says how often; a copy
  // of a live run (a zip, a Hub commit) is never read again (RunHead.followed): the badge says so
  const slow = h.every_s > 0;
  const badge = !h.followed ? "● recorded live · a copy, not followed"
    : slow ? `● recording · read every ~${Math.round(h.every_s)} s` : "● recording · following";
  const title = !h.followed
    ? "a segment of this run had not ended when this copy was made (a zip, or a Hub run pinned to a commit): " +
      "it is not read again; open the run's folder, or its Hub branch, to follow it"
    : "a segment of this run has not ended: new versions appear here as the recorder writes them" + (slow ?
      `; this run is read again every ~${Math.round(h.every_s)} s (a run this large, or on the Hub, is not read at ` +
      "every poll): what is recorded meanwhile appears then" : "");
  const live = h.live ? el("span", {class: h.followed ? "rp-live" : "rp-live rp-copy", "data-testid": "run-live", title}, badge) : null;
  const notes = h.notes.length ? el("ul", {class: "rp-notes", "data-testid": "run-notes"},
    ...h.notes.map((n) => el("li", {text: n}))) : el("div", {class: "rp-ok", "data-testid": "run-notes"}, "nothing looks off");
  const problems = h.problems.length ? el("details", {class: "rp-problems"},
    el("summary", {text: `${h.problems.length} reader notes and problems`}), ...h.problems.map((p) => el("div", {text: p}))) : null;
  box.replaceChildren(el("div", {class: "rp rp-head", "data-testid": "run-head", "data-serial": String(h.serial)},
    // the words wrap among themselves; the button keeps to their right, never a line of its own
    el("div", {class: "rp-title"}, el("div", {class: "rp-titletext"}, el("b", {text: "Run "}),
       el("span", {class: "rp-model", text: h.model}), el("span", {class: "rp-facts", text: facts}), live),
       el("button", {type: "button", class: "rp-present", title: "presentation mode (p): large type, j/k move, Enter opens"}, ...presentLabel())),
    notes, problems));
  box.querySelector(".rp-present")?.addEventListener("click", () => document.dispatchEvent(new CustomEvent("rp-present")));
}

// -- body --------------------------------------------------------------------------------------------
const LISTED_REWARDS = 8;  // a group's rewards written out up to this many; a larger group's drawn as a strip

/**
 * A group's rewards: written out for a small group; a larger one (64 rollouts: twenty lines of numbers) as a strip
 * of bars, highest first, each as high as its reward stands between the group's least and greatest (0 counted in:
 * a group of small positive rewards keeps short bars), with its range beside and every value in its title.
 * @param {(number | null)[]} rewards
 */
function rewardsCell(rewards) {
  if (rewards.length <= LISTED_REWARDS) {
    return el("span", {class: "rp-rewards"}, ...rewards.map((r) =>
      el("span", {class: "rp-r " + sign(r), text: r === null ? "×" : signed(r), title: r === null ? "no reward" : String(r)})));
  }
  const known = rewards.filter((r) => r !== null).map(Number).sort((a, b) => b - a);
  const lo = Math.min(0, ...known), hi = Math.max(0, ...known);
  const none = rewards.length - known.length;
  const strip = el("span", {class: "rp-strip", role: "img",
    "aria-label": `${rewards.length} rewards` + (known.length ? ` from ${signed(known[known.length - 1])} to ${signed(known[0])}` : "") +
      (none ? `, ${none} without a reward` : ""),
    title: rewards.map((r) => (r === null ? "×" : signed(r))).join(" ")},
    ...known.map((r) => {
      const bar = el("i", {class: sign(r)});
      bar.style.height = `${hi > lo ? Math.max(8, Math.round(100 * (r - lo) / (hi - lo))) : 50}%`;
      return bar;
    }), ...Array.from({length: none}, () => el("i", {class: "rp-none"})));
  const range = known.length ? `${signed(known[known.length - 1])} … ${signed(known[0])}` : "no reward";
  return el("span", {class: "rp-rewards rp-stripped"}, strip, el("span", {class: "rp-dimnum", text: range + (none ? ` · ${none} ×` : "")}));
}

/** @param {RunGroupRow[]} groups */
function groupTable(groups) {
  const head = el("tr", {}, ...["group", "task", "rewards", "mean", "passed", "trained tokens", "never trained", ""]
    .map((t) => el("th", {text: t})));
  const rows = groups.map((g) => {
    const rewards = rewardsCell(g.rewards);
    const follow = g.task_id ? el("button", {type: "button", class: "rp-follow", "data-task": g.task_id,
      title: "follow this task across versions"}, "follow task") : "";
    const tr = el("tr", {class: "rp-grow rp-cur", "data-path": g.path, "data-testid": "run-group", tabindex: "0"},
      el("td", {}, el("button", {type: "button", class: "rp-open", text: `g${g.group_id}`, title: "open the group map"})),
      el("td", {class: "rp-task", text: g.title}), el("td", {}, rewards),
      el("td", {class: "rp-num " + sign(g.reward_mean), text: num(g.reward_mean)}),
      // out of its rollouts with a verifier score, as the version's pass rate above counts them
      el("td", {class: "rp-num", text: `${g.passed}/${g.verified}`, title: `${g.passed} of the ${many(g.verified, "rollout")} ` +
        "with a verifier score passed every held-out test" + (g.verified < g.k ? ` (${g.k - g.verified} of the ${g.k} have none)` : "")}),
      el("td", {class: "rp-num", text: String(g.trained_tokens)}),
      el("td", {class: "rp-num", text: String(g.dropped)}), el("td", {}, follow));
    if (g.zero_spread) tr.append(el("td", {class: "rp-flag", text: "zero spread", title: "every advantage is 0: GRPO learns nothing here"}));
    return tr;
  });
  return el("table", {class: "rp-groups", "data-testid": "run-groups"}, el("thead", {}, head), el("tbody", {}, ...rows));
}

/** @param {RunBody} body @param {BodyState} state */
function versionsTable(body, state) {
  const head = el("tr", {}, ...COLUMNS.map(([t, key]) => {
    const on = state.sort.key === key;
    return el("th", {"aria-sort": on ? (state.sort.desc ? "descending" : "ascending") : "none", "data-sort": key,
                     title: t === "trainer mismatch" ? "over the re-scored rollouts of the version (python -m viewer rescore): the largest |log ratio| trainer − engine, and the share of their tokens outside TRL's clip band [0.8, 1.2]" : ""},
      el("button", {type: "button", class: "rp-sort" + (on ? " on" : ""), "data-sort": key,
                    title: `sort every version by ${t}${on ? " (again: reverse)" : ""}`},
        t, el("span", {class: "rp-sortdir", "aria-hidden": "true", text: on ? (state.sort.desc ? " ▼" : " ▲") : ""})));
  }));
  const tb = el("tbody");
  /** @param {VersionStats} s */
  const row = (s) => {
    const open = state.version === s.version;
    const dropped = Object.entries(s.dropped).map(([c, n]) => `${c} ${n}`).join(", ");
    tb.append(el("tr", {class: "rp-vrow rp-cur" + (open ? " open" : ""), "data-version": String(s.version),
                        "data-testid": "run-version", tabindex: "0", "aria-expanded": String(open)},
      el("td", {}, el("span", {class: "rp-caret", text: open ? "▾ " : "▸ "}), el("b", {text: String(s.version)})),
      el("td", {class: "rp-num", text: String(s.groups)}), el("td", {class: "rp-num", text: String(s.rollouts)}),
      el("td", {class: "rp-num " + sign(s.reward_mean), text: `${num(s.reward_mean)} (${num(s.reward_min, 2)} … ${num(s.reward_max, 2)})`}),
      el("td", {class: "rp-num", text: `${pct(s.pass_rate)} (${s.passed}/${s.verified})`,
                title: `${s.passed} of the ${s.verified} rollouts with a verifier score passed every held-out test` +
                       (s.verified < s.rollouts ? ` (${s.rollouts - s.verified} without one: a failed session is never verified)` : "")}),
      el("td", {class: "rp-num", text: `${s.zero_spread}/${s.groups}`}),
      el("td", {class: "rp-num", text: String(s.trained_tokens)}),
      el("td", {class: "rp-num", text: String(untrained(s)), title: dropped || "none"}),
      el("td", {class: "rp-num", text: String(s.timeouts)}),
      el("td", {class: "rp-num", "data-testid": "run-mismatch", text: s.rescored ? `${num(s.mismatch_max, 3)} · ${pct(s.outside_share)} outside (${s.rescored} re-scored)` : "-"})));
    if (open) tb.append(el("tr", {class: "rp-vgroups"}, el("td", {colspan: "10"},
      state.groups ? groupTable(state.groups) : el("span", {class: "rp-dim", text: "loading…"}))));
  };
  // A long run lists its first versions in the table's order; the rest on request (the charts show them all).
  // The open version is listed even beyond them (a chart's click opens any one), after a line saying so.
  const all = sortedVersions(body.versions, state.sort);
  const listed = all.slice(0, state.shown);
  listed.forEach(row);
  const at = all.findIndex((s) => s.version === state.version);
  if (at >= listed.length) {
    tb.append(el("tr", {class: "rp-gap"}, el("td", {colspan: "10", class: "rp-dim",
      text: `⋯ ${at - listed.length} versions not listed ⋯ the open version, ${at + 1} of ${all.length} in this order:`})));
    row(all[at]);
  }
  if (all.length > listed.length) {
    tb.append(el("tr", {class: "rp-more"}, el("td", {colspan: "10"}, el("button", {type: "button", class: "rp-showall",
      "data-testid": "run-show-all"}, `show all ${all.length} versions (${all.length - listed.length} more)`))));
  }
  return el("table", {class: "rp-versions", "data-testid": "run-versions", "data-sort": state.sort.key ? (state.sort.desc ? "-" : "") + state.sort.key : ""},
    el("thead", {}, head), tb);
}

/** @param {RunBody} body */
function taskPanel(body) {
  const pick = el("select", {class: "rp-taskpick", "data-testid": "run-task-pick"});
  pick.append(new Option("follow a task across versions…", ""));
  for (const t of body.tasks) pick.append(new Option(`${t.title} (${many(t.versions, "version")})`, t.task_id));
  /** @type {HTMLSelectElement} */ (pick).value = body.task ? body.task.task_id : "";
  const parts = [el("div", {class: "rp-taskbar"}, pick)];
  const t = body.task;
  if (t) {
    parts.push(el("div", {class: "rp-tasksum", "data-testid": "run-task-summary", text:
      `${t.title} · at ${many(t.versions, "version")} · ` +
      (t.first_solved === null ? "never solved (no rollout passed every held-out test)" : `first solved at version ${t.first_solved}`)}));
    const rows = t.groups.map((g) => el("tr", {class: "rp-tgroup", "data-testid": "run-task-group", "data-path": g.path},
      el("td", {}, el("b", {text: `v${g.version}`})),
      el("td", {}, el("button", {type: "button", class: "rp-open", text: `g${g.group_id}`, title: "open the group map"})),
      el("td", {class: "rp-num", text: pct(g.pass_rate)}),
      el("td", {}, ...g.rollouts.map((r) => el("label", {class: "rp-pickr" + (r.passed ? " passed" : "")},
        el("input", {type: "checkbox", class: "rp-pick", "data-path": r.path || "", disabled: !r.path,
                     "data-testid": "run-task-rollout", "aria-label": `version ${g.version} rollout ${r.rollout}`}),
        el("span", {class: "rp-r " + sign(r.reward), text: `#${r.rollout} ${r.reward === null ? r.status : signed(r.reward)}`}))))));
    const cut = groupsListed(t);
    if (cut) parts.push(el("div", {class: "rp-dim", "data-testid": "run-task-cut", text: `${cut}: open a version (a chart or the table) for the task's groups near it`}));
    parts.push(el("table", {class: "rp-taskgroups"}, el("thead", {}, el("tr", {}, ...["version", "group", "pass rate", "rollouts (tick two to compare)"]
      .map((x) => el("th", {text: x})))), el("tbody", {}, ...rows)));
    parts.push(el("div", {class: "rp-cmpbar"}, el("button", {type: "button", class: "rp-compare", disabled: true,
      "data-testid": "run-compare"}, "compare the two ticked"), el("label", {}, " at turn ",
      el("input", {type: "number", class: "rp-cturn", min: "0", value: "0", size: "3"}))));
    parts.push(el("div", {class: "ci"}, el("div", {class: "gm-comparebox rp-cmpbox", "data-testid": "run-compare-box"})));
  }
  return el("section", {class: "rp-taskbox", "data-testid": "run-task"}, el("h3", {text: "Follow one task"}), ...parts);
}

/** @param {Element} box @param {RunApi} api */
function mountBody(box, api) {
  /** @type {BodyState} */
  const state = {src: null, body: null, version: null, groups: null, task: null, cursor: -1, body_task: null, shown: FIRST_VERSIONS,
                 sort: {key: "", desc: false}};
  // The charts sit above the versions list and are drawn once per record; the list redraws on every click.
  const chartsBox = el("div", {class: "rp-charts", "data-testid": "run-charts"});
  const list = el("div", {class: "rp-list"});
  const versusBox = el("div", {class: "rp-vsmount"});  // another run beside this one (viewer/assets/src/run_versus.js)
  // Smoothing (an EMA weight, kept in the URL as smooth=) draws each line chart's smoothed curve over its raw one.
  const smoothIn = /** @type {HTMLInputElement} */ (el("input", {type: "range", min: "0", max: "0.99", step: "0.01", value: "0",
    class: "rp-smooth", "data-testid": "run-smooth", "aria-label": "smoothing of the line charts: EMA weight, 0 is raw"}));
  const smoothOut = el("output", {class: "rp-smooth-v", text: "0"});
  const chartBar = el("div", {class: "rp-chartbar"},
    el("label", {title: "exponential moving average as W&B and TensorBoard draw it; the raw curve stays, faint"},
      "smoothing (EMA) ", smoothIn, " ", smoothOut),
    el("span", {class: "rp-hint", text: "point at a chart to read a version · click it (or Enter on a focused chart) to open it"}));
  const top = el("div", {class: "rp rp-body", "data-testid": "run-body"}, chartBar, chartsBox, list, versusBox);
  box.replaceChildren(top);
  // a chart opens a version as its row in the table does, and brings that row (and the cursor) to it
  const charts = RunCharts.mount(chartsBox, (v) => {
    if (state.version !== v) openVersion(v);
    const rs = cursorRows();
    const i = rs.findIndex((r) => r.classList.contains("rp-vrow") && r.dataset.version === String(v));
    if (i < 0) return;
    state.cursor = i;
    rs.forEach((r, j) => r.classList.toggle("rp-cursor", j === i));
    rs[i].scrollIntoView({block: "nearest"});
  });
  /** The smoothing of a link that names none: a run of LONG_RUN versions or more is drawn smoothed (its raw curves
   * faint beneath), as TensorBoard smooths by default: raw, its thousands of versions overlaid fill the plot with
   * their zigzags; a shorter run raw. @param {number} versions */
  const autoSmooth = (versions) => (versions >= LONG_RUN ? LONG_RUN_SMOOTH : 0);
  /** @param {number} w */
  function smoothTo(w) {
    const v = Math.max(0, Math.min(0.99, Number.isFinite(w) ? w : 0));
    smoothIn.value = String(v);
    smoothOut.textContent = v.toFixed(2);
    charts.smooth(v);
    versus.smooth(v);  // one smoothing for every line chart of the page, a compared run's too
    return v;
  }
  smoothIn.addEventListener("input", () => smoothTo(Number(smoothIn.value)));
  // kept in the link even at 0: a link without it smooths a long run (`autoSmooth`)
  smoothIn.addEventListener("change", () => setUrl({smooth: String(smoothTo(Number(smoothIn.value)))}));
  const versus = RunVersus.mount(versusBox, {versus: (req) => api.versus(req), openRow: (src, row) => {
    setUrl({row, rollout: null, turn: null, group: null, segment: null}, {ci: "row"});
    api.open({action: "open", src, row});
  }});
  function draw() {
    const b = state.body;
    if (!b) return;
    top.dataset.serial = String(b.serial);
    const was = box.querySelector(".rp-vbox");  // the table is made anew: its scroll kept, the reader's place
    const scrolled = was ? was.scrollTop : 0;
    list.replaceChildren(el("h3", {text: "Versions → groups"}),
      el("div", {class: "rp-dim", text: "Click a version for its groups, a group for its map (then a rollout for its tokens). " +
        "pass = every held-out test passed · zero spread = every advantage 0 · never trained = no row of it in the loss"}),
      el("div", {class: "rp-vbox"}, versionsTable(b, state)), taskPanel(b));
    const vb = box.querySelector(".rp-vbox");
    if (vb) vb.scrollTop = scrolled;
    const rs = box.querySelectorAll("tr.rp-cur");  // the cursor keeps its place: Enter on a version, then j, is its first group
    if (state.cursor >= rs.length) state.cursor = rs.length - 1;
    if (state.cursor >= 0) rs[state.cursor].classList.add("rp-cursor");
  }
  /** Opens version `v` (closes it when open); `again`: the open version's groups read anew, after the run grew,
   * shown as they were until the new ones arrive (no flash of an empty version, the reader's place kept).
   * @param {number} v @param {boolean} [again] */
  async function openVersion(v, again = false) {
    if (!again) {
      state.version = state.version === v ? null : v;
      state.groups = null;
      setUrl({version: state.version});
      draw();
      if (state.version === null) return;
    }
    // a followed task listing some of its groups lists those near the version opened
    if (!again && state.task && state.body_task && groupsListed(state.body_task)) followTask(state.task);
    const got = await api.version({src: state.src, version: v});
    if (state.version !== v) return;
    state.groups = (got && got.groups) || [];
    draw();
    if (again) return;
    showOpen();
  }
  /** The open version's row and its first groups in the table's box (its own scroll, not the page's): a version
   * opened far down the table (a chart's click, a link, a row past the first screen) is not left out of sight.
   * The window too: groups opened below its fold (the table's last rows at 1024x768, or large type presenting)
   * look as if the click did nothing, so the row goes to the top, its groups under it. */
  function showOpen() {
    const vb = box.querySelector(".rp-vbox");
    const row = box.querySelector("tr.rp-vrow.open");
    if (!vb || !row) return;
    const b = vb.getBoundingClientRect(), r = row.getBoundingClientRect();
    const first = box.querySelector("tr.rp-grow");
    const below = first ? first.getBoundingClientRect().bottom : r.bottom;
    if (r.top < b.top || below > b.bottom) vb.scrollTop += r.top - b.top;
    if (first && first.getBoundingClientRect().bottom > innerHeight) row.scrollIntoView({block: "start"});
  }
  /** A group's path "groups/<segment>-v000003-g000002" read as its place, or null @param {string | undefined} path */
  const groupPlace = (path) => {
    const m = /-v(\d+)-g(\d+)$/.exec(path || "");
    return m ? {version: Number(m[1]), group: Number(m[2])} : null;
  };
  /** A group's path as a person reads it: "version 3 · group 2" @param {string | undefined} path */
  const groupName = (path) => {
    const p = groupPlace(path);
    return p ? `version ${p.version} · group ${p.group}` : "the group";
  };
  /** @param {string | undefined} path */
  function openGroup(path) {
    state.opened = path;  // back lands here again: the version it belongs to stays open, this row on screen
    setUrl({row: path, rollout: null, turn: null, group: null, segment: null}, {ci: "row"});
    working(`opening ${groupName(path)}…`);
    api.open({action: "open", src: state.src, row: path});
  }
  // Every element here was made by this page: its closest() finds are HTML elements, its inputs inputs.
  const at = (/** @type {Event} */ ev) => /** @type {HTMLElement} */ (ev.target);
  const near = (/** @type {Event} */ ev, /** @type {string} */ sel) => /** @type {HTMLElement | null} */ (at(ev).closest(sel));
  const ticks = () => /** @type {HTMLInputElement[]} */ (Array.from(box.querySelectorAll(".rp-pick:checked")));
  const one = (/** @type {string} */ sel) => /** @type {HTMLInputElement | null} */ (box.querySelector(sel));
  box.addEventListener("click", (ev) => {
    const follow = near(ev, ".rp-follow");
    if (follow) { followTask(follow.dataset.task); return; }
    const grow = near(ev, "tr.rp-grow, tr.rp-tgroup");
    if (grow && (near(ev, ".rp-open") || (grow.classList.contains("rp-grow") && !near(ev, "button, input, label")))) {
      openGroup(grow.dataset.path); return;
    }
    const vrow = near(ev, "tr.rp-vrow");
    if (vrow) { openVersion(Number(vrow.dataset.version)); return; }
    const sortBy = near(ev, ".rp-sort");
    if (sortBy) { sortOn(sortBy.dataset.sort || ""); return; }
    if (near(ev, ".rp-compare")) compare();
    if (near(ev, ".rp-showall")) { state.shown = Infinity; draw(); }
  });
  box.addEventListener("change", (ev) => {
    if (near(ev, ".rp-taskpick")) { followTask(/** @type {HTMLSelectElement} */ (at(ev)).value); return; }
    const c = /** @type {HTMLInputElement | null} */ (near(ev, ".rp-pick"));
    if (!c) return;
    const ticked = ticks();
    const other = ticked.find((x) => x !== c);
    if (c.checked && ticked.length > 2 && other) other.checked = false;
    const button = one(".rp-compare");
    if (button) button.disabled = ticks().length !== 2;
  });
  /** The table sorted by `key` over every version (again: reversed), kept in the URL. @param {string} key */
  function sortOn(key) {
    state.sort = state.sort.key === key ? {key, desc: !state.sort.desc} : {key, desc: false};
    setUrl({vsort: (state.sort.desc ? "-" : "") + key});
    state.cursor = -1;
    draw();
    /** @type {HTMLElement | null} */ (box.querySelector(`.rp-sort[data-sort="${key}"]`))?.focus();
    const vb = box.querySelector(".rp-vbox");
    if (vb) vb.scrollTop = 0;
  }
  /** @param {string | undefined} task */
  function followTask(task) {
    state.task = task || null;
    setUrl({task: state.task});
    working(state.task ? "following the task across versions…" : "leaving the task…");
    api.open({action: "task", src: state.src, task: state.task || "", version: state.version});
  }
  async function compare() {
    const [a, b] = ticks().map((c) => c.dataset.path || "");
    const out = one(".rp-cmpbox");
    if (!out || !a || !b) return;
    out.textContent = "comparing…";
    const turn = Math.max(0, Number(one(".rp-cturn")?.value) || 0);
    showCompare(out, await api.compare({src: state.src, a, b, turn}));
  }
  // presentation and the row cursor
  const root = () => document.getElementById("run-page");
  const shown = () => { const r = root(); return !!r && r.getClientRects().length > 0; };  // fixed when presenting
  // presenting: the run page's class and the body's (a group map or rollout left with Esc clears only the body's)
  const presenting = () => { const r = root(); return !!r && r.classList.contains("rp-present") && document.body.classList.contains("tv-present"); };
  /** @param {boolean} [on] */
  function present(on) {
    const r = root();
    if (!r) return;
    const v = on === undefined ? !presenting() : on;
    r.classList.toggle("rp-present", v);
    document.body.classList.toggle("tv-present", v);  // a group opened from here opens in presentation too
    if (v) keyScrolled(r);
  }
  const cursorRows = () => /** @type {HTMLElement[]} */ (Array.from(box.querySelectorAll("tr.rp-cur")));
  /** @param {number} d */
  function move(d) {
    const rs = cursorRows();
    if (!rs.length) return;
    state.cursor = Math.max(0, Math.min(rs.length - 1, state.cursor + d));
    rs.forEach((r, i) => r.classList.toggle("rp-cursor", i === state.cursor));
    rs[state.cursor].scrollIntoView({block: "nearest"});
  }
  function enter() {
    const r = cursorRows()[state.cursor];
    if (!r) return false;
    if (r.classList.contains("rp-vrow")) openVersion(Number(r.dataset.version)); else openGroup(r.dataset.path);
    return true;
  }
  /** @param {string} path @param {boolean} [opening] */
  async function backTo(path, tries = 60, opening = true) {  // once the run page is on screen again: the group it opened, scrolled to
    if (!shown()) { if (tries) requestAnimationFrame(() => backTo(path, tries - 1, opening)); return; }
    state.opened = null;
    const rows = /** @type {HTMLElement[]} */ (Array.from(box.querySelectorAll("tr.rp-grow")));
    const place = groupPlace(path);
    if (opening && place && !rows.some((r) => r.dataset.path === path) && state.version !== place.version) {
      // a group reached by a link: its version opens, as if the group had been opened from it
      await openVersion(place.version);
      backTo(path, 0, false);
      return;
    }
    const row = rows.find((r) => r.dataset.path === path) || box.querySelector("tr.rp-vrow.open");
    if (!row) return;
    row.scrollIntoView({block: "center"});
    box.querySelectorAll(".rp-came").forEach((r) => r.classList.remove("rp-came"));
    row.classList.add("rp-came");
  }
  /** @param {boolean} [on] */
  function help(on) {  // ? : the run page's keys (the token view and the index have their own)
    let h = /** @type {HTMLElement | null} */ (box.querySelector(".rp-help"));
    if (!h) {
      /** @param {string} k @param {string} what */
      const row = (k, what) => el("tr", {}, el("td", {}, el("kbd", {text: k})), el("td", {text: what}));
      h = el("div", {class: "rp rp-help", role: "dialog", "aria-label": "keyboard shortcuts", "data-testid": "run-help"},
        el("b", {text: "Keyboard"}), el("table", {}, row("j / k", "move the row cursor (versions, then a version's groups)"),
          row("Enter", "open the cursor's version or group"), row("← →", "on a focused chart: read the version before or after"),
          row("Enter", "on a focused chart: open the version it reads"), row("p", "presentation mode"), row("?", "this help"),
          row("Esc", "close help / leave presentation")));
      h.hidden = true;
      box.append(h);
    }
    h.hidden = on === undefined ? !h.hidden : !on;
  }
  document.addEventListener("rp-present", () => present());
  /** @param {KeyboardEvent} ev */
  const onKey = (ev) => {  // capture phase: on the run page these keys are the run page's, not the index's
    if (!document.body.contains(box)) { window.removeEventListener("keydown", onKey, true); return; }
    if (!state.body || !shown()) return;
    const target = at(ev);
    const tag = (target && target.tagName) || "";
    if (/INPUT|TEXTAREA|SELECT/.test(tag) || (target && target.isContentEditable) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const on = presenting(), k = ev.key;
    // a focused chart reads versions with the arrows and opens one with Enter (viewer/assets/src/run_charts.js)
    if (target && target.closest(".rp-chart") && /^(Enter|ArrowLeft|ArrowRight|Home|End|PageUp|PageDown)$/.test(k)) return;
    const helpOpen = !!box.querySelector(".rp-help:not([hidden])");
    if (k === "p") present();
    else if (k === "?") help();
    else if (k === "Escape" && helpOpen) help(false);
    else if (k === "Escape" && on) present(false);
    else if (k === "j" || (on && k === "ArrowDown")) move(1);
    else if (k === "k" || (on && k === "ArrowUp")) move(-1);
    else if (k === "Enter" && state.cursor >= 0 && !/^(BUTTON|A)$/.test(tag)) { if (!enter()) return; }
    else return;
    ev.preventDefault();
    ev.stopImmediatePropagation();
  };
  window.addEventListener("keydown", onKey, true);
  // A deep link's group= (resolved by the server to the index's row=) is spent once the index is back.
  new MutationObserver(() => {
    const ci = /** @type {HTMLElement | null} */ (document.querySelector("#collection-index .ci"));
    if (ci && ci.dataset.mode === "index" && new URL(window.location.href).searchParams.has("group")) {
      setUrl({group: null, segment: null});
    }
    if (ci && ci.dataset.mode === "index" && state.opened) backTo(state.opened);
  }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ["data-mode"]});
  return {
    box,
    /** @param {RunBody} b */
    render(b) {
      const same = state.src === b.src;
      state.body = b; state.src = b.src;
      if (!b.refresh || !same) {
        state.version = b.open_version; state.groups = b.open_version === null ? null : b.groups;
        state.task = b.task ? b.task.task_id : null;
      } else if (state.task && !b.task) {
        b.task = state.body_task;  // a refresh keeps the followed task as shown
      }
      state.body_task = b.task;
      if (!same) { state.sort = parseSort(b.sort); smoothTo(b.smooth ?? autoSmooth(b.versions.length)); }  // the link's, on a run's first record
      // a link to a group (or a rollout of it): Back to the index lands on that group, as if opened from here
      const linked = !same && new URL(window.location.href).searchParams.get("row");
      if (linked && !state.opened) state.opened = linked.replace(/\/rollout-\d+$/, "");
      draw();
      if (!same && state.version !== null) showOpen();  // a link's version, in sight in its table
      if (!same) versus.start(b.src);
      charts.update(b.versions, b.task);
      if (b.refresh && state.version !== null) openVersion(state.version, true);
    },
  };
}

/**
 * @param {HTMLElement} element @param {{value: string}} props @param {RunServer} server
 * @param {(name: string, fn: () => void) => void} watch @param {(name: string, data: object) => void} trigger
 * @param {"head" | "body"} part
 */
export function mountInApp(element, props, server, watch, trigger, part) {
  /** @type {RunApi} */
  const api = {
    version: (req) => server.run_version(req),
    compare: (req) => server.run_compare(req),
    versus: (req) => server.run_versus(req),
    open: (req) => trigger("click", req),
  };
  /** @type {ReturnType<typeof mountBody> | null} */
  let view = null;
  function start() {
    const box = element.querySelector(".rp-mount");
    if (!box || !props.value) return;
    const value = sentValue(props);
    if (part === "head") { renderHead(box, value); return; }
    if (!view || view.box !== box) view = mountBody(box, api);
    view.render(value);
  }
  start();
  watch("value", start);
}
