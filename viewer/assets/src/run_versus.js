// The run page's "compare with another run" section (viewer/assets/src/run_page.js mounts it below the versions):
// the visitor names a second run (kept in the URL as `vs=`, the task followed in both as `vs_task=`), the server
// answers a RunCompare (viewer/run_compare.py) and this draws the two runs' numbers side by side, their
// per-version curves overlaid (viewer/assets/src/run_charts.js) and one task both ran, each side's rollouts of it
// with their rewards and fates, each a link that opens it. Every text goes through textContent or an attribute
// (dom.js's `el`).
import {el, intoSight} from "./dom.js";
import {count, groupsListed, many, sign} from "./values.js";
import * as RunCharts from "./run_charts.js";

/** @typedef {{versus(req: {src: string, vs: string, task: string}): Promise<{compare?: RunCompare, error?: string}>,
 *            openRow(src: string, row: string): void}} VersusApi */
const num = (/** @type {number | null} */ v) => (v === null ? "–" : v.toFixed(3));
const pct = (/** @type {number | null} */ v) => (v === null ? "–" : Math.round(100 * v) + "%");

/** @param {Record<string, string>} changes */
function setUrl(changes) {
  const u = new URL(window.location.href);
  for (const [k, v] of Object.entries(changes)) if (v) u.searchParams.set(k, v); else u.searchParams.delete(k);
  history.replaceState(history.state, "", u.toString());
}

/** A page link to one rollout of a run (the router opens `?src=RUN&row=PATH`). @param {string} src @param {string} row */
function rowLink(src, row) {
  const u = new URL(window.location.href);
  u.search = "";
  u.searchParams.set("src", src);
  u.searchParams.set("row", row);
  return u.toString();
}

/** @param {RunCompare} c */
function sides(c) {
  /** @param {string} label @param {(s: RunSide) => string} f */
  const row = (label, f) => el("tr", {}, el("th", {text: label}), el("td", {text: f(c.a)}), el("td", {text: f(c.b)}));
  return el("table", {class: "rp-vssides", "data-testid": "run-vs-sides"},
    el("thead", {}, el("tr", {}, el("th"), el("th", {text: "this run"}), el("th", {text: "other run"}))),
    el("tbody", {}, row("source", (s) => s.src), row("model", (s) => s.model),
       row("versions", (s) => count(s.versions.length)), row("groups · rollouts", (s) => `${count(s.groups)} · ${count(s.rollouts)}`),
       row("reward mean", (s) => num(s.reward_mean)), row("pass rate", (s) => pct(s.pass_rate))));
}

/** One side of the followed task: its groups by version, each rollout a link. @param {string} src @param {TaskTrack | null} t @param {string} who */
function taskSide(src, t, who) {
  if (!t) return el("div", {class: "rp-dim", text: `${who}: no rollout of this task`});
  const rows = t.groups.map((g) => el("tr", {"data-testid": "run-vs-group"},
    el("td", {}, el("b", {text: `v${g.version}`}), ` g${g.group_id}`), el("td", {class: "rp-num", text: pct(g.pass_rate)}),
    el("td", {}, ...g.rollouts.map((r) => {
      const text = `#${r.rollout} ${r.reward === null ? "×" : (r.reward > 0 ? "+" : "") + r.reward.toFixed(2)} ${r.status}${r.passed ? " ✓" : ""}`;
      const cls = "rp-vsr rp-r " + sign(r.reward) + (r.passed ? " passed" : "");
      return r.path ? el("a", {class: cls, href: rowLink(src, r.path), "data-src": src, "data-row": r.path, "data-testid": "run-vs-rollout",
                               title: `open rollout ${r.rollout} of group ${g.group_id} at version ${g.version} (${r.status})`, text})
        : el("span", {class: cls, title: "failed before it produced an artifact", text});
    }))));
  return el("div", {class: "rp-vsside"},
    el("div", {class: "rp-tasksum", text: `${who} · ${many(t.versions, "version")} · ` +
      (t.first_solved === null ? "never solved" : `first solved at version ${t.first_solved}`) +
      (groupsListed(t) ? ` · ${groupsListed(t)}` : "")}),
    el("table", {}, el("thead", {}, el("tr", {}, ...["version · group", "pass rate", "rollouts (reward, fate; ✓ passed)"].map((x) => el("th", {text: x})))),
       el("tbody", {}, ...rows)));
}

/** @param {HTMLElement} box @param {VersusApi} api */
export function mount(box, api) {
  const input = /** @type {HTMLInputElement} */ (el("input", {type: "text", class: "rp-vsinput", "data-testid": "run-vs-input",
    "aria-label": "the other run", placeholder: "another run: a bundled example, a Hub dataset id, or a folder on your machine"}));
  const go = el("button", {type: "button", class: "rp-vsgo", "data-testid": "run-vs-go"}, "compare");
  const clear = el("button", {type: "button", class: "rp-vsclear", "data-testid": "run-vs-clear", hidden: true}, "close");
  const status = el("div", {class: "rp-dim", role: "status", "data-testid": "run-vs-status"});
  const out = el("div", {class: "rp-vsout", "data-testid": "run-vs-out"});
  const grid = el("div", {class: "rp-charts", "data-testid": "run-vs-charts"});
  const taskBox = el("div", {class: "rp-vstask", "data-testid": "run-vs-task"});
  const section = el("section", {class: "rp-versus", "data-testid": "run-versus"},
    el("h3", {text: "Compare with another run"}), el("div", {class: "rp-vsbar"}, input, go, clear), status, out);
  box.replaceChildren(section);
  const charts = RunCharts.mountCompare(grid);
  let src = "", asked = 0;

  /** @param {string} vs @param {string} task */
  async function load(vs, task) {
    const my = ++asked;
    setUrl({vs, vs_task: task});
    clear.hidden = !vs;
    if (!vs) { out.replaceChildren(); status.textContent = ""; box.dataset.answered = String(my); return; }
    status.textContent = "opening the other run…";
    const got = await api.versus({src, vs, task});
    if (my !== asked) return;
    const c = got && got.compare;
    if (!c) {
      status.textContent = (got && got.error) || "could not compare the runs";
      out.replaceChildren();
      box.dataset.answered = String(my);
      return;
    }
    status.textContent = `${many(c.tasks.length, "task")} in both runs`;
    const notes = c.notes.length ? el("ul", {class: "rp-notes", "data-testid": "run-vs-notes"}, ...c.notes.map((n) => el("li", {text: n}))) : null;
    const pick = /** @type {HTMLSelectElement} */ (el("select", {class: "rp-vspick", "data-testid": "run-vs-task-pick", "aria-label": "a task both runs ran"}));
    pick.append(new Option("follow a task in both runs…", ""));
    for (const t of c.tasks) pick.append(new Option(`${t.title} (this run: ${many(t.a_versions, "version")} · other: ${many(t.b_versions, "version")})`, t.task_id));
    pick.value = c.task ? c.task.task_id : "";
    pick.addEventListener("change", () => load(vs, pick.value));
    taskBox.replaceChildren(...(c.task ? [el("div", {class: "rp-vsgrid"}, taskSide(c.a.src, c.a_task, "this run"), taskSide(c.b.src, c.b_task, "other run"))] : []));
    // no task in both: nothing to follow, said instead of an empty choice
    const taskbar = c.tasks.length ? el("div", {class: "rp-taskbar"}, pick) :
      el("div", {class: "rp-taskbar rp-dim", "data-testid": "run-vs-no-tasks", text: "the two runs share no task: none to follow in both"});
    out.replaceChildren(sides(c), ...(notes ? [notes] : []), grid, taskbar, taskBox);
    charts.update(c);
    box.dataset.answered = String(my);
  }
  // asked for: the answer (or why there is none) lies below the compare box, past the fold of a short screen
  const ask = () => load(input.value.trim(), "").then(() => intoSight(section));
  go.addEventListener("click", ask);
  input.addEventListener("keydown", (ev) => { if (ev.key === "Enter") ask(); });
  clear.addEventListener("click", () => { input.value = ""; load("", ""); });
  out.addEventListener("click", (ev) => {  // this run's rollout opens in place (Back returns); the other's is a page link
    const a = /** @type {HTMLElement | null} */ (/** @type {HTMLElement} */ (ev.target).closest("a.rp-vsr"));
    if (!a || a.dataset.src !== src || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    api.openRow(src, a.dataset.row || "");
  });
  return {
    /** The run page's smoothing, for these charts too. @param {number} w an EMA weight, 0 (raw) to 0.99 */
    smooth(w) { charts.smooth(w); },
    /** The run this page shows, and what the URL asks to compare it with. @param {string} run */
    start(run) {
      src = run;
      const q = new URL(window.location.href).searchParams;
      input.value = q.get("vs") || "";
      load(input.value.trim(), q.get("vs_task") || "");
    },
  };
}
