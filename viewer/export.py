"""A self-contained HTML file of a rollout (or one turn) that opens offline in any browser.

The page carries the view's CSS and JavaScript inline and every token chunk it can show as embedded
JSON, so it makes no request at all. A whole-rollout export embeds each turn's new tokens (what the
turn adds) and TRL's training rows; a one-turn export also embeds that turn's full context.
"""

from __future__ import annotations

import json

from . import assets
from .render.safe import text
from .rollout import CHUNK, Rollout


# Inside <script>, the HTML parser looks for "</script" and, after "<!--", for "<script" (the
# "script data escaped" states), so either can end or swallow the element whatever JSON says. With
# no "<", ">" or "&" in the text no tag, comment or entity can begin; U+2028/9 are escaped so the
# same text is also safe as a JavaScript literal. Each escape decodes to the same character in JSON.
_EMBED_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                "\u2028": "\\u2028", "\u2029": "\\u2029"})


def embed_json(value: object) -> str:
    """JSON text safe inside a <script type="application/json"> element: no string can end it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_EMBED_ESCAPES)


def _chunks(r: Rollout, turn: int, scope: str, row: int = 0) -> list[dict]:
    _, size = r.scope_size(turn, scope, row)
    return [r.chunk(turn, scope, k, row) for k in range(-(-size // CHUNK))]


def export_html(r: Rollout, turn: int | None = None) -> str:
    outline = r.outline()
    turns = range(len(r.artifact.turns)) if turn is None else [turn]
    data: dict = {"new": {str(t): _chunks(r, t, "new") for t in turns}, "full": {}, "row": {}}
    if turn is not None:
        if not 0 <= turn < len(r.artifact.turns):
            raise ValueError(f"no turn {turn}: this rollout has turns 0..{len(r.artifact.turns) - 1}")
        data["full"][str(turn)] = _chunks(r, turn, "full")
        outline["turns"] = [outline["turns"][turn]]
    training = r.training_outline()
    data["row"] = {str(k): _chunks(r, 0, "row", k) for k in range(len(training["rows"]))}
    payload = {"outline": outline, "chunks": data, "training": training, "turn_offset": 0 if turn is None else turn}
    blob = embed_json(payload)
    title = f"rollout {r.artifact.summary.task_id[:12]}" + (f" turn {turn}" if turn is not None else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{text(title)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:16px}}{assets.read("trace_view.css")}</style></head>
<body><div id="root"></div>
<script type="application/json" id="tv-data">{blob}</script>
<script>{assets.read("trace_view.js")}
(() => {{
  const D = JSON.parse(document.getElementById("tv-data").textContent);
  const missing = "not included in this export: export this turn alone to get its full context";
  const api = {{
    chunk: async (q) => {{
      const scope = D.chunks[q.scope] || {{}};
      const key = q.scope === "row" ? String(q.row) : String(q.turn + D.turn_offset);
      const list = scope[key];
      return list && list[q.index] ? list[q.index] : {{error: missing}};
    }},
    training: async () => D.training,
  }};
  const O = D.outline;
  O.turns.forEach((t, k) => {{ t.i = k + D.turn_offset; }});
  TraceView.mount(document.getElementById("root"), O, api, {{turn: 0}});
}})();
</script></body></html>
"""
