#!/usr/bin/env bash
# Installs code-server@4.100.3 (VS Code's own workbench + Node extension host, served to a
# browser) into a cache OUTSIDE the repository, for the e2e suite and `npm run demo`.
#
# Works with only the npm registry and Debian's packages reachable (no downloads from
# GitHub), following ../shared/reference/real-vscode-offline.md:
#   - root: npm_config_unsafe_perm=true (code-server's postinstall refuses otherwise);
#   - @vscode/ripgrep would download rg: install with --ignore-scripts, place Debian's
#     /usr/bin/rg in its bin/, then npm rebuild;
#   - node-pty's postinstall runs `npx node-gyp`: npm_config_yes=true skips npx's prompt.
#
# Idempotent: a finished install is marked by a stamp file and left alone; a partial one
# (no stamp) is removed and redone. Prints the install folder on its last line.
#
#   KIMI_CODE_SERVER_DIR   install folder (default ~/.cache/kimi-service/code-server-4.100.3)
#   KIMI_SKIP_APT=1        do not check/install Debian packages
set -euo pipefail

VERSION=4.100.3
DIR="${KIMI_CODE_SERVER_DIR:-$HOME/.cache/kimi-service/code-server-$VERSION}"
STAMP="$DIR/.kimi-install-complete"
ENTRY="$DIR/node_modules/code-server/out/node/entry.js"

log() { printf '[setup-code-server] %s\n' "$*" >&2; }

if [[ -f "$STAMP" && -f "$ENTRY" ]]; then
  log "code-server $VERSION already installed in $DIR"
  echo "$DIR"
  exit 0
fi

# --- Debian packages (only the missing ones; apt-get update at most once) -----------------
apt_packages=(build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev
  libsecret-1-dev ripgrep chromium)
if [[ "${KIMI_SKIP_APT:-}" != 1 ]]; then
  missing=()
  for p in "${apt_packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    SUDO=""
    [[ $(id -u) -eq 0 ]] || SUDO="sudo"
    log "installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi

command -v rg >/dev/null || { log "ripgrep (rg) is required"; exit 1; }
RG="$(command -v rg)"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [[ "$node_major" != 20 ]]; then
  log "warning: code-server $VERSION wants Node 20 (engines.node); this is Node $(node -v)"
fi

# --- a partial install is redone from scratch --------------------------------------------
if [[ -d "$DIR" ]]; then
  log "removing partial install in $DIR"
  rm -rf "$DIR"
fi
mkdir -p "$DIR"
start=$(date +%s)

export npm_config_unsafe_perm=true
export npm_config_yes=true
export npm_config_fund=false
export npm_config_audit=false
export npm_config_update_notifier=false

cd "$DIR"
cat > package.json <<EOF
{ "name": "kimi-code-server-cache", "private": true, "version": "0.0.0" }
EOF

log "npm install --ignore-scripts code-server@$VERSION"
npm install --ignore-scripts --no-save "code-server@$VERSION"
log "npm rebuild argon2"
npm rebuild argon2

VS="$DIR/node_modules/code-server/lib/vscode"
cd "$VS"
log "lib/vscode: npm install --omit=dev --ignore-scripts"
npm install --omit=dev --ignore-scripts
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$RG" node_modules/@vscode/ripgrep/bin/rg
chmod +x node_modules/@vscode/ripgrep/bin/rg
log "lib/vscode: npm rebuild"
npm rebuild
# The links code-server's own postinstall.sh makes.
ln -sfn node_modules node_modules.asar
ln -sfn code-linux.sh bin/remote-cli/code-server
ln -sfn browser-linux.sh bin/helpers/browser.sh

cd "$VS/extensions"
log "lib/vscode/extensions: npm install --omit=dev --ignore-scripts"
npm install --omit=dev --ignore-scripts
log "lib/vscode/extensions: npm rebuild"
npm rebuild

# Smoke check: the entry point answers --version (with a throwaway config file, so nothing
# is written to ~/.config/code-server).
smoke_cfg="$(mktemp -d)"
node "$ENTRY" --config "$smoke_cfg/config.yaml" --version >&2
rm -rf "$smoke_cfg"

date -u +%FT%TZ > "$STAMP"
log "done in $(( $(date +%s) - start ))s: $DIR ($(du -sh "$DIR" | cut -f1))"
echo "$DIR"
