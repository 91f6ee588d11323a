#!/usr/bin/env bash
# Creates .venv (once) and installs jupyter_sched with its test extras into it, editable.
# Re-running is cheap: pip only installs what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
fi
stamp=.venv/.jupyter_sched-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet -e ".[test]"
    touch "$stamp"
fi
