#!/usr/bin/env bash
# Builds the sdist and the wheel, installs the wheel (its dependencies at the lock's versions, from PyPI)
# into a fresh venv and checks the installed package, not this checkout: `import jupyter_sched` (from
# site-packages, with py.typed), `jupyter-sched --version`, a local run, and `%load_ext jupyter_sched` +
# `%sched_run` in a real kernel; then, with jupyter_server and jupyterlab installed beside it (the lock's
# versions too), that both its server extension and its JupyterLab extension are enabled with no step but
# `pip install`.
#
#   bash scripts/ci/wheel_smoke.sh     # uses .venv's Python (python3 if there is no .venv)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
py="${PYTHON:-$root/.venv/bin/python}"
[ -x "$py" ] || py="$(command -v python3)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
unset PYTHONPATH  # the smoke test must see only the installed wheel

"$py" -m build --sdist --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
wheel="$(ls "$work"/dist/*.whl)"
sdist="$(ls "$work"/dist/*.tar.gz)"
echo "built $(basename "$sdist") and $(basename "$wheel")"
tar -tzf "$sdist" >"$work/sdist.txt"  # (not piped into grep -q: pipefail would see tar's SIGPIPE)
"$py" -m zipfile -l "$wheel" >"$work/wheel.txt"
for f in LICENSE pyproject.toml README.md jupyter_sched/py.typed; do
    grep -q "/$f\$" "$work/sdist.txt" || { echo "sdist lacks $f" >&2; exit 1; }
done
for f in jupyter_sched/py.typed jupyter_sched/schedulers/api.py licenses/LICENSE; do
    grep -q "$f" "$work/wheel.txt" || { echo "wheel lacks $f" >&2; exit 1; }
done
# the JupyterLab side: the built extension where JupyterLab looks, the file that enables the server extension
for f in data/share/jupyter/labextensions/jupyter-sched/package.json \
         data/share/jupyter/labextensions/jupyter-sched/static/remoteEntry \
         data/share/jupyter/labextensions/jupyter-sched/schemas/jupyter-sched/jobs.json \
         data/etc/jupyter/jupyter_server_config.d/jupyter_sched.json \
         jupyter_sched/server/handlers.py; do
    grep -q "$f" "$work/wheel.txt" || { echo "wheel lacks $f (bash scripts/setup/labextension.sh builds it)" >&2; exit 1; }
done
grep -q "jupyter_sched/labextension/static/" "$work/sdist.txt" || { echo "sdist lacks the built labextension" >&2; exit 1; }

"$py" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet -c requirements/test-lock.txt "$wheel" ipykernel jupyter_client
mkdir "$work/cwd"
cd "$work/cwd"  # not the checkout: nothing importable from here
export JUPYTER_SCHED_LOG_DIR="$work/state"
vpy="$work/venv/bin/python"

"$vpy" - <<'PY'
import os, jupyter_sched
path = os.path.dirname(jupyter_sched.__file__)
assert "site-packages" in path, path
assert os.path.exists(os.path.join(path, "py.typed")), "no py.typed"
print("import jupyter_sched:", path)
PY
"$work/venv/bin/jupyter-sched" --version
out="$("$work/venv/bin/jupyter-sched" run -s local_cwd --wait --log utils.echo --msg hello-from-the-wheel 2>&1)"
echo "$out" | grep -q "hello-from-the-wheel" || { echo "local run printed no greeting: $out" >&2; exit 1; }
echo "local run: ok"
"$vpy" "$root/scripts/ci/kernel_smoke.py"
"$work/venv/bin/python" -m pip install --quiet -c "$root/requirements/test-lock.txt" jupyter_server jupyterlab
# (into files first: grep -q would close the pipe early and pipefail would see the writer's SIGPIPE)
NO_COLOR=1 "$work/venv/bin/jupyter" server extension list >"$work/server-ext.txt" 2>&1
grep -q "jupyter_sched.server.*enabled" "$work/server-ext.txt" ||
    { cat "$work/server-ext.txt" >&2; echo "the server extension is not enabled" >&2; exit 1; }
NO_COLOR=1 "$work/venv/bin/jupyter" labextension list >"$work/lab-ext.txt" 2>&1
grep -q "jupyter-sched.*enabled.*OK" "$work/lab-ext.txt" ||
    { cat "$work/lab-ext.txt" >&2; echo "the JupyterLab extension is not installed" >&2; exit 1; }
echo "server extension and JupyterLab extension: enabled"
echo "wheel smoke test: ok"
