#!/usr/bin/env bash
# Builds jupyter_sched as a release or a user would, from a clean clone of this repository's committed HEAD
# whose jupyter_sched/labextension was never built (not from this checkout, whose own build would hide a
# wheel that does not build the JupyterLab extension): `python -m build` there (the sdist, whose build runs
# the JupyterLab extension's, pyproject.toml's jupyter-builder hook; then the wheel from the sdist). Installs
# the wheel (its dependencies at the lock's versions, from PyPI) into a fresh venv and checks the installed
# package, not this checkout: `import jupyter_sched` (from site-packages, with py.typed), `jupyter-sched
# --version`, a local run, and `%load_ext jupyter_sched` + `%sched_run` in a real kernel; then, with
# jupyter_server and jupyterlab installed beside it (the lock's versions too), that both its server extension
# and its JupyterLab extension are enabled with no step but `pip install`. Last, `pip install` of a second
# clean clone (pip builds the wheel straight from the tree, as `pip install .` and `pip install git+...` do)
# replaces it in that venv, and the same checks run on what that install put there.
#
# Uncommitted changes are not in the clone (it says so when there are some). The builds need node and the
# npm registry; the packages yarn fetches come from its cache (~/.yarn/berry), which
# scripts/setup/labextension.sh fills, the built extension never.
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
start=$SECONDS
lock="$root/requirements/test-lock.txt"
# The isolated build envs get the lock's versions of what it pins (jupyterlab, and with it jlpm and the
# extension builder); hatchling and hatch-jupyter-builder are not in it and come at their newest.
build_env=(env "PIP_CONSTRAINT=$lock")
# yarn installs exactly what labextension/yarn.lock pins: a build that would change the lock fails
export YARN_ENABLE_IMMUTABLE_INSTALLS=true

clean_clone() {  # clean_clone DIR: the committed HEAD, nothing built in it
    git clone --quiet "$root" "$1"
    [ ! -e "$1/jupyter_sched/labextension" ] || { echo "the clone in $1 has a jupyter_sched/labextension" >&2; exit 1; }
}
head="$(git rev-parse --short HEAD)"
dirty=""
[ -z "$(git status --porcelain --untracked-files=no)" ] || dirty=" (this checkout's uncommitted changes are not in it)"
echo "building the committed HEAD $head from a clean clone$dirty"
clean_clone "$work/clone"
"${build_env[@]}" "$py" -m build --outdir "$work/dist" "$work/clone" >"$work/build.log" 2>&1 ||
    { tail -80 "$work/build.log"; echo "python -m build failed in a clean clone (last lines above)" >&2; exit 1; }
wheel="$(ls "$work"/dist/*.whl)"
sdist="$(ls "$work"/dist/*.tar.gz)"
echo "built $(basename "$sdist") and $(basename "$wheel") ($((SECONDS - start)) s)"
# the JupyterLab extension was built by the sdist's build, and the wheel's (from the sdist) used it
grep -q "jlpm run build:prod" "$work/build.log" || { echo "the build ran no jlpm build:prod" >&2; exit 1; }
tar -tzf "$sdist" >"$work/sdist.txt"  # (not piped into grep -q: pipefail would see tar's SIGPIPE)
"$py" -m zipfile -l "$wheel" >"$work/wheel.txt"
for f in LICENSE pyproject.toml README.md jupyter_sched/py.typed labextension/yarn.lock labextension/install.json; do
    grep -q "/$f\$" "$work/sdist.txt" || { echo "sdist lacks $f" >&2; exit 1; }
done
for f in jupyter_sched/py.typed jupyter_sched/schedulers/api.py licenses/LICENSE; do
    grep -q "$f" "$work/wheel.txt" || { echo "wheel lacks $f" >&2; exit 1; }
done
# the JupyterLab side: the built extension where JupyterLab looks, the file that enables the server extension
for f in data/share/jupyter/labextensions/jupyter-sched/package.json \
         data/share/jupyter/labextensions/jupyter-sched/install.json \
         data/share/jupyter/labextensions/jupyter-sched/static/remoteEntry \
         data/share/jupyter/labextensions/jupyter-sched/static/style.js \
         data/share/jupyter/labextensions/jupyter-sched/schemas/jupyter-sched/jobs.json \
         data/etc/jupyter/jupyter_server_config.d/jupyter_sched.json \
         jupyter_sched/server/handlers.py; do
    grep -q "$f" "$work/wheel.txt" || { echo "wheel lacks $f" >&2; exit 1; }
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
# jupyter_sched's two Jupyter extensions, as the venv's jupyter lists them (NO_COLOR is not honoured by all)
extensions_enabled() {  # extensions_enabled WHAT: both enabled in $work/venv, or exit 1
    # (into files first: grep -q would close the pipe early and pipefail would see the writer's SIGPIPE)
    NO_COLOR=1 "$work/venv/bin/jupyter" server extension list 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$work/server-ext.txt"
    grep -q "jupyter_sched.server enabled" "$work/server-ext.txt" ||
        { cat "$work/server-ext.txt" >&2; echo "$1: the server extension is not enabled" >&2; exit 1; }
    NO_COLOR=1 "$work/venv/bin/jupyter" labextension list 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$work/lab-ext.txt"
    grep -q "jupyter-sched v[^ ]* enabled OK" "$work/lab-ext.txt" ||
        { cat "$work/lab-ext.txt" >&2; echo "$1: the JupyterLab extension is not installed" >&2; exit 1; }
    echo "$1: server extension and JupyterLab extension enabled ($(grep "jupyter-sched v" "$work/lab-ext.txt" | xargs))"
}
extensions_enabled "the wheel"

# pip install <a clean clone>: replaces the wheel's install, its files with those of this one
clean_clone "$work/clone2"
t=$SECONDS
"${build_env[@]}" "$work/venv/bin/python" -m pip install --no-deps --force-reinstall "$work/clone2" \
    >"$work/pip-install.log" 2>&1 ||
    { tail -80 "$work/pip-install.log"; echo "pip install of a clean clone failed (last lines above)" >&2; exit 1; }
"$work/venv/bin/python" -m pip show -f jupyter_sched >"$work/pip-show.txt"
for f in share/jupyter/labextensions/jupyter-sched/static/style.js etc/jupyter/jupyter_server_config.d/jupyter_sched.json; do
    grep -q "$f" "$work/pip-show.txt" || { cat "$work/pip-show.txt" >&2; echo "pip install <clone> installed no $f" >&2; exit 1; }
done
echo "pip install <clean clone>: built and installed ($((SECONDS - t)) s)"
extensions_enabled "pip install <clean clone>"
echo "wheel smoke test: ok ($((SECONDS - start)) s)"
