#!/usr/bin/env bash
# Installs the Debian packages the tests, the e2e suite and the demo need; only the missing ones,
# with one apt-get update. openssh-server: the simulated GPU host's real sshd. chromium: the e2e
# browser. Build tools and libraries: code-server's native modules. ripgrep: code-server's search.
set -euo pipefail
packages=(openssh-server openssh-client util-linux curl build-essential pkg-config python3 libkrb5-dev
  libx11-dev libxkbfile-dev libsecret-1-dev ripgrep chromium)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "Installing Debian packages: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
