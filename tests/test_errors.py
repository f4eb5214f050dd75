"""One base for every error the project raises on purpose (rollout_trace/artifact/errors.py), and each keeps
its standard base: `except RolloutTraceError` catches them all, `except ValueError` (or RuntimeError, ...)
goes on catching the ones it caught."""

from __future__ import annotations

import ast
import builtins

from test_layers import ROOT, _sources

from rollout_trace.artifact import RolloutTraceError

STANDARD = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}


def _bases() -> dict[str, tuple[str, list[str]]]:
    """class name -> (file, the names of its bases) for every class of ours, read with ast (importing them
    all would load TRL and torch)."""
    out: dict[str, tuple[str, list[str]]] = {}
    for path in _sources():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                names = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
                out[node.name] = (str(path.relative_to(ROOT)), names)
    return out


def _ancestors(name: str, classes: dict[str, tuple[str, list[str]]]) -> set[str]:
    seen: set[str] = set()
    todo = [name]
    while todo:
        for b in classes.get(todo.pop(), ("", []))[1]:
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def test_every_error_has_the_one_base_and_keeps_a_standard_one():
    classes = _bases()
    errors = {n for n in classes if n != "RolloutTraceError" and _ancestors(n, classes) & (STANDARD | {"RolloutTraceError"})}
    assert len(errors) >= 15, sorted(errors)  # the search finds them
    for n in sorted(errors):
        up = _ancestors(n, classes)
        assert "RolloutTraceError" in up, f"{classes[n][0]}: {n} is not a RolloutTraceError"
        if n != "ArtifactError":  # a plain Exception: what callers catch it as
            assert up & (STANDARD - {"Exception", "BaseException"}), f"{classes[n][0]}: {n} lost its standard base"
    assert RolloutTraceError.__bases__ == (Exception,)


def test_the_errors_are_what_they_were_too():
    """Imported for real (all but the recorder's, which loads TRL): the standard bases hold at run time."""
    from capture.agent import AgentError, Cancelled
    from capture.errors import CaptureError, RescoreFailed
    from capture.policy import PolicyError
    from capture.tasks import TaskError
    from rescore.model import RescoreError
    from rollout_trace.artifact import ArtifactError, OutDirExists
    from rollout_trace.artifact.arrays import ArrayError
    from rollout_trace.recipe.turns import TurnError
    from viewer.cli.rescore import UsageError
    from viewer.export import ExportRefused
    from viewer.trainer_records import BadRequest

    for c, std in [(TurnError, ValueError), (ArrayError, ValueError), (PolicyError, ValueError), (UsageError, ValueError),
                   (BadRequest, ValueError), (ExportRefused, ValueError), (OutDirExists, FileExistsError),
                   (CaptureError, RuntimeError), (RescoreFailed, CaptureError), (TaskError, CaptureError),
                   (AgentError, RuntimeError), (Cancelled, RuntimeError), (RescoreError, RuntimeError),
                   (ArtifactError, Exception)]:
        assert issubclass(c, std) and issubclass(c, RolloutTraceError), c
    e = OutDirExists("out")
    assert isinstance(e, OSError) and str(e) == "out"
