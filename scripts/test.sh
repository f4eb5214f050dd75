#!/usr/bin/env bash
# Set up everything the tests need (venv, pinned packages, Debian's chromium), then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
if ! [ -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TRL_EXPERIMENTAL_SILENCE=1
exec .venv/bin/python -m pytest -q tests "$@"
