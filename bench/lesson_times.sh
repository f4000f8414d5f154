#!/usr/bin/env bash
# Wall-time benchmark of the transformer lessons and `lab model` against their targets (issue 11):
#   lab model NAME                      < 50 ms      (median of 20 runs, per model)
#   lab run ID --quick, cached ceilings < 10 s
#   lab run ID --quick, no ceilings     < 30 s       (calibrates first: an empty XDG_CACHE_HOME)
#   lab run ID (full), cached ceilings  < 60 s
# Each line prints the time, the target and their ratio (< 1 meets it). A benchmark, not a test:
# the figures move with the machine's load, so it reports the load beside them and fails nothing.
#
# usage: bench/lesson_times.sh [--lessons "02.02 02.06"] [--no-cold] [--no-full]
set -uo pipefail
cd "$(dirname "$0")/.."
lessons="02.02 02.03 02.04 02.06 02.07 02.08 02.09 02.10 02.11 02.12"
cold=1
full=1
while [ $# -gt 0 ]; do
  case "$1" in
    --lessons) lessons="$2"; shift 2 ;;
    --no-cold) cold=0; shift ;;
    --no-full) full=0; shift ;;
    *) echo "usage: $0 [--lessons \"02.02 02.06\"] [--no-cold] [--no-full]" >&2; exit 2 ;;
  esac
done
lab=build/cli/lab
[ -x "$lab" ] || { echo "lab is not built: run scripts/setup.sh" >&2; exit 2; }

now() { date +%s.%N; }
# report NAME SECONDS TARGET_SECONDS
report() { python3 -c "import sys; n,t,g=sys.argv[1],float(sys.argv[2]),float(sys.argv[3]); \
print(f'{n:<44} {t*1000 if g<1 else t:>9.1f} {\"ms\" if g<1 else \"s \"}  target {g*1000 if g<1 else g:g} {\"ms\" if g<1 else \"s\"}  ratio {t/g:.2f}')" "$@"; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for model in tiny llama-2-7b llama-3-8b qwen2-0.5b gpt2; do
  times=()
  for _ in $(seq 20); do
    t0=$(now); "$lab" model "$model" --seq 2048 --context 4096 --json >/dev/null || { echo "lab model $model failed" >&2; break; }
    times+=("$(python3 -c "print($(now) - $t0)")")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  report "lab model $model (median of 20)" "$median" 0.05
done

for id in $lessons; do
  "$lab" info "$id" >/dev/null 2>&1 || { echo "$id: no such lesson here; skipped"; continue; }
  # The cached ceilings of this machine (calibrated once if there are none yet).
  t0=$(now); "$lab" run "$id" --quick --device cpu --out "$out/q.json" >/dev/null 2>&1
  report "lab run $id --quick (cached ceilings)" "$(python3 -c "print($(now) - $t0)")" 10
  if [ "$cold" = 1 ]; then
    cache=$(mktemp -d)
    t0=$(now); XDG_CACHE_HOME="$cache" "$lab" run "$id" --quick --device cpu --out "$out/c.json" >/dev/null 2>&1
    report "lab run $id --quick (no ceilings: calibrates)" "$(python3 -c "print($(now) - $t0)")" 30
    rm -rf "$cache"
  fi
  if [ "$full" = 1 ]; then
    t0=$(now); "$lab" run "$id" --device cpu --out "$out/f.json" >/dev/null 2>&1
    report "lab run $id (full, cached ceilings)" "$(python3 -c "print($(now) - $t0)")" 60
  fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
