"""The View tab's server side without a browser: rollouts shared by source, the byte-bounded store that
reloads what it dropped, page-load validation, the component server's answers to bad requests, uploads
named without server paths, bounded panels, and a rollout with no agent turn."""

from __future__ import annotations

import json
import shutil

import msgspec
import pytest

from conftest import EXAMPLE, artifact_without_turns, edit_json, zip_folder
from rollout_trace.artifact import open_artifact
from viewer.contract import encode
from viewer.render import panels
from viewer.render.markdown import parse as parse_markdown
from viewer.render.safe import MAX_CHARS, folded, markdown, pre
from viewer.rollout import Rollout
from viewer.ui.service import Service
from viewer.ui.store import RolloutStore, rollout_bytes
from viewer.ui.view_tab import ViewTab


def opened(value: str) -> dict:
    return json.loads(value)


def test_visitors_of_one_source_share_one_load():
    tab = ViewTab(Service("scripted-smollm2", public=False))
    keys = {opened(tab.service.values.source_value("scripted-smollm2")[0])["key"] for _ in range(12)}
    assert len(keys) == 1 and tab.service.store.loads == 1


def test_a_rewritten_folder_is_a_new_identity(tmp_path):
    folder = tmp_path / "a"
    shutil.copytree(EXAMPLE, folder)
    tab = ViewTab(Service("scripted-smollm2", public=False))
    k1 = opened(tab.service.values.source_value(str(folder))[0])["key"]
    edit_json(folder / "summary.json", lambda d: d.update(produced_by="edited"))
    k2 = opened(tab.service.values.source_value(str(folder))[0])["key"]
    assert k1 != k2 and tab.service.store.loads == 2


def test_store_evicts_by_bytes_and_reloads_what_a_page_still_uses(tmp_path):
    one = Rollout.load(open_artifact(EXAMPLE))
    store = RolloutStore(budget_bytes=int(rollout_bytes(one) * 1.5))  # room for one rollout
    loads = []

    def opener(name):
        def load():
            loads.append(name)
            return Rollout.load(open_artifact(EXAMPLE))
        return load

    first, _ = store.open("first", opener("first"))
    for k in range(10):  # ten other visitors, other sources
        store.open(f"other-{k}", opener(f"other-{k}"))
    assert store.loaded_bytes() <= int(rollout_bytes(one) * 1.5)
    r = store.get(first)  # the first page scrolls: its rollout comes back by itself
    assert r is not None and r.chunk(0, "new", 0).ids
    assert loads.count("first") == 2
    assert store.get("never-issued") is None


def test_an_overlong_source_is_refused_before_any_lookup():
    tab = ViewTab(Service("scripted-smollm2", public=True))
    value, loaded = tab.service.values.source_value("x" * 100_000)
    assert any("too long to be a source" in p for p in opened(value)["problems"]["items"]) and loaded == ""
    assert "x" * 200 not in value


@pytest.mark.parametrize("req", [None, "key", [1, 2], {"key": 5}, {"key": "k", "turn": "x" * 999}, 3.5])
def test_component_server_answers_bad_requests_with_a_message(req):
    tab = ViewTab(Service("scripted-smollm2", public=False))
    assert "error" in tab.chunk(req)
    assert tab.training(req)["rows"] == []


def test_opened_value_ships_the_first_chunk_at_the_story():
    tab = ViewTab(Service("scripted-smollm2", public=False))
    o = opened(tab.service.values.source_value("scripted-smollm2")[0])
    t0 = o["outline"]["turns"][0]
    first = o["first_chunk"]
    assert first["start"] <= t0["prompt_tokens"] < first["start"] + len(first["ids"])
    assert o["initial"] == {"turn": 0, "mode": "mask", "scope": "new", "found": None}


def test_upload_problems_name_the_upload_not_a_server_path(tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLE, bad)
    edit_json(bad / "turns.json", lambda d: d["turns"][1].update(mask=d["turns"][1]["mask"][:-3]))
    tab = ViewTab(Service("scripted-smollm2", public=True))
    value, _, _ = tab.service.values.open_upload([str(zip_folder(bad, tmp_path / "mine.zip"))])
    said = opened(value)["problems"]
    text = said["source"] + " ".join(said["items"])
    assert "mine.zip" in text and "turn 1" in text and "/tmp" not in text and "rollout-upload-" not in text


def test_no_agent_turn_is_a_message_not_a_crash(tmp_path):
    dest = artifact_without_turns(tmp_path / "empty")
    tab = ViewTab(Service("scripted-smollm2", public=False))
    o = opened(tab.service.values.source_value(str(dest))[0])
    assert o["outline"]["turns"] == [] and "no agent turn" in o["outline"]["notice"] and o["first_chunk"] is None
    rows = tab.training({"key": o["key"]})
    assert rows["rows"] == [] and rows["trl"] == "TRL 1.16.0" and not rows["error"] and not rows["rows_error"]  # drops it


def test_lists_and_texts_a_trace_controls_are_bounded():
    huge = "*a* _b_ `c` [d](e) " * 50_000
    assert len(markdown(huge)) < 3 * MAX_CHARS  # shown as folded text, not rendered
    assert "more characters are in the artifact" in pre("x" * (MAX_CHARS + 10))
    blocks, text = parse_markdown(huge)  # the page's record: folded text, not parsed
    assert blocks == [] and text is not None and text.chars == len(huge) and len(encode(text)) < 3 * MAX_CHARS
    assert folded("x" * (MAX_CHARS + 10)).unsent == 10
    a = open_artifact("scripted-smollm2")
    names = {f"tool{i}": 1 for i in range(5000)}
    s = msgspec.structs.replace(a.summary, tool_calls_by_name=names)
    a.summary = s
    r = Rollout.load(a)
    reward = panels.reward(a, r.report)
    assert len(reward.tools) == panels.MAX_LIST and reward.tool_names == 5000 and len(encode(reward)) < 60_000


def test_an_oversized_summary_is_refused_by_its_size(example_copy):
    from rollout_trace.artifact import ArtifactError, load_artifact
    from rollout_trace.artifact.read import MAX_SMALL_FILE_BYTES

    with (example_copy / "summary.json").open("a") as f:
        f.write(" " * (MAX_SMALL_FILE_BYTES["summary.json"] + 1))
    with pytest.raises(ArtifactError, match="summary.json: too large"):
        load_artifact(example_copy)


def test_downloads_live_in_one_folder_that_prunes_old_files(monkeypatch):
    import os
    import time

    from viewer.ui import downloads

    first = downloads.new_download_dir()
    (first / "a.html").write_text("x")
    old = time.time() - downloads.MAX_AGE_S - 10
    os.utime(first, (old, old))
    second = downloads.new_download_dir()
    assert second.parent == first.parent and not first.exists() and second.is_dir()


def test_an_upload_is_named_by_its_digest_and_a_stale_link_says_so(tmp_path):
    """An upload's source is `upload:<digest>`, which reopens it while the server holds it; a link to
    one it does not hold says so, and does not stop the same file being uploaded later."""
    tab = ViewTab(Service("scripted-smollm2", public=True))
    gone, _ = tab.service.values.source_value("upload:" + "0" * 32)
    assert "no longer loaded on this server: upload the file again" in gone
    value, _, src = tab.service.values.open_upload([str(zip_folder(EXAMPLE, tmp_path / "mine.zip"))])
    assert src.startswith("upload:") and json.loads(value)["src"] == src
    again, shown = tab.service.values.source_value(src)
    assert shown == src and json.loads(again)["key"] == json.loads(value)["key"]
    stale = "upload:" + "0" * 32
    tab.service.values.source_value(stale)
    assert json.loads(tab.service.values.source_value(stale)[0])["problems"]["items"]  # still a message, never a crash


def test_a_public_capture_is_named_so_a_reload_reopens_it(example_copy):
    """A public visitor cannot name the capture's server folder: the capture is named as an upload is, so the page's
    URL carries a src that reopens the same rollout, and the source box shows that name."""
    import json
    from types import SimpleNamespace

    from rollout_trace.artifact import open_artifact
    from viewer.ui.capture_gate import Gate
    from viewer.ui.capture_tab import CaptureTab
    from viewer.ui.service import Service
    from viewer.ui.view_tab import ViewTab

    tab = ViewTab(Service("scripted-smollm2", public=True))
    key, src = tab.service.values.keep_capture(open_artifact(example_copy))
    assert src is not None and src.startswith("upload:") and str(example_copy) not in src
    value, shown = tab.service.values.source_value(src)
    opened = json.loads(value)
    assert "problems" not in opened and opened["key"] == key and opened["src"] == src and shown == src
    cap = CaptureTab(tab.service, enabled=True, public=True, gate=Gate())
    cap.parts = SimpleNamespace(loaded="loaded", src="source")  # the components' stand-ins (made once rendered)
    assert cap.open_capture(example_copy, following=False)["source"]["value"] == src
    private = ViewTab(Service("scripted-smollm2", public=False))
    assert private.service.values.keep_capture(open_artifact(example_copy))[1] == str(example_copy)
