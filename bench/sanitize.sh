#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer, in build-asan/: any
# sanitizer report fails the test that triggered it. Not part of .ci/run: the instrumented build
# and its slower tests would take it past its 45-minute budget on 2 cores. Built with clang-14
# (as bench/fuzz.sh; installed if missing) at -O1 without debug info: gcc's -O2 -g build of the
# same tree took over an hour on 2 cores; -O1 keeps ASan's stack traces readable and the lesson
# kernels fast enough for their time limits.
#   bench/sanitize.sh [meson test arguments, e.g. a test name]
set -uo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++-14 >/dev/null || ! dpkg -s libclang-rt-14-dev >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev >/dev/null
fi
if [ ! -f build-asan/build.ninja ]; then
  CC=clang-14 CXX=clang++-14 meson setup build-asan -Dgpu=disabled -Dbuildtype=plain -Dcpp_args='-O1 -fno-omit-frame-pointer' \
    -Dc_args='-O1 -fno-omit-frame-pointer' -Db_sanitize=address,undefined -Db_lundef=false || exit 1
fi
start=$(date +%s)
meson compile -C build-asan || exit 1
built=$(date +%s)
# halt_on_error: a UBSan report fails its test like an ASan one; leaks are reported at exit.
# The plugins are dlopened by an instrumented lab, so the runtime is already loaded for them.
# handle_segv=0: the crashing-lesson fixture raises SIGSEGV on purpose, and lab must report it as
# such (cli/isolation); ASan would turn it into its own report and SIGABRT.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:handle_segv=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Timings under the sanitizers are slower: give each test three times its limit, and each lesson
# 240 s instead of 3x its budget (an instrumented -O1 kernel runs several times slower; the
# fixtures that test the budget itself unset it).
export LAB_TIMEOUT=240
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
