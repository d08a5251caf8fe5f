#!/usr/bin/env bash
# Makes sure the machine is set up, doing only what is missing; `npm test` (scripts/test.sh),
# `npm run demo`, `npm run setup` and `npm run package` (with KIMI_NPM_ONLY=1) all start with it,
# so each works as the first command typed on a fresh clone. When everything is already there it
# takes well under a second.
#   1. Debian packages (scripts/ensure-system-packages.sh: only the missing ones).
#   2. npm ci, when node_modules is missing or older than package-lock.json (npm's own record of
#      the install, node_modules/.package-lock.json, is the date; a package-lock.json that is
#      only newer because git rewrote it with the same content is recognised by its checksum).
#   3. The code-server cache for the e2e suite and the demo, with the Node it asks for from the npm
#      registry (scripts/setup-code-server.sh; a finished install is kept).
#
#   KIMI_FORCE_NPM_CI=1   run npm ci even when node_modules is up to date (npm run setup)
#   KIMI_SKIP_CODE_SERVER=1   leave the code-server cache alone (it is only needed by e2e/demo)
#   KIMI_NPM_ONLY=1   only step 2 (npm run package: building the VSIX needs Node and the npm
#                     packages, not sshd, Chromium or Docker, and must work without root or apt)
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }
started=$(date +%s%N)
did=()

# Two first commands typed at once (npm test in one terminal, npm run demo in another) must not
# both run npm ci or install code-server into the same folders: one waits for the other, for
# 10 minutes at most. The commands below run with the lock's descriptor closed (9>&-): a daemon one
# of them starts must not hold the lock for ever (the next set-up would wait on it).
lock="${TMPDIR:-/tmp}/kimi-service-setup.$(id -u).lock"
exec 9>>"$lock"
if ! flock -n 9; then
  log "waiting for another set-up to finish (it holds $lock)"
  if ! flock -w 600 9; then
    log "another set-up still holds $lock after 10 minutes; giving up (see: fuser -v $lock)"
    exit 1
  fi
fi

# 1. Debian packages.
if [[ "${KIMI_NPM_ONLY:-}" != 1 ]] && ! bash scripts/ensure-system-packages.sh 9>&-; then
  log "installing the Debian packages failed (they need root or sudo): see above"
  exit 1
fi

# 2. The project's npm dependencies.
installed=node_modules/.package-lock.json # written by npm at the end of every install
stamp=node_modules/.kimi-package-lock.sha256
lock_sum() { sha256sum package-lock.json | cut -d' ' -f1; }
reason=""
if [[ "${KIMI_FORCE_NPM_CI:-}" == 1 ]]; then
  reason="asked for"
elif [[ ! -d node_modules ]]; then
  reason="node_modules is missing"
elif [[ ! -f "$installed" ]]; then
  reason="node_modules was not installed by npm ci"
elif [[ package-lock.json -nt "$installed" ]]; then
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$(lock_sum)" ]]; then
    touch "$installed" # same content, only a newer date (git checkout): nothing to install
  else
    reason="package-lock.json is newer than node_modules"
  fi
fi
if [[ -n "$reason" ]]; then
  log "npm ci ($reason)"
  npm ci --no-audit --no-fund 9>&-
  lock_sum >"$stamp"
  did+=("npm ci")
fi

# 3. code-server for the e2e suite and the demo (packages were checked above).
# Its finished-install check, repeated here only to keep the usual run quiet.
if [[ "${KIMI_SKIP_CODE_SERVER:-}" != 1 && "${KIMI_NPM_ONLY:-}" != 1 ]]; then
  cs_version="${KIMI_CODE_SERVER_VERSION:-$(sed -n 's/^DEFAULT_VERSION=//p' scripts/setup-code-server.sh)}"
  cs_dir="${KIMI_CODE_SERVER_DIR:-$HOME/.cache/kimi-service/code-server-$cs_version}"
  if [[ ! -f "$cs_dir/.kimi-install-complete" || ! -f "$cs_dir/node_modules/code-server/out/node/entry.js" || ! -x "$(cat "$cs_dir/node-path" 2>/dev/null)" ]]; then
    log "code-server $cs_version and the Node it asks for into $cs_dir (a few minutes, once)"
    KIMI_CODE_SERVER_VERSION="$cs_version" KIMI_SKIP_APT=1 bash scripts/setup-code-server.sh >/dev/null 9>&-
    did+=("code-server")
  fi
fi

ms=$((($(date +%s%N) - started) / 1000000))
if ((${#did[@]})); then
  log "done: ${did[*]} ($((ms / 1000)).$(printf '%03d' $((ms % 1000))) s)"
else
  log "already set up ($((ms / 1000)).$(printf '%03d' $((ms % 1000))) s)"
fi
