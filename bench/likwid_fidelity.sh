#!/usr/bin/env bash
# likwid_fidelity.sh: how close are `lab calibrate`'s CPU ceilings to likwid-bench's?
#
# Runs lab's full calibration and the matching likwid-bench kernels side by side, alternating
# the two tools over several rounds at the same thread count, and prints a table of medians:
#   fp32.simt <-> peakflops_sp_avx512_fma | peakflops_sp_avx_fma   (L1-resident, 16 kB per thread)
#   fp64.simt <-> peakflops_avx512_fma    | peakflops_avx_fma      (L1-resident, 16 kB per thread)
#   read      <-> load_avx512             | load_avx               (1 GB)
#   copy      <-> copy_avx512             | copy_avx               (1 GB)
#   triad     <-> stream_avx512_fma       | stream_avx_fma         (1 GB; STREAM triad a = b + s*c)
# The target is lab/likwid >= 0.9. It is a benchmark, not a test: it exits 0 whatever the ratios,
# and 2 only when a tool it needs is missing. See bench/README.md for how to read the table.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/likwid_fidelity.sh [--rounds N] [--threads N | --both] [--wait-idle S] [--log-dir DIR]

  --rounds N      rounds per thread count; each round runs both tools once (default 3)
  --threads N     threads for both tools (default: all CPUs this process may use, from nproc)
  --both          run with 1 thread and with all CPUs
  --wait-idle S   before each tool run, wait up to S seconds for the CPUs to be >= 90% idle
                  (default 60; 0: do not wait)
  --log-dir DIR   keep every raw output (lab JSON, likwid-bench text) in DIR
  -h, --help      this help

Environment: LAB=/path/to/lab (default: <repo>/build/cli/lab).
EOF
}

die_missing() {  # die_missing WHAT HOW
    echo "likwid_fidelity: $1 not found; $2" >&2
    exit 2
}

rounds=3
threads=""
both=0
log_dir=""
wait_idle=60
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
        --rounds=*) rounds="${1#*=}"; shift ;;
        --threads) threads="${2:?--threads needs a number}"; shift 2 ;;
        --threads=*) threads="${1#*=}"; shift ;;
        --both) both=1; shift ;;
        --wait-idle) wait_idle="${2:?--wait-idle needs seconds}"; shift 2 ;;
        --wait-idle=*) wait_idle="${1#*=}"; shift ;;
        --log-dir) log_dir="${2:?--log-dir needs a folder}"; shift 2 ;;
        --log-dir=*) log_dir="${1#*=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "likwid_fidelity: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "likwid_fidelity: --rounds wants a positive integer, got '$rounds'" >&2; exit 64; }
[[ -z "$threads" || "$threads" =~ ^[1-9][0-9]*$ ]] || { echo "likwid_fidelity: --threads wants a positive integer, got '$threads'" >&2; exit 64; }
[[ "$wait_idle" =~ ^[0-9]+$ ]] || { echo "likwid_fidelity: --wait-idle wants seconds, got '$wait_idle'" >&2; exit 64; }
if [[ $both -eq 1 && -n "$threads" ]]; then
    echo "likwid_fidelity: give --threads N or --both, not both" >&2; exit 64
fi

# --- the tools ------------------------------------------------------------------------------
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAB="${LAB:-$repo/build/cli/lab}"
[[ -x "$LAB" ]] || die_missing "lab ($LAB)" "build it: meson setup build && ninja -C build (or set LAB=/path/to/lab)"
command -v likwid-bench >/dev/null 2>&1 || die_missing "likwid-bench" "install it: apt-get install likwid"
if command -v jq >/dev/null 2>&1; then
    json_get() { jq -er "$2" "$1"; }
elif command -v python3 >/dev/null 2>&1; then
    # Only the jq paths used below: .a.b["c"].d
    json_get() {
        python3 - "$1" "$2" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
for key in re.findall(r'\.([A-Za-z_]+)|\["([^"]+)"\]', sys.argv[2]):
    d = d[key[0] or key[1]]
print(d if isinstance(d, str) else json.dumps(d))
PY
    }
else
    die_missing "jq (or python3), needed to read lab's JSON," "install it: apt-get install jq"
fi
command -v nproc >/dev/null 2>&1 || die_missing "nproc" "install it: apt-get install coreutils"

all_cpus="$(nproc)"
if [[ $both -eq 1 ]]; then
    thread_counts=(1)
    [[ "$all_cpus" -gt 1 ]] && thread_counts+=("$all_cpus")
else
    thread_counts=("${threads:-$all_cpus}")
fi

# Same ISA for both tools: lab picks AVX-512 when the CPU has avx512f, else AVX2+FMA.
likwid_tests="$(likwid-bench -a 2>/dev/null || true)"
if grep -qw avx512f /proc/cpuinfo && grep -q '^peakflops_avx512_fma ' <<<"$likwid_tests"; then
    isa=avx512
    tests=(peakflops_sp_avx512_fma peakflops_avx512_fma load_avx512 copy_avx512 stream_avx512_fma)
else
    isa=avx
    tests=(peakflops_sp_avx_fma peakflops_avx_fma load_avx copy_avx stream_avx_fma)
fi
metrics=(fp32.simt fp64.simt read copy triad)
jq_paths=('.ceilings.flops_per_s["fp32.simt"].value' '.ceilings.flops_per_s["fp64.simt"].value'
          '.ceilings.bandwidth_bytes_per_s["read"].value' '.ceilings.bandwidth_bytes_per_s["copy"].value'
          '.ceilings.bandwidth_bytes_per_s["triad"].value')
stream_size="1GB"           # likwid's size is the whole working set, split over its streams and threads
flops_kb_per_thread=16      # peakflops kernels load one stream: keep it in L1 (see README)

work="$(mktemp -d "${TMPDIR:-/tmp}/likwid_fidelity.XXXXXX")"
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
if [[ -n "$log_dir" ]]; then mkdir -p "$log_dir"; logs="$log_dir"; else logs="$work/logs"; mkdir -p "$logs"; fi

note() { echo "likwid_fidelity: $(date -u +%T) $*" >&2; }

# --- noise: other processes and the hypervisor -----------------------------------------------
# On a shared VM another process (a build, a test) or the host (steal time) can take a CPU
# away mid-run and halve a figure. Each sample is marked "contended" when, during it, other
# processes kept >= 0.1 CPU busy on average or the host stole >= 0.05 CPU.
hz="$(getconf CLK_TCK 2>/dev/null || echo 100)"
cpu_jiffies() {  # prints: busy (user nice system irq softirq) and steal jiffies, all CPUs
    awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $9; exit }' /proc/stat
}
children_cpu() {  # sets $1 to the CPU seconds used so far by this shell's finished children
    # `times` must run in this shell, not in a $(...) subshell, which has no children yet.
    times >"$work/times"
    printf -v "$1" '%s' "$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$work/times")"
}
wait_for_idle() {  # up to $wait_idle s until two 2-s windows in a row are >= 90% idle
    ((wait_idle > 0)) || return 0
    local start=$SECONDS ok=0 a b
    while ((SECONDS - start < wait_idle)); do
        a="$(awk '$1 == "cpu" { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat)"
        sleep 2
        b="$(awk '$1 == "cpu" { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat)"
        if awk -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y); exit !((y[1] - x[1]) >= 0.9 * (y[2] - x[2])) }'; then
            ok=$((ok + 1)); ((ok < 2)) || return 0
        else
            ok=0
        fi
    done
    note "  CPUs still busy after ${wait_idle}s of waiting; measuring anyway"
}
# measure_begin / measure_end around a tool run; measure_end sets $contended (0/1) and $noise.
m_busy0=0 m_steal0=0 m_child0=0 m_t0=0 contended=0 noise=""
measure_begin() {
    read -r m_busy0 m_steal0 < <(cpu_jiffies)
    children_cpu m_child0
    m_t0="$EPOCHREALTIME"
}
measure_end() {
    local busy1 steal1 child1 t1
    read -r busy1 steal1 < <(cpu_jiffies)
    children_cpu child1
    t1="$EPOCHREALTIME"
    read -r contended noise < <(awk -v b0="$m_busy0" -v b1="$busy1" -v s0="$m_steal0" -v s1="$steal1" \
        -v c0="$m_child0" -v c1="$child1" -v t0="$m_t0" -v t1="$t1" -v hz="$hz" 'BEGIN {
            wall = t1 - t0; if (wall <= 0) wall = 1e-9
            other = ((b1 - b0) / hz - (c1 - c0)) / wall; if (other < 0) other = 0
            steal = (s1 - s0) / hz / wall
            printf "%d other=%.2f_CPU,steal=%.2f_CPU\n", (other >= 0.1 || steal >= 0.05), other, steal }')
    noise="${noise//_/ }"
}

# --- one run of each tool -------------------------------------------------------------------
run_lab() {  # run_lab THREADS ROUND: appends "value contended" per metric to $work/tT/lab.<metric>
    local t=$1 r=$2 out="$logs/lab.t$1.r$2.json" err="$logs/lab.t$1.r$2.stderr" cache
    cache="$(mktemp -d "$work/xdg-cache.XXXXXX")"  # fresh private cache: always a new calibration
    note "threads $t round $r: lab calibrate --threads $t --json"
    local rc attempt waited
    for attempt in 1 2 3; do
        # A shared build folder may be relinking lab right now: wait for it (up to 3 minutes).
        waited=0
        while [[ ! -x "$LAB" && $waited -lt 180 ]]; do sleep 5; waited=$((waited + 5)); done
        ((waited == 0)) || note "  waited ${waited}s for $LAB to be rebuilt"
        wait_for_idle
        rc=0
        measure_begin
        XDG_CACHE_HOME="$cache" "$LAB" calibrate --threads "$t" --json >"$out" 2>"$err" || rc=$?
        measure_end
        [[ $rc -ne 0 && $attempt -lt 3 ]] || break
        note "  lab calibrate failed (exit $rc, attempt $attempt); retrying in 10 s"
        sleep 10
    done
    rm -rf "$cache"
    if [[ $rc -ne 0 ]]; then
        note "  lab calibrate failed (exit $rc); see $err; no lab sample this round"
        return 0
    fi
    note "  during it: $noise$( ((contended)) && echo ' (contended)')"
    local got_t now
    got_t="$(json_get "$out" '.ceilings.threads' 2>/dev/null || echo '?')"
    [[ "$got_t" == "$t" ]] || note "  warning: lab reports $got_t threads, asked for $t"
    now="$(json_get "$out" '.calibrated_now' 2>/dev/null || echo '?')"
    [[ "$now" == "true" ]] || note "  warning: lab did not calibrate now (calibrated_now=$now)"
    local i v
    for i in "${!metrics[@]}"; do
        if v="$(json_get "$out" "${jq_paths[$i]}" 2>/dev/null)" && [[ "$v" =~ ^[0-9.eE+-]+$ ]]; then
            echo "$v $contended" >>"$work/t$t/lab.${metrics[$i]}"
        else
            note "  lab JSON has no ${jq_paths[$i]}"
        fi
    done
}

run_likwid() {  # run_likwid THREADS ROUND: appends "value contended" per metric to $work/tT/likwid.<metric>
    local t=$1 r=$2 i test size key out v rc
    for i in "${!tests[@]}"; do
        test="${tests[$i]}"
        if [[ "$test" == peakflops* ]]; then
            size="$((flops_kb_per_thread * t))kB"; key="MFlops/s"
        else
            size="$stream_size"; key="MByte/s"
        fi
        out="$logs/likwid.t$t.r$r.$test.txt"
        note "threads $t round $r: likwid-bench -t $test -W N:$size:$t"
        wait_for_idle
        rc=0
        measure_begin
        likwid-bench -t "$test" -W "N:$size:$t" >"$out" 2>&1 || rc=$?
        measure_end
        if [[ $rc -ne 0 ]]; then note "  likwid-bench failed (exit $rc); see $out"; continue; fi
        note "  during it: $noise$( ((contended)) && echo ' (contended)')"
        grep -q "^Using $t threads" "$out" || note "  warning: likwid did not report 'Using $t threads' (see $out)"
        # "MFlops/s:  336901.07" / "MByte/s:  44920.14": decimal mega (1e6).
        v="$(awk -F: -v k="$key" '$1 == k { gsub(/[ \t]/, "", $2); print $2 * 1e6; exit }' "$out")"
        if [[ -n "$v" ]]; then echo "$v $contended" >>"$work/t$t/likwid.${metrics[$i]}"; else note "  no '$key' line in $out"; fi
    done
}

median() {  # median FILE [quiet]: median of the first column (only uncontended lines with "quiet")
    [[ -s "$1" ]] || return 0
    awk -v q="${2:-}" 'q == "" || $2 == 0 { print $1 }' "$1" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() {  # ratio A B: A/B to 2 decimals, or n/a
    if [[ -n "$1" && -n "$2" ]]; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; else echo "n/a"; fi
}

# --- the rounds -----------------------------------------------------------------------------
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
for t in "${thread_counts[@]}"; do
    mkdir -p "$work/t$t"
    for ((r = 1; r <= rounds; r++)); do
        # Alternate which tool goes first (lab, likwid | likwid, lab | ...) so slow drift in the
        # host's load does not favour one tool.
        if ((r % 2)); then run_lab "$t" "$r"; run_likwid "$t" "$r"; else run_likwid "$t" "$r"; run_lab "$t" "$r"; fi
    done
done

# --- the tables -----------------------------------------------------------------------------
cpu_model="$(awk -F: '/^model name/ { sub(/^[ \t]+/, "", $2); print $2; exit }' /proc/cpuinfo)"
likwid_version="$(likwid-bench -h 2>&1 | awk '/Version/ { print $NF }' || true)"
echo "lab calibrate vs likwid-bench ${likwid_version:-?} ($isa kernels), $rounds round(s), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "CPU: ${cpu_model:-unknown}, $all_cpus CPUs usable; load average before ${load_before}, after $(cut -d' ' -f1-3 /proc/loadavg)"
# What statistic lab's ceilings are (its "method" strings say, e.g. "best of 434 samples").
lab_stat="$(cat "$logs"/lab.*.json 2>/dev/null | grep -o -m1 -E '(best|median|mean) of [0-9]+ samples' | head -n1 |
    sed -E 's/ of [0-9]+ samples/ of its samples/' || true)"
echo "lab: $LAB (built $(date -u -r "$LAB" +%Y-%m-%dT%H:%MZ 2>/dev/null || echo '?')); a lab ceiling is the ${lab_stat:-?} (its JSON's method), a likwid figure the mean over one run of >= 1 s"
for t in "${thread_counts[@]}"; do
    echo
    echo "threads: $t   (likwid peakflops: $((flops_kb_per_thread * t)) kB in L1; streams: lab max(4 x LLC, 256 MiB), likwid $stream_size)"
    printf '%-10s %-24s %-15s %-15s %-10s %-7s %s\n' metric "likwid test" "lab median" "likwid median" lab/likwid target verdict
    for i in "${!metrics[@]}"; do
        m="${metrics[$i]}"
        lm="$(median "$work/t$t/lab.$m")"
        km="$(median "$work/t$t/likwid.$m")"
        if [[ $i -lt 2 ]]; then unit="GFLOP/s"; else unit="GB/s"; fi
        fmt() { if [[ -n "$1" ]]; then awk -v v="$1" -v u="$unit" 'BEGIN { printf "%.1f %s", v / 1e9, u }'; else echo "n/a"; fi; }
        rt="$(ratio "$lm" "$km")"
        if [[ "$rt" == n/a ]]; then verdict="n/a"
        else verdict="$(awk -v a="$lm" -v b="$km" 'BEGIN { print (a / b >= 0.9) ? "PASS" : "BELOW" }')"; fi
        printf '%-10s %-24s %-15s %-15s %-10s %-7s %s\n' "$m" "${tests[$i]}" "$(fmt "$lm")" "$(fmt "$km")" "$rt" ">= 0.9" "$verdict"
    done
    echo "samples in round order (G/s; * = contended: other processes or the host took CPU time during it)"
    echo "and the ratio of the medians of the uncontended samples only:"
    for m in "${metrics[@]}"; do
        list() { if [[ -s "$1" ]]; then awk '{ printf "%s%.1f%s", (NR > 1 ? " " : ""), $1 / 1e9, ($2 ? "*" : "") }' "$1"; else printf -- '-'; fi; }
        printf '  %-10s lab %-26s likwid %-26s quiet ratio %s\n' "$m" "$(list "$work/t$t/lab.$m")" "$(list "$work/t$t/likwid.$m")" \
            "$(ratio "$(median "$work/t$t/lab.$m" quiet)" "$(median "$work/t$t/likwid.$m" quiet)")"
    done
done
if [[ -n "$log_dir" ]]; then echo; echo "raw outputs: $log_dir"; fi
exit 0
