#!/usr/bin/env bash
# Refreshes the locks in requirements/, the exact versions every venv of the suite installs:
#   requirements/test-lock.txt    .[test] for every Python the suite runs on (3.10-3.13, one universal lock):
#                            .venv (scripts/setup/python.sh) and the 3.12/3.13 lanes of
#                            scripts/ci/python_versions.sh install from it
#   requirements/oldest-lock.txt  the package's own dependencies and the lanes' test tools at the lower bounds
#                            pyproject.toml states (uv's lowest-direct resolution), on 3.10: the 3.10 lane
#                            installs from it, so every lower bound is one a test lane ran
#
#   bash scripts/lock.sh     # then run bash scripts/test.sh and commit requirements/ with what it tested
#
# uv resolves for all Pythons and platforms at once from this one machine; it is pinned below and lives in
# its own venv (.venv-tools), apart from what it locks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
UV_VERSION=0.13.9
tools=.venv-tools
if [ "$("$tools/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install --quiet "uv==$UV_VERSION"
fi
uv=("$tools/bin/uv" pip compile --quiet --no-header --upgrade)
"${uv[@]}" pyproject.toml --extra test --universal --python-version 3.10 -o requirements/test-lock.txt
"${uv[@]}" pyproject.toml requirements/lane-tools.in --resolution lowest-direct --python-version 3.10 \
    -o requirements/oldest-lock.txt
echo "lock: requirements/test-lock.txt ($(grep -c '^[a-zA-Z]' requirements/test-lock.txt) pins)," \
     "requirements/oldest-lock.txt ($(grep -c '^[a-zA-Z]' requirements/oldest-lock.txt) pins)"
