"""The private Gradio names the viewer relies on, checked against the installed Gradio (as
rollout_trace/record/pins.py does for TRL).

- `EventData._data`, the payload of the page's custom events, read as `getattr(evt, "_data", None)`
  by viewer/ui/collection_view.py, viewer/ui/run_view.py and viewer/ui/find_panel.py. Were it renamed, every
  click on the run page, the collection index and the search panel's hits would silently do nothing.
- The queue's idle polling periods, `Queue.sleep_when_free` and `Queue.progress_update_sleep_when_free`, which
  `idle_quietly` sets. Were they renamed, the app would idle at Gradio's default cost again.

tests/test_record_pins.py runs `check()`, so a Gradio upgrade that renames one fails there, by name.
"""

from __future__ import annotations

from typing import Any

# Gradio's queue polls for work every 1 ms while it has none (and for progress every 10 ms): about 8% of a core
# for an app nobody is using, on a Space or a laptop. Gradio on Windows waits 50 and 100 ms; 20 ms adds at most
# that to the start of an event, which no visitor sees.
IDLE_POLLS_S = {"sleep_when_free": 0.02, "progress_update_sleep_when_free": 0.1}


def idle_quietly(demo: Any) -> None:
    """Make `demo`'s queue (after `demo.queue(...)`) poll for work at IDLE_POLLS_S rather than every millisecond."""
    for name, seconds in IDLE_POLLS_S.items():
        setattr(demo._queue, name, seconds)


def check() -> list[str]:
    """The pinned Gradio names that do not hold in the installed Gradio (empty when every one does)."""
    import gradio as gr

    broken = []
    try:
        data = gr.EventData(None, {"action": "open"})._data
    except Exception as e:  # the constructor or the attribute changed
        broken.append(f"gradio.EventData(target, _data)._data ({type(e).__name__}: {e})")
    else:
        if data != {"action": "open"}:
            broken.append("gradio.EventData(target, _data)._data holds the event's payload")
    queue = gr.Blocks().queue()._queue
    broken += [f"gradio.queueing.Queue.{name} (a number of seconds)" for name in IDLE_POLLS_S
               if not isinstance(getattr(queue, name, None), float)]
    return broken
