#!/usr/bin/env bash
# Installs PyTorch (CPU) into .venv for the distributed-job test (dist.spmd running real DDP on gloo),
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
    echo "[setup/torch] no CPU torch wheel under /opt/wheels for this Python: the DDP test will skip" >&2
    exit 0
fi
echo "[setup/torch] installing ${wheels[-1]##*/}" >&2
.venv/bin/python -m pip install --quiet "${wheels[-1]}"
