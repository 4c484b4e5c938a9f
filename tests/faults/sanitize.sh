#!/usr/bin/env bash
# sanitize.sh - the test suites again, on a build with AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer, in build-asan/ beside build/.
#
#   tests/faults/sanitize.sh [SUITE...]     (default: every suite but 'faults' and 'browser')
#   (tests also in suite 'external' are left out of every suite)
#
# Configures build-asan/ when it is missing (meson setup build-asan -Db_sanitize=address,undefined
# -Db_lundef=false -Dwerror=true), compiles it, and runs `meson test -C build-asan --suite S` for
# each suite, every timeout three times the normal build's (the sanitizers slow code two- to
# threefold), with ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 and
# UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1, so that the first sanitizer report fails its
# test. 'faults' is left out (valgrind under ASan does not work, and its timing and memory checks
# are about the normal build); 'browser' too (it tests the page in a browser, not C code); and
# the tests also in 'external', the ranking evaluations over whole manuals (PostgreSQL's,
# Sphinx's), which judge answers, not memory, and whose code paths the other suites cover.
# Each suite's log is build-asan/meson-logs/sanitize-<suite>.txt.
#
# Prints one line per suite and, last, "sanitize: N passed, N failed". Exit status: 0 when the
# build and every test passed, 1 otherwise. Not a meson test (it runs meson test itself).
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

fail_build() {
  echo "sanitize: $1"
  echo "sanitize: 0 passed, 1 failed"
  exit 1
}

if [ ! -f "$dir/build.ninja" ]; then
  echo "sanitize: configuring $dir"
  meson setup "$dir" -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true \
    >"/tmp/sanitize-setup.$$.log" 2>&1 || { cat "/tmp/sanitize-setup.$$.log"; rm -f "/tmp/sanitize-setup.$$.log"; fail_build "meson setup $dir failed"; }
  rm -f "/tmp/sanitize-setup.$$.log"
fi
echo "sanitize: compiling $dir"
if ! meson compile -C "$dir" >"$dir/sanitize-compile.log" 2>&1; then
  tail -50 "$dir/sanitize-compile.log"
  fail_build "meson compile -C $dir failed (log: $dir/sanitize-compile.log)"
fi

if [ "$#" -gt 0 ]; then
  suites=("$@")
else
  mapfile -t suites < <(meson introspect "$dir" --tests | python3 -c '
import json, sys
names = sorted({s.split(":", 1)[-1] for t in json.load(sys.stdin) for s in t["suite"]})
print("\n".join(n for n in names if n not in ("faults", "browser", "external")))')
fi
[ "${#suites[@]}" -gt 0 ] || fail_build "no test suite found in $dir"

total_ok=0
total_failed=0
failed_suites=()
for suite in "${suites[@]}"; do
  logbase="sanitize-$suite"
  start=$(date +%s)
  meson test -C "$dir" --no-rebuild --suite "$suite" --no-suite external --print-errorlogs --num-processes 2 \
    --timeout-multiplier 3 \
    --logbase "$logbase" >"$dir/meson-logs/$logbase.out" 2>&1
  status=$?
  log="$dir/meson-logs/$logbase.txt"
  ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
  fail=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
  timeout=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
  unexpected=$(sed -n 's/^Unexpected Pass: *\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
  ok=${ok:-0}
  failed=$(( ${fail:-0} + ${timeout:-0} + ${unexpected:-0} ))
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  printf 'sanitize: %-10s %3d ok, %d failed (%ds)\n' "$suite" "$ok" "$failed" $(( $(date +%s) - start ))
  if [ "$failed" -ne 0 ]; then
    failed_suites+=("$suite")
    # the failing tests and the sanitizer reports in their output
    grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR) ' "$dir/meson-logs/$logbase.out" \
      | awk '!seen[$0]++' | sed 's/^/  /'
    grep -E -A18 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$dir/meson-logs/$logbase.out" \
      | head -60 | sed 's/^/  | /'
  fi
  total_ok=$(( total_ok + ok ))
  total_failed=$(( total_failed + failed ))
done

if [ "${#failed_suites[@]}" -gt 0 ]; then
  echo "sanitize: failing suites: ${failed_suites[*]} (logs: $dir/meson-logs/sanitize-<suite>.txt)"
fi
echo "sanitize: ${total_ok} passed, ${total_failed} failed"
[ "$total_failed" -eq 0 ]
