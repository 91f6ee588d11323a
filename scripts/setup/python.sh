#!/usr/bin/env bash
# Creates .venv (once) and installs jupyter_sched with its test extras into it, editable, at the versions
# of the lock (requirements/test-lock.txt, refreshed by scripts/lock.sh), so a fresh machine on any day installs
# what the last green run tested. Re-running is cheap: pip only installs what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
fi
stamp=.venv/.jupyter_sched-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements/test-lock.txt -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet -c requirements/test-lock.txt -e ".[test]"
    touch "$stamp"
fi
