#!/usr/bin/env bash
# ruff (lint and import order) over the package, tests and scripts, and mypy over the whole package, with
# the settings in pyproject.toml ([tool.ruff], [tool.mypy]). Both must be clean.
#
#   bash scripts/ci/lint.sh      # uses .venv's tools (PYTHON=... to use another interpreter's)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
py="${PYTHON:-$root/.venv/bin/python}"
status=0
echo "=== ruff ==="
"$py" -m ruff check jupyter_sched tests scripts || status=1
echo "=== mypy ==="
"$py" -m mypy || status=1
exit $status
