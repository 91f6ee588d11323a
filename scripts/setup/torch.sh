#!/usr/bin/env bash
# Installs PyTorch (CPU) into .venv for the distributed-job tests (dist.spmd and dist.ddp running real DDP on
# gloo), and for scripts/setup/images.sh to copy into jupyter-sched/torch:local (so it must run first),
# from the CPU wheel this kind of machine keeps on disk. Without that file it installs nothing and says
# so: PyPI's default torch is a multi-GB CUDA build, too big to pull for one test. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if .venv/bin/python -c "import torch" 2>/dev/null; then
    exit 0
fi
shopt -s nullglob
wheels=(/opt/wheels/torch-*+cpu-cp"$(.venv/bin/python -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')"-*.whl)
if ((${#wheels[@]} == 0)); then
    echo "[setup/torch] no CPU torch wheel under /opt/wheels for this Python: the DDP tests will skip and images.sh builds no torch image" >&2
    exit 0
fi
echo "[setup/torch] installing ${wheels[-1]##*/}" >&2
.venv/bin/python -m pip install --quiet "${wheels[-1]}"
