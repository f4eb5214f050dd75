"""Exports (viewer/export.py): bounded by what a browser opens, streamed, written once, and carrying the trainer's
view."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import gradio as gr
import pytest

from conftest import EXAMPLE, ROOT
from rollout_trace.artifact import open_artifact
from viewer.export import MAX_TOKENS, ExportRefused, write_export
from viewer.rollout import CHUNK, Rollout

HUGE = 4_000_000  # prompt ids in one turn: a turns.json of about 50 MB, packed about 3 times as real ids are
BF16 = "smollm2-135m-instruct.bfloat16.cpu.t1"
F32 = "smollm2-135m-instruct.float32.cpu.t1"


def embedded(page: str) -> dict:
    """The JSON an export page embeds (its script element's text)."""
    m = re.search(r'<script type="application/json" id="tv-data">(.*?)</script>', page, re.S)
    assert m, "the page embeds its data"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def huge_zip(tmp_path_factory) -> Path:
    """The bundled example with one turn of 4M prompt ids, zipped. The ids are drawn from the example's own tokens
    (their frequencies, not one id repeated), so the zip packs as a real artifact's does: one id repeated packed
    about 1000 times, which every zip reader refuses as a bomb (rollout_trace/artifact/unpack.py MAX_EXPANSION)."""
    import numpy as np

    d = tmp_path_factory.mktemp("huge")
    turns = json.loads((EXAMPLE / "turns.json").read_text())
    t0 = turns["turns"][0]
    n_out = t0["n_output_ids"]
    real = np.concatenate([np.asarray(t[k], dtype=np.int64) for t in turns["turns"] for k in ("prompt_ids", "output_ids")
                           if isinstance(t.get(k), list)])
    drawn = np.random.default_rng(0).choice(real, HUGE)
    t0.update(n_prompt_ids=HUGE, prompt_ids="@IDS@", retokenized_prompt_ids="@IDS@", mask="@MASK@")
    ids = "[" + ",".join(map(str, drawn.tolist())) + "]"
    mask = "[" + ",".join(["0"] * HUGE + ["1"] * n_out) + "]"
    text = json.dumps(turns).replace('"@IDS@"', ids).replace('"@MASK@"', mask)
    z = d / "huge.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for f in EXAMPLE.rglob("*"):
            if f.is_file() and "rescore" not in f.parts and f.name != "turns.json":
                zf.write(f, Path("rollout") / f.relative_to(EXAMPLE))
        zf.writestr("rollout/turns.json", text)
        packed = zf.getinfo("rollout/turns.json").compress_size
    assert 2 < len(text) / packed < 20, len(text) / packed  # as real token ids pack
    return z


# TRL imported first (what every command that asks TRL what "trained" means pays once), its peak printed, then the
# command: the peak beyond TRL's is the command's own
PEAK = """import resource, sys
from rollout_trace.analysis.training import import_trl
import_trl()
print("trl_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
from viewer.cli import main
code = main(sys.argv[1:])
print("peak_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
sys.exit(code)
"""


def run_measured(*args: str) -> tuple[subprocess.CompletedProcess, int, int]:
    """`python -m viewer ARGS` in a fresh process: what it did, its peak resident memory in MB, and its peak after
    importing TRL, before the command ran."""
    r = subprocess.run([sys.executable, "-c", PEAK, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    peak, trl = re.search(r"peak_mb (\d+)", r.stdout), re.search(r"trl_mb (\d+)", r.stdout)
    assert peak and trl, r.stdout + r.stderr
    return r, int(peak.group(1)), int(trl.group(1))


def test_an_export_of_a_huge_turn_is_bounded_streamed_and_folded(huge_zip, tmp_path):
    """A zip holding a 4M-id turns.json: the export holds at most MAX_TOKENS tokens around each story,
    says so, and costs little more memory than reading the artifact (an export of every token of a 10M-id turn
    wrote 281 MB and peaked at 2.3 GB)."""
    _, read_peak, _ = run_measured("check", str(huge_zip))
    out = tmp_path / "out.html"
    r, peak, trl_peak = run_measured("export", str(huge_zip), "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "holds" in r.stdout and f"at most {MAX_TOKENS:,}" in r.stdout  # the CLI says the file is folded
    assert peak < read_peak + 250, (peak, read_peak)  # streamed: never the whole page in memory
    assert peak - trl_peak < 450, (peak, trl_peak)  # beyond TRL's import, the export of a 4M-id turn
    size = out.stat().st_size
    assert size < 25e6, size  # bounded by what a browser opens, not by the artifact
    page = out.read_text()
    d = embedded(page)
    held = sum(len(c["ids"]) for scope in d["chunks"].values() for turn in scope.values() for c in turn.values())
    assert held <= MAX_TOKENS and "This export holds" in d["note"]
    story = (HUGE) // CHUNK  # turn 0 opens on its first generated token: that chunk is in the file
    assert str(story) in d["chunks"]["new"]["0"]
    assert d["training"]["rows"] == [] and "not in this export" in d["training"]["omitted"]
    assert not list(tmp_path.glob(".out.html.*"))  # the temporary file was renamed into place


def test_the_whole_rollout_is_refused_when_its_turns_cannot_each_keep_a_chunk():
    r = Rollout.load(open_artifact(EXAMPLE))
    with pytest.raises(ExportRefused, match="export one turn instead"):
        write_export(r, io.StringIO(), max_tokens=100)
    buf = io.StringIO()
    got = write_export(r, buf, turn=1, max_tokens=600)  # one turn always opens, folded to its story
    assert got.note and got.tokens <= 600 + CHUNK and "holds" in embedded(buf.getvalue())["note"]


def test_an_export_carries_every_trainer_part_and_the_group_advantage():
    """The file opens in the mode and on the part on screen, and carries each part's numbers."""
    from viewer.export import TrainerChoice

    r = Rollout.load(open_artifact(EXAMPLE))
    buf = io.StringIO()
    write_export(r, buf, turn=1, mode="mismatch", trainer=TrainerChoice(BF16, eps=1, adv="group"), advantage=0.75)
    d = embedded(buf.getvalue())
    outline = d["opened"]["outline"]
    assert d["opened"]["initial"]["mode"] == "mismatch" and outline["advantage"] == 0.75
    assert outline["trainer"]["part"] == BF16 and outline["trainer"]["eps_choices"] == [[0.2, 0.28]]
    assert outline["trainer"]["advantages"] == ["group"]
    assert set(d["trainer"]["turns"]) == {BF16, F32} and set(d["trainer"]["summary"]) == {BF16, F32}
    one = d["trainer"]["turns"][BF16]["0"]  # keyed by the turn's place in the file: turn 1 is its only turn
    assert one["turn"] == 1 and one["eps"] == [0.2, 0.28] and one["advantage"] == 0.75
    assert len(one["log_ratio"]) == r.artifact.turns[1].n_output
    assert len(d["trainer"]["summary"][BF16]["turns"]) == 1  # the navigator's one entry


def test_the_app_answers_an_export_with_the_page_and_writes_nothing(tmp_path, monkeypatch):
    """A public visitor's export names no server path and costs the server no disk: the reply is the page."""
    from viewer.ui import downloads
    from viewer.ui.service import Service
    from viewer.ui.view_tab import ViewTab

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    with gr.Blocks():
        tab = ViewTab(Service("scripted-smollm2", public=True))
        tab.render()
    key = json.loads(tab.service.values.source_value("scripted-smollm2")[0])["key"]
    before = set(downloads._folder().rglob("*")) if downloads._root else set()
    files_before = set(Path(tab.view.GRADIO_CACHE).rglob("*"))
    got = tab.export({"key": key, "what": "turn", "turn": 1, "mode": "entropy",
                      "trainer": {"part": BF16, "eps": 0, "adv": "-1"}, "advantage": None})
    assert "error" not in got, got
    assert sorted(got) == ["html", "name", "note", "size"]
    for server_path in (str(tmp_path), tempfile.gettempdir(), str(ROOT)):  # no server path, in the page or beside it
        assert server_path not in json.dumps(got)
    assert set(Path(tab.view.GRADIO_CACHE).rglob("*")) == files_before
    assert (set(downloads._folder().rglob("*")) if downloads._root else set()) == before
    d = embedded(got["html"])
    assert d["opened"]["initial"]["mode"] == "entropy" and d["opened"]["outline"]["trainer"]["advantages"] == ["-1"]
    assert got["name"] == "rollout-305e0809-turn1.html" and got["size"].endswith("kB")
    # an adversarial request gets a message, never a page
    for bad in ({"key": "nope"}, "x", {"key": key, "what": "turn", "turn": 99}):
        assert "error" in tab.export(bad)
    assert tab.export({"key": key, "what": "rollout", "advantage": float("inf"), "trainer": {"adv": "group"}})["html"]
