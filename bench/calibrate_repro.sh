#!/usr/bin/env bash
# calibrate_repro.sh: does `lab calibrate` give the same ceilings when run again?
#
# Runs `lab calibrate --json` N times (default 5), each into a fresh private XDG_CACHE_HOME so
# that every run calibrates from scratch and the user's cache is never touched, and prints, for
# every ceiling (fp32.simt, fp64.simt, read, copy, triad, update, best, clock, launch):
#   - its N values and their median,
#   - the largest deviation of a run from that median, in %,
#   - the ceiling's own reported spread (relative stddev of its samples; median over the runs),
#   - other processes' CPU use while it was measured (lab's `load`; median over the runs),
#   - how many runs stored it as trusted,
#   - PASS/MISS against the target: every run within +-10% of the runs' median.
# The launch cost is reported too, but its target is informational: it is a cost of a few
# microseconds, not a ceiling the lessons compare against.
# It is a benchmark, not a test: it exits 0 whatever the verdicts, 2 when a tool it needs is
# missing, 64 on bad usage. See bench/README.md ("calibrate_repro.sh").
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/calibrate_repro.sh [--rounds N] [--quick] [--threads N] [--wait-idle S] [--log-dir DIR]

  --rounds N      runs of `lab calibrate` (default 5)
  --quick         pass --quick to lab calibrate (fewer samples; seconds per run)
  --threads N     pass --threads N to lab calibrate (default: lab's own default, all CPUs)
  --wait-idle S   before each run, wait up to S seconds for the CPUs to be >= 90% idle
                  (default 60; 0: do not wait)
  --log-dir DIR   keep every run's JSON and stderr in DIR
  -h, --help      this help

Environment: LAB=/path/to/lab (default: <repo>/build/cli/lab).
Exit status: 0 whatever the verdicts, 2 when lab or python3 is missing, 64 on bad usage.
EOF
}

rounds=5
quick=0
threads=""
wait_idle=60
log_dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) [[ $# -ge 2 ]] || { echo "calibrate_repro: --rounds needs a number" >&2; exit 64; }
                  rounds="$2"; shift 2 ;;
        --rounds=*) rounds="${1#*=}"; shift ;;
        --quick) quick=1; shift ;;
        --threads) [[ $# -ge 2 ]] || { echo "calibrate_repro: --threads needs a number" >&2; exit 64; }
                   threads="$2"; shift 2 ;;
        --threads=*) threads="${1#*=}"; shift ;;
        --wait-idle) [[ $# -ge 2 ]] || { echo "calibrate_repro: --wait-idle needs seconds" >&2; exit 64; }
                     wait_idle="$2"; shift 2 ;;
        --wait-idle=*) wait_idle="${1#*=}"; shift ;;
        --log-dir) [[ $# -ge 2 ]] || { echo "calibrate_repro: --log-dir needs a folder" >&2; exit 64; }
                   log_dir="$2"; shift 2 ;;
        --log-dir=*) log_dir="${1#*=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "calibrate_repro: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "calibrate_repro: --rounds wants a positive integer, got '$rounds'" >&2; exit 64; }
[[ -z "$threads" || "$threads" =~ ^[1-9][0-9]*$ ]] || { echo "calibrate_repro: --threads wants a positive integer, got '$threads'" >&2; exit 64; }
[[ "$wait_idle" =~ ^[0-9]+$ ]] || { echo "calibrate_repro: --wait-idle wants seconds, got '$wait_idle'" >&2; exit 64; }
[[ -z "$log_dir" || "$log_dir" != -* ]] || { echo "calibrate_repro: --log-dir wants a folder, got '$log_dir'" >&2; exit 64; }

# --- the tools ------------------------------------------------------------------------------
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAB="${LAB:-$repo/build/cli/lab}"
if [[ ! -x "$LAB" ]]; then
    echo "calibrate_repro: lab ($LAB) not found; build it: meson setup build && ninja -C build (or set LAB=/path/to/lab)" >&2
    exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "calibrate_repro: python3 not found, needed to read lab's JSON; install it: apt-get install python3" >&2
    exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/calibrate_repro.XXXXXX")"
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
if [[ -n "$log_dir" ]]; then mkdir -p "$log_dir"; logs="$log_dir"; else logs="$work/logs"; mkdir -p "$logs"; fi

note() { echo "calibrate_repro: $(date -u +%T) $*" >&2; }

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

lab_args=(calibrate --json)
((quick)) && lab_args+=(--quick)
[[ -n "$threads" ]] && lab_args+=(--threads "$threads")

# --- the runs -------------------------------------------------------------------------------
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
started="$(date -u +%Y-%m-%dT%H:%MZ)"
: >"$work/runs.tsv"   # round, exit status, wall seconds, JSON file
for ((r = 1; r <= rounds; r++)); do
    out="$logs/lab.r$r.json" err="$logs/lab.r$r.stderr"
    note "run $r/$rounds: lab ${lab_args[*]}"
    rc=0
    for attempt in 1 2 3; do
        # A shared build folder may be relinking lab right now: wait for it (up to 3 minutes).
        waited=0
        while [[ ! -x "$LAB" && $waited -lt 180 ]]; do sleep 5; waited=$((waited + 5)); done
        ((waited == 0)) || note "  waited ${waited}s for $LAB to be rebuilt"
        wait_for_idle
        cache="$(mktemp -d "$work/xdg-cache.XXXXXX")"  # fresh private cache: always a new calibration
        rc=0
        t0="$EPOCHREALTIME"
        XDG_CACHE_HOME="$cache" "$LAB" "${lab_args[@]}" >"$out" 2>"$err" || rc=$?
        t1="$EPOCHREALTIME"
        rm -rf "$cache"
        [[ $rc -ne 0 && $attempt -lt 3 ]] || break
        note "  lab calibrate failed (exit $rc, attempt $attempt); retrying in 10 s"
        sleep 10
    done
    secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
    if [[ $rc -ne 0 ]]; then
        note "  lab calibrate failed (exit $rc); no values from this run; its last stderr lines:"
        tail -n 3 "$err" | sed 's/^/      /' >&2
    else
        note "  done in ${secs}s"
    fi
    printf '%s\t%s\t%s\t%s\n' "$r" "$rc" "$secs" "$out" >>"$work/runs.tsv"
done

# --- the table ------------------------------------------------------------------------------
cpu_model="$(awk -F: '/^model name/ { sub(/^[ \t]+/, "", $2); print $2; exit }' /proc/cpuinfo 2>/dev/null || true)"
CR_NPROC="$(nproc 2>/dev/null || echo '?')"
CR_LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
CR_BUILT="$(date -u -r "$LAB" +%Y-%m-%dT%H:%MZ 2>/dev/null || echo '?')"
CR_LAB="$LAB" CR_STARTED="$started" CR_CPU="${cpu_model:-unknown}" CR_LOAD_BEFORE="$load_before" CR_ARGS="${lab_args[*]}"
export CR_NPROC CR_LOAD_AFTER CR_BUILT CR_LAB CR_STARTED CR_CPU CR_LOAD_BEFORE CR_ARGS
python3 - "$work/runs.tsv" <<'PY'
import json, os, re, statistics, sys

TARGET = 0.10  # every run within +-10% of the runs' median

# (label, path in the JSON, unit label, scale, informational)
ROWS = [
    ("fp32.simt", ("flops_per_s", "fp32.simt"), "GFLOP/s", 1e9, False),
    ("fp64.simt", ("flops_per_s", "fp64.simt"), "GFLOP/s", 1e9, False),
    ("read", ("bandwidth_bytes_per_s", "read"), "GB/s", 1e9, False),
    ("copy", ("bandwidth_bytes_per_s", "copy"), "GB/s", 1e9, False),
    ("triad", ("bandwidth_bytes_per_s", "triad"), "GB/s", 1e9, False),
    ("update", ("bandwidth_bytes_per_s", "update"), "GB/s", 1e9, False),
    ("best", ("bandwidth_bytes_per_s", "best"), "GB/s", 1e9, False),
    ("clock", ("clock_hz",), "GHz", 1e9, False),
    ("launch", ("launch_s",), "us", 1e-6, True),
]

runs = []  # (round, rc, seconds, doc or None)
with open(sys.argv[1]) as f:
    for line in f:
        r, rc, secs, path = line.rstrip("\n").split("\t")
        doc = None
        if rc == "0":
            try:
                with open(path) as jf:
                    doc = json.load(jf)
            except (OSError, ValueError) as e:
                print(f"calibrate_repro: run {r}: cannot read lab's JSON ({e})", file=sys.stderr)
        runs.append((int(r), int(rc), float(secs), doc))


def ceiling(doc, path):
    if doc is None:
        return None
    c = doc.get("ceilings", {})
    for key in path:
        if not isinstance(c, dict) or key not in c:
            return None
        c = c[key]
    if not isinstance(c, dict) or not isinstance(c.get("value"), (int, float)) or c["value"] <= 0:
        return None
    return c


def fmt(v, scale):
    x = v / scale
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


ok_docs = [d for _, _, _, d in runs if d is not None]
quick = any(d.get("ceilings", {}).get("quick") for d in ok_docs)
threads = sorted({d.get("ceilings", {}).get("threads") for d in ok_docs} - {None})
clock_stat = "?"
for d in ok_docs:
    m = re.search(r"(best|median|mean) of [0-9]+", str(d.get("ceilings", {}).get("clock_hz", {}).get("method", "")))
    if m:
        clock_stat = m.group(0)
        break
stat = "?"
for d in ok_docs:
    m = re.search(r"(best|median|mean) of [0-9]+ samples", json.dumps(d.get("ceilings", {})))
    if m:
        stat = m.group(1)
        break

print(f"lab calibrate reproducibility: {len(ok_docs)} of {len(runs)} run(s) gave a JSON, "
      f"{'--quick' if quick else 'full'} calibration, threads {','.join(map(str, threads)) or '?'}, "
      f"started {os.environ['CR_STARTED']}")
print(f"CPU: {os.environ['CR_CPU']}, {os.environ['CR_NPROC']} CPUs usable; load average before "
      f"{os.environ['CR_LOAD_BEFORE']}, after {os.environ['CR_LOAD_AFTER']}")
print(f"lab: {os.environ['CR_LAB']} (built {os.environ['CR_BUILT']}), command: lab {os.environ['CR_ARGS']}, "
      f"each run in a fresh XDG_CACHE_HOME")
print(f"statistic: a ceiling is work / {stat} sample time (clock: {clock_stat} timed add chains; launch: the {stat} cost); "
      f"spread = relative stddev of its samples")
if stat == "best":
    print("warning: this lab takes the best sample, not the median: it predates the median change")
print()
hdr = (f"{'ceiling':<10} {'unit':<8} {'values in run order':<36} {'median':>8} {'max dev':>8} "
       f"{'spread':>7} {'load':>5} {'trusted':>7}  target     verdict")
print(hdr)
verdicts = {}
for label, path, unit, scale, info in ROWS:
    cs = [ceiling(d, path) for _, _, _, d in runs]
    vals = [c["value"] for c in cs if c]
    listing = " ".join(fmt(c["value"], scale) if c else "-" for c in cs)
    if not vals:
        print(f"{label:<10} {unit:<8} {listing:<36} {'n/a':>8} {'n/a':>8} {'n/a':>7} {'n/a':>5} {'n/a':>7}  "
              f"{'+-10%':<10} n/a")
        verdicts[label] = ("n/a", info)
        continue
    med = statistics.median(vals)
    dev = max(abs(v / med - 1) for v in vals)
    spreads = [c["spread"] for c in cs if c and isinstance(c.get("spread"), (int, float)) and c.get("samples", 0) > 0]
    spread = f"{100 * statistics.median(spreads):.1f}%" if spreads else "-"
    loads = [c["load"] for c in cs if c and isinstance(c.get("load"), (int, float)) and c["load"] >= 0]
    load = f"{statistics.median(loads):.2f}" if loads else "?"
    trusted = f"{sum(1 for c in cs if c and c.get('trusted'))}/{len(runs)}"
    verdict = "PASS" if dev <= TARGET else "MISS"
    verdicts[label] = (verdict, info)
    shown = f"{verdict} (info)" if info else verdict
    print(f"{label:<10} {unit:<8} {listing:<36} {fmt(med, scale):>8} {100 * dev:>7.1f}% {spread:>7} {load:>5} "
          f"{trusted:>7}  {'+-10%':<10} {shown}")

# Which kernel "best" was, run by run.
bests = []
for _, _, _, d in runs:
    c = ceiling(d, ("bandwidth_bytes_per_s", "best"))
    m = re.search(r"(read|copy|triad|update)\s*$", c.get("method", "")) if c else None
    bests.append(m.group(1) if m else "-")
print()
print(f"best bandwidth kernel per run: {' '.join(bests)}")
print("runs (lab's own conditions; load = other processes' CPU use while a ceiling was measured, median over its ceilings):")
for r, rc, secs, d in runs:
    if d is None:
        print(f"  run {r}: lab exited {rc} after {secs:.1f} s; no values")
        continue
    cs = [ceiling(d, path) for _, path, _, _, _ in ROWS]
    cs = [c for c in cs if c]
    loads = [c["load"] for c in cs if isinstance(c.get("load"), (int, float)) and c["load"] >= 0]
    load = f"{statistics.median(loads):.2f} CPUs (max {max(loads):.2f})" if loads else "unknown"
    noise = sum(1 for c in cs if c.get("noise_met"))
    retried = sum(1 for c in cs if "retried" in str(c.get("source", "")))
    trusted = sum(1 for c in cs if c.get("trusted"))
    print(f"  run {r}: {secs:5.1f} s, load {load}, noise target met {noise}/{len(cs)}, "
          f"retried {retried}/{len(cs)}, trusted {trusted}/{len(cs)}")
print()
counted = {k: v for k, (v, info) in verdicts.items() if not info}
passed = sum(1 for v in counted.values() if v == "PASS")
line = f"target (every run within +-10% of the runs' median): {passed} of {len(counted)} ceilings PASS"
for what in ("MISS", "n/a"):
    names = [k for k, v in counted.items() if v == what]
    if names:
        line += f"; {what}: {', '.join(names)}"
print(line + "  (launch: informational, not counted)")
if len(ok_docs) < 3:
    print("note: fewer than 3 runs: a median and a max deviation from it say little")
PY
if [[ -n "$log_dir" ]]; then echo; echo "raw outputs: $log_dir"; fi
exit 0
