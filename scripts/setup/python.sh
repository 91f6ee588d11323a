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
# The editable install enables the server extension (etc/jupyter/jupyter_server_config.d, as a wheel does).
# The JupyterLab extension is scripts/setup/labextension.sh's: it builds it (when its sources changed, with
# node, which may not be on this machine yet) and links it into .venv (`jupyter-builder develop`), so
# this install skips pyproject.toml's build hook (SKIP_JUPYTER_BUILDER). pip must not write or remove
# files through that link (the editable wheel carries a copy of a build that exists): it is taken away
# first, and made again after.
link=.venv/share/jupyter/labextensions/jupyter-sched
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements/test-lock.txt -nt "$stamp" ]; then
    if [ -L "$link" ]; then rm "$link"; fi
    SKIP_JUPYTER_BUILDER=1 .venv/bin/python -m pip install --quiet -c requirements/test-lock.txt -e ".[test]"
    if [ -f jupyter_sched/labextension/package.json ]; then
        PATH="$root/.venv/bin:$PATH" .venv/bin/jupyter-builder develop --overwrite . >/dev/null
    fi
    touch "$stamp"
fi
