"""The Gradio app: load a source, show the rollout summary and its turns."""

from __future__ import annotations

import html

import gradio as gr

from artifact import ArtifactError, bundled_examples, open_artifact
from viewer.analysis.report import fmt_reward, report


def _summary_html(source: str, public: bool) -> str:
    try:
        a = open_artifact(source, allow_local=not public)
    except ArtifactError as e:
        items = "".join(f"<li>{html.escape(str(p))}</li>" for p in e.problems)
        return f"<div class='error'><b>Cannot open {html.escape(source)}</b><ul>{items}</ul></div>"
    r = report(a)
    rows = "".join(
        f"<tr><td>{t.index}</td><td>{'trained' if t.trained else '—'}</td>"
        f"<td>{html.escape(', '.join(n or '?' for n in t.tool_calls))}</td><td>{t.n_prompt:,}</td><td>{t.n_output:,}</td></tr>"
        for t in a.turns)
    return (f"<h3>{html.escape(r.model)}</h3><p>reward {fmt_reward(r.reward.recorded)} · {r.turns} turns "
            f"({r.trained_turns} trained) · {html.escape(r.continuity)}</p>"
            f"<table><tr><th>turn</th><th>trained</th><th>tools</th><th>prompt</th><th>output</th></tr>{rows}</table>")


def build_app(default_source: str, public: bool = False) -> gr.Blocks:
    with gr.Blocks(title="Rollout trace viewer") as demo:
        with gr.Row():
            src = gr.Dropdown(bundled_examples(), value=default_source, allow_custom_value=True, label="Source")
            load = gr.Button("Load")
        out = gr.HTML()
        load.click(lambda s: _summary_html(s, public), src, out)
        demo.load(lambda s: _summary_html(s, public), src, out)
    return demo


def launch_options(public: bool) -> dict:
    return {"max_file_size": "200mb"} if public else {}
