#!/usr/bin/env bash
# Run a local, throw-away image registry for push/pull tests on 127.0.0.1:5000.
#
# Uses Debian's `docker-registry` package (the CNCF distribution registry v2).
# Listens on loopback ONLY: no auth, no TLS, so it must never be reachable
# from outside. The engine needs no config for it: dockerd treats 127.0.0.0/8
# registries as insecure (plain HTTP) by default.
#
# Idempotent: if http://127.0.0.1:5000/v2/ already answers, nothing is done.
#
# Usage: scripts/setup/registry.sh [--selftest] [--stop]
#   --selftest  push jupyter-sched/busybox:local to it and pull it back
#   --stop      stop the registry this script started (data is kept)
#
# Environment overrides:
#   JSCHED_REGISTRY_PORT   port on 127.0.0.1 (5000)
#   JSCHED_REGISTRY_DIR    config, storage and log (/tmp/jupyter-sched-registry)
set -euo pipefail

# shellcheck source=scripts/setup/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

PORT="${JSCHED_REGISTRY_PORT:-5000}"
ADDR="127.0.0.1:$PORT"
URL="http://$ADDR/v2/"
DIR="${JSCHED_REGISTRY_DIR:-/tmp/jupyter-sched-registry}"
PIDFILE="$DIR/registry.pid"
LOGFILE="$DIR/registry.log"
TIMEOUT=30

selftest=0
stop=0
for arg in "$@"; do
    case "$arg" in
        --selftest) selftest=1 ;;
        --stop) stop=1 ;;
        -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

registry_up() { curl -sf -o /dev/null --max-time 2 "$URL"; }

stop_registry() {
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null || true)"
    if pid_alive "$pid"; then
        kill "$pid"
        log "stopped registry (pid $pid)"
    else
        log "no registry started by this script is running"
    fi
    rm -f "$PIDFILE"
}

install_registry() {
    pkgs_installed docker-registry curl && return 0
    local had_registry=0
    pkgs_installed docker-registry && had_registry=1
    apt_install docker-registry curl
    # On a host with a working init, the package's postinst starts its own
    # service with /etc/docker/registry/config.yml, which listens on *:5000
    # (all interfaces). We only want our loopback instance, so stop it.
    if ((!had_registry)) && pid_alive "$(cat /var/run/docker-registry.pid 2>/dev/null || true)"; then
        log "stopping the distro docker-registry service (it binds all interfaces)"
        /etc/init.d/docker-registry stop >/dev/null 2>&1 || true
    fi
}

start_registry() {
    local t0 pid deadline
    t0="$(now)"
    install_registry

    # Something else on the port (and not a registry, or registry_up would
    # have answered) would make the bind fail; say so clearly.
    if command -v ss >/dev/null && ss -Hltn "sport = :$PORT" | grep -q .; then
        ss -Hltnp "sport = :$PORT" >&2 || true
        die "port $PORT is already in use by something that is not a registry"
    fi

    mkdir -p "$DIR/data"
    cat >"$DIR/config.yml" <<EOF
# Written by scripts/setup/registry.sh - local test registry, loopback only.
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $DIR/data
  delete:
    enabled: true
http:
  addr: $ADDR
EOF

    # Run unprivileged when the package's system user exists.
    local run_as=()
    if id docker-registry >/dev/null 2>&1; then
        chown -R docker-registry: "$DIR"
        run_as=(setpriv --reuid=docker-registry --regid=docker-registry --init-groups)
    fi

    printf '\n===== %s: starting registry on %s =====\n' "$(date -Is)" "$ADDR" >>"$LOGFILE"
    # Detached like dockerd (see docker.sh): survives this script and its job.
    # 7>&-: the daemon must not inherit (and so hold forever) our lock.
    setsid -w nohup "${run_as[@]}" docker-registry serve "$DIR/config.yml" \
        >>"$LOGFILE" 2>&1 </dev/null 7>&- &
    pid=$!
    disown "$pid" 2>/dev/null || true
    echo "$pid" >"$PIDFILE"

    deadline=$((SECONDS + TIMEOUT))
    until registry_up; do
        if ! pid_alive "$pid"; then
            tail -n 30 "$LOGFILE" >&2 || true
            die "registry exited during startup (log: $LOGFILE)"
        fi
        if ((SECONDS >= deadline)); then
            tail -n 30 "$LOGFILE" >&2 || true
            die "registry did not answer $URL within ${TIMEOUT}s (log: $LOGFILE)"
        fi
        sleep 0.3
    done
    log "registry up on $ADDR (pid $pid, storage $DIR/data, log $LOGFILE) in $(elapsed "$t0")"
}

# Round trip through the registry with the engine: tag, push, drop the local
# tag, pull it back. Proves the engine trusts the plain-HTTP loopback registry.
run_selftest() {
    local t0 src=jupyter-sched/busybox:local ref="$ADDR/jupyter-sched-selftest:1"
    t0="$(now)"
    docker_ready || die "--selftest needs a running engine (scripts/setup/docker.sh)"
    docker image inspect "$src" >/dev/null 2>&1 || die "--selftest needs $src (scripts/setup/images.sh)"
    docker tag "$src" "$ref"
    docker push "$ref" >/dev/null || die "docker push $ref failed"
    docker rmi "$ref" >/dev/null
    docker pull "$ref" >/dev/null || die "docker pull $ref failed"
    docker rmi "$ref" >/dev/null
    log "selftest: pushed and pulled $ref in $(elapsed "$t0")"
}

main() {
    require_root
    if ((stop)); then
        stop_registry
        return 0
    fi

    exec 7>/run/lock/jupyter-sched-registry.lock
    flock -w 60 7 || die "could not get lock /run/lock/jupyter-sched-registry.lock"

    if command -v curl >/dev/null && registry_up; then
        log "registry already answers on $URL; leaving it alone"
    else
        start_registry
    fi
    exec 7>&-

    if ((selftest)); then run_selftest; fi
}

main
