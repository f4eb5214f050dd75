"""Every private TRL name the recorder relies on holds in the installed TRL, and a change fails loudly, by name.

rollout_trace/record/pins.py lists them; the recording worker refuses to be built when one breaks, so a TRL
upgrade can never record something silently wrong.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def test_every_pin_holds_in_the_installed_trl():
    import trl

    from rollout_trace.record import pins

    assert trl.__version__ == pins.TRL_TESTED
    assert pins.check() == []


@pytest.mark.parametrize("target, name, value, named", [
    ("openenv_harness.HarnessRolloutWorker", "_loop_cls", object, "_loop_cls"),
    ("openenv_harness._HarnessRolloutLoop", "_run_session", lambda self, prompt: None, "_run_session"),
    ("openenv_harness._HarnessRolloutLoop", "_EMPTY_ROLLOUT", ([], [], [], 0, 0), "_EMPTY_ROLLOUT"),
    ("async_rollout_worker._AsyncRolloutLoop", "_score_group", lambda self, group: [], "_score_group"),
    ("async_grpo_trainer.RolloutQueueDataset", "__iter__", lambda self: iter(()), "RolloutQueueDataset"),
    ("async_grpo_trainer.DataCollatorForRollout", "torch_call", lambda self, examples: {}, "torch_call"),
])
def test_a_changed_name_is_named(monkeypatch, target, name, value, named):
    import importlib

    from rollout_trace.record import RecorderIncompatible, RecordingHarnessRolloutWorker, pins

    module, cls = target.split(".")
    owner = getattr(importlib.import_module(f"trl.experimental.async_grpo.{module}"), cls)
    monkeypatch.setattr(owner, name, value)
    broken = pins.check()
    assert broken and any(named in b for b in broken), broken
    with pytest.raises(RecorderIncompatible, match=named):
        RecordingHarnessRolloutWorker(record_dir="never-written")  # refused before anything else happens
    assert not os.path.exists("never-written")


def test_a_missing_field_is_named(monkeypatch):
    import dataclasses

    from trl.experimental.async_grpo import async_rollout_worker as W

    from rollout_trace.record import pins

    kept = [f.name for f in dataclasses.fields(W.RolloutSample) if f.name != "advantage"]
    monkeypatch.setattr(W, "RolloutSample", dataclasses.make_dataclass("RolloutSample", kept))
    assert [b for b in pins.check() if "RolloutSample fields" in b]


def test_gradio_s_event_payload_is_where_the_viewer_reads_it(monkeypatch):
    """viewer/ui reads a custom event's payload as `evt._data`: pinned, and a rename is named."""
    import gradio as gr

    from viewer.ui import gradio_pins

    assert gradio_pins.check() == []
    original = gr.EventData.__init__

    def renamed(self, target, _data):
        original(self, target, None)
        self.payload = _data

    monkeypatch.setattr(gr.EventData, "__init__", renamed)
    assert gradio_pins.check() == ["gradio.EventData(target, _data)._data holds the event's payload"]


def test_gradio_s_queue_polling_periods_are_where_the_app_sets_them(monkeypatch):
    """The app sets the queue's idle polling periods (gradio_pins.idle_quietly): a rename is named."""
    from gradio import queueing

    from viewer.ui import gradio_pins

    original = queueing.Queue.__init__

    def renamed(self, *a, **kw):
        original(self, *a, **kw)
        self.idle_sleep = self.__dict__.pop("sleep_when_free")

    monkeypatch.setattr(queueing.Queue, "__init__", renamed)
    assert gradio_pins.check() == ["gradio.queueing.Queue.sleep_when_free (a number of seconds)"]
