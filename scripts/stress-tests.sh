#!/usr/bin/env bash
# Builds once, then runs the unit and integration suites N times while every core is kept busy
# by other processes, to catch tests that only pass on an idle machine (a fixed sleep
# that is long enough when idle is not when busy).
#
#   bash scripts/stress-tests.sh [N] [unit|integration|both]      (default: 3 both)
#
#   KIMI_STRESS_BUSY   busy processes (default: one per core, `nproc`); 0 = no load
#
# The load: KIMI_STRESS_BUSY node processes spinning in a busy loop (pure CPU at the same
# priority as the tests), started before the first run and always killed on exit (trap, also
# on Ctrl-C or a failure; should this script be SIGKILLed, they notice and exit). Each run's mocha output is kept in test-results/stress/<time>/.
# Prints one line per run and suite (passed, failed, seconds), the failing tests' titles, and a
# total; exits 1 when any test failed.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-3}"
which="${2:-both}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [N] [unit|integration|both]" >&2; exit 2; }
case "$which" in
  unit) suites=(unit) ;;
  integration) suites=(integration) ;;
  both) suites=(unit integration) ;;
  *) echo "usage: $0 [N] [unit|integration|both]" >&2; exit 2 ;;
esac
busy="${KIMI_STRESS_BUSY:-$(nproc)}"

bash scripts/ensure-setup.sh

out="test-results/stress/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

# Some integration tests run the bundles (dist/cli.js ...): build them first, as npm test does.
if ! npm run --silent build >"$out/build.log" 2>&1; then
  tail -20 "$out/build.log" >&2
  echo "== build failed (see $out/build.log)" >&2
  exit 1
fi

burners=()
stop_load() {
  local pid
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${burners[@]}"; do wait "$pid" 2>/dev/null || true; done
  burners=()
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# Spins in 200 ms slices and exits by itself once this script is gone, even if it was SIGKILLed.
spin='const p = Number(process.argv[1]); for (;;) { const t = Date.now(); while (Date.now() - t < 200); try { process.kill(p, 0); } catch { process.exit(0); } }'
for ((i = 0; i < busy; i++)); do
  node -e "$spin" "$$" &
  burners+=("$!")
done
echo "== load: ${busy} busy-loop node process(es) on $(nproc) core(s) (pids ${burners[*]:-none})"
echo "== ${runs} run(s) of: ${suites[*]}; logs in ${out}"

# "N passing" / "N failing" of mocha's spec reporter (0 when absent).
count() { { grep -hoE "^ *[0-9]+ $1" "$2" || true; } | awk '{s += $1} END {print s + 0}'; }

total_passed=0
total_failed=0
bad_runs=0
summary=()
for ((run = 1; run <= runs; run++)); do
  for suite in "${suites[@]}"; do
    log="$out/run${run}-${suite}.log"
    start=$(date +%s)
    # A suite that dies without mocha's summary (a crash, a hang killed by mocha's --exit) counts as failed.
    status=0
    npx mocha --config ".mocharc.${suite}.json" >"$log" 2>&1 || status=$?
    secs=$(($(date +%s) - start))
    passed=$(count passing "$log")
    failed=$(count failing "$log")
    if ((status != 0 && failed == 0)); then failed=1; fi
    # Every busy process must still be spinning, or the run was not under load.
    alive=0
    for pid in "${burners[@]}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
    line=$(printf 'run %d/%d %-11s %4d passed, %d failed (%ds, exit %d, load %d/%d busy, loadavg %s)' \
      "$run" "$runs" "$suite" "$passed" "$failed" "$secs" "$status" "$alive" "$busy" "$(cut -d' ' -f1 /proc/loadavg)")
    echo "$line"
    summary+=("$line")
    if ((failed > 0)); then
      bad_runs=$((bad_runs + 1))
      # mocha's failure list: "  1) suite" + indented title lines + the error.
      awk '/^  [0-9]+ failing/ { f = 1; next } f && /^  [0-9]+\) / { p = 1 } f && /^ +at / { p = 0 } p && NF' "$log" | head -60 | sed 's/^/    /'
    fi
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
  done
done

echo "== total over ${runs} run(s) under load: ${total_passed} passed, ${total_failed} failed (${bad_runs} suite run(s) with failures); logs in ${out}"
((total_failed == 0))
