#!/usr/bin/env bash
# Runs a subset of the suite on every other Python the project declares (pyproject's classifiers): the main
# suite runs on .venv's Python (3.11); this runs specs, logs, components, the front-end layer (config and
# time parsing), the local scheduler, the runner, local function jobs and the notebook's kernel tests on
# 3.10, 3.12 and 3.13, each in its own venv (an editable install of this checkout, so the tests import it).
# Each lane installs from a lock (scripts/lock.sh): 3.12 and 3.13 from requirements/test-lock.txt, as .venv does;
# 3.10 from requirements/oldest-lock.txt, every dependency at the lower bound pyproject.toml states, so each
# bound is one a lane ran (cloudpickle 3.0 among them).
#
#   bash scripts/ci/python_versions.sh              # 3.10 (oldest) 3.12 3.13
#   PYTHONS="3.12" bash scripts/ci/python_versions.sh -x   # extra arguments go to pytest
#
# The Pythons come from pyenv (`pyenv root`/versions/X.Y.*) or `pythonX.Y` on PATH. A declared version
# that cannot be found is an error: the classifiers must name only versions the suite runs on.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

TESTS=(  # what differs between Pythons: parsing (config, times, typing syntax), processes, the kernel
    tests/specs tests/logs tests/components tests/frontend tests/cli/test_config.py tests/cli/test_render.py
    tests/cli/test_python_compat.py
    tests/runner/test_runner.py tests/schedulers/local/test_scheduler.py tests/schedulers/test_api_registry.py
    tests/notebook/test_kernel.py tests/notebook/test_extension.py tests/notebook/test_log_model.py
    tests/functions/test_submit_local.py tests/functions/test_remote_sources.py
    tests/schedulers/local/test_zygote.py
)
# what the subset needs beside the package is requirements/lane-tools.in (the rest of [test] is browsers,
# notebooks, torch and torchx: main Python only; tests needing torch or torchx are marked so and deselected)

find_python() {
    local v="$1" pyenv_root candidate
    pyenv_root="$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")"
    for candidate in $(ls -d "$pyenv_root"/versions/"$v".*/bin/python 2>/dev/null | sort -V -r); do
        "$candidate" -c 'import venv, ensurepip' 2>/dev/null && { echo "$candidate"; return; }
    done
    command -v "python$v" || return 1
}

lock_of() {  # the lock a lane installs from
    case "$1" in
        3.10) echo requirements/oldest-lock.txt ;;
        *) echo requirements/test-lock.txt ;;
    esac
}

status=0
for v in ${PYTHONS:-3.10 3.12 3.13}; do
    py="$(find_python "$v")" || { echo "python_versions: Python $v not found (pyenv install $v)" >&2; exit 1; }
    venv=".venv-py$v"
    stamp="$venv/.installed"
    lock="$(lock_of "$v")"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
        rm -rf "$venv"
        "$py" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --upgrade pip
        # (SKIP_JUPYTER_BUILDER: these lanes test no JupyterLab extension, so they need no node build)
        SKIP_JUPYTER_BUILDER=1 "$venv/bin/python" -m pip install --quiet -c "$lock" -e . -r requirements/lane-tools.in
        touch "$stamp"
    fi
    echo "=== Python $v ($("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])'), $lock) ==="
    start=$SECONDS
    # PYTHONPATH would point the venv's interpreter at another checkout: the editable install finds this one
    if ! env -u PYTHONPATH "$venv/bin/python" -m pytest "${TESTS[@]}" -q -p no:cacheprovider -m "not torch and not torchx" "$@"; then
        status=1
    fi
    echo "=== Python $v: $((SECONDS - start)) s ==="
done
exit $status
