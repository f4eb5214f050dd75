"""The private Gradio names the viewer relies on, checked against the installed Gradio (as
rollout_trace/record/pins.py does for TRL).

One today: `EventData._data`, the payload of the page's custom events, read as `getattr(evt, "_data", None)`
by viewer/ui/collection_view.py, viewer/ui/run_view.py and viewer/ui/find_panel.py. Were it renamed, every
click on the run page, the collection index and the search panel's hits would silently do nothing;
tests/test_record_pins.py runs `check()`, so a Gradio upgrade that renames it fails there, by name.
"""

from __future__ import annotations


def check() -> list[str]:
    """The pinned Gradio names that do not hold in the installed Gradio (empty when every one does)."""
    import gradio as gr

    try:
        data = gr.EventData(None, {"action": "open"})._data
    except Exception as e:  # the constructor or the attribute changed
        return [f"gradio.EventData(target, _data)._data ({type(e).__name__}: {e})"]
    return [] if data == {"action": "open"} else ["gradio.EventData(target, _data)._data holds the event's payload"]
