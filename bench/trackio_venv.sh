#!/usr/bin/env bash
# Benchmark-only: a venv of its own holding trackio (TRL's default tracker), outside the app's requirements.
# bench/bench_trackio.py runs trackio's dashboard from it; nothing of the app imports it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv-trackio"
version="${TRACKIO_VERSION:-0.43.0}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import trackio" 2>/dev/null; then
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "trackio==$version"
fi
echo "$venv/bin/python"
