"""The Space build: `requirements.txt` ALONE, installed into a fresh venv of the Python the
README front matter pins, runs `app.py` in Space mode (SPACE_ID set): the View works, Capture is off,
and no server path opens.

The wheels come from a wheelhouse that `pip download -r requirements.txt` fills once per requirements.txt
(kept under the project's cache folder, keyed by the file's hash and the Python version): every run then
installs those wheels into a fresh venv with `--no-index` (by uv, from the wheels pip picked), so it still proves
that requirements.txt alone resolves and runs, without downloading again (pip's own cache keeps nothing on this
machine). Slow: the download takes minutes the first time; the install about 20 s after."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from test_capture_browser import assert_capture_off

import local_model
from conftest import ROOT, SHOTS
from processes import free_port

pytestmark = pytest.mark.slow
INSTALL_TIMEOUT = 1800  # seconds for venv + pip install: about 10 min here on 2 shared cores, once 15+ (cold cache)
START_TIMEOUT = 600  # seconds for app.py to answer HTTP: a bound for a stuck app (its first start compiles what it imports)
TIMEOUT = 60_000  # ms, browser waits


def space_python_version() -> str:
    """`python_version` from README.md's front matter: the Python the Space builds with."""
    front = ROOT.joinpath("README.md").read_text().split("---")[1]
    m = re.search(r'^python_version:\s*"?([0-9.]+)"?\s*$', front, re.M)
    assert m, "README.md front matter names no python_version (Spaces would default to 3.10)"
    return m.group(1)




def wheelhouse(vpy: Path, version: str, env: dict[str, str]) -> Path:
    """The wheels `pip download -r requirements.txt` picks for this Python, downloaded once per requirements.txt
    (into a temporary folder renamed into place, so an interrupted download is never used)."""
    key = hashlib.sha256(ROOT.joinpath("requirements.txt").read_bytes()).hexdigest()[:16]
    house = local_model.cache_root() / "space-wheels" / f"py{version}-{key}"
    if house.is_dir():
        return house
    partial = Path(f"{house}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    got = subprocess.run([str(vpy), "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d", str(partial),
                          "-r", str(ROOT / "requirements.txt")],
                         env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    assert got.returncode == 0, f"pip download -r requirements.txt failed:\n{got.stderr[-4000:]}"
    try:
        partial.rename(house)
    except OSError:  # another run finished first: its folder is as good
        shutil.rmtree(partial, ignore_errors=True)
    for old in house.parent.glob(f"py{version}-*"):  # an earlier requirements.txt's wheels (~400 MB each)
        if old != house and ".partial-" not in old.name:
            shutil.rmtree(old, ignore_errors=True)
    return house


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"app.py exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    pytest.fail(f"app.py did not answer within {timeout} s:\n{log.read_text()[-4000:]}")


def test_requirements_alone_run_the_app_in_space_mode(tmp_path, capsys, browser):
    version = space_python_version()
    assert version == "3.11", "we test with 3.11; numpy 2.4.6 needs >= 3.11"
    python = shutil.which(f"python{version}")
    if python is None:
        pytest.skip(f"python{version} (the README's python_version) is not installed on this machine")

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SPACE_BUILD_VENV")}
    # SPACE_BUILD_VENV: reuse a venv an earlier run built the same way (checks the app only, not the install)
    venv = Path(os.environ.get("SPACE_BUILD_VENV") or tmp_path / "space-venv")
    vpy = venv / "bin" / "python"
    t0 = time.monotonic()
    if not os.environ.get("SPACE_BUILD_VENV"):
        subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=120)
        house = wheelhouse(vpy, version, env)
        # pip chose the wheels (the download above is the Space's resolution); uv installs them, a third of pip's
        # time, without bytecode (written as the app imports what it needs) and without a cache of its own
        install = subprocess.run([str(Path(sys.executable).with_name("uv")), "pip", "install", "-q", "--python", str(vpy),
                                  "--no-index", "--find-links", str(house), "--no-cache", "-r", str(ROOT / "requirements.txt")],
                                 env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        assert install.returncode == 0, f"pip install -r requirements.txt failed:\n{install.stderr[-4000:]}"
    build_s = time.monotonic() - t0
    got = subprocess.run([str(vpy), "-c", "import sys; print(sys.version_info[:2])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert got == f"({version.replace('.', ', ')})"

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "app.log"
    app_env = {k: v for k, v in env.items() if not k.startswith(("ROLLOUT_VIEWER_", "GRADIO_"))}
    app_env.update(SPACE_ID="test/space", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   GRADIO_ANALYTICS_ENABLED="False", PYTHONUNBUFFERED="1")
    t1 = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen([str(vpy), "app.py", "--host", "127.0.0.1", "--port", str(port)], cwd=ROOT,
                                env=app_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_http(url + "/", proc, log, START_TIMEOUT)
        start_s = time.monotonic() - t1
        # the suite's one Playwright browser (a second sync_playwright inside its event loop is refused)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            # the View tab: the default example's tokens, generated and context
            page.goto(url + "/")
            page.wait_for_selector(".t[data-mask]", timeout=TIMEOUT)
            assert page.locator(".t[data-mask='1']").count() > 0
            assert page.locator("[data-testid=nav-turn]").count() > 0
            # the Capture tab: off on a Space, no run button
            assert_capture_off(page, TIMEOUT)
            page.screenshot(path=str(SHOTS / "space_build_capture_off.png"), full_page=True)
            # a server path: refused, nothing of it shown
            page.goto(url + "/?src=/etc")
            err = page.locator(".tv-error")
            err.wait_for(timeout=TIMEOUT)
            assert "neither a bundled example nor a Hub dataset id" in err.inner_text()
            body = page.locator("body").inner_text()
            for leak in ("root:x:0:0", "passwd", "hostname", "os-release"):
                assert leak not in body, leak
            assert page.locator(".t[data-mask]").count() == 0
            page.screenshot(path=str(SHOTS / "space_build_refuses_etc.png"), full_page=True)
            assert errors == []
        finally:
            page.close()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
    with capsys.disabled():
        print(f"\nspace build: venv + install -r requirements.txt {build_s:.0f} s; app.py answered in "
              f"{start_s:.0f} s (python {version}, {sys.platform})")
