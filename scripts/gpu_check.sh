#!/usr/bin/env bash
# The prepared check for a lent GPU machine (../shared/gpu/README.md). Build and pack here, from
# the repository root:
#
#   meson setup build-gpu -Dbuildtype=release -Dgpu=enabled && meson compile -C build-gpu
#   ../shared/gpu/pack.sh build-gpu            # -> .gpu-carry (git-ignored)
#
# then one device call, from the repository root, with no arguments:
#
#   run  command: "bash scripts/gpu_check.sh"   carry: [".gpu-carry"]   timeout_s: 300
#
# Exit status (the last line of summary.txt, "GPU CHECK: ...", says the same in words):
#   0  PASS: every step that ran exited 0 and every target measured passed. Steps the deadline did
#      not reach (or cut short) are not failures: "GPU CHECK: PASS (3 steps not reached before the
#      deadline: ...)" is a correct run that was slow; rerun only the steps it names, if at all.
#   1  FAIL: a target missed, a step failed, a summary row could not be computed, or the check
#      stopped at once ("GPU CHECK FAILED: <why>" first: a packed binary that does not start, a
#      library not found, no GPU or driver). Nothing after such a stop could have measured anything.
#   2  bad usage: OUT not set, arguments given, or no .gpu-carry/env.sh here.
#
# It works to one deadline, 290 s after it starts (LAB_GPU_CHECK_DEADLINE_S), inside the call's
# 300 s, so that the call, a rerun and the machine's start-up fit in the 15 minutes of device
# time; most valuable first: step 0 (ldd of every packed executable and library, then the packed
# lab started once: a loader error stops the check with its message), lab calibrate, lab device
# (which then reads the ceilings cache), 02.01 full, 02.05 full, 02.05 quick with a trace
# (checked: every workload's window holds device work, nothing dropped or stopped), the GPU tests,
# a quick run of every other lesson that has a CUDA companion. After every step it rewrites what
# comes back, so a call cut short still brings back what was done; $OUT holds at most 4 files (8
# may come back):
#   summary.txt            the issue's targets, each with what was measured and PASS/FAIL (NOTE: a
#                          figure missing with its reason, or one better than its expected band,
#                          such as a launch under 2 us; NULL: a value the record holds as null,
#                          i.e. NaN or inf; NOT RUN: its step was not reached); the steps; the verdict
#   log.txt                everything the steps printed, ldd, and where each CUDA library was found
#   gpu-check.tar.gz       the run records (the recordings worth keeping as fixtures), the
#                          calibration and device JSON, the ceilings cache, the plots, the log
#   02.05-h200.trace.json.gz   02.05's trace (apart: it may be large)
# Every lab command gets --device cuda, never auto: a missing library or a GPU that does not
# work stops the check at once with one message, instead of CPU figures saved under a GPU's name.
#
# Without a GPU, the summary alone can be computed from a folder laid out as the check's work
# folder (files/*.json, steps.tsv, fatal.txt, 02.05-h200.trace.json.gz):
#   LAB_GPU_CHECK_SUMMARY=DIR bash scripts/gpu_check.sh     # prints it; exit status as above
set -uo pipefail
root=$(pwd)
carry=$root/.gpu-carry

# The summary of the work folder $1: the targets, the steps and, last, one "GPU CHECK:" line. Every
# row is computed on its own (a value the JSON holds as null, NaN or inf, is printed "-" and
# marked, never formatted), a row that throws becomes an ERROR row, and the closing line is
# written whatever happened above it; summary_file adds one in bash if Python itself failed.
summarise() {
  python3 - "$1" "$root" <<'PY'
import json, math, os, re, subprocess, sys, traceback
work, root = sys.argv[1], sys.argv[2]
files = os.path.join(work, "files")
ABSENT = object()
rows, fails, notes = [], [], []
errors = 0
unreadable = {}

def row(what, got, want, verdict):
    """verdict: True PASS, False FAIL, None '-' (no target), or a word (NOTE, NULL, NOT RUN)."""
    v = "PASS" if verdict is True else "FAIL" if verdict is False else "-" if verdict is None else verdict
    if v == "FAIL": fails.append(what)
    if v in ("NOTE", "NULL"): notes.append(what)
    rows.append((str(what), str(got), str(want), v))

def section(name, fn):
    global errors
    try:
        fn()
    except Exception as e:
        errors += 1
        traceback.print_exc()               # to the log
        row(f"({name})", f"summary error: {type(e).__name__}: {e}"[:70], "", "ERROR")

def load(name):
    path = os.path.join(files, name)
    if not os.path.exists(path): return None
    try:
        with open(path) as f: return json.load(f)
    except Exception as e:
        unreadable[name] = f"unreadable JSON ({type(e).__name__})"
        return None

def get(d, *path):
    for p in path:
        if not isinstance(d, dict) or p not in d: return ABSENT
        d = d[p]
    return d

def num(x):
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None

def num_text(x):  # facts' "extra" values are strings
    try: return num(float(x))
    except (TypeError, ValueError): return None

def missing(raw):
    if raw is ABSENT: return "- (absent)"
    if raw is None: return "- (null: NaN or inf)"
    return f"- (not a number: {str(raw)[:16]})"

def figure(raw, scale=1.0, spec=".3g", unit=""):
    v = num(raw)
    return f"{v * scale:{spec}} {unit}".strip() if v is not None else missing(raw)

def target(what, raw, scale, spec, unit, want, ok):
    """A row with a target: a missing or null value fails it, and says which."""
    v = num(raw)
    row(what, figure(raw, scale, spec, unit), want, False if v is None else bool(ok(v)))

def banded(what, raw, scale, spec, unit, want, lo, hi, better):
    """A target whose expected band has a better side ("lower" or "higher"): inside it PASS, on the
    worse side FAIL, on the better side NOTE (faster than expected breaks nothing, but is worth a
    look: a count or a clock that is off reads the same). A missing or null value fails it."""
    v = num(raw)
    if v is None: verdict = False
    elif lo <= v <= hi: verdict = True
    else: verdict = "NOTE" if (v < lo) == (better == "lower") else False
    row(what, figure(raw, scale, spec, unit) + (" (better than expected)" if verdict == "NOTE" else ""), want, verdict)

def info(what, raw, scale=1.0, spec=".3g", unit=""):
    """A row without a target: a missing value is marked, never dropped."""
    row(what, figure(raw, scale, spec, unit), "", None if num(raw) is not None else ("NULL" if raw is None else "NOTE"))

# Steps: name -> status ("0", "3", "not run": the deadline was near, "cut": stopped at the deadline).
steps = []
steps_file = os.path.join(work, "steps.tsv")
if os.path.exists(steps_file):
    for line in open(steps_file):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 3: steps.append((f[0], f[1], f[2]))
status = {name: rc for name, rc, _ in steps}
UNREACHED = ("not run", "cut")
INFO_STEPS = ("nvidia-smi", "gpu-state", "gpu-state-after")   # what nvidia-smi says: logged, not judged

def absent_row(what, name, want):
    """The row for a record that is not there, with why: the step's status decides the verdict."""
    rc = status.get(name)
    if name + ".json" in unreadable:
        row(what, unreadable[name + ".json"], want, False)
    elif rc == "not run":
        row(what, "not reached before the deadline", want, "NOT RUN")
    elif rc == "cut":
        row(what, "cut short at the deadline", want, "NOT RUN")
    elif rc is None and os.path.exists(fatal):
        row(what, "not run: the check stopped before it", want, "NOT RUN")
    elif rc is None:
        row(what, "not run yet", want, "NOT RUN")
    elif rc != "0":
        row(what, f"no record: the step exited {rc}", want, False)
    else:
        row(what, "no record, though the step exited 0", want, False)

fatal = os.path.join(work, "fatal.txt")
if os.path.exists(fatal):
    print(open(fatal).read().strip())
    print()

cal = load("calibrate.json")
dev = load("device.json")

def calibration():
    if not isinstance(cal, dict):
        if not os.path.exists(fatal): absent_row("lab calibrate --device cuda", "calibrate", "ceilings")
        return
    c = cal.get("ceilings") or {}
    facts = cal.get("facts") or {}
    extra = facts.get("extra") or {}
    fl = c.get("flops_per_s") or {}
    bw = c.get("bandwidth_bytes_per_s") or {}
    print(f"device: {facts.get('name')} (kind {cal.get('kind')}, {facts.get('compute_units')} SMs, sm {extra.get('compute_capability')}, "
          f"driver CUDA {extra.get('cuda_driver')}, runtime {extra.get('cuda_runtime')})")
    val = lambda d, k: get(d, k, "value")
    # Launch costs and the bf16 and memcpy rates have a better side: past it is a NOTE, not a FAIL.
    section("launch", lambda: banded("launch, stream", val(c, "launch_s"), 1e6, ".2f", "us", "2-3 us (<= 3)", 2e-6, 3e-6, "lower"))
    section("graph", lambda: banded("launch, CUDA graph (per kernel)", val(c, "launch_graph_s"), 1e6, ".2f", "us", "1.0-1.4 us (<= 1.4)",
                                    1.0e-6, 1.4e-6, "lower"))
    # The SIMT peaks, and each against the peak at the SM clock measured during the fp32 peak
    # (SMs x lanes x 2 x clock): a clock held low reads as a low figure but a high efficiency.
    clk_raw = val(c, "clock_hz"); clk = num(clk_raw)
    nominal = "cudaDevAttrClockRate" in str(get(c, "clock_hz", "method"))
    sms = num(facts.get("compute_units"))
    cc = str(extra.get("compute_capability", ""))
    lanes = {"9.0": (128, 64), "8.0": (64, 32)}.get(cc)    # fp32, fp64 FMA lanes per SM
    def simt(pipe, abs_want, abs_ok, i, eff_min):
        raw = val(fl, pipe); v = num(raw)
        target(pipe, raw, 1e-12, ".1f", "TFLOP/s", abs_want, abs_ok)
        what = f"{pipe} / peak at the measured clock"
        want = f">= {eff_min}"
        if v is None:
            row(what, "- (no figure)", want, "NOTE")
        elif not (sms and lanes and clk):
            why = ("no SM count" if not sms else f"lanes per SM unknown for sm {cc or '?'}" if not lanes else "clock " + missing(clk_raw)[2:])
            row(what, f"- ({why})", want, "NOTE")
        else:
            peak = sms * lanes[i] * 2 * clk
            row(what, f"{v / peak:.3f} of {peak / 1e12:.1f} ({int(sms)} x {lanes[i]} x 2 x {clk / 1e9:.2f} GHz"
                      f"{', nominal clock' if nominal else ''})", want, v / peak >= eff_min)
    # fp32: 132 SMs x 128 lanes x 2 x 1.98 GHz = 66.9; fp64: 64 lanes, 33.45 at 1.98 GHz (a good kernel
    # reads 33.1-33.4). Efficiency targets: 0.95 for fp32 (the issue's aim for the unrolled loop),
    # 0.93 for fp64 (31 of 33.45, the same bar as its figure).
    section("fp32.simt", lambda: simt("fp32.simt", ">= 64 TFLOP/s", lambda v: v >= 64e12, 0, 0.95))
    section("fp64.simt", lambda: simt("fp64.simt", ">= 31 TFLOP/s", lambda v: v >= 31e12, 1, 0.93))
    def clock():
        mx = num_text(extra.get("sm_clock_max_hz"))
        if clk is None: row("SM clock (during the fp32 peak)", missing(clk_raw), "", "NULL" if clk_raw is None else "NOTE")
        else: row("SM clock (during the fp32 peak)", f"{clk / 1e9:.3f} GHz" + (f" of {mx / 1e9:.2f} max" if mx else ""), "",
                  "NOTE" if nominal else None)
        if nominal: notes.append("the SM clock is the nominal one (not measured)")
    section("clock", clock)
    section("bf16.tensor", lambda: banded("bf16.tensor (random data)", val(fl, "bf16.tensor"), 1e-12, ".0f", "TFLOP/s", "770-800 TFLOP/s (>= 770)",
                                          770e12, 800e12, "higher"))
    section("memcpy", lambda: banded("memcpy DtoD (read+write)", val(bw, "memcpy"), 1e-12, ".2f", "TB/s", "4.2-4.4 TB/s (>= 4.2)",
                                     4.2e12, 4.4e12, "higher"))
    def copy_ratio():
        mc, cp = num(val(bw, "memcpy")), num(val(bw, "copy"))
        if mc and cp is not None: row("copy kernel / memcpy", f"{cp / mc:.3f}", ">= 0.92", cp / mc >= 0.92)
        else: row("copy kernel / memcpy", "- (" + ("copy " + missing(val(bw, "copy"))[2:] if cp is None else "memcpy " + missing(val(bw, "memcpy"))[2:]) + ")",
                  ">= 0.92", False)
    section("copy/memcpy", copy_ratio)
    def others():
        for k in ("fp16.simt", "bf16.simt", "tf32.tensor", "fp16.tensor", "fp8.tensor", "int8.tensor", "fp64.tensor"):
            if k in fl: info(k, val(fl, k), 1e-12, ".1f", "TOP/s" if k.startswith("int8") else "TFLOP/s")
        for k in ("read", "copy", "triad"):
            if k in bw: info(f"bandwidth {k}", val(bw, k), 1e-12, ".2f", "TB/s")
        for k, why in (c.get("skipped") or {}).items():
            row(f"skipped {k}", str(why)[:60], "measured", False)
    section("other ceilings", others)

def device():
    if isinstance(dev, dict):
        now = dev.get("calibrated_now")
        row("lab device reads the cache", "calibrated again" if now else "read the cache", "read the cache", not now)
    elif isinstance(cal, dict):
        absent_row("lab device reads the cache", "device", "read the cache")

def sensors(label, r):
    """Counters and NVML telemetry of a record: a row each, with the reason when there are none."""
    ws = [w for w in (r.get("workloads") or []) if isinstance(w, dict)]
    counted = [w for w in ws if w.get("counters")]
    refused = sorted({str(w.get("counters_note")) for w in ws if w.get("counters_note")})
    if refused:
        row(f"{label} hardware counters", f"{len(counted)} of {len(ws)} workloads; refused: {refused[0][:70]}", "", "NOTE")
    else:
        row(f"{label} hardware counters", f"{len(counted)} of {len(ws)} workloads" + ("" if counted else " (none asked for)"), "", None)
    tele = [w["telemetry"] for w in ws if isinstance(w.get("telemetry"), dict) and w["telemetry"]]
    if tele:
        lo = [x for t in tele for x in [num(t.get("sm_clock_hz.min"))] if x]
        hi = [x for t in tele for x in [num(t.get("sm_clock_hz.mean"))] if x]
        clock = f"; SM clock {min(lo) / 1e9:.2f} (min) to {max(hi) / 1e9:.2f} GHz (mean)" if lo and hi else ""
        row(f"{label} NVML telemetry", f"{len(tele)} of {len(ws)} workloads{clock}", "", None)
    else:
        why = [n for n in (r.get("notes") or []) if "telemetry" in str(n).lower() or "nvml" in str(n).lower()]
        row(f"{label} NVML telemetry", f"none in {len(ws)} workloads" + (f": {str(why[0])[:70]}" if why else " (no note says why)"), "", "NOTE")

def metric(m, k):
    return get(m, k, "value")

def lesson_0201():
    r = load("02.01-h200.json")
    if not isinstance(r, dict):
        return absent_row("02.01 (full run)", "02.01-h200", "a run record")
    m = r.get("metrics") or {}
    regimes = metric(m, "check.regimes")
    row("02.01 mysteries' regimes", regimes if isinstance(regimes, str) else missing(regimes), "compute,memory,overhead",
        regimes == "compute_bound,memory_bound,overhead_bound")
    chain = metric(m, "chain.measured_regime")
    row("02.01 dependent chain", chain if isinstance(chain, str) else missing(chain), "latency_bound", chain == "latency_bound")
    for k in ("check.compute_roof_fraction", "check.memory_roof_fraction", "per_element_ratio", "mystery_c.doubling_ratio"):
        section("02.01 " + k, lambda k=k: info("02.01 " + k, metric(m, k)))
    section("02.01 sensors", lambda: sensors("02.01", r))

def lesson_0205():
    r = load("02.05-h200.json")
    if not isinstance(r, dict):
        return absent_row("02.05 (full run)", "02.05-h200", "a run record")
    m = r.get("metrics") or {}
    def regimes():
        off = [k[:-len(".measured_regime")] for k in m if k.endswith(".measured_regime")
               and metric(m, k.replace("measured", "predicted")) not in (ABSENT, None, metric(m, k))]
        row("02.05 regime measured != predicted", ", ".join(off) if off else "none", "", None)
    section("02.05 regimes", regimes)
    refused = sorted({str(w.get("counters_note")) for w in (r.get("workloads") or []) if isinstance(w, dict) and w.get("counters_note")})
    def counted(k):
        ai, cai = metric(m, f"{k}.ai"), metric(m, f"{k}.counted_ai")
        what = f"02.05 {k} counted AI / analytic"
        if num(ai) and num(cai) is not None:
            row(what, f"{num(cai) / num(ai):.2f}", "about 1", None)
        elif refused and num(cai) is None:
            row(what, f"- (counters refused: {refused[0][:50]})", "about 1", "NOTE")
        elif num(ai) is None or num(cai) is None:
            bad = [f"{n} {missing(x)[2:]}" for n, x in (("analytic", ai), ("counted", cai)) if num(x) is None]
            row(what, "- (" + ", ".join(bad) + ")", "about 1", "NULL" if None in (ai, cai) else "NOTE")
        else:  # read's analytic AI is 0 (no FLOPs): no ratio, both said
            row(what, f"counted {num(cai):.3g}, analytic 0", "about 1", None)
    for k in ("read", "triad", "fma_peak_fp32"):
        section(f"02.05 {k} counted AI", lambda k=k: counted(k))
    section("02.05 sensors", lambda: sensors("02.05", r))
    # The CUDA backend's probe_ceiling (new, never run on a GPU): a full run measures references
    # beside its workloads; none at all means every probe failed or found no kernel.
    def references():
        cms = get(r, "device", "ceiling_measurements")
        refs = [c for c in (cms if isinstance(cms, list) else []) if isinstance(c, dict) and c.get("purpose") == "reference"]
        keys = sorted({str(c.get("ceiling")) for c in refs})
        row("02.05 references beside workloads (probe_ceiling)", f"{len(refs)}: {', '.join(keys)}"[:70], ">= 1", len(refs) > 0)
    section("02.05 references", references)

# 02.05's trace: a trace can be written with no GPU timeline (CUPTI refused; the run goes on) or
# stop part-way (CUPTI refused a later segment, after hardware counters): every workload's
# traced window must hold device work, and nothing may be dropped or stopped.
def trace():
    trace_file = os.path.join(work, "02.05-h200.trace.json.gz")
    if not os.path.exists(trace_file):
        rc = status.get("02.05-h200-quick")
        if rc == "0" or load("02.05-h200-quick.json"):
            row("02.05 trace", "not written (the quick run exited 0)", "02.05-h200.trace.json.gz", False)
        else:
            absent_row("02.05 trace", "02.05-h200-quick", "02.05-h200.trace.json.gz")
        return
    import gzip
    try:
        with gzip.open(trace_file, "rt") as f:
            t = json.load(f)
    except Exception as e:
        return row("02.05 trace", f"unreadable: {e}"[:60], "a Chrome trace", False)
    ev = [e for e in (t.get("traceEvents", []) if isinstance(t, dict) else t) if isinstance(e, dict)]
    device = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gemm", "memcpy", "memset")]
    windows = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "workload"]
    def inside(w, d):
        ts, dur, dts = num(w.get("ts")), num(w.get("dur")), num(d.get("ts"))
        return None not in (ts, dur, dts) and ts <= dts <= ts + dur
    empty = [str(w.get("name")) for w in windows if not any(inside(w, d) for d in device)]
    row("02.05 trace: device events", str(len(device)), ">= 1", len(device) > 0)
    row("02.05 trace: windows without device work", f"{len(empty)} of {len(windows)}" + (f" ({', '.join(empty[:3])})" if empty else ""),
        "0 of >= 1", bool(windows) and not empty)
    stopped = [str(e["name"]) for e in ev if str(e.get("name", "")).startswith(("tracing stopped", "dropped "))]
    row("02.05 trace: stopped or dropped", stopped[0][:60] if stopped else "none", "none", not stopped)
    untimed = sum(1 for d in device if (num(d.get("dur")) or 0) <= 0)
    row("02.05 trace: device events without a duration", str(untimed), "0", untimed == 0)

def lab_trace():
    tr = load("trace-02.05.json")
    if isinstance(tr, dict):
        ll = tr.get("launch_latency_us")
        row("02.05 trace: launch latency (lab trace)", f"{figure(ll, 1, '.1f', 'us')} over {tr.get('launches_matched')}", "",
            None if num(ll) is not None else ("NULL" if ll is None else "NOTE"))
    elif os.path.exists(os.path.join(work, "02.05-h200.trace.json.gz")):
        absent_row("02.05 trace: launch latency (lab trace)", "trace-02.05", "")

def libraries():
    path = os.path.join(files, "ldd-missing.txt")
    if os.path.exists(path):
        lines = [l.strip() for l in open(path) if l.strip()]
        def short(l):  # "FILE: LIB => not found" or "FILE: ...: LIB: version `V' not found (required by ...)"
            m = re.search(r"(\S+ => not found|[^/\s]+: version \S+ not found)", l)
            return l.split(":")[0] + ": " + (m.group(1) if m else l[len(l.split(":")[0]) + 1:].strip()[:40])
        row("libraries the packed files load (ldd)", "all found" if not lines else f"{len(lines)} not found: {short(lines[0])}",
            "all found", not lines)

# What a device call carries: .gpu-carry and the working tree (tracked and untracked files git does
# not ignore), 64 MiB in all. Where git cannot list them (the GPU machine's copy), everything here.
def tree_bytes():
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"], capture_output=True, check=True, timeout=20).stdout
        paths = [os.path.join(root, p) for p in out.decode(errors="replace").split("\0") if p]
        return sum(os.lstat(p).st_size for p in paths if os.path.lexists(p)), "tracked + untracked, not ignored"
    except Exception:
        total = 0
        for d, dirs, fs in os.walk(root):
            dirs[:] = [x for x in dirs if not (d == root and x in (".git", ".gpu-carry"))]
            total += sum(os.lstat(os.path.join(d, f)).st_size for f in fs)
        return total, "every file but .git (no git here)"

def carry_size():
    carried = os.path.join(root, ".gpu-carry")
    if not os.path.isdir(carried):
        return row("packed build (.gpu-carry)", "- (no .gpu-carry)", "< 64 MiB with the tree", False)
    size = sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(carried) for f in fs) / 2**20
    tree, how = tree_bytes()
    tree /= 2**20
    row("packed build (.gpu-carry)", f"{size:.1f} MiB + tree {tree:.1f} = {size + tree:.1f} MiB", f"< {64 - tree:.1f} MiB (64 less the tree)",
        size + tree < 64)

try:
    section("calibration", calibration)
    section("lab device", device)
    section("02.01", lesson_0201)
    section("02.05", lesson_0205)
    section("02.05 trace", trace)
    section("lab trace", lab_trace)
    section("libraries", libraries)
    section("carry size", carry_size)
finally:
    try:
        if rows:
            w = [max(len(r[i]) for r in rows + [("target", "measured", "want", "verdict")]) for i in range(3)]
            print(f"{'target':<{w[0]}}  {'measured':<{w[1]}}  {'want':<{w[2]}}  verdict")
            for r in rows: print(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}")
            print()
        print("steps (status, seconds):")
        for name, rc, secs in steps:
            said = {"0": "ok", "not run": "not reached (deadline)", "cut": "cut at the deadline"}.get(rc, "exit " + rc)
            said += " (info)" if name in INFO_STEPS and rc not in ("0",) + UNREACHED else ""
            print(f"  {name:<22} {said:<22} {secs:>4} s")
        print()
    except Exception:
        errors += 1
        traceback.print_exc()
    failed = [n for n, rc, _ in steps if rc not in ("0",) + UNREACHED and n not in INFO_STEPS]
    info_failed = [n for n, rc, _ in steps if rc not in ("0",) + UNREACHED and n in INFO_STEPS]
    unreached = [n for n, rc, _ in steps if rc in UNREACHED]
    def names(xs): return ", ".join(xs[:4]) + (", ..." if len(xs) > 4 else "")
    late = f"{len(unreached)} step(s) not reached before the deadline: {names(unreached)}" if unreached else ""
    if os.path.exists(fatal):
        verdict = "FAIL (stopped at once: the first line above says why)"
    elif fails or failed or errors:
        parts = [f"{len(fails)} target(s) missed: {names(fails)}" if fails else "", f"{len(failed)} step(s) failed: {names(failed)}" if failed else "",
                 f"{errors} summary row(s) not computed, see log.txt" if errors else "", late]
        verdict = "FAIL (" + "; ".join(p for p in parts if p) + ")"
    else:
        parts = [late, f"{len(notes)} row(s) marked NOTE or NULL" if notes else "",
                 f"nvidia-smi queries failed: {names(info_failed)}" if info_failed else ""]
        verdict = "PASS" + (" (" + "; ".join(p for p in parts if p) + ")" if any(parts) else "")
    # Written after every step: until the check ends, the verdict is only what it would be so far
    # (a call killed from outside leaves this one, which must not read as a PASS).
    if os.path.exists(os.path.join(work, "running")) and not os.path.exists(fatal):
        verdict = f"UNFINISHED (still running after {steps[-1][0] if steps else 'no step'}; so far: {verdict})"
    print("GPU CHECK: " + verdict)
PY
}

# summarise, then make sure the closing verdict line is there: if Python failed before printing it
# (or is missing), one is written here from the steps alone.
summary_file() {  # WORK_DIR DEST
  local dir=$1 dest=$2 rc
  summarise "$dir" >"$dest.tmp"
  rc=$?
  if ! tail -n 1 "$dest.tmp" | grep -q '^GPU CHECK: '; then
    local n_bad n_late
    n_bad=$(awk -F'\t' '$2 != "0" && $2 != "not run" && $2 != "cut"' "$dir/steps.tsv" 2>/dev/null | wc -l)
    n_late=$(awk -F'\t' '$2 == "not run" || $2 == "cut"' "$dir/steps.tsv" 2>/dev/null | wc -l)
    [ -f "$dir/fatal.txt" ] && cat "$dir/fatal.txt" >>"$dest.tmp"
    echo "GPU CHECK: FAIL (the summary code failed, exit $rc, see log.txt; steps: $n_bad failed, $n_late not reached before the deadline)" >>"$dest.tmp"
  fi
  mv -f "$dest.tmp" "$dest"
}

# The summary alone, of a folder laid out as the work folder (for checking the summary here).
if [ -n "${LAB_GPU_CHECK_SUMMARY:-}" ]; then
  d=$(mktemp -d /tmp/gpu-check-summary.XXXXXX)
  summary_file "$LAB_GPU_CHECK_SUMMARY" "$d/summary.txt"
  cat "$d/summary.txt"
  tail -n 1 "$d/summary.txt" | grep -q '^GPU CHECK: PASS'
  rc=$?
  rm -rf "$d"
  exit "$rc"
fi

[ -n "${OUT:-}" ] || { echo "gpu_check.sh: OUT is not set: the device call sets it; here: OUT=/tmp/gpuout bash scripts/gpu_check.sh" >&2; exit 2; }
[ $# -eq 0 ] || { echo "gpu_check.sh: takes no arguments (run it from the repository root with OUT set)" >&2; exit 2; }
[ -f "$carry/env.sh" ] || { echo "gpu_check.sh: no $carry/env.sh: run it from the repository root after ../shared/gpu/pack.sh build-gpu" >&2; exit 2; }

start=$SECONDS
deadline=${LAB_GPU_CHECK_DEADLINE_S:-290}
mkdir -p "$OUT"
work=$(mktemp -d /tmp/gpu-check.XXXXXX)   # everything but the files that come back lives here
trap 'rm -rf "$work"' EXIT
files=$work/files
mkdir -p "$files/plots"
log=$OUT/log.txt
steps=$work/steps.tsv                    # step, status (exit status, "not run", "cut"), seconds, output
: >"$log"
: >"$steps"
: >"$work/running"                       # until the last save: the summary says UNFINISHED

# shellcheck disable=SC1091
. "$carry/env.sh"
export XDG_CACHE_HOME=$work/cache        # a fresh ceilings cache: this check calibrates
export LAB_STUDENT=gpu-check
# The child's memory watchdog defaults to 80% of MemTotal, which a microVM may report small; a
# CUDA process's resident memory (cuBLASLt's kernels, pinned buffers) is several GiB. K, M or G.
export LAB_MEMORY_LIMIT=${LAB_MEMORY_LIMIT:-48G}
export PYTHONUNBUFFERED=1
lab=$carry/build/cli/lab
gpu_tests=$carry/build/tests/gpu_tests
backend=$carry/build/plugins/cuda/labdevice_cuda.so
# What a loader (or lab's plugin loading) says when a library or symbol is missing: such a failure
# stops the check at once, whichever command printed it.
loader_errors='error while loading shared libraries|Inconsistency detected by ld.so|exited with status 12[67]|cannot open shared object file|not found \(required by|symbol lookup error|undefined symbol|could not be loaded|no CUDA backend|no CUDA device'

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
  summary_file "$work" "$work/summary.txt" 2>>"$log"
  mv -f "$work/summary.txt" "$OUT/summary.txt"
}

# step NAME CAP_S CMD...: runs CMD with stdout to $work/NAME.out and stderr to $work/NAME.err
# (then the log), within both its cap and what is left of the deadline; records its status:
# the exit status, "not run" (too little time left to start it) or "cut" (stopped at the
# deadline, not at its own cap: slow, not failed). Returns the command's status (124: not run).
step() {
  local name=$1 cap=$2; shift 2
  local budget by_deadline=0; budget=$(left)
  budget=$((budget - 5))                 # keep time to pack what came out of it
  [ "$budget" -lt "$cap" ] && { cap=$budget; by_deadline=1; }
  if [ "$cap" -lt 10 ]; then
    say "== $name: not run, the ${deadline} s deadline is near ($(elapsed) s gone)"
    printf '%s\tnot run\t0\tdeadline\n' "$name" >>"$steps"
    return 124
  fi
  say "== $name (at $(elapsed) s, limit ${cap} s): $*"
  local t0=$SECONDS rc status
  timeout --kill-after=5 "$cap" "$@" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  status=$rc
  cat "$work/$name.err" >>"$log"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    if [ "$by_deadline" = 1 ]; then status="cut"; say "   $name: cut at the ${deadline} s deadline after ${cap} s"
    else say "   $name: stopped at its limit of ${cap} s"; fi
  fi
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" $((SECONDS - t0)) "$work/$name.out" >>"$steps"
  say "   $name: exit $rc after $((SECONDS - t0)) s"
  save
  return "$rc"
}

# Stops the whole check with one message: nothing after it could be measured.
fail_fast() {
  printf '\nGPU CHECK FAILED: %s\n' "$*" >>"$log"   # the summary below says it on the console
  echo "GPU CHECK FAILED: $*" >"$work/fatal.txt"
  rm -f "$work/running"
  save
  cat "$OUT/summary.txt"
  exit 1
}

# The last few lines a command printed on stderr, for a fail-fast message.
last_err() { grep -v '^$' "$work/$1.err" 2>/dev/null | tail -"${2:-3}"; }

# --- 0. Preflight: what this machine is, whether the packed binaries load at all -----------------
say "gpu_check.sh at $(date -u +%FT%TZ) on $(uname -n); deadline ${deadline} s; LAB_MEMORY_LIMIT=$LAB_MEMORY_LIMIT; $(grep MemTotal /proc/meminfo)"
say "packed build: $(du -sm "$carry" | cut -f1) MiB in .gpu-carry (a call carries 64 MiB at most, the working tree included)"
say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
say "LAB_PLUGIN_PATH=$LAB_PLUGIN_PATH"
[ -x "$lab" ] || fail_fast "the packed build has no lab ($lab): pack a build again"
[ -f "$backend" ] || fail_fast "the packed build has no CUDA backend ($backend): configure build-gpu with -Dgpu=enabled and pack it again"
# ldd of every packed executable and library, stderr kept: the machine must provide what pack.sh
# does not carry (libc, libstdc++, libcrypto.so.3, libz.so.1, CUDA's libraries); a GLIBC version
# it lacks shows here as "version `GLIBC_2.xx' not found".
ldd_missing=$files/ldd-missing.txt
: >"$ldd_missing"
if command -v ldd >/dev/null; then
  while IFS= read -r f; do
    rel=${f#"$carry"/}
    out=$(ldd "$f" 2>&1)
    case "$f" in "$lab"|"$backend"|"$gpu_tests") { echo "== ldd $rel"; echo "$out"; } >>"$log" ;; esac
    echo "$out" | grep -E 'not found|error' | sed "s|^[[:space:]]*|$rel: |" >>"$ldd_missing"
  done < <(find "$carry/build" -type f \( -name '*.so' -o -perm -u+x \) | sort)
  if [ -s "$ldd_missing" ]; then
    say "!!!!!!!! LIBRARIES NOT FOUND (ldd) !!!!!!!!"
    sed 's/^/!!   /' "$ldd_missing" | tee -a "$log"
  else
    say "ldd: every library of the $(find "$carry/build" -type f \( -name '*.so' -o -perm -u+x \) | wc -l) packed files found"
  fi
else
  say "!! no ldd on this machine: libraries not checked"; rm -f "$ldd_missing"
fi
# Where each CUDA library the backend needs (or CUPTI opens) is found: LD_LIBRARY_PATH first, then
# the loader's cache, as the dynamic loader searches.
for l in libcudart.so.13 libcublasLt.so.13 libcupti.so.13 libnvperf_host.so libcuda.so.1 libnvidia-ml.so.1; do
  where=""
  IFS=: read -ra dirs <<<"$LD_LIBRARY_PATH"
  for d in "${dirs[@]}"; do [ -n "$d" ] && [ -e "$d/$l" ] && { where="$d/$l (LD_LIBRARY_PATH)"; break; }; done
  [ -z "$where" ] && where=$(ldconfig -p 2>/dev/null | awk -v l="$l" '$1==l{print $NF " (ldconfig)"; exit}')
  say "   $l: ${where:-NOT FOUND}"
done
# Step 0: the packed lab starts (it loads every library it links to; no device is opened).
step lab-version 15 "$lab" --version
rc=$?
if [ "$rc" -ne 0 ] || grep -qE "$loader_errors" "$work/lab-version.err"; then
  fail_fast "the packed lab does not start here (exit $rc): $(last_err lab-version 3)"
fi
say "   $(cat "$work/lab-version.out")"
core=$(grep -E "^(${lab#"$carry"/}|${backend#"$carry"/}): " "$ldd_missing" 2>/dev/null)
[ -z "$core" ] || fail_fast "libraries not found for lab or its CUDA backend (the machine lacks them, or its CUDA 13 toolkit is not where env.sh looked):
$core"
step nvidia-smi 20 nvidia-smi
cat "$work/nvidia-smi.out" >>"$log"
step gpu-state 20 nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,memory.used --format=csv
cat "$work/gpu-state.out" >>"$log"

# --- 2. Calibrate, then the device (which reads what calibrate cached) ---------------------------
step calibrate 150 "$lab" calibrate --device cuda --json
rc=$?
cp -f "$work/calibrate.out" "$files/calibrate.json" 2>/dev/null
if [ "$rc" -ne 0 ]; then
  why=$(last_err calibrate 3)
  # No GPU, no driver or a library missing: nothing else can run. A GPU that failed
  # mid-calibration: the GPU tests say more.
  if [ "$rc" -ne 126 ] && [ "$rc" -ne 127 ] && ! grep -qE "$loader_errors" "$work/calibrate.err"; then
    step gpu_tests 120 "$gpu_tests" --reporter compact
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
step gpu_tests 120 "$gpu_tests" --reporter compact
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
say "done in $(elapsed) s"
rm -f "$work/running"
save
cat "$OUT/summary.txt"
tail -n 1 "$OUT/summary.txt" | grep -q '^GPU CHECK: PASS'
