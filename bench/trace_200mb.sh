#!/usr/bin/env bash
# `lab trace` against issue 14's targets: the largest testdata trace under 0.5 s, and a synthetic
# 200 MB Kineto trace (kernels on 4 streams with their launch calls and flows, memcpys, syncs)
# under 5 s with peak memory under 3x the file size. A benchmark: prints figures and ratios,
# fails nothing; CPU time is shown beside wall time (a busy machine stretches the wall). usage: bench/trace_200mb.sh [MB]   (LAB=path/to/lab to pick the binary)
set -uo pipefail
cd "$(dirname "$0")/.."
lab=${LAB:-build/cli/lab}
[ -x "$lab" ] || { echo "lab is not built: run scripts/setup.sh" >&2; exit 2; }
mb=${1:-200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
measure() {  # file target_s -> wall s, max RSS
  /usr/bin/time -f "%e %M %U %S" "$lab" trace "$1" --json 2>"$dir/time" >/dev/null || { echo "lab trace failed on $1" >&2; cat "$dir/time" >&2; return; }
  read -r wall rss user sys < <(tail -1 "$dir/time")
  size=$(stat -c %s "$1")
  python3 -c "import sys; w,r,s,t=float(sys.argv[1]),float(sys.argv[2])*1024,float(sys.argv[3]),float(sys.argv[4]); \
c=float(sys.argv[6]); \
print(f'{sys.argv[5]:<32} {s/1e6:8.1f} MB  {w:6.2f} s wall, {c:6.2f} s CPU (target {t:g} s, ratio {w/t:.2f} wall, {c/t:.2f} CPU)  peak RSS {r/1e6:7.1f} MB ({r/s:.2f}x the file)')" \
    "$wall" "$rss" "$size" "$2" "$(basename "$1")" "$(python3 -c "print($user + $sys)")"
}
largest=$(ls -S tests/fixtures/traces/*.json.gz | head -1)
measure "$largest" 0.5
python3 - "$dir/synthetic.json" "$mb" <<'PY'
import sys
path, mb = sys.argv[1], float(sys.argv[2])
name = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1})"
with open(path, "w") as f:
    f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}], "traceEvents": [\n')
    i, ts, written = 0, 1000.0, 0
    while written < mb * 1e6:
        s = (f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts:.3f}, "dur": 4.2, "args": {{"correlation": {i}, "cbid": 211}}}},\n'
             f'{{"ph": "s", "id": {i}, "pid": 1, "tid": 1, "ts": {ts:.3f}, "cat": "ac2g", "name": "ac2g"}},\n'
             f'{{"ph": "X", "cat": "kernel", "name": "{name}{i % 50}", "pid": 0, "tid": {7 + i % 4}, "ts": {ts + 6:.3f}, "dur": 3.1, "args": {{"correlation": {i}, "stream": {7 + i % 4}, "grid": [1024, 1, 1], "block": [128, 1, 1]}}}},\n')
        if i % 100 == 0:
            s += f'{{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": {ts + 9:.3f}, "dur": 2.0, "args": {{"bytes": 65536, "correlation": {i}}}}},\n'
            s += f'{{"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": {ts + 12:.3f}, "dur": 1.0, "args": {{"cuda_sync_kind": "Stream Sync"}}}},\n'
        f.write(s)
        written += len(s)
        i += 1
        ts += 5.0
    f.write('{"ph": "i", "name": "end", "ts": %.3f}\n]}\n' % ts)
PY
measure "$dir/synthetic.json" 5
