#!/usr/bin/env bash
# likwid_fidelity.sh: how close are `lab calibrate`'s CPU ceilings to likwid-bench's?
#
# Runs lab's full calibration and the matching likwid-bench kernels side by side, alternating
# the two tools over several rounds (default 3) at the same thread count, and prints, for each
# ceiling, each tool's median, the ratio lab/likwid of every round, and the median of those
# ratios with their spread over the rounds (min-max and +-% of the median):
#   fp32.simt <-> peakflops_sp_avx512_fma | peakflops_sp_avx_fma   (L1-resident, 16 kB per thread)
#   fp64.simt <-> peakflops_avx512_fma    | peakflops_avx_fma      (L1-resident, 16 kB per thread)
#   read      <-> load_avx512             | load_avx               (1 GB)
#   copy      <-> copy_avx512             | copy_avx               (1 GB)
#   triad     <-> stream_avx512_fma       | stream_avx_fma         (1 GB; STREAM triad a = b + s*c)
# The two tools use different statistics: a lab ceiling is work / MEDIAN sample time (its JSON
# gives the samples' relative stddev as `spread`); a likwid-bench figure is total work / total
# time over one run of >= 1 s, a mean. The target is a median ratio lab/likwid >= 0.9. It is a
# benchmark, not a test: it exits 0 whatever the ratios, 2 when a tool it needs is missing, 64
# on bad usage. See bench/README.md for how to read the tables.
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
Exit status: 0 whatever the ratios, 2 when lab, likwid-bench or jq/python3 is missing, 64 on bad usage.
EOF
}

die_missing() {  # die_missing WHAT HOW
    echo "likwid_fidelity: $1 not found; $2" >&2
    exit 2
}

need_arg() {  # need_arg "$@": the option in $1 must be followed by a value
    [[ $# -ge 2 && -n "$2" ]] || { echo "likwid_fidelity: $1 needs a value" >&2; usage >&2; exit 64; }
}

rounds=3
threads=""
both=0
log_dir=""
wait_idle=60
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) need_arg "$@"; rounds="$2"; shift 2 ;;
        --rounds=*) rounds="${1#*=}"; shift ;;
        --threads) need_arg "$@"; threads="$2"; shift 2 ;;
        --threads=*) threads="${1#*=}"; shift ;;
        --both) both=1; shift ;;
        --wait-idle) need_arg "$@"; wait_idle="$2"; shift 2 ;;
        --wait-idle=*) wait_idle="${1#*=}"; shift ;;
        --log-dir) need_arg "$@"; log_dir="$2"; shift 2 ;;
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
# Where each ceiling is in lab's JSON; .value (work / median sample time), .spread (relative
# stddev of its samples) and .load (other processes' CPU use while it was measured; -1 unknown)
# are read from there.
jq_paths=('.ceilings.flops_per_s["fp32.simt"]' '.ceilings.flops_per_s["fp64.simt"]'
          '.ceilings.bandwidth_bytes_per_s["read"]' '.ceilings.bandwidth_bytes_per_s["copy"]'
          '.ceilings.bandwidth_bytes_per_s["triad"]')
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
# measure_begin / measure_end around a tool run; measure_end sets $contended (0/1), $noise and
# $load_cpus (other processes + steal, in CPUs: the same quantity as lab's per-ceiling `load`).
m_busy0=0 m_steal0=0 m_child0=0 m_t0=0 contended=0 noise="" load_cpus=0
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
    read -r contended noise load_cpus < <(awk -v b0="$m_busy0" -v b1="$busy1" -v s0="$m_steal0" -v s1="$steal1" \
        -v c0="$m_child0" -v c1="$child1" -v t0="$m_t0" -v t1="$t1" -v hz="$hz" 'BEGIN {
            wall = t1 - t0; if (wall <= 0) wall = 1e-9
            other = ((b1 - b0) / hz - (c1 - c0)) / wall; if (other < 0) other = 0
            steal = (s1 - s0) / hz / wall
            printf "%d other=%.2f_CPU,steal=%.2f_CPU %.2f\n", (other >= 0.1 || steal >= 0.05), other, steal, other + steal }')
    noise="${noise//_/ }"
}

# --- one run of each tool -------------------------------------------------------------------
run_lab() {  # run_lab THREADS ROUND: appends "round value contended spread load" per metric to $work/tT/lab.<metric>
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
    local i v sp ld c
    for i in "${!metrics[@]}"; do
        if v="$(json_get "$out" "${jq_paths[$i]}.value" 2>/dev/null)" && [[ "$v" =~ ^[0-9.eE+-]+$ ]]; then
            sp="$(json_get "$out" "${jq_paths[$i]}.spread" 2>/dev/null)" && [[ "$sp" =~ ^[0-9.eE+-]+$ ]] || sp=-1
            ld="$(json_get "$out" "${jq_paths[$i]}.load" 2>/dev/null)" && [[ "$ld" =~ ^[0-9.eE+-]+$ ]] || ld=-1
            # Contended: lab's own load for this ceiling (other processes + steal while it was
            # measured) when lab knows it, else the whole calibration's, measured here.
            read -r c ld < <(awk -v l="$ld" -v c="$contended" -v w="$load_cpus" \
                'BEGIN { if (l >= 0) print (l >= 0.1 ? 1 : 0), l; else print c, w }')
            echo "$r $v $c $sp $ld" >>"$work/t$t/lab.${metrics[$i]}"
        else
            note "  lab JSON has no ${jq_paths[$i]}.value"
        fi
    done
}

run_likwid() {  # run_likwid THREADS ROUND: appends "round value contended load" per metric to $work/tT/likwid.<metric>
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
        if [[ -n "$v" ]]; then echo "$r $v $contended $load_cpus" >>"$work/t$t/likwid.${metrics[$i]}"; else note "  no '$key' line in $out"; fi
    done
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
# pair MODE LABFILE LIKWIDFILE ROUNDS SCALE: joins the two tools' samples by round.
#   MODE row:    "<lab median> <likwid median> <ratios, comma-joined> <ratio median> <min> <max> <+-%> <n>"
#                (medians over all samples, scaled; ratios of the rounds where both tools have a sample;
#                +-% = the largest deviation of a round's ratio from the ratios' median)
#   MODE rounds: one line per round: round, lab value*, spread, load, likwid value*, load, ratio
#   MODE quiet:  "<median of the ratios of rounds where neither sample is contended> <n>"
pair() {
    awk -v mode="$1" -v R="$4" -v sc="$5" '
        function med(a, n,   i, j, x, b) {  # median of a[1..n]
            if (n == 0) return ""
            for (i = 1; i <= n; i++) b[i] = a[i]
            for (i = 2; i <= n; i++) { x = b[i]; for (j = i - 1; j >= 1 && b[j] > x; j--) b[j + 1] = b[j]; b[j + 1] = x }
            return (n % 2) ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
        }
        function num(v) { return sprintf("%.1f", v / sc) }
        FILENAME == ARGV[1] { lv[$1] = $2; lc[$1] = $3; ls[$1] = $4; ll[$1] = $5; la[++nl] = $2; next }
        { kv[$1] = $2; kc[$1] = $3; kl[$1] = $4; ka[++nk] = $2 }
        END {
            nr = 0; nq = 0; list = ""
            for (r = 1; r <= R; r++) {
                has = (r in lv) && (r in kv) && kv[r] > 0
                if (has) { q = lv[r] / kv[r]; rt[++nr] = q; if (!lc[r] && !kc[r]) qt[++nq] = q }
                list = list (r > 1 ? "," : "") (has ? sprintf("%.2f", q) : "-")
                if (mode == "rounds")
                    # (Every comparison in parentheses: a bare ">" in a printf list is a redirection.)
                    printf "%s %s %s %s %s %s %s\n", r,
                        ((r in lv) ? num(lv[r]) (lc[r] ? "*" : "") : "-"),
                        (((r in lv) && (ls[r] >= 0)) ? sprintf("%.1f%%", 100 * ls[r]) : "-"),
                        (((r in lv) && (ll[r] >= 0)) ? sprintf("%.2f", ll[r]) : "-"),
                        ((r in kv) ? num(kv[r]) (kc[r] ? "*" : "") : "-"),
                        ((r in kv) ? sprintf("%.2f", kl[r]) : "-"),
                        (has ? sprintf("%.2f", q) : "-")
            }
            if (mode == "row") {
                m = med(rt, nr); lo = hi = m; dev = 0
                for (i = 1; i <= nr; i++) {
                    if (rt[i] < lo) lo = rt[i]; if (rt[i] > hi) hi = rt[i]
                    d = rt[i] / m - 1; if (d < 0) d = -d; if (d > dev) dev = d
                }
                printf "%s %s %s %s %s %s %s %d\n",
                    (nl ? sprintf("%.9g", med(la, nl)) : "-"), (nk ? sprintf("%.9g", med(ka, nk)) : "-"), list,
                    (nr ? sprintf("%.2f", m) : "-"), (nr ? sprintf("%.2f", lo) : "-"), (nr ? sprintf("%.2f", hi) : "-"),
                    (nr ? sprintf("%.0f%%", 100 * dev) : "-"), nr
            }
            if (mode == "quiet") printf "%s %d\n", nq ? sprintf("%.2f", med(qt, nq)) : "n/a", nq
        }' "$2" "$3"
}

cpu_model="$(awk -F: '/^model name/ { sub(/^[ \t]+/, "", $2); print $2; exit }' /proc/cpuinfo)"
likwid_version="$(likwid-bench -h 2>&1 | awk '/Version/ { print $NF }' || true)"
echo "lab calibrate vs likwid-bench ${likwid_version:-?} ($isa kernels), $rounds round(s), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "CPU: ${cpu_model:-unknown}, $all_cpus CPUs usable; load average before ${load_before}, after $(cut -d' ' -f1-3 /proc/loadavg)"
# What statistic lab's ceilings are: its "method" strings say, e.g., "median of 36 samples".
lab_stat="$(cat "$logs"/lab.*.json 2>/dev/null | grep -o -m1 -E '(best|median|mean) of [0-9]+ samples' | head -n1 |
    sed -E 's/ of [0-9]+ samples//' || true)"
echo "lab: $LAB (built $(date -u -r "$LAB" +%Y-%m-%dT%H:%MZ 2>/dev/null || echo '?'))"
echo "statistics: lab = work / ${lab_stat:-?} sample time (its JSON's method), spread = relative stddev of its samples;"
echo "            likwid-bench = its MFlops/s or MByte/s: total work / total time of one run of >= 1 s (a mean), no spread"
if [[ "$lab_stat" == best ]]; then
    echo "warning: this lab takes the best sample, not the median: the binary predates the median change"
fi
for t in "${thread_counts[@]}"; do
    echo
    echo "threads: $t   (likwid peakflops: $((flops_kb_per_thread * t)) kB in L1; streams: lab max(4 x LLC, 256 MiB), likwid $stream_size)"
    printf '%-10s %-24s %-15s %-15s %-16s %-6s %-10s %-5s %-7s %s\n' metric "likwid test" "lab median" "likwid median" \
        "lab/likwid/round" median "min-max" "+-%" target verdict
    for i in "${!metrics[@]}"; do
        m="${metrics[$i]}"
        if [[ $i -lt 2 ]]; then unit="GFLOP/s"; else unit="GB/s"; fi
        touch "$work/t$t/lab.$m" "$work/t$t/likwid.$m"
        read -r lm km list rmed rlo rhi rdev _ < <(pair row "$work/t$t/lab.$m" "$work/t$t/likwid.$m" "$rounds" 1e9)
        fmt() { if [[ "$1" != - ]]; then awk -v v="$1" -v u="$unit" 'BEGIN { printf "%.1f %s", v / 1e9, u }'; else echo "n/a"; fi; }
        if [[ "$rmed" == - ]]; then verdict="n/a"; range="n/a"
        else
            verdict="$(awk -v q="$rmed" 'BEGIN { print (q >= 0.9) ? "PASS" : "BELOW" }')"
            range="$rlo-$rhi"
        fi
        printf '%-10s %-24s %-15s %-15s %-16s %-6s %-10s %-5s %-7s %s\n' "$m" "${tests[$i]}" "$(fmt "$lm")" "$(fmt "$km")" \
            "${list//,/ }" "${rmed/-/n/a}" "$range" "${rdev/-/n/a}" ">= 0.9" "$verdict"
    done
    echo "lab/likwid/round: the ratio in each round; median, min-max: over the rounds; +-%: the largest deviation of"
    echo "a round's ratio from their median. The verdict compares the median ratio with the target."
    echo
    echo "per round (G/s; * = contended: other processes or the host used >= 0.1 CPU while it was measured;"
    echo "lab spread = relative stddev of lab's samples; load = other processes + steal, in CPUs: lab's own"
    echo "per-ceiling figure, likwid's measured here over its run); quiet = median ratio of the uncontended rounds:"
    printf '  %-10s %-5s %-9s %-7s %-6s %-9s %-6s %s\n' metric round lab spread load likwid load lab/likwid
    for m in "${metrics[@]}"; do
        first=1
        while read -r rr lv ls ll kv kl q; do
            printf '  %-10s %-5s %-9s %-7s %-6s %-9s %-6s %s\n' "$( ((first)) && echo "$m")" "$rr" "$lv" "$ls" "$ll" "$kv" "$kl" "$q"
            first=0
        done < <(pair rounds "$work/t$t/lab.$m" "$work/t$t/likwid.$m" "$rounds" 1e9)
        read -r qr qn < <(pair quiet "$work/t$t/lab.$m" "$work/t$t/likwid.$m" "$rounds" 1e9)
        printf '  %-10s %-5s %s\n' "" quiet "$qr ($qn of $rounds rounds uncontended)"
    done
done
if [[ -n "$log_dir" ]]; then echo; echo "raw outputs: $log_dir"; fi
exit 0
