"""`pip install .` puts one top-level name on a training script's path: rollout_trace, usable from another folder.

The recorder must not shadow a training environment's packages (`artifact`, `capture`, `viewer` stay in the
checkout), and what it imports must all be inside the wheel.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT


def test_the_wheel_holds_rollout_trace_only_and_imports_from_elsewhere(tmp_path: Path) -> None:
    # built from a copy of what the wheel is made of, so the build leaves nothing in the checkout and needs
    # nothing else from it
    src = tmp_path / "src"
    shutil.copytree(ROOT / "rollout_trace", src / "rollout_trace", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", src)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(wheels), str(src)], check=True, cwd=tmp_path, capture_output=True)
    (wheel,) = wheels.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"rollout_trace"}
    assert "rollout_trace/record/worker.py" in names and "rollout_trace/artifact/run.py" in names

    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    probe = ("import rollout_trace, rollout_trace.record, rollout_trace.artifact.run as r, importlib.util as u;"
             "print(rollout_trace.__file__);"
             "print(all(u.find_spec(m) is None for m in ('artifact', 'recipe', 'capture', 'viewer', 'rescore')))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(target)}
    work = tmp_path / "training-script"
    work.mkdir()
    out = subprocess.run([sys.executable, "-c", probe], cwd=work, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert Path(out[0]).is_relative_to(target), out
    assert out[1] == "True", "a checkout module leaked onto the path"
