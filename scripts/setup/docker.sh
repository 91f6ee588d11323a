#!/usr/bin/env bash
# Ensure a real Docker engine is running on this machine, then build the
# locally-built test images (scripts/setup/images.sh).
#
# Why this exists: the test suite needs a real engine, but machines here have
# no systemd and no Docker Hub access. So we install Debian's docker.io, start
# dockerd ourselves in the background (detached so it outlives this script),
# and build every image locally (FROM scratch, or on another of ours).
#
# Idempotent: if `docker info` already answers, the engine part is skipped;
# images are only built when missing or stale (see images.sh).
#
# Usage: scripts/setup/docker.sh [--force] [--no-images]
#   --force      rebuild the images even if they exist (passed to images.sh)
#   --no-images  only make sure the engine runs
#
# Environment overrides:
#   JSCHED_DOCKERD_LOG             dockerd log file   (/var/log/jupyter-sched-dockerd.log)
#   JSCHED_DOCKERD_TIMEOUT         seconds to wait for the engine (60)
#   JSCHED_DOCKER_STORAGE_DRIVER   skip the probe and use this driver
set -euo pipefail

# shellcheck source=scripts/setup/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

DOCKERD_LOG="${JSCHED_DOCKERD_LOG:-/var/log/jupyter-sched-dockerd.log}"
DOCKERD_TIMEOUT="${JSCHED_DOCKERD_TIMEOUT:-60}"
DOCKERD_PIDFILE=/var/run/docker.pid
DATA_ROOT=/var/lib/docker
DAEMON_JSON=/etc/docker/daemon.json

build_images=1
images_args=()
for arg in "$@"; do
    case "$arg" in
        --force) images_args+=(--force) ;;
        --no-images) build_images=0 ;;
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

# --- storage driver ---------------------------------------------------------
# overlay2 is fast and what real deployments use, but it cannot work everywhere
# (e.g. when /var/lib/docker itself sits on overlayfs, as in nested
# containers). dockerd's own auto-detection can pick overlay2 and only fail
# later at container creation, so we probe with a real overlay mount on the
# filesystem that will hold the data root, and fall back explicitly.
probe_overlay() {
    local dir ok=1
    mkdir -p "$DATA_ROOT"
    dir="$(mktemp -d "$DATA_ROOT/.overlay-probe.XXXXXX")"
    mkdir -p "$dir"/{lower,upper,work,merged}
    echo lower >"$dir/lower/f"
    if mount -t overlay overlay \
        -o "lowerdir=$dir/lower,upperdir=$dir/upper,workdir=$dir/work" "$dir/merged" 2>/dev/null; then
        # Copy-up + whiteout are what break on unsupported backing filesystems.
        if echo upper >>"$dir/merged/f" && rm "$dir/merged/f" && [[ ! -e "$dir/merged/f" ]]; then
            ok=0
        fi
        umount "$dir/merged" || true
    fi
    rm -rf "$dir"
    return "$ok"
}

probe_fuse_overlayfs() {
    [[ -c /dev/fuse ]] || return 1
    apt_install fuse-overlayfs fuse3
    local dir ok=1
    dir="$(mktemp -d "$DATA_ROOT/.fuse-probe.XXXXXX")"
    mkdir -p "$dir"/{lower,upper,work,merged}
    echo lower >"$dir/lower/f"
    if fuse-overlayfs -o "lowerdir=$dir/lower,upperdir=$dir/upper,workdir=$dir/work" \
        "$dir/merged" 2>/dev/null; then
        if echo upper >>"$dir/merged/f" && rm "$dir/merged/f"; then ok=0; fi
        fusermount3 -u "$dir/merged" 2>/dev/null || umount "$dir/merged" || true
    fi
    rm -rf "$dir"
    return "$ok"
}

choose_storage_driver() {
    if [[ -n "${JSCHED_DOCKER_STORAGE_DRIVER:-}" ]]; then
        echo "$JSCHED_DOCKER_STORAGE_DRIVER"
    elif probe_overlay; then
        echo overlay2
    elif probe_fuse_overlayfs; then
        log "WARNING: kernel overlay mount failed here; using fuse-overlayfs (slower)"
        echo fuse-overlayfs
    else
        log "WARNING: neither overlay nor fuse-overlayfs work here; using vfs (slow, full copies per layer)"
        echo vfs
    fi
}

# --- iptables ---------------------------------------------------------------
# dockerd needs iptables for the bridge networks (NAT, isolation, and the
# embedded DNS used for name resolution on user-defined networks). Debian 12
# defaults to the nf_tables backend; some kernels only have the legacy
# x_tables one, so switch the alternative when nft does not work.
# Prints the extra dockerd flags needed (none, or --iptables=false).
configure_iptables() {
    if iptables -t nat -S >/dev/null 2>&1 && iptables -t filter -S >/dev/null 2>&1; then
        log "iptables OK ($(iptables -V))"
        return 0
    fi
    if command -v iptables-legacy >/dev/null &&
        iptables-legacy -t nat -S >/dev/null 2>&1 && iptables-legacy -t filter -S >/dev/null 2>&1; then
        log "iptables (nf_tables) does not work here; switching alternatives to iptables-legacy"
        update-alternatives --set iptables /usr/sbin/iptables-legacy >/dev/null
        update-alternatives --set ip6tables /usr/sbin/ip6tables-legacy >/dev/null 2>&1 || true
        return 0
    fi
    log "WARNING: no working iptables backend; starting dockerd with --iptables=false" \
        "(no NAT / published ports / isolation between networks)"
    echo "--iptables=false"
}

# --- start the engine -------------------------------------------------------
wait_for_engine() {
    # $1: pid to watch (fail fast if it dies), may be empty.
    local pid="${1:-}" deadline=$((SECONDS + DOCKERD_TIMEOUT))
    while ((SECONDS < deadline)); do
        docker_ready && return 0
        if [[ -n "$pid" ]] && ! pid_alive "$pid"; then
            log "dockerd (pid $pid) exited during startup; last log lines from $DOCKERD_LOG:"
            tail -n 40 "$DOCKERD_LOG" >&2 || true
            die "dockerd failed to start"
        fi
        sleep 0.5
    done
    log "dockerd did not answer within ${DOCKERD_TIMEOUT}s; last log lines from $DOCKERD_LOG:"
    tail -n 40 "$DOCKERD_LOG" >&2 || true
    die "timed out waiting for dockerd"
}

start_engine() {
    local t0 args=() pid driver
    t0="$(now)"

    # docker.io pulls in containerd, runc, tini (docker-init) and iptables.
    # The docker CLI may already exist (e.g. /usr/local/bin/docker) but that
    # is only a client; the engine is the `dockerd` binary.
    if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
        apt_install docker.io
    fi
    command -v dockerd >/dev/null || die "dockerd not found after installing docker.io"

    # Someone (another concurrent run, a human) may already have a dockerd
    # starting up; never start a second one on the same data root.
    if [[ -s "$DOCKERD_PIDFILE" ]] && pid_alive "$(cat "$DOCKERD_PIDFILE")"; then
        pid="$(cat "$DOCKERD_PIDFILE")"
        log "dockerd already running as pid $pid but not answering yet; waiting"
        wait_for_engine "$pid"
        return 0
    fi

    # A storage-driver both on the command line and in daemon.json is a fatal
    # dockerd error, so only pass ours if the admin did not configure one.
    if [[ -f "$DAEMON_JSON" ]] && grep -q '"storage-driver"' "$DAEMON_JSON"; then
        log "storage driver configured in $DAEMON_JSON; not probing"
    else
        driver="$(choose_storage_driver)"
        log "storage driver: $driver"
        args+=("--storage-driver=$driver")
    fi

    local ipt
    ipt="$(configure_iptables)"
    if [[ -n "$ipt" ]]; then args+=("$ipt"); fi

    mkdir -p "$(dirname -- "$DOCKERD_LOG")"
    printf '\n===== %s: starting dockerd %s =====\n' "$(date -Is)" "${args[*]}" >>"$DOCKERD_LOG"

    # setsid: own session + process group, so the engine survives this script,
    # its CI job and a `kill -- -PGID` of the caller. -w makes setsid wait if it
    # had to fork, so $! tracks dockerd's lifetime either way. nohup ignores
    # SIGHUP; stdin from /dev/null so it never holds the caller's terminal.
    # 9>&-: the daemon must not inherit (and so hold forever) our setup lock.
    setsid -w nohup dockerd "${args[@]}" >>"$DOCKERD_LOG" 2>&1 </dev/null 9>&- &
    pid=$!
    disown "$pid" 2>/dev/null || true
    log "dockerd started (pid $pid), log: $DOCKERD_LOG; waiting up to ${DOCKERD_TIMEOUT}s"
    wait_for_engine "$pid"
    log "engine ready in $(elapsed "$t0")"
}

main() {
    require_root
    local t0
    t0="$(now)"

    # Serialise concurrent setup runs (several engineers share this machine):
    # a second caller waits here and then finds the engine already up.
    exec 9>/run/lock/jupyter-sched-docker-setup.lock
    flock -w 300 9 || die "could not get setup lock /run/lock/jupyter-sched-docker-setup.lock"

    if docker_ready; then
        log "Docker engine already answers; leaving it alone"
    else
        start_engine
    fi

    log "engine: $(docker info --format 'server {{.ServerVersion}}, storage {{.Driver}}, cgroup v{{.CgroupVersion}} ({{.CgroupDriver}})')"

    # Release the engine lock before the (possibly long) image builds;
    # images.sh has its own lock.
    exec 9>&-

    if ((build_images)); then
        "$(dirname -- "${BASH_SOURCE[0]}")/images.sh" "${images_args[@]}"
    fi
    log "done in $(elapsed "$t0")"
}

main
