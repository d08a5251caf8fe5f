#!/usr/bin/env bash
# The whole test suite: what `npm test` runs, locally and in CI.
# Installs what the tests need when it is missing (OpenSSH server, Chromium, code-server cache).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-system-packages.sh
[ -d node_modules ] || npm ci

echo "== typecheck"; npx tsc -p . --noEmit
echo "== build"; npm run --silent build
echo "== unit tests"; npx mocha --config .mocharc.unit.json
echo "== integration tests (real sshd + simulated GPU host)"; npx mocha --config .mocharc.integration.json
echo "== e2e tests (packaged VSIX in code-server, headless Chromium)"; npx mocha --config .mocharc.e2e.json
