#!/usr/bin/env bash
# Builds jupyter_sched as a release or a user would, from a clean clone of this repository's committed HEAD
# whose jupyter_sched/labextension was never built (not from this checkout, whose own build would hide a
# wheel that does not build the JupyterLab extension): `python -m build` there (the sdist, whose build runs
# the JupyterLab extension's, pyproject.toml's jupyter-builder hook; then the wheel from the sdist). Installs
# the wheel (its dependencies at the lock's versions, from PyPI) into a fresh venv and checks the installed
# package, not this checkout: `import jupyter_sched` (from site-packages, with py.typed), `jupyter-sched
# --version`, a local run, and `%load_ext jupyter_sched` + `%sched_run` in a real kernel; then, with
# jupyter_server and jupyterlab installed beside it (the lock's versions too), that both its server extension
# and its JupyterLab extension are enabled with no step but `pip install`, and that they work: that venv's
# `jupyter lab` is started (its config, data and runtime dirs in the temp dir, so nothing of the user's is
# seen) and scripts/ci/wheel_browser.py, with .venv's Python (Playwright) and Debian's Chromium, checks that
# GET /jupyter-sched/api/jobs answers 200 JSON and that the Jobs sidebar opens and lists the jobs run before
# (screenshot: artifacts/screenshots/wheel-sidebar.png); the server is stopped whatever happens. Last,
# `pip install` of a second clean clone (pip builds the wheel straight from the tree, as `pip install .` and
# `pip install git+...` do) replaces it in that venv, and the same checks run on what that install put there.
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
lab_pid=""
stop_lab() {  # the lab server asked to stop (15 s), then whatever is left of its process group killed
    [ -n "$lab_pid" ] || return 0
    kill -TERM "$lab_pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$lab_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$lab_pid" 2>/dev/null || true
    wait "$lab_pid" 2>/dev/null || true
    lab_pid=""
}
cleanup() {  # nothing outlives the script: the lab server (if it was started), then the temp dir
    stop_lab
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
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

# ... and they work: the wheel's JupyterLab, in a browser. Its Jupyter dirs are in $work and the user's extra
# paths are dropped, so it sees only what the venv has; it inherits JUPYTER_SCHED_LOG_DIR, so the Jobs
# sidebar lists the two local jobs run above (and any containers of the local_docker backend on this host).
mkdir -p "$work/lab-root" "$work/lab-data" "$work/lab-runtime" \
    "$work/lab-config/lab/user-settings/@jupyterlab/apputils-extension"
# (no news prompt over the panel in the screenshot; the settings dir is JUPYTER_CONFIG_DIR's lab/user-settings)
echo '{"fetchNews": "false", "checkForUpdates": false}' \
    >"$work/lab-config/lab/user-settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
lab_port="$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
lab_token="$("$py" -c 'import secrets; print(secrets.token_hex(16))')"
t=$SECONDS
env -u JUPYTER_PATH -u JUPYTER_CONFIG_PATH -u JUPYTERLAB_SETTINGS_DIR -u JUPYTERLAB_WORKSPACES_DIR \
    -u JUPYTERLAB_DIR JUPYTER_CONFIG_DIR="$work/lab-config" JUPYTER_DATA_DIR="$work/lab-data" \
    JUPYTER_RUNTIME_DIR="$work/lab-runtime" IPYTHONDIR="$work/lab-ipython" \
    setsid "$work/venv/bin/jupyter" lab --no-browser --allow-root --ServerApp.ip=127.0.0.1 \
    --ServerApp.port="$lab_port" --ServerApp.port_retries=0 --IdentityProvider.token="$lab_token" \
    --ServerApp.root_dir="$work/lab-root" --LabApp.news_url=None \
    --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
    </dev/null >"$work/lab.log" 2>&1 &
# (setsid: a session and process group of its own, whose id is this pid, so stop_lab reaches all it started and
# a Ctrl-C, which goes to this script's group, leaves its stopping to stop_lab; a script runs with no job
# control, so what `&` starts leads no group and setsid execs in place instead of forking)
lab_pid=$!
"$py" "$root/scripts/ci/wheel_browser.py" --url "http://127.0.0.1:$lab_port" --token "$lab_token" \
    --server-log "$work/lab.log" --pid "$lab_pid" ||
    { echo "the wheel's JupyterLab did not show a working Jobs sidebar (above)" >&2; exit 1; }
tracebacks="$(grep -c "Traceback" "$work/lab.log" || true)"
[ "$tracebacks" = 0 ] || { cat "$work/lab.log" >&2; echo "the wheel's JupyterLab logged a traceback" >&2; exit 1; }
stop_lab
echo "the wheel in JupyterLab: ok ($((SECONDS - t)) s)"

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
