#!/usr/bin/env bash
# The newest lane: a fast subset of the suite against the newest releases pyproject.toml's bounds admit,
# not the lock, so a release that breaks users (as cloudpickle 3.1.3 once did) fails here at the next run
# instead of in a user's hands. scripts/test.sh runs it on every run and fails when it fails.
#
#   bash scripts/ci/newest.sh        # extra arguments go to pytest
#
# Its venv (.venv-newest, on the main Python) is kept between runs and upgraded eagerly each time. When it
# fails and the lock's lane passes, a new release is the cause: fix the product (or bound the release in
# pyproject.toml, saying why), then refresh the lock (scripts/lock.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

TESTS=(  # specs, logs, function jobs, the local scheduler, the runner and the notebook's kernel tests
    tests/specs tests/logs tests/functions/test_submit_local.py tests/functions/test_remote_sources.py
    tests/schedulers/local/test_scheduler.py tests/schedulers/test_api_registry.py tests/runner/test_runner.py
    tests/notebook/test_kernel.py tests/notebook/test_extension.py tests/notebook/test_functions_kernel.py
)
venv=.venv-newest
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# (SKIP_JUPYTER_BUILDER: this lane tests no JupyterLab extension, so it needs no node build)
SKIP_JUPYTER_BUILDER=1 "$venv/bin/python" -m pip install --quiet --upgrade --upgrade-strategy eager -e . \
    -r requirements/lane-tools.in
echo "=== newest releases: $("$venv/bin/python" -m pip list --format=freeze 2>/dev/null |
    grep -iE '^(cloudpickle|ipython|ipykernel|ipywidgets|traitlets|psutil|docker|pyyaml|jupyter.client)==' |
    tr '\n' ' ')==="
start=$SECONDS
env -u PYTHONPATH "$venv/bin/python" -m pytest "${TESTS[@]}" -q -p no:cacheprovider -m "not torch and not torchx" "$@"
echo "=== newest: $((SECONDS - start)) s ==="
