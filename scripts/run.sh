#!/usr/bin/env bash
# Set up, then start the app on the bundled example (or on the source given: folder, zip, Hub id).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python app.py "$@"
