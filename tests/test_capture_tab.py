"""The Capture tab's handlers called directly (no browser): form checks that name each field by its
label, the Hub detected offline at once, the public policy (no server path, no local backend) and the
owner's gate; plus the upload-then-import exploit through the real HTTP API of a public app."""

from __future__ import annotations

import re

import gradio as gr
import pytest
from test_public_capture import write_payload  # the exploit's payload, one definition

from capture import TASK_FIELDS, CaptureConfig, CaptureError, capture, hub, task_for
from capture.run import _load_tokenizer
from viewer.settings import SECRET_ENV, USERS_ENV
from viewer.ui.capture_gate import Gate
from viewer.ui.capture_tab import LABELS, CaptureTab

SECRET = "owner-pass-4f1c"


def make_tab(public: bool = False, gate: Gate | None = None, enabled: bool = True) -> CaptureTab:
    tab = CaptureTab(None, enabled=enabled, public=public, gate=gate or Gate())
    with gr.Blocks():
        tab.render()
    return tab


def texts(html: str) -> list[str]:
    """The list items of an error box, as plain text."""
    return [re.sub(r"<[^>]+>", "", m).replace("&#x27;", "'") for m in re.findall(r"<li>(.*?)</li>", html)]


@pytest.fixture
def offline_hub(monkeypatch):
    """A Hub endpoint nothing listens on: the real probe runs and finds it unreachable, network or not.

    Yields the list of connections tried to it by the caller's thread (what the visitor waits on; the
    Hub library's telemetry thread is not): "at once" means the probe's one try and no library's retries
    (datasets and transformers retry an unreachable Hub for 20-50 s), counted, not timed."""
    import socket
    import threading

    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    tries: list[object] = []
    real = socket.socket.connect
    caller = threading.get_ident()

    def connect(sock, address):
        if isinstance(address, tuple) and address[1:2] == (9,) and threading.get_ident() == caller:
            tries.append(address)
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    hub.forget()
    yield tries
    hub.forget()


# -- form checks ------------------------------------------------------------------------------------

def test_labels_are_the_fields_labels():
    tab = make_tab()
    for name, comp in tab.fields.items():
        assert comp.label.removesuffix(" *").removesuffix(" (optional)") == LABELS[name], name
    assert tab.fields["model"].label == "Model *" and tab.fields["endpoint"].label == "Endpoint URL *"
    assert tab.fields["dataset"].label == "Dataset *" and tab.fields["seed"].label == "Dataset seed"


@pytest.mark.parametrize("handler,form,expected", [
    ("check", dict(backend="local"), ["Endpoint URL is required with the local backend"]),
    ("check", dict(backend="hf-sandbox", model=" "), ["Model is required: the model name the endpoint serves",
                                                      "Endpoint URL is required with the hf-sandbox backend"]),
    ("check", dict(backend="local", endpoint="ftp://x"),
     ["Endpoint URL should be an http:// or https:// URL, such as http://127.0.0.1:8000/v1"]),
    ("preview", dict(n_prompts="many"), ["Tasks (n_prompts) must be a whole number, not 'many'"]),
    ("preview", dict(n_prompts=2, task_index=5), ["Task index must be from 0 to 1 (one less than the number of "
                                                  "tasks), not 5"]),
    ("preview", dict(dataset=""), ["Dataset is required: a Hub dataset id or a task file"]),
    ("preview", dict(seed=1.5), ["Dataset seed must be a whole number, not '1.5'"]),
    ("run", dict(backend="hf-sandbox", endpoint="http://h/v1", sandbox_image="", timeout_s=0, rollout_seed="x"),
     ["Rollout seed must be a whole number, not 'x'", "Timeout (s) must be more than 0 seconds, not 0.0",
      "Sandbox image is required with the hf-sandbox backend"]),
])
def test_form_problems_name_the_fields_as_labelled(handler, form, expected, tmp_path, monkeypatch):
    monkeypatch.setenv("ROLLOUT_VIEWER_CAPTURE_DIR", str(tmp_path / "captures"))
    tab = make_tab()
    answer = getattr(tab, handler)(tab.values(**form))
    html = list(answer)[-1][tab.status] if handler == "run" else answer
    assert "Check the form" in html and texts(html) == expected
    assert "--" not in html  # never a command-line flag
    assert not tab.slot.lock.locked() and not (tmp_path / "captures").exists()  # nothing started


def test_preview_checks_only_the_task_fields(task_file):
    tab = make_tab()
    html = tab.preview(tab.values(backend="local", endpoint="", model="", dataset=str(task_file), n_prompts=1))
    assert "distinct values" in html and "3 held-out tests" in html


def test_task_errors_name_the_field(task_file, tmp_path):
    tab = make_tab()
    assert "Task index 0 is outside" not in tab.preview(tab.values(dataset=str(task_file), n_prompts=1))
    html = tab.preview(tab.values(dataset=str(tmp_path / "nope.jsonl"), n_prompts=1))
    assert "Dataset names" in html and "which is not a file" in html
    html = tab.preview(tab.values(example=str(tmp_path / "nope.py"), n_prompts=1))
    assert "Training script" in html and "is not a file" in html


def test_cli_names_flags():
    with pytest.raises(CaptureError, match="^--endpoint is required with the local backend$"):
        capture(CaptureConfig(backend="local", out_dir="/nonexistent/never-written"))


# -- offline: said at once --------------------------------------------------------------------------

def test_preview_offline_fails_at_once(offline_hub):
    tab = make_tab()
    html = tab.preview(tab.values())  # the default dataset is a Hub id
    assert len(offline_hub) == 1, offline_hub  # the probe, and no retry
    assert "Dataset agentica-org/DeepCoder-Preview-Dataset is on the Hugging Face Hub, which this machine cannot " \
           "reach now" in html and "HF_HUB_OFFLINE=1" in html


def test_tokenizer_offline_is_a_notice_at_once(offline_hub):
    said = []
    tok = _load_tokenizer(CaptureConfig(model="nobody-cached/no-such-model"), lambda line, **_: said.append(line))
    assert tok is None and len(offline_hub) == 1, offline_hub  # the probe, and no retry
    assert "the Hub is out of reach" in said[0]


def test_offline_env_is_named(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    hub.forget()
    try:
        assert hub.unreachable() == "HF_HUB_OFFLINE is set"
    finally:
        hub.forget()


def test_hf_sandbox_offline_fails_before_the_endpoint_probe(offline_hub, tmp_path, task_file):
    cfg = CaptureConfig(backend="hf-sandbox", sandbox_vllm_url="http://127.0.0.1:9/v1", dataset=str(task_file),
                        n_prompts=1, out_dir=str(tmp_path / "o"))
    with pytest.raises(CaptureError, match="^--backend hf-sandbox needs the Hugging Face Hub"):
        capture(cfg)
    assert len(offline_hub) == 1, offline_hub  # the Hub probe only: the endpoint (port 9 too) is never tried


# -- public: no server path, no local backend -------------------------------------------------------

def public_cfg(**kw) -> CaptureConfig:
    return CaptureConfig(**({"backend": "hf-sandbox", "sandbox_vllm_url": "https://vllm.example.org/v1",
                             "public": True} | kw))


def test_library_never_imports_a_visitors_script(tmp_path):
    """The upload-then-import route at the library level: a public config with `example` set."""
    script, marker = write_payload(tmp_path)
    cfg = public_cfg(example=str(script), out_dir=str(tmp_path / "out"))
    for call in (task_for, capture):
        with pytest.raises(CaptureError) as e:
            call(cfg)
        assert str(e.value) == ("Training script: a public app does not take a training script: it would run as "
                                "code on this server")
        assert not marker.exists()


def test_public_form_has_no_path_field_and_no_local_backend():
    tab = make_tab(public=True, gate=Gate(SECRET))
    assert {"example", "backend"}.isdisjoint(tab.fields)
    assert isinstance(tab.fields["dataset"], gr.Dropdown)
    cfg, _ = tab.config(tab.values(secret=SECRET))
    assert cfg.backend == "hf-sandbox" and cfg.public and cfg.example is None


def test_public_dataset_answer_does_not_depend_on_the_server_disk(tmp_path, task_file):
    tab = make_tab(public=True, gate=Gate(SECRET))
    answers = {p: tab.preview(tab.values(secret=SECRET, dataset=p))
               for p in (str(task_file), str(tmp_path / "missing.jsonl"), "/etc", "/no/such/dir",
                         "examples/scripted-smollm2", "examples/no-such-example")}  # org/name-shaped, here or not
    assert len(set(answers.values())) == 1, answers
    [html] = set(answers.values())
    assert "Dataset: must be one of the Hub datasets this server offers" in html
    assert all(p not in html for p in answers)


# -- the owner's gate -------------------------------------------------------------------------------

def profile(user: str) -> gr.OAuthProfile:
    return gr.OAuthProfile({"name": user, "preferred_username": user, "profile": "", "picture": ""})


def test_secret_gate(monkeypatch):
    tab = make_tab(public=True, gate=Gate(SECRET))
    for typed in ("", "wrong", SECRET[:-1], None):
        html = tab.preview(tab.values(secret=typed))
        assert "Not allowed" in html and "capture password" in html and SECRET not in html
        assert "Not allowed" in tab.cancel(tab.values(secret=typed))
        assert "Not allowed" in tab.push(tab.values(secret=typed) | {tab.repo: "a/b", tab.token: ""})
        assert "Not allowed" in list(tab.run(tab.values(secret=typed)))[-1][tab.status]
    assert "Not allowed" not in tab.preview(tab.values(secret=SECRET))
    assert "no capture is running" in tab.cancel(tab.values(secret=SECRET))


def test_users_gate_and_env(monkeypatch):
    monkeypatch.setenv(USERS_ENV, "Alice, bob")
    monkeypatch.delenv(SECRET_ENV, raising=False)
    gate = Gate.from_env()
    assert gate.users == {"alice", "bob"} and not gate.secret
    tab = make_tab(public=True, gate=gate)
    assert tab.secret is None  # no password field when the owner set none
    assert "sign in with Hugging Face" in tab.preview(tab.values())
    assert "Not allowed" in tab.preview(tab.values(), profile("mallory"))
    assert "Not allowed" not in tab.preview(tab.values(), profile("alice"))


def test_public_capture_without_a_gate_refuses_everyone():
    tab = make_tab(public=True, gate=Gate())
    html = tab.preview(tab.values())
    assert "Not allowed" in html and SECRET_ENV in html and USERS_ENV in html
    assert "Not allowed" in tab.preview(tab.values(), profile("alice"))


def test_view_tab_comes_first_without_capture(monkeypatch):
    from viewer.ui.app import build_app

    monkeypatch.delenv("ROLLOUT_VIEWER_ENABLE_CAPTURE", raising=False)

    def tabs(demo):
        return [b.label for b in demo.blocks.values() if isinstance(b, gr.Tab)]

    public = build_app("scripted-smollm2", public=True)
    assert tabs(public) == ["View", "Capture"]
    assert tabs(build_app("scripted-smollm2", public=False)) == ["Capture", "View"]
    # and either way the queue, with nothing to do, polls every 20 ms, not every millisecond (gradio_pins.py)
    assert (public._queue.sleep_when_free, public._queue.progress_update_sleep_when_free) == (0.02, 0.1)


def test_every_component_of_the_capture_tab_starts_hidden():
    """The page opens on View and fetches the Capture form's code when the tab is first opened
    (viewer/ui/deferred_tab.py): no component under the tab is shown by the page load, a gr.HTML (which Gradio
    makes a block that can hold others) included."""
    from viewer.ui.app import build_app

    demo = build_app("scripted-smollm2", public=False)
    tab = next(b for b in demo.blocks.values() if isinstance(b, gr.Tab) and b.label == "Capture")

    def leaves(block):
        for child in getattr(block, "children", []):
            if isinstance(child, gr.components.Component):
                yield child
            else:
                yield from leaves(child)

    shown = [(type(c).__name__, c.elem_id) for c in leaves(tab)
             if c.visible is True and not isinstance(c, (gr.State, gr.Timer))]
    assert shown == []
    assert any(isinstance(c, gr.HTML) for c in leaves(tab))  # the case the check is for is there


def test_a_deferred_tab_shows_its_components_on_its_first_opening_only():
    """A later opening answers with no change, so what the tab's own events hid since stays hidden. Checked here
    and not in the browser: every component the Capture tab's events hide starts hidden (or sits in a row they
    hide), so no page could see an opening show one again."""
    from viewer.ui.deferred_tab import defer_until_opened

    with gr.Blocks() as demo, gr.Tabs():
        with gr.Tab("A") as tab:
            shown = gr.Markdown("shown")
            gr.Markdown("hidden", visible=False)
        defer_until_opened(tab)
    [opening] = [f for f in demo.fns.values() if f.fn is not None and f.fn.__name__ == "first_opening"]
    assert shown.visible is False and [o._id for o in opening.outputs][0] == shown._id  # only what was shown
    first, again = opening.fn(False), opening.fn(True)
    assert first == [gr.update(visible=True), True]
    assert again == [gr.skip(), True] and again[0] != first[0]


def test_an_endpoint_that_lists_its_models_is_reachable_even_without_the_model_named(scripted_llm):
    """It answered with its model list: the preflight says reachable, names the model it lacks and those it
    serves (openenv's probe stops there and calls it unusable, not unanswered); the served model is ready."""
    llm = scripted_llm()
    tab = make_tab()
    html = tab.check(tab.values(backend="local", endpoint=llm.url, model="not-served/model"))
    items = texts(html)
    assert "reachable: yes" in items and "serves not-served/model: no" in items, html
    assert "does not serve 'not-served/model': it serves 'scripted-model'" in html.replace("&#x27;", "'")
    ok = tab.check(tab.values(backend="local", endpoint=llm.url, model="scripted-model"))
    assert "reachable: yes" in texts(ok) and not any(i.startswith("serves ") for i in texts(ok)) and "Ready" in ok


def test_a_captures_reward_reads_as_the_rest_of_the_app_writes_it():
    """2 of 3 tests passed is a reward of 0.6666666666666666: the capture's status, log and group line say +0.667."""
    import dataclasses

    import msgspec

    from capture.group import _summary_line
    from rollout_trace.artifact import load_artifact
    from rollout_trace.artifact.group import GroupFile, GroupRollout
    from rollout_trace.artifact.sources import EXAMPLES_DIR
    from viewer.ui.capture_tab import written

    a = load_artifact(EXAMPLES_DIR / "scripted-smollm2")
    a = dataclasses.replace(a, summary=msgspec.structs.replace(a.summary, reward_after_penalties=2 / 3))
    assert written(a).note.startswith("reward +0.667; ")
    g = GroupFile(task_id="t", k=2, rollouts=[GroupRollout(index=0, folder="r0", status="ok", reward=2 / 3, advantage=1 / 3),
                                              GroupRollout(index=1, folder=None, status="failed", reward=None, advantage=0.0)])
    assert _summary_line(g) == "group: 0:ok/+0.667/+0.333 1:failed/unscorable/+0.000 (rollout:status/reward/advantage)"


def test_field_checks_say_each_problem_beside_its_field():
    """The validator Gradio runs before a handler: one verdict per input in Gradio's input order, each
    problem on the component that holds its setting, and only the fields that handler reads."""
    tab = make_tab()
    order = sorted(tab.form, key=lambda c: c._id)
    verdicts = tab.field_checks(tab.values(backend="local", endpoint="", n_prompts=1, task_index=5), TASK_FIELDS)
    said = {c: v["message"] for c, v in zip(order, verdicts, strict=True) if not v["is_valid"]}
    assert said == {tab.fields["task_index"]: "Task index must be from 0 to 0 (one less than the number of tasks), "
                                              "not 5"}
    run = tab.field_checks(tab.values(backend="local", endpoint="", group_size=0), None)
    said = {c: v["message"] for c, v in zip(order, run, strict=True) if not v["is_valid"]}
    assert said == {tab.fields["endpoint"]: "Endpoint URL is required with the local backend",
                    tab.group_size: "Group size must be at least 1, not 0"}
    assert all(v["is_valid"] for v in tab.field_checks(tab.values(), TASK_FIELDS))


def test_push_sends_this_sessions_capture_never_another_visitors(monkeypatch, tmp_path):
    """Two sessions of one public app, as Gradio keeps them: the first captures (the run handler stands in for a
    capture that wrote a folder), the second presses Push and is told to capture first; the first pushes its own."""
    import asyncio

    from gradio.state_holder import SessionState

    from viewer.ui import capture_tab as module
    from viewer.ui.app import build_app

    monkeypatch.setenv(SECRET_ENV, SECRET)
    monkeypatch.setenv("ROLLOUT_VIEWER_ENABLE_CAPTURE", "1")
    folder = tmp_path / "capture-of-visitor-one"
    folder.mkdir()
    pushed: list = []

    def finished_capture(self, cfg, k=None, parallel=None):
        yield {self.status: "done", self.captured: str(folder), self.push_btn: gr.update(interactive=True)}

    monkeypatch.setattr(module.CaptureTab, "_vet", lambda self, *a, **kw: (object(), ""))
    monkeypatch.setattr(module.CaptureTab, "_run", finished_capture)
    monkeypatch.setattr(module, "push", lambda root, repo, token, log: pushed.append(root) or f"hub/{repo}")
    demo = build_app(default_source="scripted-smollm2", public=True, capture_enabled=True)
    run_fn, push_fn = (next(f for f in demo.fns.values() if f.name == name) for name in ("run", "push"))

    def inputs(fn, **by_id) -> list:
        values = []
        for c in fn.inputs:
            v = by_id.get(getattr(c, "elem_id", None), getattr(c, "value", None))
            values.append(c.postprocess(v) if isinstance(c, gr.Textbox) and not isinstance(c, gr.State) else v)
        return values

    async def press(fn, state: SessionState, **by_id) -> list:
        return (await demo.process_api(block_fn=fn, inputs=inputs(fn, **by_id), state=state))["data"]

    async def two_visitors() -> tuple[list, list]:
        one, two = SessionState(demo), SessionState(demo)
        await press(run_fn, one, **{"cap-secret": SECRET})
        other = await press(push_fn, two, **{"cap-secret": SECRET, "cap-repo": "org/mine"})
        own = await press(push_fn, one, **{"cap-secret": SECRET, "cap-repo": "org/mine"})
        return other, own

    other, own = asyncio.run(two_visitors())
    assert "Capture a rollout first" in str(other)
    assert "pushed to hub/org/mine" in str(own) and pushed == [folder]
