#!/usr/bin/env bash
# The main job on a fresh machine: sets up the venv, then runs a two-replica demo app on the default
# local_cwd scheduler and follows its logs (a progress bar redrawn with \r, coloured output).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup/python.sh
exec .venv/bin/python examples/demo.py "$@"
