#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs (from the lock, requirements/) and starts everything the
# tests need, runs the checks of scripts/ci/ (ruff and mypy; the built wheel in a fresh venv; a subset of the
# suite on every other declared Python, 3.10 at the lower bounds; the same kind of subset against the newest
# releases), then pytest over tests/ and the tutorial notebooks (nbval), then the portable pass. A failing
# check does not stop the later ones: every step runs, and the script fails at the end, naming each step
# that failed. CI runs exactly this (.ci/run).
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
bash scripts/setup/labextension.sh  # the JupyterLab extension built from labextension/ (jlpm), when its
                                    # sources changed, and linked into .venv: the e2e tests use it (the
                                    # wheel smoke test builds its own, from a clean clone)
# A Ray head (127.0.0.1, dashboard on 8265) for tests/schedulers/torchx_bridge/test_ray.py and notebooks/ray.ipynb; it holds
# about 2 GB, so it is stopped again when the Ray tests are done (or this script fails).
ray_env="$(bash scripts/setup/ray.sh)"  # export RAY_ADDRESS=...
eval "$ray_env"
trap 'bash scripts/setup/ray.sh stop' EXIT

mkdir -p artifacts
failed=()
step() {  # step NAME COMMAND...: runs it, its output also kept in artifacts/NAME.log; a failure is
    local name="$1"  # remembered, and the next step runs
    shift
    "$@" 2>&1 | tee "artifacts/$name.log" || failed+=("$name")
}
summary() {  # what each failed step said, again at the very end: a CI log is often read from its tail
    local name lines
    for name in "$@"; do
        echo "== $name failed:"
        lines="$(grep -E '^(FAILED|ERROR) ' "artifacts/$name.log" | head -40 || true)"
        if [ -n "$lines" ]; then
            echo "$lines"
        else
            tail -n 15 "artifacts/$name.log"
        fi
    done
}
if [ $# -eq 0 ]; then
    step lint bash scripts/ci/lint.sh                   # ruff + mypy over the package (pyproject.toml's settings)
    step wheel bash scripts/ci/wheel_smoke.sh           # sdist + wheel, installed in a fresh venv, smoke-tested
    step python-versions bash scripts/ci/python_versions.sh  # a subset on 3.10 (lower bounds), 3.12, 3.13
    step newest bash scripts/ci/newest.sh               # a subset against the newest releases, not the lock
fi
# --durations: the slowest tests, at the end of the step's log, for keeping the run under its time
step pytest .venv/bin/python -m pytest tests -p no:cacheprovider --durations=40 "$@"
bash scripts/setup/ray.sh stop
trap - EXIT
# Again on the local backend's portable path (no epoll, pidfd or /proc, as on macOS; see
# jupyter_sched/schedulers/local/processes/posix.py): the local, runner, CLI and notebook tests (not the two
# that need the Ray head, stopped above). That path starts every replica with exec, so the local function-job
# tests run here on the fallback of the warm zygote too (jupyter_sched/schedulers/local/warm_starts/zygote.py;
# JUPYTER_SCHED_ZYGOTE=0 selects the same fallback).
step portable env JUPYTER_SCHED_PORTABLE=1 .venv/bin/python -m pytest -p no:cacheprovider \
    tests/schedulers/local tests/runner/test_runner.py tests/cli tests/frontend tests/notebook \
    tests/functions/test_submit_local.py tests/functions/test_remote_sources.py \
    --ignore=tests/notebook/test_ray_kernel.py --ignore=tests/notebook/test_metrics_backends_kernel.py "$@"
if ((${#failed[@]})); then
    summary "${failed[@]}" >&2
    echo "test.sh: these steps failed: ${failed[*]}" >&2
    exit 1
fi
