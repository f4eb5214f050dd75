"""A tab whose components are fetched when a visitor first opens it, not with the page.

Gradio (6.31) fetches the code of every visible component in the page's config when the page loads, whichever
tab holds it; a component that starts hidden is fetched when it is first shown. The Capture tab's form uses five
component types the View tab does not (Markdown, Radio, Textbox, Number, File): some twenty more requests before
the first token of the default page is drawn, about a fifth of its first paint (bench/bench_first_paint.py). So the
tab's components start hidden and its first opening shows them.
"""

from __future__ import annotations

from collections.abc import Iterator

import gradio as gr
from gradio.blocks import Block, BlockContext


def _components(block: Block) -> Iterator[gr.components.Component]:
    for child in getattr(block, "children", []):
        if isinstance(child, gr.components.Component):  # before BlockContext: a gr.HTML is both (it can hold blocks)
            if not isinstance(child, (gr.State, gr.Timer)):
                yield child
        elif isinstance(child, BlockContext):
            yield from _components(child)


def defer_until_opened(tab: gr.Tab) -> None:
    """Hide the components `tab` shows (call after its contents are made) and show them when a page first opens
    the tab. Later openings change nothing, so what the tab's own events hid since stays hidden
    (the local backend's note once another backend is chosen)."""
    shown = [c for c in _components(tab) if c.visible is True]
    if not shown:
        return
    for c in shown:
        c.visible = False
    with tab:  # made inside the tab: a block left in the Tabs beside their tabs shows as one more tab button
        opened = gr.State(False)

    def first_opening(already: bool) -> list:
        if already:
            return [gr.skip()] * len(shown) + [True]
        return [gr.update(visible=True)] * len(shown) + [True]

    tab.select(first_opening, opened, [*shown, opened], queue=False, show_progress="hidden")
