// -- the panels: the rollout's headline, header, tests and reward, a turn's notes and tool calls, TRL's rows ------
// Each draws one record of viewer/contract.py (built by viewer/render/panels.py) with dom.js's `el`: every string
// from the server lands as text or an attribute's value, never as markup. A task's markdown arrives parsed (`Md`);
// its links carry what the server validated and open in a new tab with no referrer.
import {el} from "../dom.js";
import {fateKind, many, sign, signed} from "../values.js";
import {fmt} from "./format.js";

/** @typedef {Node | string | null} Part */

/** A reward as the whole app writes it (rollout_trace/analysis/report.py `fmt_reward`). @param {number | null} v */
const reward = (v) => v === null ? "unscorable" : signed(v);

/** "… and N more", under a list the server cut. @param {number} total @param {number} shown @param {string} what */
function more(total, shown, what) {
  return total > shown ? el("div", {class: "tv-dim", text: `… and ${fmt(total - shown)} more ${what}, not shown here`}) : null;
}

/** A text from a trace, preformatted; past its fold behind "show all". @param {Folded} F @returns {Part[]} */
export function folded(F) {
  const head = el("pre", {class: "tv-pre", text: F.head});
  if (!F.rest && !F.unsent) return [head];
  return [head, el("details", {class: "tv-fold"},
    el("summary", {text: `show all ${fmt(F.chars)} characters${F.label ? ` of ${F.label}` : ""}`}),
    el("pre", {class: "tv-pre", text: F.rest}),
    F.unsent ? el("div", {class: "tv-dim", text: `… ${fmt(F.unsent)} more characters are in the artifact, not shown here`}) : null)];
}

/** Markdown the server parsed: each node the element its tag names, text as text. @param {Md[]} nodes @returns {Part[]} */
export function markdown(nodes) {
  return nodes.map((n) => {
    if (n.tag === "text") return n.text;
    if (n.tag === "code") return el("code", {text: n.text});
    if (n.tag === "a") return el("a", {href: n.href, title: n.text || null, rel: "noopener noreferrer nofollow", target: "_blank"}, ...markdown(n.children));
    if (n.tag === "ol") return el("ol", {start: n.start}, ...markdown(n.children));
    return el(n.tag, null, ...markdown(n.children));
  });
}

/** A table of `rows`, under a `tbody` as an HTML parser puts them. @param {string} cls @param {...Part} rows */
const table = (cls, ...rows) => el("table", {class: cls}, el("tbody", null, ...rows));

// -- the rollout ------------------------------------------------------------------------------------

/** Whether the trainer took a run's rollout: "trained at step N" or "never trained (cause)". @param {Fate} f */
export const fateBadge = (f) => el("span", {class: `tv-badge tv-fate ${fateKind(f)}`,
                                            "data-testid": "fate", title: f.why, text: f.label});

/** The headline: tests, reward, what is trained, and a run's rollout's fate. @param {Summary} S @param {RunContext | null} run */
export function summaryLine(S, run) {
  const value = S.no_reward !== null
    ? el("span", {class: "tv-reward-value none", "data-testid": S.recorded ? "status" : null, text: S.no_reward})
    : el("span", {class: `tv-reward-value ${sign(S.reward)}`, title: S.recorded ? "TRL's reward: the sum of its reward columns" : null,
                  text: `reward ${reward(S.reward)}`});
  return el("div", {class: "tv-summary", "data-testid": "summary"}, el("span", {text: S.tests}), " · ", value, " · ",
    el("span", {title: S.recorded ? "what TRL's completion mask would train, were its rows in the loss" : null, text: S.trained}),
    // the fate is a pill of its own: no "·" before it, which a wrapped line would leave dangling at its end
    ...(S.recorded && run ? [" ", fateBadge(run.fate)] : []));
}

/** Where a run's rollout sits, on the rollout itself (an export carries it; the headline has its fate). @param {RunContext} run */
function runBadge(run) {
  const where = `run ${run.run} · version ${run.version} · group ${run.group_id} · rollout ${run.rollout} of ${run.k} · segment ${run.segment}`;
  const adv = run.advantage === null ? "TRL gave it no advantage" : `TRL's advantage ${signed(run.advantage)}`;
  return el("span", {class: "tv-badge", "data-testid": "run-context", title: where,
                     text: `${run.crumbs.slice(1).join(" › ")} · ${run.status} · ${adv}`});
}

/** The header: model, verdicts and counts, how the artifact was made, the task, notices.
 *  @param {Header} H @param {RunContext | null} run */
export function headerBox(H, run) {
  const c = H.counts, other = c.calls - c.turns;
  const mask = c.recorded ? `${fmt(c.trained)} in ${c.trained_by}'s mask` : `${fmt(c.trained)} trained by ${c.trained_by}`;
  // The agent's turns first (what the view pages through), then every call the proxy saw, opencode's own named.
  const counts = `${many(c.turns, "agent turn")} · ${mask} · ${many(c.calls, "model call")} recorded` +
    (other > 0 ? ` (${fmt(other)} by opencode itself, e.g. the session title)` : "");
  const size = `${fmt(H.tokens)} tokens · longest context ${fmt(H.longest)}`;
  const tokenizer = H.tokenizer !== null ? `tokenizer: ${H.tokenizer}`
    // The short line says what the reader sees; the reasons are one click away.
    : el("details", {class: "tv-inline"}, el("summary", {text: "no tokenizer files: showing ids"}), H.no_tokenizer.join("; "));
  return el("div", {class: "tv-header"},
    el("div", {class: "tv-h-row"},
      el("span", {class: "tv-model", text: H.model}),
      ...(H.recipe_differs ? [" ", el("span", {class: "tv-badge warn", title: "recomputed from the recipe", text: `recipe gives ${reward(H.recomputed)}`})] : []),
      el("span", {class: `tv-badge ${H.drift ? "warn" : "ok"}`, "data-testid": "continuity",
                  title: "does each turn start with exactly the tokens of the turn before?", text: H.continuity}),
      // the short badges before the long counts: they share a line at 1024 px rather than take one each
      run ? runBadge(run) : null,
      H.timed_out ? el("span", {class: "tv-badge warn", text: "timed out"}) : null,
      el("span", {class: "tv-badge", "data-testid": "counts", title: c.tip, text: counts}),
      H.disagree !== null ? el("span", {class: "tv-badge warn", "data-testid": "trained-disagree", title: H.disagree_tip, text: H.disagree}) : null),
    // Whole on the first screen up to three lines; a click shows the rest (CSS clamps the closed summary).
    H.produced_by ? el("details", {class: "tv-produced"},
      el("summary", {title: "how this artifact was made (click for all of it)", text: H.produced_by})) : null,
    el("div", {class: "tv-h-row2"},
      el("details", {class: "tv-task"}, el("summary", {text: `task ${H.task}: instruction`}),
        el("div", {class: "tv-md"}, ...(H.instruction_text ? folded(H.instruction_text) : markdown(H.instruction)))),
      el("div", {class: "tv-meta"}, ...(typeof tokenizer === "string"  // one run of text, as one line of words
        ? [`${tokenizer} · ${size}`] : [tokenizer, ` · ${size}`]))),
    H.notices.length ? el("ul", {class: "tv-notices"}, ...H.notices.map((n) => el("li", {text: n}))) : null);
}

/** A held-out test's result, or why it has none. @param {HeldOutTest} t @param {string} none @returns {Part[]} */
function verdict(t, none) {
  if (t.status === null) return [el("span", {class: "tv-dim", text: none})];
  return [el("span", {class: `tv-badge ${t.passed ? "ok" : "warn"}`, text: t.status}),
          ...(t.detail ? [" ", el("span", {class: "tv-dim", text: t.detail})] : [])];
}

/** A heading with its dim aside. @param {string} title @param {string} aside */
const heading = (title, aside) => el("h4", null, `${title} `, el("span", {class: "tv-dim", text: aside}));
const absent = () => el("i", {text: "not in this artifact"});

/** The visible example tests beside the held-out tests (a run's rollout: its verifier). @param {Tests} T */
export function testsBox(T) {
  if (T.verifier) return verifierBox(T.verifier);
  const count = `${T.held_out_count} held-out tests${T.passed !== null ? `, ${T.passed} passed` : ""}`;
  // Inputs and outputs are shown as the program reads and prints them: one line per line, never wrapped
  // (a wrapped "1000000000 999999999" would read as two stdin lines); a long line scrolls sideways (CSS).
  const held = T.held_out === null ? [absent()] : [
    el("table", {class: "tv-table tv-heldout"},
      el("colgroup", null, el("col", {class: "n"}), el("col", {class: "io"}), el("col", {class: "io"}), el("col")),
      el("tbody", null,
        el("tr", null, el("th", {text: "#"}), el("th", {title: "what the program reads on stdin, line by line", text: "stdin"}),
          el("th", {text: "expected stdout"}), el("th", {text: "result"})),
        ...T.held_out.map((t, i) => el("tr", {"data-testid": "held-out-test"}, el("td", {text: i}),
          el("td", null, ...folded(t.input)), el("td", null, ...folded(t.output)), el("td", null, ...verdict(t, T.no_result)))))),
    more(T.held_out_count, T.held_out.length, "held-out tests")];
  return el("div", {class: "tv-tests"},
    el("div", null, heading("Visible example tests", "what the agent could see and run"), ...(T.visible ? folded(T.visible) : [absent()])),
    el("div", null, heading("Held-out tests", `${count}; these produce the reward, the agent never sees them`), ...held));
}

/** What OpenEnv's verify() reported beside what TRL made of it. @param {Verifier} V */
function verifierBox(V) {
  /** @param {string} name @param {string} value @param {string | null} [testid] */
  const row = (name, value, testid = null) => el("tr", {"data-testid": testid}, el("td", {text: name}), el("td", {class: "num", text: value}));
  return el("div", {class: "tv-tests tv-verify", "data-testid": "verifier"},
    el("div", null, heading("What the verifier reported", "OpenEnv's VerifyResult for this session, in place of a capture's held-out tests"),
      table("tv-table", row("env reward", V.env_reward === null ? "none" : reward(V.env_reward)),
        V.done !== null ? row("done", V.done ? "yes" : "no") : null,
        ...V.metrics.map((m) => row(m.name, m.value, "verify-metric"))),
      more(V.metric_count, V.metrics.length, "metrics"),
      V.none_why ? el("p", {class: "tv-dim", "data-testid": "verify-none", text: V.none_why}) : null),
    el("div", null, heading("What TRL made of it", "its reward functions' columns (they read the env reward) and their sum"),
      // A column TRL holds as NaN (its function returned None) is no verdict on the rollout: "none", not "unscorable"
      table("tv-table", ...V.columns.map((c) => row(c.name, c.value === null ? "none" : reward(c.value))),
        el("tr", null, el("td", null, el("b", {text: "TRL's reward"}), " (the sum of its columns)"),
          el("td", {class: "num", text: V.reward === null ? "none (unscorable)" : reward(V.reward)})),
        el("tr", null, el("td", {text: "status"}), el("td", null, V.status, ...(V.cause ? [" ", el("span", {class: "tv-dim", text: V.cause})] : []))))));
}

/** The reward's steps as a waterfall, its check against the recorded reward, the tool calls by name. @param {Reward} R */
export function rewardBox(R) {
  if (R.waiting !== null) return el("div", {class: "tv-reward"}, el("p", {class: "tv-dim", text: R.waiting}));
  const scale = Math.max(1, ...R.steps.map((s) => s.value === null ? 0 : Math.abs(s.value)));
  const steps = R.steps.map((s) => el("tr", {"data-testid": "reward-step"}, el("td", {text: s.label}),
    el("td", {class: "num", text: s.delta === null ? "" : signed(s.delta)}),
    // no value: a step's is "none" (a reward function that returned None gives no verdict), the final one's unscorable
    el("td", {class: "num", text: s.value === null ? (s.label === "final" ? "unscorable" : "none") : signed(s.value)}),
    el("td", null, el("div", {class: `tv-bar${(s.value || 0) < 0 ? " neg" : ""}`,
                               style: `width:${(s.value === null ? 0 : Math.abs(s.value) / scale * 100).toFixed(1)}%`})),
    el("td", {class: "tv-dim", text: s.why})));
  const check = R.matches ? `recorded reward matches ${R.by}`
    : el("b", {text: `recorded ${reward(R.recorded)} but ${R.by} give${R.by.endsWith("s") ? "" : "s"} ${reward(R.recomputed)}`});
  const tools = R.tools.map((t) => el("li", {text: `${t.name}: ${fmt(t.calls)}`}));
  return el("div", {class: "tv-reward"},
    table("tv-table", el("tr", null, el("th", {text: "step"}), el("th", {text: "change"}), el("th", {text: "reward"}),
      el("th", {title: "the reward after this step, as a bar (longest = the largest |reward|)", text: "size"}), el("th", {text: "why"})), ...steps),
    typeof check === "string" ? el("p", {text: `${check} · timed out: ${R.timed_out ? "yes" : "no"}`})
      : el("p", null, check, ` · timed out: ${R.timed_out ? "yes" : "no"}`),
    el("h4", {text: "Tool calls by name"}),
    el("ul", null, ...(tools.length ? [...tools, more(R.tool_names, R.tools.length, "tool names")] : [el("li", {text: "none"})])));
}

/** The rollout's panels, drawn into the view's boxes (markup.js) at mount and as a watched capture grows.
 *  @param {(sel: string) => HTMLElement} $ @param {Outline} O */
export function drawRollout($, O) {
  const run = O.run || null;
  $(".tv-summary-box").replaceChildren(summaryLine(O.summary, run));
  $(".tv-headerbox").replaceChildren(headerBox(O.header, run));
  $(".tv-tests-box").replaceChildren(testsBox(O.tests));
  $(".tv-reward-box").replaceChildren(rewardBox(O.reward));
}

// -- the turn ---------------------------------------------------------------------------------------

/** What TRL trains of the turn, where its trace lacks it or the capture script says otherwise. @param {TurnOutline} t */
function trainedNote(t) {
  const n = t.trained_note;
  if (!n) return null;
  if (n.missing) return el("div", {class: "tv-trainednote", "data-testid": "trained-note",
    text: `${n.trl}'s training trace holds no call that generated this turn's tokens: none of them is trained.`});
  const script = n.script_trained ? "marks this turn trained because it made a tool call"
    : "marks this turn untrained because it made no tool call";
  return el("div", {class: "tv-trainednote", "data-testid": "trained-note"}, `${n.trl} trains `,
    el("b", {text: `${fmt(t.trained_tokens)} of this turn's ${many(t.output_tokens, "generated token")}`}),
    `; the original capture script ${script}.`);
}

/** How the turn's prompt continues the turn before; on a drift, both sides and the likely cause.
 *  @param {TurnBoundary | null} b */
function boundary(b) {
  if (b === null) return el("div", {class: "tv-boundary", text: "first turn: everything in its prompt is new context"});
  if (b.continuous) return el("div", {class: "tv-boundary ok",
    text: `turn ${b.before} → ${b.after}: the prompt starts with all ${fmt(b.held)} tokens of turn ${b.before} (token-in = token-out)`});
  const where = `inside turn ${b.before}'s ${b.in_output ? "output" : "prompt"}`;
  // Compact: the verdict and cause on one line, both sides on the next, their ids a hover away,
  // so the tokens below stay on the first screen.
  return el("div", {class: "tv-boundary drift"},
    el("b", {text: `turn ${b.before} → ${b.after}: drift at position ${fmt(b.at)}`}),
    ` (${where}; ${fmt(b.held - b.at)} of turn ${b.before}'s tokens are not carried over) `,
    el("span", {class: "tv-cause", text: `· likely cause: ${b.cause}`}),
    el("div", {class: "tv-sides"},
      el("span", {class: "tv-side-h", text: `turn ${b.before} had`}), " ",
      el("code", {class: "tv-tok", title: `ids ${b.held_ids.join(" ")}`, text: b.held_text}), " ",
      el("span", {class: "tv-side-h", text: `turn ${b.after}'s prompt has`}), " ",
      el("code", {class: "tv-tok", title: `ids ${b.next_ids.join(" ")}`, text: b.next_text})));
}

/** The engine's prompt ids against the re-tokenized prompt. @param {EngineIds} e */
function engine(e) {
  if (e.status === "same") return el("div", {class: "tv-engine ok",
    text: `engine prompt ids and the re-tokenized prompt agree (${fmt(e.engine_len || 0)} tokens)`});
  if (e.status === "differ") {
    /** @param {string} name @param {string} tokens */
    const side = (name, tokens) => el("div", null, el("div", {class: "tv-side-h", text: name}), el("code", {class: "tv-tok", text: tokens}));
    return el("div", {class: "tv-engine drift"},
      el("b", {text: `engine ids and re-tokenized prompt differ at position ${fmt(e.diverge_at || 0)}`}),
      ` (engine ${fmt(e.engine_len || 0)} tokens, re-tokenized ${fmt(e.retok_len || 0)})`,
      el("div", {class: "tv-sides"}, side("engine", e.engine_text), side("re-tokenized", e.retok_text)));
  }
  // nothing to check: one short dim line, beside the boundary's (the first screen is the tokens')
  const why = e.status === "no_engine_ids" ? "the artifact has no engine prompt ids" : "the artifact has no re-tokenized prompt";
  return el("div", {class: "tv-engine none", text: `engine ids not checked: ${why}`});
}

/** Above the turn's tokens: what TRL trains of it, its boundary, its engine ids. @param {TurnOutline} t @returns {Part[]} */
export const turnNotes = (t) => [trainedNote(t), boundary(t.boundary), engine(t.engine)];

/** The turn's tool calls: name, id, arguments, result. @param {TurnOutline} t */
export function toolsBox(t) {
  if (!t.call_count) return el("div", {class: "tv-tools empty", text: "no tool call in this turn"});
  return el("div", {class: "tv-tools"}, ...t.calls.map((c) => el("div", {class: `tv-call${c.failed ? " failed" : ""}`},
    el("div", {class: "tv-call-h"}, el("b", {text: c.name}), " ", el("span", {class: "tv-dim", text: c.call_id}), " ",
      c.failed ? el("span", {class: "tv-badge warn", text: "failed"}) : c.result === null ? el("span", {class: "tv-badge", text: "no result recorded"}) : null,
      c.arguments_ok ? null : el("span", {class: "tv-badge warn", text: "arguments are not valid JSON"})),
    el("div", {class: "tv-side-h", text: "arguments"}), ...folded(c.arguments),
    ...(c.result ? [el("div", {class: "tv-side-h", text: "result"}), ...folded(c.result)] : []))),
    more(t.call_count, t.calls.length, "tool calls"));
}

// -- TRL's rows -------------------------------------------------------------------------------------

/** Calls in TRL's training trace that are not agent turns by the recipe (e.g. opencode's title call). @param {Training} T */
function otherCalls(T) {
  if (!T.other_call_count) return null;
  const items = T.other_calls.map((c) => `call ${c.call}: ${fmt(c.trained_tokens)} of ${many(c.output_tokens, "generated token")} trained`).join("; ");
  return el("p", {class: "tv-dim", "data-testid": "other-calls",
    text: `${T.trl}'s training trace also holds ${many(T.other_call_count, "call")} that the recipe does not count as agent turns (${items}).`});
}

const TERMS = [["clean", "the next turn's prompt starts with exactly this turn's tokens: TRL appends it to the same row"],
  ["realigned", "a small drift inside the last answer: TRL overwrites it as context and stays in the row"],
  ["forked", "any other drift: TRL starts a new row (with fork threshold 0, as in loop-owning training, every drift forks)"]];

/** A row's fate, in the trainer column of a run's rollout. @param {Fate | null} f */
function rowFate(f) {
  if (!f) return el("td", {class: "tv-dim", title: "this row is not the one the run recorded at its place in the queue", text: "not known"});
  return el("td", null, el("span", {class: `tv-fate ${f.trained ? "trained" : "never"}`, "data-testid": "row-fate", title: f.why, text: f.label}));
}

/** TRL's rows of the rollout: how it packed them, the rule, the table (a run's: each row's fate). @param {Training} T */
export function trainingBox(T) {
  if (T.unavailable !== null) return el("div", {class: "tv-error", text: T.unavailable});
  if (T.omitted !== null) return el("div", {class: "tv-training drift", "data-testid": "no-rows", text: T.omitted});
  const rule = el("p", {class: "tv-dim", "data-testid": "training-rule", text: T.rule});
  if (T.error) return el("div", {class: "tv-training drift"}, rule);
  if (T.rows_error !== null) return el("div", {class: "tv-training drift"}, T.rows_error, rule);
  if (!T.rows.length) return el("div", {class: "tv-training drift", "data-testid": "no-rows"}, el("b", {text: `${T.trl} drops this rollout`}),
    ": no token of any turn is trained, so it contributes no training row and no gradient.", rule, otherCalls(T));
  const t = T.tally;
  return el("div", {class: "tv-training"},
    el("p", null, "TRL packs this rollout into ", el("b", {text: many(T.rows.length, "training row")}),
      // TRL's turns are every model call it chains (a title call too): the header counts the agent turns' boundaries
      `: ${t.clean} clean, ${t.realign} realigned, ${t.fork} forked of the ${many(t.transitions, "boundary", "boundaries")} ` +
      `between the ${t.transitions + 1} model calls it chains` +
      // said, so its count is not read against the header's boundaries of the agent turns alone
      (T.other_call_count ? ` (${many(t.transitions + 1 - T.other_call_count, "agent turn")} and ` +
        `${many(T.other_call_count, "call")} the recipe does not count as one)` : "") + `; drift ${t.drift_tokens} ` +
      `tokens in total, at most ${t.drift_max}. Only the tokens of TRL's completion mask get a loss.`),
    rule, otherCalls(T),
    el("dl", {class: "tv-terms"}, ...TERMS.flatMap(([term, means]) => [el("dt", {text: term}), el("dd", {text: means})])),
    table("tv-table",
      el("tr", null, el("th", {text: "row"}), el("th", {text: "tokens"}),
        el("th", {title: "tokens in TRL's completion mask", text: T.trainer ? "in mask" : "trained"}), el("th", {text: "turns"}),
        T.trainer ? el("th", {title: "whether the trainer trained the row: the global step, or why never (the run's consumption log)", text: "trainer"}) : null),
      ...T.rows.slice(0, T.listed).map((r, k) => el("tr", null, el("td", {text: k}), el("td", {class: "num", text: fmt(r.tokens)}),
        el("td", {class: "num", text: fmt(r.trained)}), el("td", {text: r.turns.join(", ")}), T.trainer ? rowFate(r.fate) : null))),
    more(T.rows.length, T.listed, "rows"));
}

/** The buttons that pick a training row. @param {Training} T @param {number} on */
export function rowButtons(T, on) {
  return el("div", {class: "tv-group", role: "group", "aria-label": "training row"}, ...T.rows.map((r, k) => el("button", {
    "data-row": k, class: k === on ? "on" : "", "aria-pressed": String(k === on),
    text: `row ${k}: turns ${r.turns.join(", ")}${r.fate ? ` · ${r.fate.trained ? `step ${r.fate.steps.join(", ")}` : `never (${r.fate.cause})`}` : ""}`})));
}
