#!/usr/bin/env bash
# Build the local test images (nothing can be pulled here: each starts FROM
# scratch or from the python image below):
#
#   jupyter-sched/busybox:local  static busybox (/bin/sh + applets), ~2 MB
#   jupyter-sched/python:local   Debian minbase rootfs + python3 (debootstrap),
#                                plus cloudpickle from the venv (a layer, labelled
#                                with the Python and cloudpickle versions), plus
#                                nbclient, ipykernel and jupyter_sched's requirements
#                                for notebook jobs (a layer, labelled with the versions)
#   jupyter-sched/torch:local    the python image + the venv's CPU PyTorch and the
#                                distributions it requires, copied offline from
#                                .venv (scripts/setup/torch.sh installs torch there;
#                                without it this image is skipped, and the torch
#                                docker tests skip; under CI=true that is an error)
#
# With the torch image it installs images/site into the venv: its entry point
# makes jupyter-sched/torch:local dist.ddp's default image on this machine
# (jupyter_sched/components/images.py says how a site names its images).
#
# Each image is built only if it is missing or its recipe changed (a hash of
# the Dockerfile + recipe is stored in the image label "jupyter-sched.recipe"),
# so a re-run costs one `docker image inspect` per image.
#
# Usage: scripts/setup/images.sh [--force] [busybox|python|torch ...]
#   --force   rebuild even if the image is up to date
#   names     build only these images (default: all; always in the order above,
#             and torch needs the python image)
#
# Environment overrides:
#   JSCHED_DEBIAN_MIRROR   mirror for debootstrap (default: the one apt uses)
#   JSCHED_DEBIAN_SUITE    Debian suite for the python image (default: host's)
#   JSCHED_VENV_PYTHON     the venv whose cloudpickle and torch are copied in
#                          (default: .venv/bin/python of this repo)
#
# Needs a running engine: run scripts/setup/docker.sh (which calls this).
set -euo pipefail

# shellcheck source=scripts/setup/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

IMAGES_DIR="$JSCHED_REPO_ROOT/images"
BUSYBOX_IMAGE=jupyter-sched/busybox:local
PYTHON_IMAGE=jupyter-sched/python:local
TORCH_IMAGE=jupyter-sched/torch:local
RECIPE_LABEL=jupyter-sched.recipe
FUNCTIONS_LABEL=jupyter-sched.functions-recipe
NOTEBOOKS_LABEL=jupyter-sched.notebooks-recipe
# The interpreter whose cloudpickle goes into the python image (function jobs need the same major),
# and whose torch goes into the torch image.
VENV_PYTHON="${JSCHED_VENV_PYTHON:-$JSCHED_REPO_ROOT/.venv/bin/python}"
# Copies a distribution and its requirements out of the venv (the torch image's build context).
STAGE_DISTS="$JSCHED_REPO_ROOT/scripts/setup/stage_dists.py"

# Packages added on top of debootstrap's minbase. python3 (not just
# python3-minimal) so jobs get the full stdlib (json, asyncio, sqlite3, ...).
PYTHON_INCLUDE=python3
# Paths removed from the rootfs to keep the image small (~120 MB instead of
# ~260 MB): apt caches/lists, docs, man pages, translations.
PYTHON_TRIM=(var/cache/apt var/lib/apt/lists usr/share/doc usr/share/man
    usr/share/info usr/share/locale var/log tmp var/tmp)

force=0
wanted=()
for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        busybox | python | torch) wanted+=("$arg") ;;
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done
((${#wanted[@]})) || wanted=(busybox python torch)

WORK=""
cleanup() {
    [[ -n "$WORK" && -d "$WORK" ]] || return 0
    # debootstrap mounts proc/sys (and may bind /dev) inside the target; if it
    # was interrupted those mounts are still there and rm -rf must not follow
    # them into the host's /dev or /sys.
    local m
    { findmnt -rn -o TARGET | grep -F "$WORK/" || true; } | sort -r | while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done
    rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT

# True if IMAGE exists and was built from recipe HASH.
image_current() {
    local image="$1" hash="$2" have
    have="$(docker image inspect -f "{{ index .Config.Labels \"$RECIPE_LABEL\" }}" "$image" 2>/dev/null)" ||
        return 1
    [[ "$have" == "$hash" ]]
}

# docker_build IMAGE HASH CONTEXT [OPTION...]: build with the classic builder
# (Debian's engine 20.10 has no buildx and the /usr/local docker 28 CLI would
# otherwise complain), keep the noisy output in a file and show it only on
# failure. OPTIONs (--build-arg, --label ...) go to docker build.
docker_build() {
    local image="$1" hash="$2" ctx="$3" old_id
    old_id="$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)"
    local opts=(--label "$RECIPE_LABEL=$hash" -t "$image" "${@:4}")
    ((force)) && opts+=(--no-cache) # --force means really rebuild, not reuse layers
    if ! DOCKER_BUILDKIT=0 docker build "${opts[@]}" "$ctx" \
        >"$WORK/build.log" 2>&1; then
        tail -n 40 "$WORK/build.log" >&2
        die "docker build of $image failed"
    fi
    # Drop the superseded image so rebuilds don't pile up <none> images
    # (fails harmlessly if a container still uses it).
    if [[ -n "$old_id" && "$old_id" != "$(docker image inspect -f '{{.Id}}' "$image")" ]]; then
        docker rmi "$old_id" >/dev/null 2>&1 || true
    fi
}

# Hash of everything that determines an image's content.
recipe_hash() { cat "$@" | sha256sum | cut -c1-16; }

build_busybox() {
    local t0 hash ctx bb
    t0="$(now)"
    apt_install busybox-static # guarantees /bin/busybox is the *static* build
    bb="$(dpkg -L busybox-static | grep -m1 '/bin/busybox$')"
    hash="$(recipe_hash "$IMAGES_DIR/busybox/Dockerfile" \
        <(dpkg-query -W -f='${Version}' busybox-static))"

    if ((!force)) && image_current "$BUSYBOX_IMAGE" "$hash"; then
        log "$BUSYBOX_IMAGE is up to date (recipe $hash); skipping"
        return 0
    fi
    log "building $BUSYBOX_IMAGE (recipe $hash)"
    ctx="$WORK/busybox"
    mkdir -p "$ctx"
    cp "$IMAGES_DIR/busybox/Dockerfile" "$ctx/"
    cp "$bb" "$ctx/busybox"
    docker_build "$BUSYBOX_IMAGE" "$hash" "$ctx"

    docker run --rm "$BUSYBOX_IMAGE" sh -c 'echo ok' | grep -qx ok ||
        die "$BUSYBOX_IMAGE smoke test failed"
    log "built $BUSYBOX_IMAGE ($(docker image inspect -f '{{.Size}}' "$BUSYBOX_IMAGE") bytes) in $(elapsed "$t0")"
}

# TorchX's own docker tests (scripts/torchx_yardstick.py) name the image `busybox`, which cannot be pulled
# here: give ours that name too, unless the engine already has a `busybox` (a real one is left alone).
tag_busybox_for_torchx() {
    if docker image inspect busybox >/dev/null 2>&1; then
        return 0
    fi
    docker tag "$BUSYBOX_IMAGE" busybox
    log "tagged $BUSYBOX_IMAGE as busybox (the image TorchX's docker tests name)"
}

# The Debian mirror apt already uses on this host: that is the one we know is
# reachable. Supports deb822 *.sources and one-line *.list files.
debian_mirror() {
    if [[ -n "${JSCHED_DEBIAN_MIRROR:-}" ]]; then
        echo "$JSCHED_DEBIAN_MIRROR"
        return
    fi
    local files=() uri
    shopt -s nullglob
    files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list)
    shopt -u nullglob
    if ((${#files[@]})); then
        uri="$(
            {
                grep -h -E '^\s*URIs:' "${files[@]}" | sed -E 's/^\s*URIs:\s*//' | tr ' ' '\n'
                grep -h -E '^\s*deb\s' "${files[@]}" | sed -E 's/^\s*deb\s+(\[[^]]*\]\s+)?//' | awk '{print $1}'
            } 2>/dev/null | grep -E '/debian/?$' | head -n1
        )" || true
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}

debian_suite() {
    if [[ -n "${JSCHED_DEBIAN_SUITE:-}" ]]; then
        echo "$JSCHED_DEBIAN_SUITE"
        return
    fi
    local codename
    # shellcheck disable=SC1091  # host file, not part of the repo
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
    echo "${codename:-bookworm}"
}

build_python() {
    local t0 t1 hash ctx root suite mirror
    t0="$(now)"
    suite="$(debian_suite)"
    hash="$(recipe_hash "$IMAGES_DIR/python/Dockerfile" \
        <(echo "$suite $PYTHON_INCLUDE ${PYTHON_TRIM[*]}"))"

    if ((!force)) && image_current "$PYTHON_IMAGE" "$hash"; then
        log "$PYTHON_IMAGE is up to date (recipe $hash); skipping"
        return 0
    fi
    apt_install debootstrap
    mirror="$(debian_mirror)"
    log "building $PYTHON_IMAGE (recipe $hash): debootstrap $suite from $mirror"

    # /var/tmp rather than /tmp: same disk as the engine, and never a small tmpfs.
    ctx="$WORK/python"
    root="$ctx/rootfs"
    mkdir -p "$root"
    t1="$(now)"
    if ! debootstrap --variant=minbase --include="$PYTHON_INCLUDE" \
        "$suite" "$root" "$mirror" >"$WORK/debootstrap.log" 2>&1; then
        tail -n 40 "$WORK/debootstrap.log" >&2
        die "debootstrap failed (full log above is the tail of $WORK/debootstrap.log)"
    fi
    log "debootstrap done in $(elapsed "$t1")"

    local p
    for p in "${PYTHON_TRIM[@]}"; do
        if [[ -d "$root/$p" ]]; then find "$root/$p" -mindepth 1 -delete; fi
    done
    # The engine provides /dev, /proc, /sys at run time; device nodes made by
    # debootstrap are not wanted in an image layer.
    find "$root/dev" "$root/proc" "$root/sys" -mindepth 1 -delete 2>/dev/null || true

    cp "$IMAGES_DIR/python/Dockerfile" "$ctx/"
    tar --numeric-owner -C "$root" -cf "$ctx/rootfs.tar" .
    rm -rf --one-file-system "$root"
    docker_build "$PYTHON_IMAGE" "$hash" "$ctx"

    docker run --rm "$PYTHON_IMAGE" python3 -c 'import json, sqlite3, asyncio; print("ok")' | grep -qx ok ||
        die "$PYTHON_IMAGE smoke test failed"
    log "built $PYTHON_IMAGE ($(docker image inspect -f '{{.Size}}' "$PYTHON_IMAGE") bytes) in $(elapsed "$t0")"
}

# Function jobs (jupyter_sched.submit) unpickle with cloudpickle in the image: copy the venv's
# pure-Python package in as a layer over the python image and label the versions they must match.
# Rebuilt only when the Dockerfile or the cloudpickle version changes (or the base was rebuilt).
add_cloudpickle() {
    local hash have ctx src cp_version py_version
    [[ -x "$VENV_PYTHON" ]] || die "no venv python at $VENV_PYTHON (run scripts/setup/python.sh, or set JSCHED_VENV_PYTHON)"
    src="$("$VENV_PYTHON" -c 'import cloudpickle, os; print(os.path.dirname(cloudpickle.__file__))')" ||
        die "cloudpickle is not installed in $VENV_PYTHON (pip install -e .)"
    cp_version="$("$VENV_PYTHON" -c 'import cloudpickle; print(cloudpickle.__version__)')"
    hash="$(recipe_hash "$IMAGES_DIR/python/Dockerfile.functions" <(echo "$cp_version") \
        <(docker image inspect -f "{{ index .Config.Labels \"$RECIPE_LABEL\" }}" "$PYTHON_IMAGE"))"
    have="$(docker image inspect -f "{{ index .Config.Labels \"$FUNCTIONS_LABEL\" }}" "$PYTHON_IMAGE" 2>/dev/null || true)"
    if ((!force)) && [[ "$have" == "$hash" ]]; then
        log "$PYTHON_IMAGE has cloudpickle $cp_version (recipe $hash); skipping"
        return 0
    fi
    py_version="$(docker run --rm "$PYTHON_IMAGE" python3 -c 'import platform; print(platform.python_version())')"
    ctx="$WORK/functions"
    mkdir -p "$ctx"
    cp "$IMAGES_DIR/python/Dockerfile.functions" "$ctx/Dockerfile"
    cp -r "$src" "$ctx/cloudpickle"
    find "$ctx/cloudpickle" -name __pycache__ -prune -exec rm -rf {} +
    if ! DOCKER_BUILDKIT=0 docker build --label "$FUNCTIONS_LABEL=$hash" \
        --label "jupyter-sched.python=$py_version" --label "jupyter-sched.cloudpickle=$cp_version" \
        -t "$PYTHON_IMAGE" "$ctx" >"$WORK/functions.log" 2>&1; then
        tail -n 40 "$WORK/functions.log" >&2
        die "adding cloudpickle to $PYTHON_IMAGE failed"
    fi
    docker run --rm "$PYTHON_IMAGE" python3 -c 'import cloudpickle; print("ok")' | grep -qx ok ||
        die "$PYTHON_IMAGE: cloudpickle does not import"
    log "$PYTHON_IMAGE: added cloudpickle $cp_version (Python $py_version)"
}

# Notebook jobs (jupyter_sched.Notebook) run nbclient and an ipykernel in the replica and import the host's
# jupyter_sched package, which the job mounts: copy the [notebooks] extra and jupyter_sched's own
# requirements out of the venv (stage_dists.py, as for torch) into the python image's /usr/local site
# directory, and label the versions. Rebuilt when the Dockerfile, the staging step, a staged version or
# the layers below change.
add_notebooks() {
    local hash have ctx dists names site probe venv_xy image_xy staged out nb_versions base base_functions
    [[ -x "$VENV_PYTHON" ]] || die "no venv python at $VENV_PYTHON (run scripts/setup/python.sh, or set JSCHED_VENV_PYTHON)"
    names="$("$VENV_PYTHON" - <<'PY'
import importlib.metadata as md
from packaging.requirements import Requirement
wanted = []
for text in md.requires("jupyter_sched") or []:
    req = Requirement(text)
    # cloudpickle is the layer below's (add_cloudpickle, labelled): one copy, whose version the label tells
    if req.name != "cloudpickle" and (req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", "notebooks"))):
        wanted.append(req.name)
print(" ".join(wanted))
PY
)" || die "cannot read jupyter_sched's requirements from $VENV_PYTHON (pip install -e '.[notebooks]')"
    # shellcheck disable=SC2086  # names: one word per distribution
    dists="$("$VENV_PYTHON" "$STAGE_DISTS" --list $names)" ||
        die "jupyter_sched's requirements are incomplete in $VENV_PYTHON (pip install -e '.[notebooks]')"
    hash="$(recipe_hash "$IMAGES_DIR/python/Dockerfile.notebooks" "$STAGE_DISTS" <(echo "$dists") \
        <(docker image inspect -f "{{ index .Config.Labels \"$RECIPE_LABEL\" }} {{ index .Config.Labels \"$FUNCTIONS_LABEL\" }}" "$PYTHON_IMAGE"))"
    have="$(docker image inspect -f "{{ index .Config.Labels \"$NOTEBOOKS_LABEL\" }}" "$PYTHON_IMAGE" 2>/dev/null || true)"
    if ((!force)) && [[ "$have" == "$hash" ]]; then
        log "$PYTHON_IMAGE has the notebook packages (recipe $hash); skipping"
        return 0
    fi
    # A rebuild replaces this layer rather than stacking a second one on it: it starts FROM the image the
    # first build started from (its id is a label), as long as that one has the same cloudpickle layer.
    base="$(docker image inspect -f '{{.Id}}' "$PYTHON_IMAGE")"
    if [[ -n "$have" ]]; then
        base="$(docker image inspect -f "{{ index .Config.Labels \"$NOTEBOOKS_LABEL-base\" }}" "$PYTHON_IMAGE")"
        base_functions="$(docker image inspect -f "{{ index .Config.Labels \"$FUNCTIONS_LABEL\" }}" "$base" 2>/dev/null || true)"
        if [[ -z "$base" || "$base_functions" != "$(docker image inspect -f "{{ index .Config.Labels \"$FUNCTIONS_LABEL\" }}" "$PYTHON_IMAGE")" ]]; then
            base="$(docker image inspect -f '{{.Id}}' "$PYTHON_IMAGE")"
        fi
    fi
    venv_xy="$("$VENV_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    probe="$(docker run --rm "$base" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2],
        *[p for p in sys.path if p.startswith("/usr/local/") and p.endswith("-packages")][:1])')" ||
        die "could not run python3 in $PYTHON_IMAGE"
    read -r image_xy site <<<"$probe"
    [[ "$venv_xy" == "$image_xy" ]] ||
        die "the venv's compiled packages (pyzmq, psutil) are for Python $venv_xy but $PYTHON_IMAGE has Python $image_xy"
    [[ -n "$site" ]] || die "$PYTHON_IMAGE's python3 has no /usr/local/.../*-packages on sys.path"
    ctx="$WORK/notebooks"
    mkdir -p "$ctx"
    cp "$IMAGES_DIR/python/Dockerfile.notebooks" "$ctx/Dockerfile"
    # shellcheck disable=SC2086
    staged="$("$VENV_PYTHON" "$STAGE_DISTS" "$ctx/site" $names)" || die "staging the notebook packages from $VENV_PYTHON failed"
    nb_versions="$(awk '$1 == "nbclient" || $1 == "ipykernel" {printf "%s%s=%s", sep, $1, $2; sep=","}' <<<"$staged")"
    if ! DOCKER_BUILDKIT=0 docker build --label "$NOTEBOOKS_LABEL=$hash" --label "jupyter-sched.notebooks=$nb_versions" \
        --label "$NOTEBOOKS_LABEL-base=$base" --build-arg "BASE=$base" --build-arg "SITE=$site" \
        -t "$PYTHON_IMAGE" "$ctx" >"$WORK/notebooks.log" 2>&1; then
        tail -n 40 "$WORK/notebooks.log" >&2
        die "adding the notebook packages to $PYTHON_IMAGE failed"
    fi
    rm -rf "$ctx"
    out="$(docker run --rm "$PYTHON_IMAGE" python3 -c 'import nbclient, ipykernel, zmq, yaml, docstring_parser; print("ok")' 2>&1)" || true
    [[ "$(tail -n1 <<<"$out")" == ok ]] || { echo "$out" >&2; die "$PYTHON_IMAGE: the notebook packages do not import"; }
    log "$PYTHON_IMAGE: added $nb_versions and jupyter_sched's requirements ($(wc -l <<<"$staged") distributions)"
}

# True under CI (CI=true/1/yes, as tests/conftest.py reads it): there nothing may be skipped.
in_ci() {
    local ci="${CI:-}"
    [[ "${ci,,}" =~ ^(1|true|yes)$ ]]
}

# jupyter-sched/torch:local: the python image plus the venv's torch and what it requires, staged
# offline by stage_dists.py, so dist.ddp (torchrun) runs for real on local_docker. Rebuilt when the
# Dockerfile, the staging step, the version of torch or of anything it requires, or the python image's
# recipe changes.
build_torch() {
    local t0 t1 hash ctx torch_version dists site probe venv_xy image_xy staged out
    t0="$(now)"
    [[ -x "$VENV_PYTHON" ]] || die "no venv python at $VENV_PYTHON (run scripts/setup/python.sh, or set JSCHED_VENV_PYTHON)"
    if ! torch_version="$("$VENV_PYTHON" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null)"; then
        in_ci && die "torch is not installed in $VENV_PYTHON, so $TORCH_IMAGE cannot be built (CI=true: run scripts/setup/torch.sh first)"
        log "torch is not installed in $VENV_PYTHON: skipping $TORCH_IMAGE (the torch docker tests will skip; scripts/setup/torch.sh installs it)"
        return 0
    fi
    docker image inspect "$PYTHON_IMAGE" >/dev/null 2>&1 ||
        die "$TORCH_IMAGE is built on $PYTHON_IMAGE, which is missing (scripts/setup/images.sh python torch)"
    dists="$("$VENV_PYTHON" "$STAGE_DISTS" --list torch)" || die "torch's requirements are incomplete in $VENV_PYTHON"
    hash="$(recipe_hash "$IMAGES_DIR/torch/Dockerfile" "$STAGE_DISTS" <(echo "$dists") \
        <(docker image inspect -f "{{ index .Config.Labels \"$RECIPE_LABEL\" }} {{ index .Config.Labels \"$FUNCTIONS_LABEL\" }}" "$PYTHON_IMAGE"))"

    if ((!force)) && image_current "$TORCH_IMAGE" "$hash"; then
        log "$TORCH_IMAGE is up to date (torch $torch_version, recipe $hash); skipping"
        return 0
    fi
    log "building $TORCH_IMAGE (torch $torch_version, recipe $hash)"
    # torch's compiled modules are for the venv's Python (cp311...): the image's must be the same X.Y.
    # Its packages go to the sys.path entry under /usr/local (apt owns /usr/lib/python3/dist-packages).
    venv_xy="$("$VENV_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    probe="$(docker run --rm "$PYTHON_IMAGE" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2],
        *[p for p in sys.path if p.startswith("/usr/local/") and p.endswith("-packages")][:1])')" ||
        die "could not run python3 in $PYTHON_IMAGE"
    read -r image_xy site <<<"$probe"
    [[ "$venv_xy" == "$image_xy" ]] ||
        die "the venv's torch is for Python $venv_xy but $PYTHON_IMAGE has Python $image_xy"
    [[ -n "$site" ]] || die "$PYTHON_IMAGE's python3 has no /usr/local/.../*-packages on sys.path"

    ctx="$WORK/torch"
    mkdir -p "$ctx"
    cp "$IMAGES_DIR/torch/Dockerfile" "$ctx/"
    t1="$(now)"
    staged="$("$VENV_PYTHON" "$STAGE_DISTS" "$ctx/site" torch)" || die "staging torch from $VENV_PYTHON failed"
    log "staged $(du -sh "$ctx/site" | cut -f1) in $(elapsed "$t1"): $(awk '{printf "%s%s %s", sep, $1, $2; sep=", "}' <<<"$staged")"
    docker_build "$TORCH_IMAGE" "$hash" "$ctx" --build-arg "SITE=$site" --label "jupyter-sched.torch=$torch_version"
    rm -rf "$ctx"

    out="$(docker run --rm "$TORCH_IMAGE" python3 -c \
        'import torch, torch.distributed as d; assert d.is_gloo_available(); print("ok")' 2>&1)" || true
    [[ "$(tail -n1 <<<"$out")" == ok ]] || { echo "$out" >&2; die "$TORCH_IMAGE smoke test failed"; }
    log "built $TORCH_IMAGE ($(docker image inspect -f '{{.Size}}' "$TORCH_IMAGE") bytes) in $(elapsed "$t0")"
}

# images/site names jupyter-sched/torch:local as dist.ddp's default image (the jupyter_sched.images entry
# point), so a component called without --image, e.g. TorchX's ddp(script=..., j="2x1"), runs here as it
# would in pytorch/pytorch:latest where images can be pulled. Installed only with the image, from a copy
# (setuptools writes build/ and *.egg-info beside its sources), and only when it changed.
install_site() {
    local module="$IMAGES_DIR/site/jupyter_sched_local_images.py" installed ep copy
    docker image inspect "$TORCH_IMAGE" >/dev/null 2>&1 || return 0
    installed="$("$VENV_PYTHON" -c 'import jupyter_sched_local_images as m; print(m.__file__)' 2>/dev/null || true)"
    ep="$("$VENV_PYTHON" -c 'from importlib.metadata import entry_points as e
print(*[p.value for p in e(group="jupyter_sched.images") if p.name == "torch"])' 2>/dev/null || true)"
    if [[ -n "$installed" ]] && cmp -s "$installed" "$module" && [[ "$ep" == "jupyter_sched_local_images:TORCH" ]]; then
        log "images/site is installed: dist.ddp defaults to $TORCH_IMAGE"
        return 0
    fi
    copy="$WORK/site"
    cp -r "$IMAGES_DIR/site" "$copy"
    "$VENV_PYTHON" -m pip install --quiet --no-deps --no-build-isolation "$copy" ||
        die "installing images/site into $VENV_PYTHON failed"
    log "installed images/site: dist.ddp defaults to $TORCH_IMAGE"
}

main() {
    require_root
    docker_ready || die "no Docker engine answers; run scripts/setup/docker.sh first"
    local t0 name
    t0="$(now)"

    # Two concurrent runs would both debootstrap; make the second one wait and
    # then find the images already built.
    exec 8>/run/lock/jupyter-sched-images.lock
    flock -w 600 8 || die "could not get lock /run/lock/jupyter-sched-images.lock"

    WORK="$(mktemp -d /var/tmp/jupyter-sched-images.XXXXXX)"
    for name in busybox python torch; do # in this order whatever the command line's: torch is FROM python
        [[ " ${wanted[*]} " == *" $name "* ]] || continue
        "build_$name"
        if [[ "$name" == busybox ]]; then tag_busybox_for_torchx; fi
        if [[ "$name" == python ]]; then add_cloudpickle && add_notebooks; fi
        if [[ "$name" == torch ]]; then install_site; fi
    done
    log "images ready in $(elapsed "$t0"): ${wanted[*]}"
}

main
