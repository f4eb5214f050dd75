"""What the app keeps between requests and leaves when it stops.

#5: an upload's page keeps working after Gradio's sweep deleted the uploaded file and other rollouts
evicted it from the store (the store holds the upload's bytes within its budget), and when even those
had to go, the page is told to upload again instead of a 500. #6: SIGTERM ends the app as an exit, so
its downloads folder, its Gradio cache, a capture's sandbox and a half-done unpack are all removed.
#7: Gradio's cache folder is the app's own and is swept by age and size, partial uploads included.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from conftest import EXAMPLE, ROOT, zip_folder
from processes import free_port
from rollout_trace.artifact import open_artifact
from viewer.rollout import Rollout
from viewer.ui.cache_folder import MAX_AGE_S, sweep
from viewer.ui.service import Service
from viewer.ui.store import RolloutStore, rollout_bytes
from viewer.ui.view_tab import ViewTab

# -- #5: an open page never loses its rollout ------------------------------------------------------


def upload_then_sweep(tmp_path: Path, budget_rollouts: float) -> tuple[ViewTab, str, RolloutStore]:
    """Visitor A uploads; Gradio's sweep deletes the uploaded file; other visitors' rollouts evict A."""
    one = rollout_bytes(Rollout.load(open_artifact(EXAMPLE)))
    store = RolloutStore(budget_bytes=int(one * budget_rollouts))
    tab = ViewTab(Service("scripted-smollm2", public=True, store=store))
    (tmp_path / "gradio-cache").mkdir()
    upload = zip_folder(EXAMPLE, tmp_path / "gradio-cache" / "A.zip")
    key = json.loads(tab.service.values.open_upload([str(upload)])[0])["key"]
    upload.unlink()  # Gradio's delete_cache: the file is gone from the server
    for k in range(4):
        store.open(f"other-{k}", lambda: Rollout.load(open_artifact(EXAMPLE)))
    assert store._entries.peek(key).rollout is None  # A was evicted
    assert store.loaded_bytes() <= int(one * budget_rollouts)
    return tab, key, store


def test_an_upload_reloads_after_the_sweep_and_an_eviction(tmp_path):
    tab, key, store = upload_then_sweep(tmp_path, budget_rollouts=2.5)
    loads = store.loads
    got = tab.chunk({"key": key, "turn": 0, "scope": "full", "index": 0})
    assert "error" not in got and len(got["ids"]) > 100  # reloaded from the bytes the store held
    assert store.loads == loads + 1


def test_an_upload_dropped_by_the_budget_says_upload_again(tmp_path):
    tab, key, _ = upload_then_sweep(tmp_path, budget_rollouts=1.05)
    got = tab.chunk({"key": key, "turn": 0, "scope": "full", "index": 0})
    assert got == {"error": "A.zip: this upload is no longer kept on the server (many other rollouts were opened "
                            "since): upload it again"}
    assert "upload it again" in tab.training({"key": key})["unavailable"]
    assert "upload it again" in tab.trainer({"key": key, "turn": 0})["error"]
    # uploading it again brings it back under the same key
    (tmp_path / "later").mkdir()
    again = zip_folder(EXAMPLE, tmp_path / "later" / "A.zip")
    assert json.loads(tab.service.values.open_upload([str(again)])[0])["key"] == key
    assert "error" not in tab.chunk({"key": key, "turn": 0, "scope": "full", "index": 0})


# -- #7: Gradio's cache folder is swept by age and size ---------------------------------------------


def aged(path: Path, size: int, age_s: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def test_sweep_by_age_then_by_size(tmp_path):
    now = time.time()
    partial = aged(tmp_path / "tmpabc123", 1000, MAX_AGE_S + 60)  # an upload a client abandoned
    old = aged(tmp_path / "sha1" / "old.zip", 1000, MAX_AGE_S + 10)
    fresh = [aged(tmp_path / f"sha{i}" / "new.zip", 1000, 60 * (5 - i)) for i in range(2, 5)]
    removed = sweep(tmp_path, max_bytes=10_000, now=now)
    assert set(removed) == {partial, old} and all(f.exists() for f in fresh)
    assert not (tmp_path / "sha1").exists() or (now - (tmp_path / "sha1").lstat().st_mtime) <= MAX_AGE_S
    removed = sweep(tmp_path, max_bytes=1500, now=now)  # over the bound: the least recently written go first
    assert removed == fresh[:2] and fresh[2].exists()


# -- #6 and #7 on a running app: SIGTERM leaves nothing of ours, partial uploads are swept -----------




def abort_an_upload(port: int, sent: int = 3_000_000) -> None:
    """Start a 100 MB upload, send 3 MB of it, hang up."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        head = (b'--B\r\nContent-Disposition: form-data; name="files"; filename="big.zip"\r\n'
                b"Content-Type: application/zip\r\n\r\n")
        s.sendall(b"POST /gradio_api/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
                  b"Content-Length: 100000000\r\n\r\n" + head + b"\0" * sent)
        time.sleep(1.0)


@pytest.fixture
def running_app(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmp), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONUNBUFFERED": "1"}
    env.pop("GRADIO_TEMP_DIR", None)
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "app_child.py"), str(port)], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("READY "), line + proc.stdout.read(2000)
        cache = Path(line.split(" ", 1)[1].strip())
        deadline = time.monotonic() + 120
        while True:
            try:
                if requests.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "the app did not answer"
            time.sleep(0.5)
        yield proc, port, tmp, cache
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def ours(tmp: Path) -> list[str]:
    """What is left in the app's temporary folder, apart from folders that are not ours: torch's compile
    cache (TRL imports torch) and the empty `gradio/vibe_edit_history` Gradio makes at every launch."""
    left = []
    for p in sorted(tmp.rglob("*")):
        rel = p.relative_to(tmp).as_posix()
        if rel.startswith("torchinductor") or (p.is_dir() and rel in ("gradio", "gradio/vibe_edit_history")):
            continue
        left.append(rel)
    return left


def test_a_partial_upload_is_swept_and_sigterm_leaves_nothing_of_ours_on_disk(running_app):
    """One app process (its start is most of this test's time): a partial upload is kept while fresh and swept
    once old; then, with another partial upload on disk, SIGTERM leaves nothing of ours."""
    proc, port, tmp, cache = running_app
    r = requests.post(f"http://127.0.0.1:{port}/gradio_api/upload", files={"files": ("A.zip", b"PK not really")})
    uploaded = Path(r.json()[0])
    assert r.status_code == 200 and uploaded.is_relative_to(cache)  # uploads land in the app's own folder
    abort_an_upload(port)
    [partial] = [p for p in cache.iterdir() if p.name.startswith("tmp")]
    assert partial.stat().st_size >= 1_000_000
    assert sweep(cache) == []  # fresh: kept (it may still be arriving)
    assert sorted(sweep(cache, now=time.time() + MAX_AGE_S + 1)) == sorted([partial, uploaded])
    abort_an_upload(port)
    names = {p.name.split("-")[0] + "-" + p.name.split("-")[1] for p in tmp.iterdir() if p.name.startswith("rollout-")}
    assert names == {"rollout-viewer", "rollout-sandbox", "rollout-upload"}, names
    assert any(p.name.startswith("tmp") for p in cache.iterdir())  # the aborted upload's partial file
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert ours(tmp) == []
    log = proc.stdout.read()
    assert "client hung up during POST /gradio_api/upload" in log and "Traceback" not in log, log[-3000:]
