#!/usr/bin/env bash
# The whole test suite: what `npm test` runs, locally and in CI.
# Installs what the tests need when it is missing (Debian packages such as the OpenSSH server and
# Chromium, node_modules, the code-server cache): scripts/ensure-setup.sh, seconds when done.
#
# A suite must end, whatever its tests do, so that one run always reaches its summary:
# - each suite has a wall-clock limit (KIMI_TEST_LIMIT_<SUITE> seconds; a suite over it is killed
#   and counted failed, with the processes it was running listed);
# - mocha writes to a file (test-results/npm-test/), not to a pipe: a process a test leaked that
#   still holds the output cannot keep the run waiting for an end of file, and the terminal (CI's
#   log) gets a line a minute and the summaries, about 20 KB instead of 250;
# - every process started under this run carries KIMI_TEST_RUN in its environment; what is left of
#   them after a suite is named as a leak and killed.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/ensure-setup.sh

outputs=test-results/npm-test
rm -rf "$outputs"
mkdir -p "$outputs"
KIMI_TEST_RUN="$$-$(date +%s%N)"
export KIMI_TEST_RUN
# Processes of this run other than this script and its ancestors (by the mark in their environment).
run_processes() {
  local dir pid
  for dir in /proc/[0-9]*; do
    pid=${dir#/proc/}
    [[ "$pid" == "$$" || "$pid" == "$BASHPID" ]] && continue
    grep -qzxF "KIMI_TEST_RUN=$KIMI_TEST_RUN" "$dir/environ" 2>/dev/null && echo "$pid"
  done
  return 0
}
describe_processes() { # pids...
  (($#)) && ps -o pid=,ppid=,etime=,args= -p "$(
    IFS=,
    echo "$*"
  )" 2>/dev/null | cut -c1-200 | sed 's/^/    /' || true
}
kill_leftovers() { # suite name
  local left
  mapfile -t left < <(run_processes)
  ((${#left[@]})) || return 0
  echo "== ${#left[@]} process(es) still running after $1 (leaked by a test; killed):"
  describe_processes "${left[@]}"
  kill -KILL "${left[@]}" 2>/dev/null || true
}
trap 'kill_leftovers "the run" >/dev/null' EXIT

# Every suite runs even when an earlier one failed, so that one run shows every failure; the
# script fails at the end if any did. Each suite's whole output (mocha's spec reporter, the e2e
# suite's notes) goes to test-results/npm-test/; the terminal gets a line a minute while it runs,
# then mocha's summary with every failure in full (KIMI_TEST_VERBOSE=1: the whole output, live).
status=0
suite() { # name, mocha config, limit in seconds
  local log="$outputs/${2#.}.log" started mocha rc=0 tailer="" running next
  echo "== $1 (at most $3 s; whole output: $log)"
  started=$(date +%s)
  # setsid: the suite is a process group of its own, so that the limit can end all of it.
  setsid npx mocha --config "$2" >"$log" 2>&1 </dev/null &
  mocha=$!
  if [[ "${KIMI_TEST_VERBOSE:-}" == 1 ]]; then
    tail -n +1 -f --pid="$mocha" "$log" &
    tailer=$!
  fi
  next=$((started + 60))
  while kill -0 "$mocha" 2>/dev/null && (($(date +%s) - started < $3)); do
    sleep 2
    if [[ -z "$tailer" ]] && (($(date +%s) >= next)); then
      next=$((next + 60))
      echo "   ... $(grep -c '✔' "$log" || true) passed, $(grep -cE '^ +[0-9]+\) ' "$log" || true) failed so far ($(($(date +%s) - started)) s)"
    fi
  done
  if kill -0 "$mocha" 2>/dev/null; then
    mapfile -t running < <(run_processes)
    {
      echo
      echo "== $1: over its limit of $3 s; killed. What it was running:"
      describe_processes "${running[@]}"
      echo "  1 failing (the suite did not end)"
    } >"$log.limit"
    kill -TERM -- "-$mocha" 2>/dev/null || true
    sleep 5
    kill -KILL -- "-$mocha" 2>/dev/null || true
  fi
  wait "$mocha" || rc=$?
  [[ -n "$tailer" ]] && { wait "$tailer" 2>/dev/null || true; }
  if [[ -z "$tailer" ]]; then
    # mocha's summary: from its "N passing" line to the end (every failure with its stack); the
    # end of the output when there is none (a crash, a suite killed at its limit).
    local summary
    summary=$({ grep -nE '^ +[0-9]+ passing' "$log" || true; } | tail -1 | cut -d: -f1)
    if [[ -n "$summary" ]]; then tail -n +"$summary" "$log" | head -n 400; else tail -n 80 "$log"; fi
  fi
  if [[ -f "$log.limit" ]]; then
    cat "$log.limit"
    cat "$log.limit" >>"$log"
  fi
  ((rc == 0)) || status=1
  echo "== $1: exit $rc after $(($(date +%s) - started)) s"
  kill_leftovers "$1"
}

echo "== typecheck"; npx tsc -p . --noEmit
echo "== format"; npm run --silent format:check
echo "== lint"; npm run --silent lint
echo "== build"; npm run --silent build
suite "unit tests" .mocharc.unit.json "${KIMI_TEST_LIMIT_UNIT:-600}"
suite "integration tests (real sshd + simulated GPU host)" .mocharc.integration.json "${KIMI_TEST_LIMIT_INTEGRATION:-2100}"
suite "e2e tests (packaged VSIX in code-server, headless Chromium)" .mocharc.e2e.json "${KIMI_TEST_LIMIT_E2E:-1800}"

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
