#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs and starts everything the tests need, runs the checks
# of scripts/ci/ (ruff and mypy; the built wheel in a fresh venv; a subset of the suite on every other
# declared Python), then pytest over tests/ and the tutorial notebooks (nbval). CI runs exactly this
# (.ci/run).
#
#   bash scripts/test.sh            # everything
#   bash scripts/test.sh -k docker  # extra arguments go to pytest, and the scripts/ci/ checks are skipped
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup/python.sh     # .venv with jupyter_sched[test]
bash scripts/setup/torch.sh      # CPU PyTorch from the on-disk wheel, for the real DDP (gloo) job tests;
                                 # before docker.sh, whose images.sh copies it into jupyter-sched/torch:local
bash scripts/setup/docker.sh     # Docker engine (Debian docker.io) + locally built images
bash scripts/setup/registry.sh   # a registry on 127.0.0.1:5000 for workspace push tests
bash scripts/setup/slurm.sh      # Slurm: a controller and 4 nodes on this host (tests/schedulers/slurm)
bash scripts/setup/browser.sh    # Debian chromium + JupyterLab/Playwright for tests/e2e

mkdir -p artifacts
if [ $# -eq 0 ]; then
    bash scripts/ci/lint.sh             # ruff + mypy over the package (pyproject.toml's settings)
    bash scripts/ci/wheel_smoke.sh      # sdist + wheel, installed in a fresh venv, smoke-tested there
    bash scripts/ci/python_versions.sh  # specs, logs, components, CLI, local scheduler, runner, kernel tests
fi                                      # on 3.10, 3.12 and 3.13 (.venv is 3.11)
.venv/bin/python -m pytest tests -p no:cacheprovider "$@"
# Again on the local backend's portable path (no epoll, pidfd or /proc, as on macOS; see
# jupyter_sched/schedulers/local/posix.py): the local, runner, CLI and notebook tests.
JUPYTER_SCHED_PORTABLE=1 exec .venv/bin/python -m pytest -p no:cacheprovider \
    tests/schedulers/local tests/runner/test_runner.py tests/cli tests/frontend tests/notebook "$@"
