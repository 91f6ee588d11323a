#!/usr/bin/env bash
# A real Ray cluster on this one machine (one head node, with its dashboard), for the `-s torchx:ray`
# tests and tutorial and for trying TorchX's Ray scheduler out.
#
# Installs nothing: Ray comes from the venv (`pip install 'jupyter_sched[ray]'`; the test extra has it).
# Without Ray in the venv it says so and exits 0 (the Ray tests then skip, or fail under CI=true). The
# dashboard (the job API) listens on 127.0.0.1; the ports Ray's daemons open between themselves are Ray's
# choice. Job entrypoints run the venv's python3 (the venv's bin/ is first on the head's PATH), and the head
# runs with RAY_DEDUP_LOGS=0, so a line that several replicas print is logged once per replica rather than
# as "[repeated Nx across cluster]".
#
# Usage: scripts/setup/ray.sh [ACTION]
#   (no action)  start the head unless it already answers, wait until jobs can be submitted, and print
#                `export RAY_ADDRESS=http://127.0.0.1:8265` on stdout (eval "$(bash scripts/setup/ray.sh)")
#   stop         `ray stop` (the head's processes on this machine), waiting until the dashboard is gone
#   status       exit status 0 only if the dashboard answers; prints `ray status`
#   address      print the export line only
#
# Environment:
#   JSCHED_PYTHON=.venv/bin/python  the interpreter whose `ray` runs the head and whose python3 runs jobs
#   RAY_HEAD_PORT=6379              the head's GCS port
#   RAY_DASHBOARD_PORT=8265         the dashboard (job submission API) port
#   RAY_NUM_CPUS=4                  logical CPUs the head offers (a 2-replica job of cpu=2 each must fit)
#   RAY_OBJECT_STORE_MB=128         the object store's size (Ray's default takes 30% of the memory)
#   RAY_START_TIMEOUT=90            seconds to wait for the dashboard and its job API
set -euo pipefail

# shellcheck source=scripts/setup/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

PY="${JSCHED_PYTHON:-$JSCHED_REPO_ROOT/.venv/bin/python}"
RAY_HEAD_PORT="${RAY_HEAD_PORT:-6379}"
RAY_DASHBOARD_PORT="${RAY_DASHBOARD_PORT:-8265}"
RAY_NUM_CPUS="${RAY_NUM_CPUS:-4}"
RAY_OBJECT_STORE_MB="${RAY_OBJECT_STORE_MB:-128}"
RAY_START_TIMEOUT="${RAY_START_TIMEOUT:-90}"
ADDRESS="http://127.0.0.1:$RAY_DASHBOARD_PORT"

case "${1:-up}" in
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    address) echo "export RAY_ADDRESS=$ADDRESS"; exit 0 ;;
    up | stop | status) ;;
    *) echo "usage: $0 [stop|status|address]" >&2; exit 2 ;;
esac
[[ -x "$PY" ]] || die "no interpreter at $PY (run scripts/setup/python.sh, or set JSCHED_PYTHON)"
BIN="$(dirname -- "$PY")"
RAY="$BIN/ray"

have_ray() { [[ -x "$RAY" ]] && "$PY" -c 'import ray.dashboard.modules.job.sdk' 2>/dev/null; }

# The job API answers (not only the dashboard's front page): what a submit needs.
jobs_api_up() {
    "$PY" - "$ADDRESS" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
for path in ("/api/version", "/api/jobs/"):
    with urllib.request.urlopen(sys.argv[1] + path, timeout=5) as r:
        assert r.status == 200
EOF
}

print_address() { echo "export RAY_ADDRESS=$ADDRESS"; }

do_up() {
    if ! have_ray; then
        log "Ray is not installed for $PY: nothing started (pip install 'jupyter_sched[ray]')"
        return 0
    fi
    if jobs_api_up; then
        log "Ray head already up: $ADDRESS"
        print_address
        return 0
    fi
    local t0
    t0="$(now)"
    log "starting a Ray head (GCS port $RAY_HEAD_PORT), dashboard $ADDRESS ($RAY_NUM_CPUS CPUs)"
    # setsid: the head's daemons get their own session, so they outlive this shell (or CI step).
    env -u RAY_ADDRESS PATH="$BIN:$PATH" RAY_DEDUP_LOGS=0 RAY_USAGE_STATS_ENABLED=0 setsid "$RAY" start --head \
        --port "$RAY_HEAD_PORT" \
        --dashboard-host 127.0.0.1 --dashboard-port "$RAY_DASHBOARD_PORT" --include-dashboard true \
        --num-cpus "$RAY_NUM_CPUS" --object-store-memory "$((RAY_OBJECT_STORE_MB * 1024 * 1024))" \
        --disable-usage-stats </dev/null >&2 || die "ray start failed"
    local deadline=$((SECONDS + RAY_START_TIMEOUT))
    until jobs_api_up; do
        if ((SECONDS >= deadline)); then
            log "timed out after ${RAY_START_TIMEOUT}s waiting for $ADDRESS/api/jobs/"
            tail -n 20 /tmp/ray/session_latest/logs/dashboard.log 2>/dev/null | sed 's/^/    /' >&2 || true
            die "the Ray dashboard did not come up"
        fi
        sleep 0.5
    done
    log "Ray head up in $(elapsed "$t0")"
    print_address
}

do_stop() {
    have_ray || return 0
    "$RAY" stop >&2 || true
    local i
    for i in $(seq 1 100); do
        jobs_api_up || return 0
        sleep 0.1
    done
    "$RAY" stop --force >&2 || true
}

do_status() {
    if ! have_ray; then
        echo "Ray is not installed for $PY"
        return 1
    fi
    if jobs_api_up; then
        "$RAY" status --address "127.0.0.1:$RAY_HEAD_PORT" || true
        print_address
        return 0
    fi
    echo "the Ray head is not up (start it: $0)"
    return 1
}

case "${1:-up}" in
    up) do_up ;;
    stop) do_stop ;;
    status) do_status ;;
esac
