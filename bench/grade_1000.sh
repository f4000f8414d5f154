#!/usr/bin/env bash
# grade_1000.sh: how long does `lab grade` take over a class of 1,000 submissions?
#
# Builds N (default 1000) student folders from the recorded 02.05 fixture run
# (tests/fixtures/runs/cpu/02.05-quick-reveal.json) with bench/make_submissions.cpp: each student
# has the run re-recorded under their own name and seed, slowed by a per-student factor, its
# display values re-derived and the record re-sealed by the framework's own code, plus their
# own answers file (mostly right; some partly right, wrong, blank or of the wrong dimension; a few
# folders broken on purpose; a few duplicate runs). Then it times `lab grade` over them, with
# LAB_CONFIG_DIR pointing at a copy of configs/ whose specs accept --quick runs
# (tests/fixtures/grading/), and prints the seconds. Target: under 10 s for 1,000 on a 2-core
# machine. It is a benchmark, not a test: it exits 0 whatever the time, 2 when something it needs
# is missing.
#
# Why a C++ helper rather than Python: the digest is SHA-256 of nlohmann::json's compact dump
# (sorted keys) without "digest"; Python's json.dumps writes some floats differently
# (1e+16 vs 1e16-style and exponent thresholds), so it could not re-seal records reliably.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/grade_1000.sh [--n N] [--keep DIR]

  --n N        submissions to build and grade (default 1000)
  --keep DIR   build the submissions in DIR and keep them (default: a temporary folder, removed)
  -h, --help   this help

Environment: BUILD=<build folder> (default: <repo>/build), CXX (default: c++).
EOF
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
CXX="${CXX:-c++}"
N=1000
KEEP=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --n) N="$2"; shift 2 ;;
        --keep) KEEP="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done

LAB="$BUILD/cli/lab"
LESSON="$BUILD/labs/02_05/lab_02_05.so"
FRAMEWORK="$BUILD/framework/liblabframework.a"
FIXTURE="$ROOT/tests/fixtures/runs/cpu/02.05-quick-reveal.json"
for f in "$LAB" "$LESSON" "$FRAMEWORK" "$FIXTURE"; do
    [[ -e "$f" ]] || { echo "grade_1000.sh: $f is missing: build first (ninja -C $BUILD)" >&2; exit 2; }
done
command -v "$CXX" >/dev/null || { echo "grade_1000.sh: no C++ compiler ($CXX)" >&2; exit 2; }

# The helper, rebuilt when its source or the framework library is newer.
TOOL="$BUILD/bench/make_submissions"
if [[ ! -x "$TOOL" || "$ROOT/bench/make_submissions.cpp" -nt "$TOOL" || "$FRAMEWORK" -nt "$TOOL" ]]; then
    mkdir -p "$BUILD/bench"
    echo "building $TOOL" >&2
    "$CXX" -std=c++20 -O1 -DBOOST_DLL_USE_STD_FS -I"$ROOT/framework/include" -I"$ROOT/framework/src" \
        "$ROOT/bench/make_submissions.cpp" -o "$TOOL" \
        -Wl,--start-group "$FRAMEWORK" -lyaml-cpp -lfmt -lcrypto -lz -Wl,--end-group -pthread -ldl
fi

WORK="$(mktemp -d /tmp/grade_1000.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
SUBS="${KEEP:-$WORK/submissions}"
rm -rf "$SUBS"

# Specs that accept --quick runs, over a copy of the shipped configs.
cp -r "$ROOT/configs" "$WORK/configs"
cp "$ROOT/tests/fixtures/grading/"02.*.yaml "$WORK/configs/grading/"

"$TOOL" "$FIXTURE" "$LESSON" "$ROOT/configs/course.yaml" "$SUBS" "$N"

start=$(date +%s.%N)
LAB_CONFIG_DIR="$WORK/configs" "$LAB" grade "$SUBS" --out "$WORK/gradebook.csv" > "$WORK/summary.txt"
end=$(date +%s.%N)

head -n 1 "$WORK/summary.txt"
grep -c '^student' "$WORK/gradebook.csv" | sed 's/^/gradebook rows: /'
sed -n '/Identical run measurements/,$p' "$WORK/summary.txt" | grep -c ': identical measurements' | sed 's/^/duplicate groups: /' || true
secs=$(echo "$end - $start" | bc -l)
printf 'lab grade over %d submissions: %.2f s (target < 10 s on 2 cores; %d cores here)\n' "$N" "$secs" "$(nproc)"
