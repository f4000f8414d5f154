#!/usr/bin/env bash
# The prepared check for a lent GPU machine (../shared/gpu/README.md): run from the repository
# root there, after building here with CUDA on and packing with ../shared/gpu/pack.sh:
#
#   meson setup build-gpu -Dbuildtype=release -Dgpu=enabled && meson compile -C build-gpu
#   ../shared/gpu/pack.sh build-gpu            # -> .gpu-carry
#   (device tool) run: bash scripts/gpu_check.sh   carrying .gpu-carry, timeout_s 540
#
# It runs, time-boxed: nvidia-smi, lab device, lab calibrate, lab run 02.01, lab run 02.05 with a
# trace, and the GPU tests; it puts the run records, the trace and the logs in one tarball under
# $OUT and prints a short table of the issue's targets last.
set -uo pipefail
root=$(pwd)
out=${OUT:-/tmp/gpu-check-out}
mkdir -p "$out/files"
export LD_LIBRARY_PATH="$root/.gpu-carry/lib:${LD_LIBRARY_PATH:-}"
export XDG_CACHE_HOME="$out/cache"
cd "$root/.gpu-carry/build" || { echo "no .gpu-carry/build: pack the build first"; exit 2; }
lab=./cli/lab
log="$out/files/log.txt"
step() { echo "== $*" | tee -a "$log"; }

step nvidia-smi;          timeout 20 nvidia-smi >>"$log" 2>&1
step lab device;          timeout 120 $lab device --json >"$out/files/device.json" 2>>"$log"
step lab calibrate;       timeout 180 $lab calibrate --json >"$out/files/calibrate.json" 2>>"$log"
step lab run 02.01;       timeout 120 $lab run 02.01 --student gpu-check --reveal --out "$out/files/02.01-h200.json" >>"$log" 2>&1
step lab run 02.05;       timeout 120 $lab run 02.05 --student gpu-check --reveal --trace "$out/files/02.05-h200.trace.json.gz" \
                            --plots "$out/files" --out "$out/files/02.05-h200.json" >>"$log" 2>&1
step lab run 02.01 quick; timeout 60 $lab run 02.01 --quick --student gpu-check --out "$out/files/02.01-h200-quick.json" >>"$log" 2>&1
step gpu tests;           timeout 180 ./tests/gpu_tests >>"$log" 2>&1; echo "gpu_tests exit $?" | tee -a "$log"
tar -C "$out" -czf "$out/gpu-check.tar.gz" files

python3 - "$out/files" <<'PY'
import json, sys, os
d = sys.argv[1]
def load(name):
    try:
        return json.load(open(os.path.join(d, name)))
    except Exception as e:
        return None
cal = load("calibrate.json")
if not cal:
    print("calibrate.json missing: see log.txt"); sys.exit(0)
c = cal["ceilings"]; bw = c["bandwidth_bytes_per_s"]; fl = c["flops_per_s"]
def v(m, k): return m.get(k, {}).get("value") or 0
print(f"device: {cal['facts']['name']}  (kind {cal['kind']})")
print(f"copy / memcpy DtoD      {v(bw,'copy')/1e12:.2f} / {v(bw,'memcpy')/1e12:.2f} TB/s  ratio {v(bw,'copy')/max(v(bw,'memcpy'),1):.3f}  (target >= 0.9)")
print(f"bf16.tensor             {v(fl,'bf16.tensor')/1e12:.0f} TFLOP/s  (target >= 700)")
print(f"fp32.simt               {v(fl,'fp32.simt')/1e12:.1f} TFLOP/s")
print(f"launch stream / graph   {c['launch_s']['value']*1e6:.2f} / {c.get('launch_graph_s',{}).get('value',0)*1e6:.2f} us  (target 1.5-4, graph lower)")
for name in ("02.01-h200.json", "02.05-h200.json"):
    r = load(name)
    if not r: print(f"{name}: missing"); continue
    regs = {k: m["value"] for k, m in r["metrics"].items() if k.endswith("measured_regime")}
    print(name, regs)
PY
