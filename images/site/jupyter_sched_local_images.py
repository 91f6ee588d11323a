"""The images scripts/setup/images.sh builds, as jupyter_sched's defaults (entry points in pyproject.toml)."""

TORCH = "jupyter-sched/torch:local"
"""dist.ddp's default image here: the python image plus the venv's CPU build of torch."""
