#!/usr/bin/env bash
# The whole test suite: what `npm test` runs, locally and in CI.
# Installs what the tests need when it is missing (Debian packages such as the OpenSSH server and
# Chromium, node_modules, the code-server cache): scripts/ensure-setup.sh, seconds when done.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-setup.sh

outputs=$(mktemp -d)
trap 'rm -rf "$outputs"' EXIT
# Every suite runs even when an earlier one failed, so that one run shows every failure; the
# script fails at the end if any did.
status=0
suite() { # name, mocha config
  echo "== $1"
  npx mocha --config "$2" 2>&1 | tee "$outputs/${2#.}.log" || status=1
}

echo "== typecheck"; npx tsc -p . --noEmit
echo "== format"; npm run --silent format:check
echo "== lint"; npm run --silent lint
echo "== build"; npm run --silent build
suite "unit tests" .mocharc.unit.json
suite "integration tests (real sshd + simulated GPU host)" .mocharc.integration.json
suite "e2e tests (packaged VSIX in code-server, headless Chromium)" .mocharc.e2e.json

# One closing line over all suites, in the plain form CI reads.
count() { { grep -hoE "^ *[0-9]+ $1" "$outputs"/*.log || true; } | awk '{s += $1} END {print s + 0}'; }
passed=$(count passing)
failed=$(count failing)
skipped=$(count pending)
# The spec reporter lists a pending test as "  - title" where a passing one has a tick.
if [ "$skipped" -gt 0 ]; then
  echo "skipped:"
  { grep -hE '^ +- ' "$outputs"/*.log || true; } | sed -E 's/^ +- /  - /'
fi
echo "tests: ${passed} passed, ${failed} failed, ${skipped} skipped"
exit "$status"
