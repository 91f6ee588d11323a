#!/usr/bin/env bash
# The main job on a fresh machine: sets up the venv, then runs a two-replica app on the default local_cwd
# scheduler with the jupyter-sched command line: first the dry run (the exact request, nothing runs),
# then the run itself, following both replicas' logs (a \r progress bar, colours, stderr) to the end.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup/python.sh
app=(utils.python --num_replicas 2 --script examples/train.py 20)
echo "\$ jupyter-sched run --dryrun ${app[*]}"
.venv/bin/jupyter-sched run --dryrun "${app[@]}"
echo
echo "\$ jupyter-sched run ${app[*]}"
exec .venv/bin/jupyter-sched run "${app[@]}"
