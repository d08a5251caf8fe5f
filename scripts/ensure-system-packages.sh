#!/usr/bin/env bash
# Installs the Debian packages the tests, the e2e suite and the demo need; only the missing ones,
# with one apt-get update. openssh-server: the simulated GPU host's real sshd. chromium: the e2e
# browser. Build tools and libraries: code-server's native modules. ripgrep: code-server's search.
# sudo: the simulated host's real sudo (the least-privilege suite runs as an unprivileged user).
# iproute2: private networks of simulated hosts (test/gpu-host/netns.ts: ip netns, veth, bridge).
# docker.io, docker-compose: a private dockerd inside the simulated host (test/gpu-host/docker.ts).
# libpam-oath: one-time codes (TOTP) through PAM on the simulated host's sshd (test/gpu-host/pamOath.ts).
# slurm-wlm, munge: a real Slurm scheduler on loopback (test/gpu-host/slurm.ts) for the batch-job target.
# krb5-kdc, krb5-admin-server, krb5-user: a throwaway Kerberos realm on loopback (test/gpu-host/kerberos.ts).
# softhsm2, opensc: a PKCS#11 token in software and pkcs11-tool to make its key (test/gpu-host/softhsm.ts).
# fonts-wqy-microhei: Chinese glyphs for the browser, so pictures of the zh-cn workbench show words (1.6 MB).
# Already installed: one dpkg-query, a few tens of milliseconds.
set -euo pipefail
packages=(openssh-server openssh-client util-linux curl build-essential pkg-config python3 libkrb5-dev
  libx11-dev libxkbfile-dev libsecret-1-dev ripgrep chromium sudo iproute2 docker.io docker-compose
  libpam-oath slurm-wlm munge krb5-kdc krb5-admin-server krb5-user softhsm2 opensc fonts-wqy-microhei)
# Installed means "ii" (a package removed but not purged is "rc", and `dpkg -s` succeeds on it).
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for p in "${packages[@]}"; do
  grep -qE "^${p}(:[a-z0-9]+)? ii" <<<"$installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "Missing Debian packages: ${missing[*]}. Install them as root (apt-get install ${missing[*]}), or install sudo." >&2
    exit 1
  fi
  SUDO="sudo"
fi
echo "Installing Debian packages: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
