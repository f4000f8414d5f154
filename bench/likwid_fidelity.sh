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
usage: bench/likwid_fidelity.sh [--rounds N] [--threads N | --both] [--log-dir DIR]

  --rounds N    rounds per thread count; each round runs both tools once (default 3)
  --threads N   threads for both tools (default: all CPUs this process may use, from nproc)
  --both        run with 1 thread and with all CPUs
  --log-dir DIR keep every raw output (lab JSON, likwid-bench text) in DIR
  -h, --help    this help

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
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
        --rounds=*) rounds="${1#*=}"; shift ;;
        --threads) threads="${2:?--threads needs a number}"; shift 2 ;;
        --threads=*) threads="${1#*=}"; shift ;;
        --both) both=1; shift ;;
        --log-dir) log_dir="${2:?--log-dir needs a folder}"; shift 2 ;;
        --log-dir=*) log_dir="${1#*=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "likwid_fidelity: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "likwid_fidelity: --rounds wants a positive integer, got '$rounds'" >&2; exit 64; }
[[ -z "$threads" || "$threads" =~ ^[1-9][0-9]*$ ]] || { echo "likwid_fidelity: --threads wants a positive integer, got '$threads'" >&2; exit 64; }
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
print(d)
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

note() { echo "likwid_fidelity: $*" >&2; }

# --- one run of each tool -------------------------------------------------------------------
run_lab() {  # run_lab THREADS ROUND: appends one sample per metric to $work/T/lab.<metric>
    local t=$1 r=$2 out="$logs/lab.t$1.r$2.json" err="$logs/lab.t$1.r$2.stderr" cache
    cache="$(mktemp -d "$work/xdg-cache.XXXXXX")"  # fresh private cache: always a new calibration
    note "threads $t round $r: lab calibrate"
    local rc attempt waited
    for attempt in 1 2 3; do
        # A shared build folder may be relinking lab right now: wait for it (up to 3 minutes).
        waited=0
        while [[ ! -x "$LAB" && $waited -lt 180 ]]; do sleep 5; waited=$((waited + 5)); done
        ((waited == 0)) || note "  waited ${waited}s for $LAB to be rebuilt"
        rc=0
        XDG_CACHE_HOME="$cache" "$LAB" calibrate --threads "$t" --json >"$out" 2>"$err" || rc=$?
        [[ $rc -ne 0 && $attempt -lt 3 ]] || break
        note "  lab calibrate failed (exit $rc, attempt $attempt); retrying in 10 s"
        sleep 10
    done
    rm -rf "$cache"
    if [[ $rc -ne 0 ]]; then
        note "  lab calibrate failed (exit $rc); see $err; no lab sample this round"
        return 0
    fi
    local got_t now
    got_t="$(json_get "$out" '.ceilings.threads' 2>/dev/null || echo '?')"
    [[ "$got_t" == "$t" ]] || note "  warning: lab reports $got_t threads, asked for $t"
    now="$(json_get "$out" '.calibrated_now' 2>/dev/null || echo '?')"
    [[ "$now" == "true" ]] || note "  warning: lab did not calibrate now (calibrated_now=$now)"
    local i v
    for i in "${!metrics[@]}"; do
        if v="$(json_get "$out" "${jq_paths[$i]}" 2>/dev/null)" && [[ "$v" =~ ^[0-9.eE+-]+$ ]]; then
            echo "$v" >>"$work/t$t/lab.${metrics[$i]}"
        else
            note "  lab JSON has no ${jq_paths[$i]}"
        fi
    done
}

run_likwid() {  # run_likwid THREADS ROUND: appends one sample per metric to $work/T/likwid.<metric>
    local t=$1 r=$2 i test size key out v
    for i in "${!tests[@]}"; do
        test="${tests[$i]}"
        if [[ "$test" == peakflops* ]]; then
            size="$((flops_kb_per_thread * t))kB"; key="MFlops/s"
        else
            size="$stream_size"; key="MByte/s"
        fi
        out="$logs/likwid.t$t.r$r.$test.txt"
        note "threads $t round $r: likwid-bench -t $test -W N:$size:$t"
        if ! likwid-bench -t "$test" -W "N:$size:$t" >"$out" 2>&1; then
            note "  likwid-bench failed; see $out"; continue
        fi
        grep -q "^Using $t threads" "$out" || note "  warning: likwid did not report 'Using $t threads' (see $out)"
        # "MFlops/s:  336901.07" / "MByte/s:  44920.14": decimal mega (1e6).
        v="$(awk -F: -v k="$key" '$1 == k { gsub(/[ \t]/, "", $2); print $2 * 1e6; exit }' "$out")"
        if [[ -n "$v" ]]; then echo "$v" >>"$work/t$t/likwid.${metrics[$i]}"; else note "  no '$key' line in $out"; fi
    done
}

median() {  # median FILE: median of the numbers in FILE (one a line), or nothing
    [[ -s "$1" ]] || return 0
    sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
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
for t in "${thread_counts[@]}"; do
    echo
    echo "threads: $t   (likwid peakflops: $((flops_kb_per_thread * t)) kB in L1; streams: lab max(4 x LLC, 256 MiB), likwid $stream_size)"
    printf '%-10s %-26s %-16s %-16s %-10s %-7s %s\n' metric "likwid test" "lab median" "likwid median" lab/likwid target verdict
    for i in "${!metrics[@]}"; do
        m="${metrics[$i]}"
        lm="$(median "$work/t$t/lab.$m")"
        km="$(median "$work/t$t/likwid.$m")"
        if [[ $i -lt 2 ]]; then unit="GFLOP/s"; else unit="GB/s"; fi
        fmt() { if [[ -n "$1" ]]; then awk -v v="$1" -v u="$unit" 'BEGIN { printf "%.1f %s", v / 1e9, u }'; else echo "n/a"; fi; }
        if [[ -n "$lm" && -n "$km" ]]; then
            ratio="$(awk -v a="$lm" -v b="$km" 'BEGIN { printf "%.2f", a / b }')"
            verdict="$(awk -v a="$lm" -v b="$km" 'BEGIN { print (a / b >= 0.9) ? "PASS" : "BELOW" }')"
        else
            ratio="n/a"; verdict="n/a"
        fi
        printf '%-10s %-26s %-16s %-16s %-10s %-7s %s\n' "$m" "${tests[$i]}" "$(fmt "$lm")" "$(fmt "$km")" "$ratio" ">= 0.9" "$verdict"
    done
    echo "samples (lab | likwid, per round, G/s):"
    for m in "${metrics[@]}"; do
        list() { if [[ -s "$1" ]]; then awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 / 1e9 }' "$1"; else printf -- '-'; fi; }
        printf '  %-10s %s | %s\n' "$m" "$(list "$work/t$t/lab.$m")" "$(list "$work/t$t/likwid.$m")"
    done
done
[[ -n "$log_dir" ]] && echo && echo "raw outputs: $log_dir"
exit 0
