#!/usr/bin/env bash
# Builds the JupyterLab extension from labextension/ into jupyter_sched/labextension (what the wheel ships
# as share/jupyter/labextensions/jupyter-sched), with JupyterLab's own toolchain: jlpm (the yarn bundled
# with the .venv's jupyterlab) installs exactly what yarn.lock pins, then `jlpm build:prod` (tsc and
# @jupyterlab/builder's webpack).
#
# Cheap when nothing changed: it rebuilds only when a source file (package.json, yarn.lock, tsconfig, src/,
# style/, schema/) differs from the last build's (a hash kept in labextension/.build-hash), or the build
# output is missing. Needs node (Debian's nodejs, >= 18) and the npm registry on a first install.
#
# Then it links the build into that JupyterLab's environment as the extension template's README does
# (`jupyter-builder develop --overwrite .`, which JupyterLab 4.6 runs for the older `jupyter labextension
# develop`: share/jupyter/labextensions/jupyter-sched, a symlink to jupyter_sched/labextension), so the dev
# venv's `jupyter lab` has the Jobs sidebar and shows each rebuild at the next page load. (The server extension needs no step: .venv's editable install put
# etc/jupyter/jupyter_server_config.d/jupyter_sched.json there, as the wheel does.)
# A wheel built with `python -m build` or `pip install .` runs the same build itself (pyproject.toml's
# jupyter-builder hook); this script is the cheap path for a checkout, with the source hash.
#
#   bash scripts/setup/labextension.sh           # JLPM=/path/to/jlpm to use another JupyterLab's
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

start="$(now)"
ext="$JSCHED_REPO_ROOT/labextension"
out="$JSCHED_REPO_ROOT/jupyter_sched/labextension"
jlpm="${JLPM:-$JSCHED_REPO_ROOT/.venv/bin/jlpm}"
[[ -x "$jlpm" ]] || die "no jlpm at $jlpm (scripts/setup/python.sh installs jupyterlab into .venv)"
command -v node >/dev/null 2>&1 || apt_install nodejs
major="$(node --version | sed 's/^v\([0-9]*\).*/\1/')"
((major >= 18)) || die "node $(node --version) is too old: JupyterLab 4 builds with node 18 or newer"

sources_hash() {
    (cd "$ext" && find package.json yarn.lock tsconfig.json .yarnrc.yml src style schema -type f -print0 |
        sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}
# develop_link: JupyterLab's environment finds the build where its labextensions are, through a symlink
develop_link() {
    local bin link develop
    bin="$(dirname "$jlpm")"
    link="$bin/../share/jupyter/labextensions/jupyter-sched"
    if [[ -L "$link" && "$(readlink -f "$link")" == "$(readlink -f "$out")" ]]; then
        return 0
    fi
    develop=("$bin/jupyter-builder" develop)  # JupyterLab before 4.6 has no jupyter-builder
    [[ -x "$bin/jupyter-builder" ]] || develop=("$bin/jupyter" labextension develop)
    # a copy there (an editable install made while a build existed copies it) is replaced by the link
    (cd "$JSCHED_REPO_ROOT" && PATH="$bin:$PATH" "${develop[@]}" --overwrite . >"$ext/.jlpm-develop.log" 2>&1) ||
        { cat "$ext/.jlpm-develop.log" >&2; die "${develop[*]} failed"; }
    [[ -L "$link" ]] || die "${develop[*]} made no link at $link"
    log "linked: $(readlink -f "$(dirname "$link")")/jupyter-sched -> jupyter_sched/labextension"
}

want="$(sources_hash)"
if [[ -f "$out/package.json" && -f "$ext/.build-hash" && "$(cat "$ext/.build-hash")" == "$want" ]]; then
    develop_link
    log "up to date ($(elapsed "$start"))"
    exit 0
fi

# the venv's bin first: `jupyter labextension build` must be the venv's jupyter
export PATH="$(dirname "$jlpm"):$PATH"
cd "$ext"
log "jlpm install (yarn.lock, immutable)"
"$jlpm" install --immutable >"$ext/.jlpm-install.log" 2>&1 || { tail -40 "$ext/.jlpm-install.log" >&2; die "jlpm install failed"; }
log "jlpm build:prod"
"$jlpm" build:prod >"$ext/.jlpm-build.log" 2>&1 || { tail -60 "$ext/.jlpm-build.log" >&2; die "jlpm build:prod failed"; }
[[ -f "$out/package.json" ]] || die "the build wrote no $out/package.json"
ls "$out"/static/remoteEntry.*.js >/dev/null 2>&1 || die "the build wrote no remoteEntry in $out/static"
echo "$want" >"$ext/.build-hash"
develop_link
log "built into jupyter_sched/labextension ($(elapsed "$start"))"
