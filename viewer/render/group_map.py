"""The group map and the sibling comparison as escaped HTML, from viewer/group.py's records.

Tool names, statuses, problems and token texts come from artifacts and are untrusted: every one goes
through `safe.text`. The page (viewer/assets/src/collection_index.js) only reads the data-* attributes
(rollout, turn) to open a rollout and never builds markup from them.
"""

from __future__ import annotations

from ..contract import Fate, RunContext
from ..group import Compare, CompareSide, GroupMap, GroupRow, RunPlace
from ..numbers import count, number, sign
from .safe import short, text


def _bar(adv: float | None, scale: float) -> str:
    """A bar from the middle: right and green for a positive advantage, left and red for a negative one."""
    if adv is None:
        return "<span class='gm-adv none' title='TRL gave this rollout no advantage: it built no training row'>none</span>"
    width = 0.0 if scale <= 0 else min(50.0, 50.0 * abs(adv) / scale)
    side = "left:50%" if adv >= 0 else f"left:{50 - width:.1f}%"
    return (f"<span class='gm-bar' title='advantage {adv:+.4f}'><span class='gm-bar-mid'></span>"
            f"<span class='gm-bar-fill {sign(adv)}' style='{side};width:{width:.1f}%'></span></span>"
            f"<span class='gm-adv {sign(adv)}'>{adv:+.3f}</span>")


def _cell(row: GroupRow, pos: int) -> str:
    if pos >= len(row.cells):
        return "<td class='gm-cell gm-none'></td>"
    c = row.cells[pos]
    tools = ", ".join(c.tools) if c.tools else "no tool call"
    never = c.fate is not None and c.trained and not c.fate.trained  # in the mask, its row never trained
    classes = " ".join(x for x in ("gm-cell", "trained" if c.trained else "untrained", "never" if never else "",
                                   "failed" if c.failed else "", "stop" if not c.tools else "") if x)
    fail = "<span class='gm-fail' aria-label='a tool call failed'>✗</span> " if c.failed else ""
    mask = "in TRL's mask" if c.trained else "not in TRL's mask"
    fate = f" · {c.fate.label}" if c.fate is not None and c.trained else ""
    tip = f"turn {c.turn}: {tools}{' (failed)' if c.failed else ''} · {mask}{fate} · {c.output_tokens:,} generated tokens"
    return (f"<td class='{classes}'><button type='button' class='gm-open' data-rollout='{row.rollout}' data-turn='{pos}' "
            f"title='{text(tip)}' data-testid='group-cell'>{fail}{text(short(tools, 40))}</button></td>")


def fate_kind(f: Fate) -> str:
    """The class a fate is drawn with: every row trained, some, or none."""
    return "trained" if f.trained else "partly" if f.partly else "never"


def fate_cell(f: Fate | None) -> str:
    """The trainer's fact beside the mask's: "step 3", "never: read-ahead", or a rollout whose rows met different
    fates by its turns ("turn 0 trained at step 5 · turns 1–2 never trained (read-ahead)"); the sentence on hover."""
    if f is None:
        return "<td class='gm-fate'>-</td>"
    if f.label.startswith(("trained at ", "never trained (")):
        label = ("step " if len(f.steps) == 1 else "steps ") + ", ".join(map(str, f.steps)) if f.trained else \
            f"never: {f.cause}"
    else:  # rows of different fates: the label by turns, whole
        label = f.label
    return (f"<td class='gm-fate {fate_kind(f)}' data-testid='group-fate' title='{text(f.why)}'>"
            f"{text(short(label, 90))}</td>")


def _row(row: GroupRow, m: GroupMap) -> str:
    status = text(row.status) + (f" <span class='gm-problem'>{text(short(row.problem, 120))}</span>" if row.problem else "")
    openable = row.path is not None and row.problem is None
    pick = (f"<input type='checkbox' class='gm-pick' data-rollout='{row.rollout}' "
            f"aria-label='compare rollout {row.rollout}' data-testid='group-pick'>" if openable and row.cells else "")
    name = (f"<button type='button' class='gm-open gm-name' data-rollout='{row.rollout}' data-turn='0'>rollout {row.rollout}</button>"
            if openable else f"<span class='gm-name'>rollout {row.rollout}</span>")
    more = f"<td class='gm-more'>+{row.more_turns:,} turns</td>" if row.more_turns else ""
    cells = "".join(_cell(row, i) for i in range(m.max_turns))
    never = f" fate-{fate_kind(row.fate)}" if row.fate is not None and not row.fate.trained else ""
    return (f"<tr class='gm-row status-{text(row.status)}{'' if openable else ' closed'}{never}' data-rollout='{row.rollout}' "
            f"data-testid='group-row'><td class='gm-pickcell'>{pick}</td><td>{name}</td>"
            f"<td class='gm-num'><span class='gm-reward {sign(row.reward)}'>{number(row.reward)}</span></td>"
            f"<td class='gm-advcell'>{_bar(row.advantage, m.max_abs_advantage)}</td>"
            f"<td class='gm-status' data-testid='group-status'>{status}</td>{fate_cell(row.fate) if m.place else ''}"
            f"<td class='gm-num'>{count(row.trained_turns)}</td>"
            f"<td class='gm-num'>{count(row.tokens)}</td>"
            f"<td class='gm-num'>{'-' if row.drifting is None else 'none' if not row.drifting else f'{row.drifting} ⚠'}</td>"
            f"{cells}{more}</tr>")


def place_line(p: RunPlace) -> str:
    """A run's group map heading: version, group id, segment, and the steps it was trained at."""
    steps = ("trained at step " if len(p.steps) == 1 else "trained at steps ") + ", ".join(map(str, p.steps[:8])) \
        if p.steps else "never trained"
    never = ", ".join(f"{c} {n}" for c, n in sorted(p.never.items()))
    rest = f" · never trained: {never}" if p.steps and never else f" ({never})" if never else ""
    if p.partly:
        rest += f" · {p.partly} partly trained (rows of different fates)"
    return (f"<span class='gm-place' data-testid='group-place'><b>version {p.version} · group {p.group_id}</b> "
            f"<span class='gm-dim'>segment {text(short(p.segment, 40))} · {text(steps + rest)}</span></span> ")


def group_map(m: GroupMap) -> str:
    """The map: one row per rollout (best advantage first), one column per turn so siblings line up."""
    turns = "".join(f"<th scope='col' class='gm-turnh'>turn {i}</th>" for i in range(m.max_turns))
    fate = ("<th scope='col' title='whether the trainer took this rollout: the global step its rows were trained "
            "at, or why never (its consumption log)'>trainer</th>") if m.place else ""
    head = ("<tr><th scope='col' class='gm-pickcell' title='tick two rows, then press compare below'>compare</th>"
            "<th scope='col'>rollout</th>"
            "<th scope='col'>reward</th><th scope='col' title='TRL: (reward - mean) / (std + 1e-8) over the group'>advantage</th>"
            f"<th scope='col'>status</th>{fate}<th scope='col' title='agent turns TRL&#39;s completion mask (OpenEnv&#39;s "
            "loss mask) would train a token of, were its rows in the loss'>in mask</th><th scope='col'>tokens</th>"
            "<th scope='col'>drift</th>"
            f"{turns}</tr>")
    body = "".join(_row(r, m) for r in m.rows)
    hatched = any(c.fate is not None and c.trained and not c.fate.trained for r in m.rows for c in r.cells)
    key = ("<div class='gm-key gm-dim' data-testid='group-key'><span class='gm-swatch trained'></span> in TRL's mask, "
           "its row trained · <span class='gm-swatch trained never'></span> in TRL's mask, its row never trained "
           "(the trainer column says why)</div>") if hatched else ""
    same = len({r.advantage for r in m.rows if r.advantage is not None}) <= 1
    note = ("<div class='gm-note'>every rollout has the same advantage: GRPO learns nothing from this group "
            "(all rewards equal)</div>") if same and m.rows else ""
    return (f"<div class='gm' data-testid='group-map'><div class='gm-head'>{place_line(m.place) if m.place else ''}"
            f"<b>GRPO group · K={m.k}</b> "
            f"<span class='gm-dim'>{text(short(m.model, 40))} · {text(short(m.title, 100))}</span> "
            "<button type='button' class='gm-present' data-testid='present' title='presentation mode (p): large type, "
            f"j/k move between rollouts, Enter opens one'>present</button></div>{note}"
            "<div class='gm-help gm-dim'>Rows are sorted by advantage, best first. Click a rollout or a turn to open it; "
            "tick two rows and press compare to see a turn of both side by side; p presents the map.</div>"
            f"<div class='gm-tablebox'><table class='gm-table'><thead>{head}</thead><tbody>{body}</tbody></table></div>"
            f"{key}"
            "<div class='gm-compare-bar'><label>turn <input type='number' class='gm-cturn' min='0' value='0' "
            "data-testid='compare-turn'></label><button type='button' class='gm-compare' disabled "
            "data-testid='compare'>compare the two ticked rollouts</button></div>"
            "<div class='gm-comparebox' data-testid='compare-box'></div></div>")


def _strip(s: CompareSide, at: int | None) -> str:
    """The prompt around its first difference (the folded note)."""
    out = []
    for k, tok in enumerate(s.text):
        pos = s.start + k
        cls = "gm-t" + (" gen" if s.mask[k] == "1" else "") + (" div" if at is not None and pos == at else "") + \
            (" after" if at is not None and pos > at else "")
        title = f" title='first difference, position {pos:,}'" if at is not None and pos == at else ""
        out.append(f"<span class='{cls}' data-mask='{s.mask[k]}'{title}>{text(tok)}</span>")
    if at is not None and at >= s.prompt_tokens:
        out.append("<span class='gm-t div end' title='this prompt ends here'>⟂ end</span>")
    return "".join(out)


def _output(s: CompareSide, at: int | None) -> str:
    """A side's generated tokens from the first, each marked with its mask as the token view does, the first
    difference boxed (or an end mark where this side stops while the other goes on)."""
    out = []
    for k, tok in enumerate(s.out_text):
        div = at is not None and k == at
        cls = "gm-t gen" + (" div" if div else "") + (" after" if at is not None and k > at else "")
        extra = f" title='first difference: generated token {k:,}' data-testid='divergence'" if div else ""
        out.append(f"<span class='{cls}' data-mask='{s.out_mask[k]}' data-k='{k}'{extra}>{text(tok)}</span>")
    if at is not None and at >= s.out_total:
        out.append("<span class='gm-t div end' data-testid='divergence' title='this turn ends here'>⟂ end</span>")
    if s.out_total > len(s.out_text):
        out.append(f"<span class='gm-dim'> … {s.out_total - len(s.out_text):,} more generated tokens</span>")
    return "".join(out)


def compare(c: Compare) -> str:
    """Two siblings' turn: their generated tokens side by side from the first, the first difference boxed;
    where their prompts differ as a folded note; their tool calls side by side."""
    k = c.output_diverge_at
    if k is None:
        where = f"their generated tokens are identical ({c.a.out_total:,} tokens)"
    else:
        where = f"their generated tokens part at generated token {k:,}" + (" (the first one)" if k == 0 else "")
    note = f"<div class='gm-note' data-testid='compare-note'>{text(c.note)}</div>" if c.note else ""
    if c.prompt_diverge_at is None:
        prompt = (f"<div class='gm-dim' data-testid='prompt-note'>their prompts are identical "
                  f"({c.a.prompt_tokens:,} tokens)</div>")
    else:
        # siblings' prompts can differ in small things (a capture made before every local sandbox had the same
        # working directory names each sandbox's own folder): folded, below what GRPO compares
        prompt = (f"<details class='gm-prompt-note' data-testid='prompt-note'><summary>their prompts already differ at "
                  f"position {c.prompt_diverge_at:,} (of {c.a.prompt_tokens:,} and {c.b.prompt_tokens:,}): show where"
                  "</summary>" + "".join(f"<div class='gm-side-h'>rollout {x.rollout}</div><div class='gm-strip'>"
                                         f"{_strip(x, c.prompt_diverge_at)}</div>" for x in (c.a, c.b)) + "</details>")

    def side(s: CompareSide) -> str:
        return (f"<div class='gm-side' data-testid='compare-side'><div class='gm-side-h'>"
                f"{text(s.label) if s.label else f'rollout {s.rollout}'} · turn {s.turn}"
                f"{f' · {text(s.fate)}' if s.fate else ''}"
                f" <span class='gm-dim'>{s.out_total:,} generated tokens</span></div>"
                f"<div class='gm-strip gm-out'>{_output(s, k)}</div></div>")

    def calls(s: CompareSide) -> str:
        items = "".join(f"<li>{text(short(t, 200))}</li>" for t in s.tools) or "<li class='gm-dim'>no tool call</li>"
        return (f"<div class='gm-calls{' failed' if s.failed else ''}'><b>{text(s.label) if s.label else f'rollout {s.rollout}'}"
                f"</b><ul>{items}</ul></div>")

    return (f"<div class='gm-cmp'><div class='gm-cmp-h'><b>turn {c.turn}</b>: {text(where)} "
            "<span class='gm-dim'>(each side from its first generated token, mask 1 underlined; the first difference "
            f"boxed)</span></div>{note}<div class='gm-sides'>{side(c.a)}{side(c.b)}</div>{prompt}"
            f"<div class='gm-callrow'>{calls(c.a)}{calls(c.b)}</div></div>")


def opened_rollout(group_path: str, rollout: int, advantage: float | None, k: int) -> str:
    """What the back bar says over a rollout opened from its group map (`group_path`: where the group is, or the
    source's name when the source is the group)."""
    adv = "" if advantage is None else f" · advantage <span class='gm-adv {sign(advantage)}'>{advantage:+.3f}</span>"
    return (f"<span class='ci-here'>rollout {rollout} of {k} in group <code>{text(short(group_path, 120))}"
            f"</code></span><span class='ci-dim'>{adv}</span>")


def opened_run_rollout(run: RunContext) -> str:
    """The back bar over a recorded run's rollout: "run › v1 › group 4 › rollout 0", TRL's advantage (none for a
    failed rollout), and whether the trainer took it."""
    crumbs = " › ".join(f"<span class='ci-crumb'>{text(c)}</span>" for c in run.crumbs)
    adv = ("TRL gave it no advantage" if run.advantage is None else
           f"advantage <span class='gm-adv {sign(run.advantage)}'>{run.advantage:+.3f}</span>")
    fate = (f"<span class='gm-fate {fate_kind(run.fate)}' data-testid='crumb-fate' "
            f"title='{text(run.fate.why)}'>{text(run.fate.label)}</span>")
    return (f"<span class='ci-here' data-testid='crumbs'>{crumbs}</span><span class='ci-dim'> · {run.k} rollouts in the "
            f"group · {text(run.status)} · {adv} · </span>{fate}")
