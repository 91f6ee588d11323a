#!/usr/bin/env bash
# Everything the browser tests (tests/e2e/) need: Debian's Chromium, and JupyterLab + Playwright in .venv.
#
# Idempotent and cheap on a second run: apt only runs when chromium is missing (one `apt-get update` first),
# and the Python side is python.sh (the `test` extra carries jupyterlab and playwright). Playwright's own
# browser download cannot work here (no network but package registries), so the tests launch
# /usr/bin/chromium through `executable_path`; nothing here runs `playwright install`.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

start="$(now)"
require_root

# fonts-liberation: metric-compatible fonts so screenshots and text layout are stable.
apt_install chromium fonts-liberation

bash "$JSCHED_REPO_ROOT/scripts/setup/python.sh"

chromium_bin="${JSCHED_CHROMIUM:-/usr/bin/chromium}"
[[ -x "$chromium_bin" ]] || die "no executable browser at $chromium_bin"
version="$("$chromium_bin" --version 2>/dev/null || true)"
[[ -n "$version" ]] || die "$chromium_bin --version printed nothing"

"$JSCHED_REPO_ROOT/.venv/bin/python" - <<'PY' || die "jupyterlab/playwright missing from .venv (test extra)"
import importlib.metadata as md
for name in ("jupyterlab", "playwright", "nbval", "nbclient"):
    md.version(name)
PY

log "ready: $version; $("$JSCHED_REPO_ROOT/.venv/bin/python" -m jupyterlab --version 2>/dev/null | sed 's/^/jupyterlab /') ($(elapsed "$start"))"
