# shellcheck shell=bash
# Helpers shared by scripts/setup/*.sh. Sourced, never executed directly.
#
# Everything here is deliberately dependency-free (bash + coreutils) because it
# runs on a bare machine before anything else is installed.

# Name of the calling script, used as a log prefix so interleaved CI output
# from docker.sh -> images.sh stays readable.
JSCHED_SCRIPT_NAME="$(basename -- "${BASH_SOURCE[1]:-$0}" .sh)"

log() {
    printf '[setup/%s %s] %s\n' "$JSCHED_SCRIPT_NAME" "$(date +%H:%M:%S)" "$*" >&2
}

die() {
    log "ERROR: $*"
    exit 1
}

require_root() {
    # apt-get, dockerd, mount probes and debootstrap all need real root.
    [[ "$(id -u)" -eq 0 ]] || die "must run as root (uid 0), got uid $(id -u)"
}

# Seconds (with millis) since the epoch; used for the timings we print.
now() { date +%s.%N; }

# elapsed START -> "12.3s"
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1fs", e - s }'; }

# True if every named Debian package is installed (status "install ok installed").
pkgs_installed() {
    local p status
    for p in "$@"; do
        status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
        [[ "$status" == "install ok installed" ]] || return 1
    done
}

# apt_install PKG...: install only the packages that are missing.
# `apt-get update` runs at most once per setup run (it is the slow,
# network-bound part; the flag is exported so docker.sh -> images.sh share it),
# and --no-install-recommends keeps out things like apparmor/git that docker.io
# merely recommends.
: "${JSCHED_APT_UPDATED:=0}"
apt_install() {
    local missing=() p
    for p in "$@"; do
        pkgs_installed "$p" || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0

    export DEBIAN_FRONTEND=noninteractive
    # Other setup scripts may be running apt concurrently on this machine:
    # wait for the dpkg/apt locks instead of failing at once.
    local lock=(-o DPkg::Lock::Timeout=300)
    if ((JSCHED_APT_UPDATED == 0)); then
        log "apt-get update"
        apt-get "${lock[@]}" update -qq || die "apt-get update failed"
        export JSCHED_APT_UPDATED=1
    fi
    log "apt-get install ${missing[*]}"
    apt-get "${lock[@]}" install -y -qq --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        "${missing[@]}" >/dev/null ||
        die "apt-get install ${missing[*]} failed"
}

# True if a Docker engine answers on the current DOCKER_HOST / default socket.
docker_ready() {
    command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1
}

# True if PID is alive.
pid_alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }

# The directory holding this repo (scripts/setup/.. /..).
JSCHED_REPO_ROOT="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)"
export JSCHED_REPO_ROOT
