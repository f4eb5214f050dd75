"""A self-contained HTML file of a rollout (or one turn) that opens offline in any browser.

The page carries the view's CSS and JavaScript inline and every token chunk it can show as embedded
JSON, so it makes no request at all. A whole-rollout export embeds each turn's new tokens (what the
turn adds) and TRL's training rows; a one-turn export also embeds that turn's full context. It opens
on the turn, mode and scope it was exported from. The embedded JSON escapes every character that
could end or restructure the script element, so no string from a trace can change the document.
"""

from __future__ import annotations

import msgspec

from . import assets
from .contract import Initial, Mode, Opened, Scope, encode
from .render.outline import outline, training
from .render.safe import text
from .rollout import CHUNK, Rollout

# Inside <script>, the HTML parser looks for "</script" and, after "<!--", for "<script" (the
# "script data escaped" states), so either can end or swallow the element whatever JSON says. With
# no "<", ">" or "&" in the text no tag, comment or entity can begin; U+2028/9 are escaped so the
# same text is also safe as a JavaScript literal. Each escape decodes to the same character in JSON.
_EMBED = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def embed_json(value: object) -> str:
    """JSON text safe inside a <script type="application/json"> element: no string can end it."""
    return msgspec.json.encode(value).decode("utf-8").translate(_EMBED)



def _chunks(r: Rollout, turn: int, scope: str, row: int = 0) -> list[dict]:
    _, size = r.scope_size(turn, scope, row)
    return [msgspec.to_builtins(r.chunk(turn, scope, k, row)) for k in range(-(-size // CHUNK))]


def export_html(r: Rollout, turn: int | None = None, mode: Mode = "mask", scope: Scope = "new", at_turn: int = 0) -> str:
    """The page; `turn` exports that turn alone, else the whole rollout opens on `at_turn`."""
    n = len(r.artifact.turns)
    if turn is not None and not 0 <= turn < n:
        raise ValueError(f"there is no turn {turn}: this rollout has turns 0 to {n - 1}" if n else
                         "this rollout has no agent turn to export")
    turns = list(range(n)) if turn is None else [turn]
    o = outline(r)
    if turn is not None:
        o = msgspec.structs.replace(o, turns=[o.turns[turn]])
    # Chunks are keyed by the turn's position in the exported outline.
    chunks: dict = {"new": {str(k): _chunks(r, t, "new") for k, t in enumerate(turns)}, "full": {}, "row": {}}
    if turn is not None:
        chunks["full"]["0"] = _chunks(r, turn, "full")
    elif scope == "full":
        scope = "new"  # a whole-rollout export carries each turn's new tokens, not every full context
    rows = training(r)
    chunks["row"] = {str(k): _chunks(r, 0, "row", k) for k in range(len(rows.rows))}
    start_turn = 0 if turn is not None else min(max(at_turn, 0), max(n - 1, 0))
    opened = Opened("export", None, msgspec.Raw(encode(o)), Initial(start_turn, mode, scope), None)
    blob = embed_json({"opened": opened, "chunks": chunks, "training": rows})
    title = f"rollout {r.artifact.summary.task_id[:12]}" + (f" turn {turn}" if turn is not None else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="color-scheme" content="light dark">
<title>{text(title)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:0}}.dark{{background:#0b0f19}}#root{{padding:16px}}
#root {{ {assets.read("trace_view.css")} }}</style></head>
<body><div id="root"></div>
<script type="application/json" id="tv-data">{blob}</script>
<script>{assets.read("trace_view.js")}
TraceView.mountExport(document.getElementById("tv-data"), document.getElementById("root"));
</script></body></html>
"""
