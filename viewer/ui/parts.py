"""The View tab's components that several parts write to: the token view, the loaded source, the collection
index and the source bar. The app makes them (viewer/ui/app.py) and hands them to each part as it wires its
events, so a part names another's component here, never through that part.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from .rows import Linked, Shown


@dataclass
class ViewParts:
    view: gr.HTML  # the token view
    loaded: gr.State  # the source the token view shows
    index: gr.HTML  # the collection index
    src: gr.Dropdown  # the source box
    load: gr.Button
    upload: gr.UploadButton

    @property
    def opened(self) -> list:
        """What opening something writes: the token view, the loaded source, the index."""
        return [self.view, self.loaded, self.index]

    @property
    def triggers(self) -> list:
        """The source bar's events that open a source."""
        return [self.load.click, self.src.select]

    def of(self, shown: Shown | Linked) -> dict:
        """`shown` keyed by component; a part it leaves as it is (None) is left out, so it keeps its value."""
        parts = (self.view, self.loaded, self.index) if isinstance(shown, Shown) else \
            (self.view, self.src, self.loaded, self.index)
        return {c: v for c, v in zip(parts, shown, strict=True) if v is not None}
