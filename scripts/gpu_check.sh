#!/usr/bin/env bash
# The prepared check for a lent GPU machine (../shared/gpu/README.md). Build and pack here, from
# the repository root:
#
#   meson setup build-gpu -Dbuildtype=release -Dgpu=enabled && meson compile -C build-gpu
#   ../shared/gpu/pack.sh build-gpu            # -> .gpu-carry (git-ignored), must stay < 60 MiB
#
# then one device call, from the repository root, with no arguments:
#
#   run  command: "bash scripts/gpu_check.sh"   carry: [".gpu-carry"]   timeout_s: 300
#
# It works to one deadline, 290 s after it starts (LAB_GPU_CHECK_DEADLINE_S), so that the call,
# a rerun and the machine's start-up fit in the 15 minutes of device time; most valuable first:
# lab calibrate, lab device (which then reads the ceilings cache), 02.01 full, 02.05 full, 02.05
# quick with a trace (checked: every workload's window holds device work, nothing dropped or
# stopped), the GPU tests, a quick run of every other lesson that has a CUDA companion. After every
# step it rewrites what comes back, so a call cut short still brings back what was done; $OUT
# holds at most 4 files (8 may come back):
#   summary.txt            the issue's targets, each with what was measured and PASS/FAIL; the steps
#   log.txt                everything the steps printed, and where each CUDA library was found
#   gpu-check.tar.gz       the run records (the recordings worth keeping as fixtures), the
#                          calibration and device JSON, the ceilings cache, the plots, the log
#   02.05-h200.trace.json.gz   02.05's trace (apart: it may be large)
# Every lab command gets --device cuda, never auto: a missing library or a GPU that does not
# work stops the check at once with one message (exit 1), instead of CPU figures saved under a
# GPU's name. Exit 0 when every step ran and every target passed, 1 otherwise, 2 for bad usage.
set -uo pipefail

[ -n "${OUT:-}" ] || { echo "gpu_check.sh: OUT is not set: the device call sets it; here: OUT=/tmp/gpuout bash scripts/gpu_check.sh" >&2; exit 2; }
[ $# -eq 0 ] || { echo "gpu_check.sh: takes no arguments (run it from the repository root with OUT set)" >&2; exit 2; }
root=$(pwd)
carry=$root/.gpu-carry
[ -f "$carry/env.sh" ] || { echo "gpu_check.sh: no $carry/env.sh: run it from the repository root after ../shared/gpu/pack.sh build-gpu" >&2; exit 2; }

start=$SECONDS
deadline=${LAB_GPU_CHECK_DEADLINE_S:-290}
mkdir -p "$OUT"
work=$(mktemp -d /tmp/gpu-check.XXXXXX)   # everything but the files that come back lives here
trap 'rm -rf "$work"' EXIT
files=$work/files
mkdir -p "$files/plots"
log=$OUT/log.txt
steps=$work/steps.tsv                    # step, exit status, seconds, what it wrote
: >"$log"
: >"$steps"

# shellcheck disable=SC1091
. "$carry/env.sh"
export XDG_CACHE_HOME=$work/cache        # a fresh ceilings cache: this check calibrates
export LAB_STUDENT=gpu-check
# The child's memory watchdog defaults to 80% of MemTotal, which a microVM may report small; a
# CUDA process's resident memory (cuBLASLt's kernels, pinned buffers) is several GiB. K, M or G.
export LAB_MEMORY_LIMIT=${LAB_MEMORY_LIMIT:-48G}
export PYTHONUNBUFFERED=1
lab=$carry/build/cli/lab

say() { echo "$*" | tee -a "$log"; }
elapsed() { echo $((SECONDS - start)); }
left() { echo $((deadline - (SECONDS - start))); }

# What comes back, rewritten after every step.
save() {
  cp -f "$log" "$files/log.txt"
  cp -f "$steps" "$files/steps.tsv"
  rm -rf "$files/cache"
  [ -d "$XDG_CACHE_HOME/lab" ] && cp -r "$XDG_CACHE_HOME/lab" "$files/cache"
  # Written beside, then moved in: $OUT never holds a half-written file or a fifth one.
  tar -C "$work" -czf "$work/gpu-check.tar.gz" files && mv -f "$work/gpu-check.tar.gz" "$OUT/gpu-check.tar.gz"
  local trace=$work/02.05-h200.trace.json.gz
  if [ -f "$trace" ] && [ ! -f "$OUT/${trace##*/}" ]; then
    if [ "$(du -m "$trace" | cut -f1)" -lt 15 ]; then cp -f "$trace" "$OUT/"; else say "   ${trace##*/}: $(du -m "$trace" | cut -f1) MiB, over the 16 MiB a file may come back with: not kept"; fi
  fi
  summarise >"$work/summary.txt" 2>>"$log"; mv -f "$work/summary.txt" "$OUT/summary.txt"
}

# step NAME CAP_S CMD...: runs CMD with stdout to $work/NAME.out and stderr to $work/NAME.err
# (then the log), within both its cap and what is left of the deadline; records its status.
# Returns the command's status.
step() {
  local name=$1 cap=$2; shift 2
  local budget; budget=$(left)
  budget=$((budget - 5))                 # keep time to pack what came out of it
  [ "$budget" -lt "$cap" ] && cap=$budget
  if [ "$cap" -lt 10 ]; then
    say "== $name: not run, the ${deadline} s deadline is near ($(elapsed) s gone)"
    printf '%s\tnot run\t0\tdeadline\n' "$name" >>"$steps"
    return 124
  fi
  say "== $name (at $(elapsed) s, limit ${cap} s): $*"
  local t0=$SECONDS rc
  timeout --kill-after=5 "$cap" "$@" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  cat "$work/$name.err" >>"$log"
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" $((SECONDS - t0)) "$work/$name.out" >>"$steps"
  [ "$rc" -eq 124 ] && say "   $name: stopped at its limit of ${cap} s"
  say "   $name: exit $rc after $((SECONDS - t0)) s"
  save
  return "$rc"
}

# Stops the whole check with one message: nothing after it could be measured.
fail_fast() {
  printf '\nGPU CHECK FAILED: %s\n' "$*" >>"$log"   # the summary below says it on the console
  echo "GPU CHECK FAILED: $*" >"$work/fatal.txt"
  save
  cat "$OUT/summary.txt"
  exit 1
}

summarise() {
  python3 - "$work" "$root" <<'PY'
import json, os, sys
work, root = sys.argv[1], sys.argv[2]
files = os.path.join(work, "files")
def load(name):
    try:
        with open(os.path.join(files, name)) as f:
            return json.load(f)
    except Exception:
        return None
rows, fails = [], 0
def row(what, got, want, ok):
    global fails
    verdict = "-" if ok is None else ("PASS" if ok else "FAIL")
    fails += ok is False
    rows.append((what, got, want, verdict))
def between(v, lo, hi):
    return v is not None and lo <= v <= hi
def value(m, k):
    v = (m or {}).get(k, {}).get("value")
    return v if isinstance(v, (int, float)) and v > 0 else None

fatal = os.path.join(work, "fatal.txt")
if os.path.exists(fatal):
    print(open(fatal).read().strip())
    print()

cal = load("calibrate.json")
if cal:
    c = cal["ceilings"]; fl = c.get("flops_per_s", {}); bw = c.get("bandwidth_bytes_per_s", {})
    print(f"device: {cal['facts'].get('name')} (kind {cal['kind']}, driver CUDA {cal['facts'].get('extra', {}).get('cuda_driver')})")
    launch = value(c, "launch_s"); graph = value(c, "launch_graph_s")
    row("launch, stream", f"{launch*1e6:.2f} us" if launch else "-", "2-3 us", between(launch, 2e-6, 3e-6))
    row("launch, CUDA graph (per kernel)", f"{graph*1e6:.2f} us" if graph else "-", "1.0-1.4 us", between(graph, 1.0e-6, 1.4e-6))
    f32, f64, b16 = value(fl, "fp32.simt"), value(fl, "fp64.simt"), value(fl, "bf16.tensor")
    row("fp32.simt", f"{f32/1e12:.1f} TFLOP/s" if f32 else "-", ">= 64 TFLOP/s", f32 is not None and f32 >= 64e12)
    row("fp64.simt", f"{f64/1e12:.1f} TFLOP/s" if f64 else "-", "31-33 TFLOP/s", between(f64, 31e12, 33e12))
    row("bf16.tensor (random data)", f"{b16/1e12:.0f} TFLOP/s" if b16 else "-", "770-800 TFLOP/s", between(b16, 770e12, 800e12))
    mc, cp = value(bw, "memcpy"), value(bw, "copy")
    row("memcpy DtoD (read+write)", f"{mc/1e12:.2f} TB/s" if mc else "-", "4.2-4.4 TB/s", between(mc, 4.2e12, 4.4e12))
    ratio = cp / mc if cp and mc else None
    row("copy kernel / memcpy", f"{ratio:.3f}" if ratio else "-", ">= 0.92", ratio is not None and ratio >= 0.92)
    for k in ("fp16.simt", "bf16.simt", "tf32.tensor", "fp16.tensor", "fp8.tensor", "int8.tensor", "fp64.tensor"):
        v = value(fl, k)
        if v: row(k, f"{v/1e12:.1f} T{'OP' if k.startswith('int8') else 'FLOP'}/s", "", None)
    for k in ("read", "copy", "triad"):
        v = value(bw, k)
        if v: row(f"bandwidth {k}", f"{v/1e12:.2f} TB/s", "", None)
    clk = value(c, "clock_hz")
    if clk: row("SM clock (fp32 peak)", f"{clk/1e9:.2f} GHz", "", None)
    for k, why in c.get("skipped", {}).items():
        row(f"skipped {k}", why[:60], "measured", False)
elif not os.path.exists(fatal):
    row("lab calibrate --device cuda", "no result", "ceilings", False)

dev = load("device.json")
if dev is not None:
    row("lab device reads the cache", "calibrated again" if dev.get("calibrated_now") else "read the cache", "read the cache",
        not dev.get("calibrated_now"))

r = load("02.01-h200.json")
if r:
    m = r.get("metrics", {})
    regimes = m.get("check.regimes", {}).get("value")
    row("02.01 mysteries' regimes", regimes or "-", "compute,memory,overhead", regimes == "compute_bound,memory_bound,overhead_bound")
    chain = m.get("chain.measured_regime", {}).get("value")
    row("02.01 dependent chain", chain or "-", "latency_bound", chain == "latency_bound")
    for k in ("check.compute_roof_fraction", "check.memory_roof_fraction", "per_element_ratio", "mystery_c.doubling_ratio"):
        if k in m: row("02.01 " + k, f"{m[k]['value']:.3g}", "", None)
r = load("02.05-h200.json")
if r:
    m = r.get("metrics", {})
    off = [k[:-len(".measured_regime")] for k, v in m.items() if k.endswith(".measured_regime")
           and m.get(k.replace("measured", "predicted"), {}).get("value") not in (None, v.get("value"))]
    row("02.05 regime measured != predicted", ", ".join(off) if off else "none", "", None)
    for k in ("read", "triad", "fma_peak_fp32"):
        ai, cai = m.get(f"{k}.ai", {}).get("value"), m.get(f"{k}.counted_ai", {}).get("value")
        if ai and cai: row(f"02.05 {k} counted AI / analytic", f"{cai/ai:.2f}", "about 1", None)

# 02.05's trace: a trace can be written with no GPU timeline (CUPTI refused; the run goes on) or
# stop part-way (CUPTI refused a later segment, after hardware counters): every workload's
# traced window must hold device work, and nothing may be dropped or stopped.
trace_file = os.path.join(work, "02.05-h200.trace.json.gz")
if os.path.exists(trace_file):
    import gzip
    try:
        with gzip.open(trace_file, "rt") as f:
            t = json.load(f)
        ev = t.get("traceEvents", []) if isinstance(t, dict) else t
        device = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gemm", "memcpy", "memset")]
        windows = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "workload"]
        empty = [w["name"] for w in windows
                 if not any(w["ts"] <= d["ts"] <= w["ts"] + w["dur"] for d in device)]
        row("02.05 trace: device events", str(len(device)), ">= 1", len(device) > 0)
        row("02.05 trace: windows without device work", f"{len(empty)} of {len(windows)}" + (f" ({', '.join(empty[:3])})" if empty else ""),
            "0 of >= 1", bool(windows) and not empty)
        stopped = [e["name"] for e in ev if str(e.get("name", "")).startswith(("tracing stopped", "dropped "))]
        row("02.05 trace: stopped or dropped", stopped[0][:60] if stopped else "none", "none", not stopped)
        untimed = sum(1 for d in device if d.get("dur", 0) <= 0)
        row("02.05 trace: device events without a duration", str(untimed), "0", untimed == 0)
    except Exception as e:
        row("02.05 trace", f"unreadable: {e}"[:60], "a Chrome trace", False)
elif load("02.05-h200-quick.json"):
    row("02.05 trace", "not written", "02.05-h200.trace.json.gz", False)
tr = load("trace-02.05.json")
if tr:
    ll = tr.get("launch_latency_us")
    row("02.05 trace: launch latency (lab trace)", f"{ll:.1f} us over {tr.get('launches_matched')}" if ll else "-", "", None)

steps = [l.rstrip("\n").split("\t") for l in open(os.path.join(work, "steps.tsv"))] if os.path.exists(os.path.join(work, "steps.tsv")) else []
carried = os.path.join(root, ".gpu-carry")
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(carried) for f in fs) / 2**20 if os.path.isdir(carried) else None
row("packed build (.gpu-carry)", f"{size:.1f} MiB" if size is not None else "-", "< 60 MiB", size is not None and size < 60)

w = max(len(x[0]) for x in rows)
print(f"{'target':<{w}}  {'measured':<26}  {'want':<24}  verdict")
for what, got, want, verdict in rows:
    print(f"{what:<{w}}  {got:<26}  {want:<24}  {verdict}")
print()
print("steps (exit status, seconds):")
bad = 0
for s in steps:
    name, rc, secs = s[0], s[1], s[2]
    bad += rc != "0"
    print(f"  {name:<16} {'ok' if rc == '0' else ('not run' if rc == 'not run' else 'exit ' + rc):<9} {secs:>4} s")
print()
print("GPU CHECK: " + ("PASS" if fails == 0 and bad == 0 and not os.path.exists(fatal) else
                       f"FAIL ({fails} target(s) missed, {bad} step(s) failed or not run)"))
PY
}

# --- 1. What this machine is, and where the libraries come from ---------------------------------
say "gpu_check.sh at $(date -u +%FT%TZ) on $(uname -n); deadline ${deadline} s; LAB_MEMORY_LIMIT=$LAB_MEMORY_LIMIT; $(grep MemTotal /proc/meminfo)"
say "packed build: $(du -sm "$carry" | cut -f1) MiB in .gpu-carry (a call carries 64 MiB at most; keep it under 60)"
say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
say "LAB_PLUGIN_PATH=$LAB_PLUGIN_PATH"
backend=$carry/build/plugins/cuda/labdevice_cuda.so
[ -f "$backend" ] || fail_fast "the packed build has no CUDA backend ($backend): configure build-gpu with -Dgpu=enabled and pack it again"
say "== ldd $backend"
ldd "$backend" 2>&1 | tee -a "$log" >/dev/null
# Where each CUDA library the backend needs (or CUPTI opens) is found: LD_LIBRARY_PATH first, then
# the loader's cache, as the dynamic loader searches.
for l in libcudart.so.13 libcublasLt.so.13 libcupti.so.13 libnvperf_host.so libcuda.so.1 libnvidia-ml.so.1; do
  where=""
  IFS=: read -ra dirs <<<"$LD_LIBRARY_PATH"
  for d in "${dirs[@]}"; do [ -n "$d" ] && [ -e "$d/$l" ] && { where="$d/$l (LD_LIBRARY_PATH)"; break; }; done
  [ -z "$where" ] && where=$(ldconfig -p 2>/dev/null | awk -v l="$l" '$1==l{print $NF " (ldconfig)"; exit}')
  say "   $l: ${where:-NOT FOUND}"
done
missing=$(find "$carry/build" -name '*.so' | while IFS= read -r f; do
  ldd "$f" 2>/dev/null | awk -v f="${f#"$carry"/}" '/not found/{print "  " f ": " $1}'
done | sort -u)
[ -z "$missing" ] || fail_fast "libraries not found (the GPU machine's CUDA 13 toolkit is not where env.sh looked):
$missing"
step nvidia-smi 20 nvidia-smi
cat "$work/nvidia-smi.out" >>"$log"
step gpu-state 20 nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,memory.used --format=csv
cat "$work/gpu-state.out" >>"$log"

# --- 2. Calibrate, then the device (which reads what calibrate cached) ---------------------------
step calibrate 150 "$lab" calibrate --device cuda --json
rc=$?
cp -f "$work/calibrate.out" "$files/calibrate.json" 2>/dev/null
if [ "$rc" -ne 0 ]; then
  why=$(grep -v '^$' "$work/calibrate.err" | tail -3)
  # No GPU to use: nothing else can run. A GPU that failed mid-calibration: the GPU tests say more.
  if ! grep -qE 'no CUDA device|could not be loaded|no CUDA backend' "$work/calibrate.err"; then
    step gpu_tests 120 "$carry/build/tests/gpu_tests" --reporter compact
    cat "$work/gpu_tests.out" >>"$log" 2>/dev/null
  fi
  fail_fast "lab calibrate --device cuda exited $rc: $why"
fi
save
step device 30 "$lab" device --device cuda --json
cp -f "$work/device.out" "$files/device.json" 2>/dev/null
save

# --- 3. Lessons: 02.01 and 02.05 in full, 02.05 quick with a trace ---------------------------------
run_lesson() {  # ID QUICK(0/1) CAP [extra lab run options]
  local id=$1 quick=$2 cap=$3; shift 3
  local name=$id-h200 args=(run "$id" --device cuda --reveal)
  [ "$quick" = 1 ] && { name=$id-h200-quick; args+=(--quick); }
  step "$name" "$cap" "$lab" "${args[@]}" --out "$files/$name.json" "$@"
  cat "$work/$name.out" >>"$log" 2>/dev/null
}
run_lesson 02.01 0 90
# The full run is the record kept as a fixture, so it is not traced: CUPTI stays attached to a
# process once it has traced, and may slow what that process measures after. Its trace is taken
# from a quick run of its own.
run_lesson 02.05 0 100 --plots "$files/plots"
run_lesson 02.05 1 40 --trace "$work/02.05-h200.trace.json.gz"
if [ -f "$work/02.05-h200.trace.json.gz" ]; then
  step trace-02.05 20 "$lab" trace "$work/02.05-h200.trace.json.gz" --json
  cp -f "$work/trace-02.05.out" "$files/trace-02.05.json" 2>/dev/null
fi
save

# --- 4. The GPU tests (a packed run: a missing backend or GPU fails them, never skips), before the
# other lessons' quick runs: they check what no lesson run does (GEMM values on non-zero data, the
# fills, a trace across counter passes), and the deadline may not reach the end of the list ----
step gpu_tests 120 "$carry/build/tests/gpu_tests" --reporter compact
cat "$work/gpu_tests.out" >>"$log" 2>/dev/null

# --- 5. Every other CUDA companion's lesson, quick -----------------------------------------------
mapfile -t companions < <(find "$carry/build/labs" -name 'lab_*_cuda.so' | sort)
for companion in "${companions[@]}"; do
  id=$(basename "$companion" _cuda.so | sed -E 's/^lab_([0-9]+)_([0-9]+)$/\1.\2/')
  case "$id" in 02.01|02.05) continue ;; esac
  run_lesson "$id" 1 40
done
step gpu-state-after 20 nvidia-smi --query-gpu=pstate,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
cat "$work/gpu-state-after.out" >>"$log" 2>/dev/null
save
say "done in $(elapsed) s"
cat "$OUT/summary.txt"
grep -q '^GPU CHECK: PASS' "$OUT/summary.txt"
