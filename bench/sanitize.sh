#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer (gcc), in
# build-asan/: any sanitizer report fails the test that triggered it. Not part of .ci/run: the
# instrumented build and its slower tests would take it past its 45-minute budget on 2 cores.
#   bench/sanitize.sh [meson test arguments, e.g. a test name]
set -uo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan -Dgpu=disabled -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false || exit 1
fi
start=$(date +%s)
meson compile -C build-asan || exit 1
built=$(date +%s)
# halt_on_error: a UBSan report fails its test like an ASan one; leaks are reported at exit.
# The plugins are dlopened by an instrumented lab, so the runtime is already loaded for them.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Timings under the sanitizers are slower: give each test three times its limit.
meson test -C build-asan --print-errorlogs --timeout-multiplier 3 "$@"
status=$?
end=$(date +%s)
echo "sanitizer build $((built - start)) s, tests $((end - built)) s"
python3 - <<'PY'
import json
counts = {"passed": 0, "failed": 0, "skipped": 0}
for line in open("build-asan/meson-logs/testlog.json"):
    r = json.loads(line).get("result")
    counts["passed" if r in ("OK", "EXPECTEDFAIL") else "skipped" if r == "SKIP" else "failed"] += 1
print(f'{counts["passed"]} passed, {counts["failed"]} failed, {counts["skipped"]} skipped')
PY
exit $status
