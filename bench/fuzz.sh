#!/usr/bin/env bash
# Fuzzes every parser of a file lab is handed (tests/fuzz: one libFuzzer target each) for SECONDS
# each (default 60), with AddressSanitizer and UndefinedBehaviorSanitizer, and prints per target:
# executions, coverage (edges), features, crashes, timeouts, out-of-memory, leaks.
#   bench/fuzz.sh [SECONDS]
# Builds in build-fuzz/ with clang (Debian's clang-14 and libclang-rt-14-dev, installed if
# missing). Corpora start from the project's fixtures and ../shared/testdata, copied (never edited
# in place) into build-fuzz/corpus/<target>; findings land in build-fuzz/findings/<target>: fix
# each and add its input to tests/fixtures/fuzz_regressions/<target>/, which the normal test
# suite replays (framework/fuzz_regressions).
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
root=$(pwd)
shared=$(cd .. && pwd)/shared/testdata

if ! command -v clang++-14 >/dev/null || ! dpkg -s libclang-rt-14-dev >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev >/dev/null
fi
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang-14 CXX=clang++-14 meson setup build-fuzz -Dfuzz=true -Dtests=false -Dgpu=disabled -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args=-fsanitize=fuzzer-no-link >/dev/null || exit 1
fi
targets=(run_record answers grading_spec course model_config safetensors trace trace_gz smi ceilings_cache)
ninja -C build-fuzz $(printf 'tests/fuzz/fuzz_%s ' "${targets[@]}") >/dev/null || exit 1

seed() {  # target, files...
  local dir="build-fuzz/corpus/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && cp -n "$f" "$dir/" 2>/dev/null; done
}
seed run_record tests/fixtures/runs/cpu/*.json
seed answers tests/fixtures/answers/*.yaml
for r in tests/fixtures/runs/cpu/*.json; do  # a right-shaped answers file per fixture run
  id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["lesson"]["id"])' "$r")
  build/cli/lab answers "$id" --run "$r" > "build-fuzz/corpus/answers/$(basename "$r" .json).yaml" 2>/dev/null || true
done 2>/dev/null
seed grading_spec configs/grading/*.yaml tests/fixtures/grading/*.yaml
seed course configs/course.yaml
seed model_config configs/models/*.json "$shared"/models/*.json
seed safetensors tests/fixtures/safetensors/*.safetensors
printf '\x10\x00\x00\x00\x00\x00\x00\x00{"__metadata__":{}}' > build-fuzz/corpus/safetensors/empty.safetensors
seed trace_gz tests/fixtures/traces/*.json.gz "$shared"/traces/*.json.gz
mkdir -p build-fuzz/corpus/trace
for g in build-fuzz/corpus/trace_gz/*.gz; do zcat "$g" | head -c 4000000 > "build-fuzz/corpus/trace/$(basename "$g" .gz)"; done
seed smi tests/fixtures/nvidia-smi/*.txt tests/fixtures/nvidia-smi/*.csv "$shared"/nvidia-smi/*
seed ceilings_cache "${XDG_CACHE_HOME:-$HOME/.cache}"/lab/ceilings/*.json

printf '%-15s %12s %8s %9s %8s %9s %5s %6s\n' target executions cov features crashes timeouts oom leaks
for t in "${targets[@]}"; do
  # A fresh folder per run: earlier findings, once fixed, live in tests/fixtures/fuzz_regressions.
  out="build-fuzz/findings/$t"; rm -rf "$out"; mkdir -p "$out"
  dict=""; [ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
  log="build-fuzz/findings/$t.log"
  # -fork keeps fuzzing past a finding, so one bug does not hide the next; each finding is a file.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
      -artifact_prefix="$out/" $dict -print_final_stats=1 "build-fuzz/corpus/$t" >"$log" 2>&1
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  count() { find "$out" -name "$1-*" | wc -l; }
  printf '%-15s %12s %8s %9s %8s %9s %5s %6s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$(count crash)" "$(count timeout)" \
    "$(count oom)" "$(count leak)"
done
echo "logs and findings: build-fuzz/findings/"
