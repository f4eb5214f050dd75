// Built from viewer/assets/src/collection_index.js by `python -m viewer.assets.build`: edit the source, not this file.
"use strict";
var CollectionIndex = (() => {
  var __defProp = Object.defineProperty;
  var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
  var __getOwnPropNames = Object.getOwnPropertyNames;
  var __hasOwnProp = Object.prototype.hasOwnProperty;
  var __export = (target, all) => {
    for (var name in all)
      __defProp(target, name, { get: all[name], enumerable: true });
  };
  var __copyProps = (to, from, except, desc) => {
    if (from && typeof from === "object" || typeof from === "function") {
      for (let key of __getOwnPropNames(from))
        if (!__hasOwnProp.call(to, key) && key !== except)
          __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
    }
    return to;
  };
  var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

  // src/collection_index.js
  var collection_index_exports = {};
  __export(collection_index_exports, {
    mountInApp: () => mountInApp
  });

  // src/dom.js
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === void 0 || v === false) continue;
      if (k === "text") e.textContent = String(v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) if (c !== null && c !== void 0) e.append(c);
    return e;
  }
  function intoSight(e) {
    if (e.getBoundingClientRect().top > window.innerHeight * 0.6) e.scrollIntoView({ block: "start" });
  }
  function keyScrolled(box) {
    const at = document.activeElement;
    if (at && box.contains(at) && /^(INPUT|TEXTAREA|SELECT)$/.test(at.tagName)) return;
    if (!box.hasAttribute("tabindex")) box.tabIndex = -1;
    box.focus({ preventScroll: true });
  }
  function presentLabel() {
    return [el("span", { class: "present-off", text: "present" }), el("span", { class: "present-on", text: "leave (Esc)" })];
  }
  function goTo(u, push) {
    if (push) history.pushState(push, "", u.toString());
    else history.replaceState(history.state, "", u.toString());
    document.dispatchEvent(new Event("rtv-place"));
  }
  var WORKING_MS = 300;
  function working(text) {
    const shown = setTimeout(() => {
      let box = document.getElementById("rtv-working");
      if (!box) {
        box = el("div", {
          id: "rtv-working",
          role: "status",
          "aria-live": "polite",
          "data-testid": "working",
          style: "position:fixed;left:50%;bottom:18px;transform:translateX(-50%);z-index:10001;padding:8px 16px;border-radius:8px;background:#1e293b;color:#f8fafc;border:1px solid #94a3b8;font-size:15px;box-shadow:0 2px 10px rgba(0,0,0,.35)"
        });
        document.body.append(box);
      }
      box.textContent = text;
      box.hidden = false;
    }, WORKING_MS);
    const done = () => {
      clearTimeout(shown);
      clearTimeout(limit);
      document.removeEventListener("rtv-shown", done);
      const box = document.getElementById("rtv-working");
      if (box) box.hidden = true;
    };
    const limit = setTimeout(done, 12e4);
    document.addEventListener("rtv-shown", done);
  }
  function sentValue(props) {
    document.dispatchEvent(new Event("rtv-shown"));
    return typeof props.value === "string" ? JSON.parse(props.value) : props.value;
  }
  function findingsCell(rules, pending, testid) {
    const cell2 = el("td", { class: "ci-findings", "data-testid": testid });
    if (rules === null) {
      cell2.append(pending ? el("span", { class: "ci-dim", title: "not computed yet: the search panel computes the findings", text: "…" }) : "-");
    } else if (!rules.length) {
      cell2.textContent = "-";
    } else {
      cell2.append(...rules.map((x) => el("span", { class: "ci-finding", "data-rule": x, text: x })));
    }
    return cell2;
  }
  function problemsBox(p) {
    return el(
      "div",
      { class: "tv-error", role: "alert" },
      el("b", { text: `Cannot open ${p.source}` }),
      el("ul", null, ...p.items.map((t) => el("li", { text: t })))
    );
  }
  function short(value, limit) {
    if (value.length <= limit) return value;
    const cs = Array.from(value);
    return cs.length <= limit ? value : cs.slice(0, limit - 1).join("") + "…";
  }
  function middle(value, limit) {
    if (value.length <= limit) return value;
    const cs = Array.from(value);
    if (cs.length <= limit) return value;
    const head = Math.floor((limit - 1) / 2);
    return cs.slice(0, head).join("") + "…" + cs.slice(cs.length - (limit - 1 - head)).join("");
  }

  // src/values.js
  function signed(v, d = 3) {
    const a = Math.abs(v), exact = a.toFixed(100), cut = exact.slice(0, exact.indexOf(".") + 1 + d);
    const tie = exact[cut.length] === "5" && /^0*$/.test(exact.slice(cut.length + 1));
    const body = tie && Number(cut[cut.length - 1]) % 2 === 0 ? cut : a.toFixed(d);
    return (v < 0 || Object.is(v, -0) ? "-" : "+") + body;
  }
  var number = (v) => v === null || v === void 0 ? "-" : signed(v);
  var count = (v) => v === null || v === void 0 ? "-" : v.toLocaleString("en-US");
  var many = (n, what, whats = what + "s") => `${count(n)} ${n === 1 ? what : whats}`;
  var sign = (v) => v === null || v === void 0 ? "none" : v > 0 ? "pos" : v < 0 ? "neg" : "zero";
  var fateKind = (f) => f.trained ? "trained" : f.partly ? "partly" : "never";

  // src/group_map.js
  var advantage = (adv) => el("span", { class: "gm-adv " + sign(adv), text: signed(adv) });
  function bar(adv, scale) {
    if (adv === null || adv === void 0) {
      return [el("span", { class: "gm-adv none", title: "TRL gave this rollout no advantage: it built no training row", text: "none" })];
    }
    const width = scale <= 0 ? 0 : Math.min(50, 50 * Math.abs(adv) / scale);
    const side = adv >= 0 ? "left:50%" : `left:${(50 - width).toFixed(1)}%`;
    return [
      el(
        "span",
        { class: "gm-bar", title: `advantage ${signed(adv, 4)}` },
        el("span", { class: "gm-bar-mid" }),
        el("span", { class: "gm-bar-fill " + sign(adv), style: `${side};width:${width.toFixed(1)}%` })
      ),
      advantage(adv)
    ];
  }
  function cell(row, pos) {
    if (pos >= row.cells.length) return el("td", { class: "gm-cell gm-none" });
    const c = row.cells[pos];
    const tools = c.tools.length ? c.tools.join(", ") : "no tool call";
    const never = c.fate !== null && c.trained && !c.fate.trained;
    const classes = [
      "gm-cell",
      c.trained ? "trained" : "untrained",
      never ? "never" : "",
      c.failed ? "failed" : "",
      c.tools.length ? "" : "stop"
    ].filter(Boolean).join(" ");
    const mask = c.trained ? "in TRL's mask" : "not in TRL's mask";
    const fate = c.fate !== null && c.trained ? ` · ${c.fate.label}` : "";
    const tip = `turn ${c.turn}: ${tools}${c.failed ? " (failed)" : ""} · ${mask}${fate} · ${count(c.output_tokens)} generated tokens`;
    return el("td", { class: classes }, el(
      "button",
      {
        type: "button",
        class: "gm-open",
        "data-rollout": row.rollout,
        "data-turn": pos,
        title: tip,
        "data-testid": "group-cell"
      },
      c.failed ? el("span", { class: "gm-fail", "aria-label": "a tool call failed", text: "✗" }) : null,
      c.failed ? " " : null,
      short(tools, 40)
    ));
  }
  function fateCell(f) {
    if (f === null) return el("td", { class: "gm-fate", text: "-" });
    const label = !(f.label.startsWith("trained at ") || f.label.startsWith("never trained (")) ? f.label : f.trained ? (f.steps.length === 1 ? "step " : "steps ") + f.steps.join(", ") : `never: ${f.cause}`;
    return el("td", { class: "gm-fate " + fateKind(f), "data-testid": "group-fate", title: f.why, text: short(label, 90) });
  }
  function mapRow(row, m) {
    const openable = row.path !== null && row.problem === null;
    const pick = openable && row.cells.length ? el("input", {
      type: "checkbox",
      class: "gm-pick",
      "data-rollout": row.rollout,
      "aria-label": `compare rollout ${row.rollout}`,
      "data-testid": "group-pick"
    }) : null;
    const name = openable ? el("button", { type: "button", class: "gm-open gm-name", "data-rollout": row.rollout, "data-turn": "0", text: `rollout ${row.rollout}` }) : el("span", { class: "gm-name", text: `rollout ${row.rollout}` });
    const cells = Array.from({ length: m.max_turns }, (_, i) => cell(row, i));
    const never = row.fate !== null && !row.fate.trained ? " fate-" + fateKind(row.fate) : "";
    const drift = row.drifting === null ? "-" : row.drifting === 0 ? "none" : `${row.drifting} ⚠`;
    return el(
      "tr",
      {
        class: `gm-row status-${row.status}${openable ? "" : " closed"}${never}`,
        "data-rollout": row.rollout,
        "data-testid": "group-row"
      },
      el("td", { class: "gm-pickcell" }, pick),
      el("td", null, name),
      el("td", { class: "gm-num" }, el("span", { class: "gm-reward " + sign(row.reward), text: number(row.reward) })),
      el("td", { class: "gm-advcell" }, ...bar(row.advantage, m.max_abs_advantage)),
      el(
        "td",
        { class: "gm-status", "data-testid": "group-status" },
        row.status,
        row.problem ? " " : null,
        row.problem ? el("span", { class: "gm-problem", text: short(row.problem, 120) }) : null
      ),
      m.place ? fateCell(row.fate) : null,
      el("td", { class: "gm-num", text: count(row.trained_turns) }),
      el("td", { class: "gm-num", text: count(row.tokens) }),
      el("td", { class: "gm-num", text: drift }),
      findingsCell(row.findings, !m.findings_known, "group-findings"),
      ...cells,
      row.more_turns ? el("td", { class: "gm-more", text: `+${count(row.more_turns)} turns` }) : null
    );
  }
  function placeLine(p) {
    const steps = p.steps.length ? (p.steps.length === 1 ? "trained at step " : "trained at steps ") + p.steps.slice(0, 8).join(", ") : "never trained";
    const never = Object.entries(p.never).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([c, n]) => `${c} ${n}`).join(", ");
    let rest = p.steps.length && never ? ` · never trained: ${never}` : never ? ` (${never})` : "";
    if (p.partly) rest += ` · ${p.partly} partly trained (rows of different fates)`;
    return el(
      "span",
      { class: "gm-place", "data-testid": "group-place" },
      el("b", { text: `version ${p.version} · group ${p.group_id}` }),
      " ",
      el("span", { class: "gm-dim", text: `segment ${short(p.segment, 40)} · ${steps}${rest}` })
    );
  }
  var th = (text, title) => el("th", { scope: "col", title, text });
  function drawGroupMap(m) {
    const head = el(
      "tr",
      null,
      el("th", { scope: "col", class: "gm-pickcell", title: "tick two rows, then press compare below", text: "compare" }),
      th("rollout"),
      th("reward"),
      th("advantage", "TRL: (reward - mean) / (std + 1e-8) over the group"),
      th("status"),
      m.place ? th("trainer", "whether the trainer took this rollout: the global step its rows were trained at, or why never (its consumption log)") : null,
      th("in mask", "agent turns TRL's completion mask (OpenEnv's loss mask) would train a token of, were its rows in the loss"),
      th("tokens"),
      th("drift"),
      th("findings", "the rules of the search panel's findings each rollout trips (the index's findings column)"),
      ...Array.from({ length: m.max_turns }, (_, i) => el("th", { scope: "col", class: "gm-turnh", text: `turn ${i}` }))
    );
    const hatched = m.rows.some((r) => r.cells.some((c) => c.fate !== null && c.trained && !c.fate.trained));
    const key = hatched ? el(
      "div",
      { class: "gm-key gm-dim", "data-testid": "group-key" },
      el("span", { class: "gm-swatch trained" }),
      " in TRL's mask, its row trained · ",
      el("span", { class: "gm-swatch trained never" }),
      " in TRL's mask, its row never trained (the trainer column says why)"
    ) : null;
    const same = new Set(m.rows.map((r) => r.advantage).filter((a) => a !== null)).size <= 1;
    const note = same && m.rows.length ? el("div", { class: "gm-note", text: "every rollout has the same advantage: GRPO learns nothing from this group (all rewards equal)" }) : null;
    return el(
      "div",
      { class: "gm", "data-testid": "group-map" },
      el(
        "div",
        { class: "gm-head" },
        m.place ? placeLine(m.place) : null,
        m.place ? " " : null,
        el("b", { class: "gm-nowrap", text: `GRPO group · K=${m.k}` }),
        " ",
        el("span", { class: "gm-dim", title: `${m.model} · ${m.title}`, text: `${short(m.model, 64)} · ${short(m.title, 100)}` }),
        " ",
        el("button", {
          type: "button",
          class: "gm-present",
          "data-testid": "present",
          title: "presentation mode (p): large type, j/k move between rollouts, Enter opens one"
        }, ...presentLabel())
      ),
      note,
      el("div", { class: "gm-help gm-dim", text: "Rows are sorted by advantage, best first. Click a rollout or a turn to open it; tick two rows and press compare to see a turn of both side by side; p presents the map." }),
      el("div", { class: "gm-tablebox" }, el(
        "table",
        { class: "gm-table" },
        el("thead", null, head),
        el("tbody", null, ...m.rows.map((r) => mapRow(r, m)))
      )),
      key,
      el(
        "div",
        { class: "gm-compare-bar" },
        el("label", null, "turn ", el("input", { type: "number", class: "gm-cturn", min: "0", value: "0", "data-testid": "compare-turn" })),
        el("button", { type: "button", class: "gm-compare", disabled: true, "data-testid": "compare" }, "compare the two ticked rollouts")
      ),
      el("div", { class: "gm-comparebox", "data-testid": "compare-box" })
    );
  }
  function strip(s, at) {
    const out = s.text.map((tok, k) => {
      const pos = s.start + k, here = at !== null && pos === at;
      const cls = "gm-t" + (s.mask[k] === "1" ? " gen" : "") + (here ? " div" : "") + (at !== null && pos > at ? " after" : "");
      return el("span", { class: cls, "data-mask": s.mask[k], title: here ? `first difference, position ${count(pos)}` : null, text: tok });
    });
    if (at !== null && at >= s.prompt_tokens) out.push(el("span", { class: "gm-t div end", title: "this prompt ends here", text: "⟂ end" }));
    return out;
  }
  function output(s, at) {
    const out = s.out_text.map((tok, k) => {
      const here = at !== null && k === at;
      return el("span", {
        class: "gm-t gen" + (here ? " div" : "") + (at !== null && k > at ? " after" : ""),
        "data-mask": s.out_mask[k],
        "data-k": k,
        title: here ? `first difference: generated token ${count(k)}` : null,
        "data-testid": here ? "divergence" : null,
        text: tok
      });
    });
    if (at !== null && at >= s.out_total) {
      out.push(el("span", { class: "gm-t div end", "data-testid": "divergence", title: "this turn ends here", text: "⟂ end" }));
    }
    if (s.out_total > s.out_text.length) {
      out.push(el("span", { class: "gm-dim", text: ` … ${count(s.out_total - s.out_text.length)} more generated tokens` }));
    }
    return out;
  }
  var sideName = (s) => s.label || `rollout ${s.rollout}`;
  function drawCompare(c) {
    const k = c.output_diverge_at;
    const where = k === null ? `their generated tokens are identical (${many(c.a.out_total, "token")})` : k === 0 ? "their generated tokens differ from the first one" : `their generated tokens are the same for ${many(k, "token")}, then differ (at generated token ${count(k)})`;
    const p = c.prompt_diverge_at;
    const prompt = p === null ? el("div", { class: "gm-dim", "data-testid": "prompt-note", text: `their prompts are identical (${many(c.a.prompt_tokens, "token")})` }) : el(
      "details",
      { class: "gm-prompt-note", "data-testid": "prompt-note" },
      el("summary", { text: `their prompts already differ at position ${count(p)} (of ${count(c.a.prompt_tokens)} and ${count(c.b.prompt_tokens)}): show where` }),
      ...[c.a, c.b].flatMap((x) => [
        el("div", { class: "gm-side-h", text: `rollout ${x.rollout}` }),
        el("div", { class: "gm-strip" }, ...strip(x, p))
      ])
    );
    const side = (s) => el(
      "div",
      { class: "gm-side", "data-testid": "compare-side" },
      el(
        "div",
        { class: "gm-side-h" },
        `${sideName(s)} · turn ${s.turn}${s.fate ? ` · ${s.fate}` : ""} `,
        el("span", { class: "gm-dim", text: `${count(s.out_total)} generated tokens` })
      ),
      el("div", { class: "gm-strip gm-out" }, ...output(s, k))
    );
    const calls = (s) => el(
      "div",
      { class: "gm-calls" + (s.failed ? " failed" : "") },
      el("b", { text: sideName(s) }),
      el("ul", null, ...s.tools.length ? s.tools.map((t) => el("li", { text: short(t, 200) })) : [el("li", { class: "gm-dim", text: "no tool call" })])
    );
    return el(
      "div",
      { class: "gm-cmp" },
      el(
        "div",
        { class: "gm-cmp-h" },
        el("b", { text: `turn ${c.turn}` }),
        `: ${where} `,
        el("span", { class: "gm-dim", text: "(each side from its first generated token, mask 1 underlined; the first difference boxed)" })
      ),
      c.note ? el("div", { class: "gm-note", "data-testid": "compare-note", text: c.note }) : null,
      el("div", { class: "gm-sides" }, side(c.a), side(c.b)),
      prompt,
      el("div", { class: "gm-callrow" }, calls(c.a), calls(c.b))
    );
  }
  function showCompare(out, got) {
    if (got && got.compare) out.replaceChildren(drawCompare(got.compare));
    else out.textContent = got && got.error || "could not compare";
  }
  function mountGroupMap(box, api) {
    const ticked = () => Array.from(box.querySelectorAll(".gm-pick:checked"), (c) => Number(
      /** @type {HTMLElement} */
      c.dataset.rollout
    ));
    function sync() {
      const b = (
        /** @type {HTMLButtonElement | null} */
        box.querySelector(".gm-compare")
      );
      if (b) b.disabled = ticked().length !== 2;
    }
    box.addEventListener("change", (ev) => {
      const c = (
        /** @type {HTMLInputElement | null} */
        /** @type {Element} */
        ev.target.closest(".gm-pick")
      );
      if (!c) return;
      if (c.checked) {
        const others = Array.from(
          /** @type {NodeListOf<HTMLInputElement>} */
          box.querySelectorAll(".gm-pick:checked")
        ).filter((x) => x !== c);
        if (others.length >= 2) others[0].checked = false;
      }
      sync();
    });
    box.addEventListener("click", async (ev) => {
      const target = (
        /** @type {Element} */
        ev.target
      );
      const open = (
        /** @type {HTMLElement | null} */
        target.closest(".gm-open")
      );
      if (open) {
        api.openRollout(Number(open.dataset.rollout), Number(open.dataset.turn));
        return;
      }
      if (target.closest(".gm-compare")) compareTicked();
    });
    async function compareTicked() {
      const [a, b] = ticked();
      const out = (
        /** @type {HTMLElement} */
        box.querySelector(".gm-comparebox")
      );
      out.textContent = "comparing…";
      const turn = Math.max(0, Number(
        /** @type {HTMLInputElement} */
        box.querySelector(".gm-cturn").value
      ) || 0);
      const got = await api.compare(a, b, turn);
      showCompare(out, got);
      if (got && got.compare) api.compared(a, b, turn);
      intoSight(out);
    }
    return {
      /** Why the group cannot be shown whole (if it cannot), over its map; `linked`, a comparison the page's link
       *  names (two of its rollouts at a turn), made again.
       *  @param {HTMLElement | null} problems @param {GroupMap | null} m
       *  @param {{a: number, b: number, turn: number} | null} [linked] */
      show(problems, m, linked = null) {
        box.replaceChildren();
        if (problems) box.append(problems);
        if (m) box.append(drawGroupMap(m));
        sync();
        if (!m || !linked || linked.a === linked.b) return;
        const picks = [linked.a, linked.b].map((r) => (
          /** @type {HTMLInputElement | null} */
          box.querySelector(`.gm-pick[data-rollout="${r}"]`)
        ));
        if (picks.some((c) => !c)) return;
        for (const c of picks) c.checked = true;
        box.querySelector(".gm-cturn").value = String(linked.turn);
        sync();
        compareTicked();
      }
    };
  }

  // src/collection_index.js
  var SELECTS = {
    drift: ["none", "drift", "unknown"],
    timed_out: ["yes", "no"],
    kind: ["artifact", "group", "run"],
    valid: ["yes", "no"]
  };
  function field(key, label, input2) {
    input2.name = key;
    input2.dataset.key = key;
    input2.id = "ci-f-" + key;
    return el("label", { class: "ci-field", for: input2.id }, el("span", { text: label }), input2);
  }
  function select(key, label, choices, anyLabel) {
    const s = el("select", { "data-testid": "filter-" + key });
    s.append(new Option(anyLabel || "any", ""));
    for (const c of choices) s.append(new Option(c, c));
    return field(key, label, s);
  }
  function input(key, label, type, extra) {
    return field(key, label, el("input", { type, "data-testid": "filter-" + key, ...extra || {} }));
  }
  function skeleton(box) {
    const back = el(
      "div",
      { class: "ci-backbar", hidden: "" },
      el("button", { type: "button", class: "ci-back", "data-testid": "back-to-index" }, "← back to the index"),
      el("span", { class: "ci-backinfo" })
    );
    const form = el(
      "form",
      { class: "ci-form", "data-testid": "index-filters", role: "search" },
      select("model", "model", [], "any model"),
      input("task", "task", "text", { placeholder: "id or title", size: "10" }),
      input("reward_min", "reward ≥", "number", { step: "any", size: "5" }),
      input("reward_max", "reward ≤", "number", { step: "any", size: "5" }),
      select("drift", "drift", SELECTS.drift),
      // agent turns TRL's completion mask trains a token of (in a run: would train; the trainer column says if it did)
      input("trained_min", "in mask ≥", "number", { step: "1", min: "0", size: "3", title: "agent turns in TRL's mask, at least" }),
      input("trained_max", "in mask ≤", "number", { step: "1", min: "0", size: "3", title: "agent turns in TRL's mask, at most" }),
      select("finding", "finding", [], "any or none"),
      select("timed_out", "timed out", SELECTS.timed_out),
      select("tool", "used tool", []),
      select("no_tool", "never used", []),
      select("kind", "kind", SELECTS.kind),
      select("valid", "valid", SELECTS.valid),
      input("q", "search titles", "search", { placeholder: "text in title, id, path", size: "18" }),
      el("button", { type: "reset", class: "ci-clear", "data-testid": "clear-filters" }, "clear filters")
    );
    const main = el(
      "div",
      { class: "ci-main" },
      el(
        "div",
        { class: "ci-head" },
        el("span", { class: "ci-counts", "data-testid": "index-counts", "aria-live": "polite" }),
        el("button", { type: "button", class: "ci-present", title: "presentation mode (p): large type, j/k move between rows, Enter opens one" }, ...presentLabel()),
        el(
          "span",
          { class: "ci-pager" },
          el("button", { type: "button", class: "ci-prev", "data-testid": "prev-page" }, "‹ previous"),
          el("span", { class: "ci-pageno" }),
          el("button", { type: "button", class: "ci-next", "data-testid": "next-page" }, "next ›")
        )
      ),
      form,
      el("div", { class: "ci-error" }),
      el("div", { class: "ci-notesbox" }),
      el("div", { class: "ci-tablebox" })
    );
    const group = el("div", { class: "ci-groupbox", hidden: "" });
    const root = el("div", { class: "ci", "data-testid": "collection-index" }, back, group, main);
    box.replaceChildren(root);
    return { root, back, group, main, form };
  }
  function heading(c, sort) {
    if (!c.sort) return el("th", { scope: "col", title: c.tip, text: c.label });
    const desc = sort.startsWith("-"), on = sort.replace(/^-+/, "") === c.sort;
    return el(
      "th",
      { scope: "col", "aria-sort": on ? desc ? "descending" : "ascending" : "none" },
      el(
        "button",
        { type: "button", class: "ci-sort" + (on ? " on" : ""), "data-sort": c.sort, title: c.tip || "sort by " + c.label },
        c.label,
        el("span", { class: "ci-arrow", "aria-hidden": "true", text: on ? desc ? "▼" : "▲" : "" })
      )
    );
  }
  function reward(r) {
    return el(
      "td",
      { class: "ci-num" },
      el("span", { class: "ci-reward " + r.reward_sign, text: r.reward }),
      r.spread ? el("div", { class: "ci-spread", title: "lowest..highest reward in the group", text: r.spread }) : null
    );
  }
  function middleCells(r, run) {
    return [
      el("td", { class: "ci-task", title: r.title }, el("code", { text: r.task }), " ", el("span", { class: "ci-title", text: r.title })),
      reward(r),
      el("td", { class: "ci-num", text: r.env_reward }),
      el("td", { class: "ci-num", text: r.agent_turns }),
      el("td", { class: "ci-num", text: r.trained_turns }),
      el("td", { class: "ci-num", text: r.tokens }),
      el("td", null, el("span", { class: "ci-drift " + r.drift, text: r.drift })),
      findingsCell(r.findings, run || r.kind !== "run", "index-findings")
    ];
  }
  function collectionRow(r, columns) {
    const label = r.path || "(the collection itself)";
    const k = r.k === null ? "?" : String(r.k);
    const badge = r.kind === "group" ? el("span", { class: "ci-kind group", text: `group · K=${k}` }) : r.kind === "run" ? el("span", { class: "ci-kind run", "data-testid": "run-row", text: `recorded run · ${k} groups` }) : r.kind === "rollout" ? el("span", { class: "ci-kind rollout", text: `rollout ${r.rollout ?? "?"} · adv ${r.advantage || "-"}` }) : null;
    const tr = el(
      "tr",
      {
        class: ["ci-row", r.kind, r.valid ? "" : "invalid"].filter(Boolean).join(" "),
        "data-path": r.path,
        "data-testid": "index-row"
      },
      el("td", { class: "ci-where" }, el("button", {
        type: "button",
        class: "ci-open",
        "data-path": r.path,
        title: `open ${label}`,
        text: middle(label, 34)
      }), badge),
      el("td", { class: "ci-status" }, r.valid ? el("span", { class: "ci-ok", text: "ok" }) : el("span", { class: "ci-bad", title: r.problem || "", text: "invalid" })),
      el("td", { class: "ci-model", title: r.model_full, text: short(r.model, 32) }),
      ...middleCells(r, false),
      el("td", null, r.timed_out === "yes" ? el("span", { class: "ci-timeout", text: "yes" }) : r.timed_out),
      el("td", { class: "ci-tools", text: short(r.tools, 80) }),
      el("td", { class: "ci-date", text: r.captured })
    );
    if (r.valid) return [tr];
    return [tr, el("tr", { class: "ci-problem-row", "data-path": r.path }, el(
      "td",
      { colspan: columns },
      el("span", { class: "ci-problem", text: `first problem: ${short(r.problem || "invalid", 300)}` })
    ))];
  }
  function runRow(r) {
    const place = `v${r.version} · group ${r.group_id}` + (r.kind === "group" ? "" : ` · rollout ${r.rollout}`);
    const badge = r.kind === "group" ? el("span", { class: "ci-kind group", text: `K=${r.k === null ? "?" : r.k}` }) : el("span", { class: "ci-kind rollout", text: `adv ${r.advantage || "-"}` });
    const status = r.status || "-";
    return el(
      "tr",
      { class: `ci-row ${r.kind}`, "data-path": r.path, "data-testid": "index-row" },
      el("td", { class: "ci-where" }, el("button", {
        type: "button",
        class: "ci-open ci-place",
        "data-path": r.path,
        title: `open ${r.path}`,
        "data-testid": "run-place",
        text: place
      }), badge),
      el("td", { class: `ci-status run-status ${status.split(",")[0]}`, "data-testid": "run-status", text: status }),
      el("td", { class: `ci-fate ${r.fate_kind}`, "data-testid": "index-fate", title: r.fate_why, text: r.fate || "-" }),
      ...middleCells(r, true),
      el("td", { class: "ci-tools", text: short(r.tools, 80) }),
      el("td", { class: "ci-date", text: r.captured })
    );
  }
  function drawTable(t, sort) {
    const n = t.columns.length;
    const rows = t.rows.flatMap((r) => t.run ? [runRow(r)] : collectionRow(r, n));
    if (!rows.length) rows.push(el("tr", null, el("td", { class: "ci-empty", colspan: n, text: "no row matches these filters" })));
    return el(
      "table",
      { class: "ci-table", "data-testid": "index-table" },
      el("thead", null, el("tr", null, ...t.columns.map((c) => heading(c, sort)))),
      el("tbody", null, ...rows)
    );
  }
  var drawNotes = (notes) => notes.length ? el(
    "ul",
    { class: "ci-notes", "data-testid": "index-notes" },
    ...notes.map((n) => el("li", { text: n }))
  ) : null;
  function backInfo(b) {
    if (b.kind === "row") {
      const filters = b.filters.map(([k, v]) => `${k}=${v}`).join(" · ");
      return [
        el("span", { class: "ci-here" }, `${b.what} `, el("code", { text: short(b.path || "(the collection itself)", 120) })),
        el("span", { class: "ci-dim", text: ` · the index has ${many(b.matched, "row")}` + (filters ? ` matching ${short(filters, 160)}` : "") })
      ];
    }
    if (b.kind === "rollout") {
      return [
        el("span", { class: "ci-here" }, `rollout ${b.rollout} of ${b.k} in group `, el("code", { text: short(b.path, 120) })),
        el("span", { class: "ci-dim" }, ...b.advantage === null ? [] : [" · advantage ", advantage(b.advantage)])
      ];
    }
    const crumbs = b.crumbs.flatMap((c, i) => [i ? " › " : "", el("span", { class: "ci-crumb", text: c })]).filter((x) => x !== "");
    return [
      el("span", { class: "ci-here", "data-testid": "crumbs" }, ...crumbs),
      el("span", { class: "ci-dim", text: ` · ${many(b.k, "rollout")} in the group` })
    ];
  }
  function mount(box, api) {
    const ui = skeleton(box);
    let page = null;
    const shown = () => (
      /** @type {IndexPage} */
      page
    );
    let asked = 0;
    let lastAsked = null;
    let typing;
    const inputs = () => (
      /** @type {NodeListOf<FilterInput>} */
      ui.form.querySelectorAll("[data-key]")
    );
    const part = (sel) => (
      /** @type {HTMLElement} */
      ui.root.querySelector(sel)
    );
    const button = (sel) => (
      /** @type {HTMLButtonElement} */
      ui.root.querySelector(sel)
    );
    function formQuery(overrides) {
      const p = new URLSearchParams();
      for (const e of inputs()) if (e.value !== "") p.set(e.dataset.key || "", e.value.trim());
      const sort = overrides && "sort" in overrides ? overrides.sort : page ? page.sort : "path";
      if (sort && sort !== "path") p.set("sort", sort);
      const n = overrides && overrides.page !== void 0 ? overrides.page : 0;
      if (n > 0) p.set("page", String(n + 1));
      return p.toString();
    }
    function syncForm(pg) {
      const findings = pg.findings_known ? ["any", "none", ...pg.finding_rules] : [];
      const findingField = ui.form.querySelector('[data-key="finding"]')?.closest(".ci-field");
      if (findingField instanceof HTMLElement) findingField.hidden = !pg.findings_known;
      for (
        const [key, choices] of
        /** @type {[string, string[]][]} */
        [["model", pg.models], ["tool", pg.tools], ["no_tool", pg.tools], ["finding", findings]]
      ) {
        const s = (
          /** @type {HTMLSelectElement} */
          ui.form.querySelector(`[data-key="${key}"]`)
        );
        const want = ["", ...choices];
        const have = Array.from(s.options).map((o) => o.value);
        if (want.join("\n") !== have.join("\n")) {
          const first = s.options[0];
          s.replaceChildren(first);
          for (const c of choices) s.append(new Option(c, c));
        }
      }
      for (const e of inputs()) {
        if (e === document.activeElement && e.tagName === "INPUT") continue;
        const v = pg.filters[e.dataset.key || ""] || "";
        if (e instanceof HTMLSelectElement && v && !Array.from(e.options).some((o) => o.value === v)) e.append(new Option(v, v));
        e.value = v;
      }
    }
    function writeUrl(pg, push) {
      const u = new URL(window.location.href);
      for (const k of [...pg.query_keys, "page", "row", "rollout", ...COMPARE_KEYS]) u.searchParams.delete(k);
      if (pg.mode === "none") {
        goTo(u);
        return;
      }
      u.searchParams.set("src", pg.src);
      for (const [k, v] of new URLSearchParams(pg.query)) u.searchParams.set(k, v);
      if (pg.mode === "index") {
        for (const k of pg.view_keys) u.searchParams.delete(k);
        if (pg.page > 0) u.searchParams.set("page", String(pg.page + 1));
      } else if (pg.row !== null) {
        if (pg.row) u.searchParams.set("row", pg.row);
        else u.searchParams.delete("row");
        if (pg.mode === "group") for (const k of pg.view_keys) u.searchParams.delete(k);
        if (pg.rollout !== null && pg.rollout !== void 0) u.searchParams.set("rollout", String(pg.rollout));
      }
      goTo(u, push ? { ci: pg.mode } : null);
    }
    function render(pg, fromUrl) {
      if (pg.goto) {
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
      ui.back.hidden = pg.mode === "group" ? !pg.row : pg.mode !== "row";
      ui.main.hidden = pg.mode !== "index";
      ui.group.hidden = pg.mode !== "group";
      const fromGroup = pg.mode === "row" && pg.rollout !== null && pg.rollout !== void 0;
      const linked = pg.mode === "group" ? linkedCompare(pg.row, first) : null;
      part(".ci-back").textContent = fromGroup ? "← back to the group map" : "← back to the index";
      if (!fromUrl) writeUrl(pg, false);
      if (pg.mode === "group") {
        part(".ci-backinfo").textContent = "";
        gm.show(pg.problems && problemsBox(pg.problems), pg.group, linked);
        markRow(Math.max(cursor, 0), false);
        lateForFindings(pg);
        return;
      }
      if (pg.mode === "row") {
        part(".ci-backinfo").replaceChildren(...pg.back ? backInfo(pg.back) : []);
        return;
      }
      if (pg.mode !== "index") return;
      part(".ci-error").replaceChildren(...pg.problems ? [problemsBox(pg.problems)] : []);
      part(".ci-notesbox").replaceChildren(drawNotes(pg.notes) || "");
      part(".ci-tablebox").replaceChildren(!pg.problems && pg.table ? drawTable(pg.table, pg.sort) : "");
      ui.form.hidden = !!pg.problems;
      const what = pg.kind === "hub" ? "Hub dataset" : pg.kind === "zip" ? "zip" : "folder";
      const range = pg.shown ? `${pg.first.toLocaleString()}–${(pg.first + pg.shown - 1).toLocaleString()} of ` : "";
      part(".ci-counts").textContent = pg.problems ? "" : `${what} ${pg.src}: showing ${range}${pg.matched.toLocaleString()} matching rows` + // a run's or a group's rows are its groups and their rollouts: said, so the head's count of rollouts is found
      (pg.matched_groups ? ` (${many(pg.matched_groups, "group")}, ${many(pg.matched - pg.matched_groups, "rollout")})` : "") + ` · ${pg.total.toLocaleString()} in the collection` + (pg.invalid ? ` · ${pg.invalid.toLocaleString()} invalid` : "") + // the run's head counts every rollout: the ones that failed before an artifact have no row, said here
      (pg.unlisted ? ` · ${many(pg.unlisted, "failed rollout")} ${pg.unlisted === 1 ? "has" : "have"} no artifact to list (counted in their group's K)` : "");
      part(".ci-pager").hidden = pg.pages <= 1;
      part(".ci-pageno").textContent = `page ${pg.page + 1} of ${pg.pages}`;
      button(".ci-prev").disabled = pg.page <= 0;
      button(".ci-next").disabled = pg.page >= pg.pages - 1;
      syncForm(pg);
      lateForFindings(pg);
    }
    async function ask(query) {
      const mine = ++asked;
      lastAsked = query;
      ui.root.classList.add("ci-busy");
      try {
        const pg = await api.index({ src: shown().src, query });
        if (mine === asked) render(pg, false);
      } finally {
        if (mine === asked) ui.root.classList.remove("ci-busy");
      }
    }
    const pending = (pg) => pg.mode === "index" ? !pg.findings_known : pg.mode === "group" && !!pg.group && !pg.group.findings_known;
    const askAgain = () => {
      const pg = shown();
      if (pg.mode === "group") {
        api.open({ src: pg.src, row: pg.row, query: pg.query });
        return;
      }
      ask(lastAsked ?? pg.query + (pg.page > 0 ? `${pg.query ? "&" : ""}page=${pg.page + 1}` : ""));
    };
    const onIndexed = (ev) => {
      if (!document.body.contains(ui.root)) {
        document.removeEventListener("fp-indexed", onIndexed);
        return;
      }
      const detail = (
        /** @type {CustomEvent<{src: string}>} */
        ev.detail
      );
      if (page && pending(page) && detail && detail.src === page.src) askAgain();
    };
    document.addEventListener("fp-indexed", onIndexed);
    const askedAgain = /* @__PURE__ */ new Set();
    const lateForFindings = (pg) => {
      if (!pending(pg) || document.documentElement.dataset.fpIndexed !== pg.src) return;
      if (askedAgain.has(pg.src)) return;
      askedAgain.add(pg.src);
      askAgain();
    };
    function open(path) {
      const pg = shown(), u = new URL(window.location.href);
      u.searchParams.set("row", path);
      for (const k of [...pg.view_keys, "rollout"]) u.searchParams.delete(k);
      goTo(u, { ci: "row" });
      working(`opening ${path.split("/").pop() || "the row"}…`);
      api.open({ src: pg.src, row: path, query: pg.query });
    }
    function urlQuery() {
      const p = new URLSearchParams();
      for (const [k, v] of new URL(window.location.href).searchParams) if (shown().query_keys.includes(k) || k === "page") p.set(k, v);
      return p.toString();
    }
    function back() {
      if (page && page.mode === "row" && page.rollout !== null && page.rollout !== void 0) {
        if (history.state && history.state.ci === "rollout") {
          history.back();
          return;
        }
        api.open({ src: page.src, row: page.row, query: page.query });
        return;
      }
      if (history.state && history.state.ci === "row") {
        history.back();
        return;
      }
      const pg = shown(), u = new URL(window.location.href);
      for (const k of ["row", "rollout", ...pg.view_keys]) u.searchParams.delete(k);
      history.replaceState(null, "", u.toString());
      document.dispatchEvent(new Event("rtv-place"));
      working("back to the index…");
      api.back({ src: pg.src, query: urlQuery() });
    }
    ui.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      ask(formQuery());
    });
    ui.form.addEventListener("change", () => {
      clearTimeout(typing);
      ask(formQuery());
    });
    ui.form.addEventListener("input", (ev) => {
      const type = (
        /** @type {HTMLInputElement} */
        ev.target.type
      );
      if (type !== "text" && type !== "search") return;
      clearTimeout(typing);
      typing = setTimeout(() => ask(formQuery()), 300);
    });
    ui.form.addEventListener("reset", () => setTimeout(() => ask(formQuery({ sort: shown().sort })), 0));
    ui.main.addEventListener("click", (ev) => {
      const target = (
        /** @type {Element} */
        ev.target
      ), pg = shown();
      const sortBtn = (
        /** @type {HTMLElement | null} */
        target.closest(".ci-sort")
      );
      if (sortBtn) {
        const col = sortBtn.dataset.sort;
        ask(formQuery({ sort: pg.sort === col ? "-" + col : col }));
        return;
      }
      if (target.closest(".ci-prev")) {
        ask(formQuery({ page: pg.page - 1 }));
        return;
      }
      if (target.closest(".ci-next")) {
        ask(formQuery({ page: pg.page + 1 }));
        return;
      }
      const row = (
        /** @type {HTMLElement | null} */
        target.closest("tr[data-path]")
      );
      if (row && !target.closest("a, summary") && !(window.getSelection() || "").toString()) open(row.dataset.path || "");
    });
    part(".ci-back").addEventListener("click", back);
    let cursor = -1;
    const presentable = () => !!page && (page.mode === "group" || page.mode === "index");
    const rows = () => Array.from(
      /** @type {NodeListOf<HTMLTableRowElement>} */
      ui.root.querySelectorAll(shown().mode === "group" ? "tr.gm-row" : "tr.ci-row")
    );
    function present(on) {
      const v = on === void 0 ? !ui.root.classList.contains("present") : on;
      ui.root.classList.toggle("present", v);
      document.body.classList.toggle("tv-present", v);
      if (v) keyScrolled(ui.root);
    }
    function markRow(i, scroll) {
      const rs = rows();
      if (!rs.length) return;
      cursor = Math.max(0, Math.min(rs.length - 1, i));
      rs.forEach((r, k) => {
        r.classList.toggle("ci-cursor", k === cursor);
        r.setAttribute("aria-selected", String(k === cursor));
      });
      if (scroll) rs[cursor].scrollIntoView({ block: "nearest" });
    }
    const moveRow = (d) => markRow(cursor + d, true);
    function openCursor() {
      const r = rows()[cursor];
      if (!r) return false;
      if (shown().mode === "group") {
        const b = (
          /** @type {HTMLElement | null} */
          r.querySelector(".gm-open")
        );
        if (!b) return false;
        b.click();
      } else open(r.dataset.path || "");
      return true;
    }
    ui.root.addEventListener("click", (ev) => {
      if (
        /** @type {Element} */
        ev.target.closest(".ci-present, .gm-present")
      ) present();
    });
    const onKey = (ev) => {
      if (!document.body.contains(ui.root)) {
        document.removeEventListener("keydown", onKey);
        return;
      }
      if (!presentable() || ui.root.hidden) return;
      const target = (
        /** @type {HTMLElement | null} */
        ev.target
      );
      const tag = target && target.tagName || "";
      if (/INPUT|TEXTAREA|SELECT/.test(tag) || target && target.isContentEditable || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key, on = ui.root.classList.contains("present");
      if (k === "p") present();
      else if (k === "Escape" && on) present(false);
      else if (k === "j" || on && k === "ArrowDown") moveRow(1);
      else if (k === "k" || on && k === "ArrowUp") moveRow(-1);
      else if (k === "Enter" && cursor >= 0 && !/^(BUTTON|A)$/.test(tag)) {
        if (!openCursor()) return;
      } else return;
      ev.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    const gm = mountGroupMap(ui.group, {
      compare: (a, b, turn) => api.compare({ src: shown().src, row: shown().row, a, b, turn }),
      compared(a, b, turn) {
        const u = new URL(window.location.href);
        u.searchParams.set("cmp", `${a},${b}`);
        u.searchParams.set("cturn", String(turn));
        history.replaceState(history.state, "", u.toString());
      },
      openRollout(rollout, turn) {
        const u = new URL(window.location.href);
        u.searchParams.set("rollout", String(rollout));
        u.searchParams.set("turn", String(turn));
        goTo(u, { ci: "rollout" });
        working(`opening rollout ${rollout} at turn ${turn}…`);
        const pg = shown();
        api.open({ src: pg.src, row: pg.row, query: pg.query, rollout, turn });
      }
    });
    const onPop = () => {
      if (!document.body.contains(ui.root)) {
        window.removeEventListener("popstate", onPop);
        return;
      }
      if (!page || page.mode === "none") return;
      const u = new URL(window.location.href);
      const src = u.searchParams.get("src") || page.src;
      const row = u.searchParams.get("row");
      const rollout = u.searchParams.get("rollout");
      const here = page.rollout === null || page.rollout === void 0 ? null : String(page.rollout);
      if (row !== null && rollout !== here) {
        api.open({ src, row, query: urlQuery(), rollout, turn: u.searchParams.get("turn") || 0 });
        return;
      }
      if (row === null && page.mode !== "index") api.back({ src, query: urlQuery() });
      else if (row !== null && (page.mode === "index" || row !== page.row)) api.open({ src, row, query: urlQuery() });
      else if (row === null && page.mode === "index" && urlQuery() !== formQuery({ page: page.page })) ask(urlQuery());
    };
    window.addEventListener("popstate", onPop);
    return { box, render, state: () => page };
  }
  var COMPARE_KEYS = ["cmp", "cturn"];
  function linkedCompare(row, first) {
    const u = new URL(window.location.href);
    const named = u.searchParams.get("row");
    const mine = named === null && first && u.searchParams.has("group") || (named || "") === (row || "");
    if (!mine) return null;
    const m = /^(\d{1,6}),(\d{1,6})$/.exec(u.searchParams.get("cmp") || "");
    const turn = Number(u.searchParams.get("cturn") || 0);
    return m && Number.isInteger(turn) && turn >= 0 && turn < 1e6 ? { a: Number(m[1]), b: Number(m[2]), turn } : null;
  }
  function mountInApp(element, props, server, watch, trigger) {
    const api = {
      index: (req) => server.index(req),
      compare: (req) => server.compare(req),
      open: (req) => trigger("click", { action: "open", ...req }),
      back: (req) => trigger("click", { action: "back", ...req })
    };
    let view = null;
    function start() {
      const box = (
        /** @type {HTMLElement | null} */
        element.querySelector(".ci-mount")
      );
      if (!box || !props.value) return;
      if (!view || view.box !== box || !box.firstChild) view = mount(box, api);
      view.render(sentValue(props), false);
    }
    start();
    watch("value", start);
  }
  return __toCommonJS(collection_index_exports);
})();
