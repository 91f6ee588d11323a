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
#   (no action)  start the head unless it already takes jobs (what is left of a broken one is stopped first),
#                wait until jobs can be submitted (once more if a loaded machine made it fail), and print
#                `export RAY_ADDRESS=http://127.0.0.1:8265` on stdout (eval "$(bash scripts/setup/ray.sh)")
#   stop         `ray stop` (the head's processes on this machine), waiting until the dashboard is gone
#   status       exit status 0 only if the dashboard answers; prints `ray status`
#   address      print the export line only
#
# Environment:
#   JSCHED_PYTHON=.venv/bin/python  the interpreter whose `ray` runs the head and whose python3 runs jobs
#   RAY_HEAD_PORT=6379              the head's GCS port
#   RAY_DASHBOARD_PORT=8265         the dashboard (job submission API) port
#   RAY_AGENT_PORT=52365            the head's dashboard agent (it runs the jobs), probed to know the head is up
#   RAY_NUM_CPUS=4                  logical CPUs the head offers (a 2-replica job of cpu=2 each must fit)
#   RAY_OBJECT_STORE_MB=128         the object store's size (Ray's default takes 30% of the memory)
#   RAY_START_TIMEOUT=90            seconds to wait for the job API and the agent (a second try if not up)
set -euo pipefail

# shellcheck source=scripts/setup/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

PY="${JSCHED_PYTHON:-$JSCHED_REPO_ROOT/.venv/bin/python}"
RAY_HEAD_PORT="${RAY_HEAD_PORT:-6379}"
RAY_DASHBOARD_PORT="${RAY_DASHBOARD_PORT:-8265}"
RAY_AGENT_PORT="${RAY_AGENT_PORT:-52365}"
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

# Up means jobs can be submitted: the dashboard's job API answers, and so does the head node's dashboard
# agent, which runs the jobs (it starts with the raylet; a submit without it fails "No available agent").
head_up() {
    "$PY" - "$ADDRESS" "http://127.0.0.1:$RAY_AGENT_PORT" <<'EOF' >/dev/null 2>&1
import sys, urllib.error, urllib.request
for path in ("/api/version", "/api/jobs/"):
    with urllib.request.urlopen(sys.argv[1] + path, timeout=5) as r:
        assert r.status == 200
try:  # any answer of the agent's HTTP server will do (it has no health route of its own)
    urllib.request.urlopen(sys.argv[2] + "/api/job_agent/jobs/probe/logs", timeout=5)
except urllib.error.HTTPError:
    pass
EOF
}

print_address() { echo "export RAY_ADDRESS=$ADDRESS"; }

# start_head: ray start, then wait until head_up. Returns 1 (having said why) if it did not come up.
start_head() {
    log "starting a Ray head (GCS port $RAY_HEAD_PORT), dashboard $ADDRESS ($RAY_NUM_CPUS CPUs)"
    # setsid: the head's daemons get their own session, so they outlive this shell (or CI step). The raylet
    # waits for its agents longer than Ray's default (a loaded machine starts them slowly).
    if ! env -u RAY_ADDRESS PATH="$BIN:$PATH" RAY_DEDUP_LOGS=0 RAY_USAGE_STATS_ENABLED=0 \
        RAY_agent_register_timeout_ms=120000 setsid "$RAY" start \
        --head --port "$RAY_HEAD_PORT" --dashboard-host 127.0.0.1 --dashboard-port "$RAY_DASHBOARD_PORT" \
        --include-dashboard true --dashboard-agent-listen-port "$RAY_AGENT_PORT" --num-cpus "$RAY_NUM_CPUS" \
        --object-store-memory "$((RAY_OBJECT_STORE_MB * 1024 * 1024))" --disable-usage-stats </dev/null >&2; then
        log "ray start failed"
        return 1
    fi
    local deadline=$((SECONDS + RAY_START_TIMEOUT))
    until head_up; do
        if ((SECONDS >= deadline)); then
            log "timed out after ${RAY_START_TIMEOUT}s waiting for $ADDRESS/api/jobs/ and the head's agent"
            tail -n 20 /tmp/ray/session_latest/logs/dashboard.log 2>/dev/null | sed 's/^/    /' >&2 || true
            return 1
        fi
        sleep 0.5
    done
}

do_up() {
    if ! have_ray; then
        log "Ray is not installed for $PY: nothing started (pip install 'jupyter_sched[ray]')"
        return 0
    fi
    if head_up; then
        log "Ray head already up: $ADDRESS"
        print_address
        return 0
    fi
    local t0
    t0="$(now)"
    do_stop # whatever is left of a head that is not (or no longer) whole
    # On a loaded machine the raylet may give up waiting for its agents and abort: once more, then fail.
    if ! start_head; then
        log "the Ray head did not come up: stopping it and trying once more"
        do_stop
        start_head || { do_stop; die "the Ray head did not come up (logs: /tmp/ray/session_latest/logs)"; }
    fi
    log "Ray head up in $(elapsed "$t0")"
    print_address
}

do_stop() {
    have_ray || return 0
    "$RAY" stop >&2 || true
    local i
    for i in $(seq 1 100); do
        head_up || return 0
        sleep 0.1
    done
    "$RAY" stop --force >&2 || true
}

do_status() {
    if ! have_ray; then
        echo "Ray is not installed for $PY"
        return 1
    fi
    if head_up; then
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
