#!/usr/bin/env bash
# checkpoint_10gb.sh: how long does `lab checkpoint` take on a 10 GB safetensors file, and how much
# memory does it use?
#
# Writes a Llama-shaped BF16 checkpoint of about 10 GB (hidden 4096, MLP 11008, 24 layers, vocab
# 32000: 5.12e9 parameters, 10.24 GB of tensors) as a sparse file in a temporary folder under /tmp:
# the 8-byte length and the JSON header, then ftruncate to the full size, so it takes no disk
# space and no time to write. Then it runs `lab checkpoint FILE --device-spec h200_sxm --json`
# under /usr/bin/time -v, R times (default 5), and prints each run's wall time and max RSS and
# their medians and maxima against the targets (issue: under 100 ms, max RSS under 50 MB). lab
# reads the header only, so the data, sparse or not, is never touched.
#
# A benchmark, not a test: exits 0 whatever the figures, 2 when something it needs is missing,
# 64 on bad usage.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/checkpoint_10gb.sh [--runs R] [--layers N] [--keep DIR]

  --runs R     timed runs (default 5)
  --layers N   transformer layers (default 24: 10.24 GB of BF16 tensors)
  --keep DIR   write the checkpoint in DIR and keep it (default: a temporary folder, removed)
  -h, --help   this help

Environment: LAB=<lab executable> (default: <repo>/build/cli/lab).
EOF
}

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LAB="${LAB:-$ROOT/build/cli/lab}"
RUNS=5
LAYERS=24
KEEP=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) RUNS="${2:-}"; shift 2 || { usage >&2; exit 64; } ;;
        --layers) LAYERS="${2:-}"; shift 2 || { usage >&2; exit 64; } ;;
        --keep) KEEP="${2:-}"; shift 2 || { usage >&2; exit 64; } ;;
        -h|--help) usage; exit 0 ;;
        *) echo "checkpoint_10gb.sh: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ && "$LAYERS" =~ ^[1-9][0-9]*$ ]] || { echo "checkpoint_10gb.sh: --runs and --layers take positive integers" >&2; exit 64; }
[[ -x "$LAB" ]] || { echo "checkpoint_10gb.sh: no lab at $LAB: build it (ninja -C build) or set LAB=" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "checkpoint_10gb.sh: /usr/bin/time is missing: apt-get install time" >&2; exit 2; }
command -v python3 >/dev/null || { echo "checkpoint_10gb.sh: python3 is missing" >&2; exit 2; }

if [[ -n "$KEEP" ]]; then
    DIR="$KEEP"
    mkdir -p "$DIR"
else
    DIR="$(mktemp -d /tmp/lab-bench-checkpoint-XXXXXX)"
    trap 'rm -rf "$DIR"' EXIT
fi
FILE="$DIR/model.safetensors"

# The header and the sparse file.
python3 - "$FILE" "$LAYERS" <<'PY'
import json, os, struct, sys
path, layers = sys.argv[1], int(sys.argv[2])
hidden, mlp, vocab = 4096, 11008, 32000
tensors, at = [], 0
def add(name, shape, dtype="BF16", bits=16):
    global at
    n = 1
    for d in shape: n *= d
    size = n * bits // 8
    tensors.append((name, {"dtype": dtype, "shape": shape, "data_offsets": [at, at + size]}))
    at += size
add("model.embed_tokens.weight", [vocab, hidden])
for i in range(layers):
    p = f"model.layers.{i}."
    for w in ("q_proj", "k_proj", "v_proj", "o_proj"):
        add(p + "self_attn." + w + ".weight", [hidden, hidden])
    add(p + "mlp.gate_proj.weight", [mlp, hidden])
    add(p + "mlp.up_proj.weight", [mlp, hidden])
    add(p + "mlp.down_proj.weight", [hidden, mlp])
    add(p + "input_layernorm.weight", [hidden])
    add(p + "post_attention_layernorm.weight", [hidden])
add("model.norm.weight", [hidden])
add("lm_head.weight", [vocab, hidden])
header = {"__metadata__": {"format": "pt"}}
header.update(dict(tensors))
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    f.truncate(8 + len(text) + at)
print(f"checkpoint: {path}: {len(tensors)} tensors, {at / 1e9:.2f} GB of BF16 data (sparse), header {len(text)} B",
      file=sys.stderr)
PY

size_b=$(stat -c %s "$FILE")
disk_b=$(du -B1 "$FILE" | cut -f1)
awk -v s="$size_b" -v d="$disk_b" -v r="$RUNS" 'BEGIN { printf "lab checkpoint on a sparse file of %.2f GB (%.0f B; %.1f kB on disk), %d run(s); GB = 10^9 B\n", s / 1e9, s, d / 1e3, r }'
echo "lab: $LAB"
echo "command: lab checkpoint $FILE --device-spec h200_sxm --json"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-5s %12s %14s %14s\n' run "wall (ms)" "time -v wall" "max RSS (MB)"
walls=() rsss=()
for ((r = 1; r <= RUNS; r++)); do
    t0=$(date +%s%N)
    /usr/bin/time -v -o "$DIR/time.txt" "$LAB" checkpoint "$FILE" --device-spec h200_sxm --json >"$DIR/out.json" 2>"$DIR/err.txt" || {
        echo "checkpoint_10gb.sh: lab checkpoint failed:" >&2
        cat "$DIR/err.txt" >&2
        exit 0
    }
    t1=$(date +%s%N)
    wall_us=$(( (t1 - t0) / 1000 ))
    rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$DIR/time.txt")
    elapsed=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$DIR/time.txt")
    walls+=("$wall_us")
    rsss+=("$rss_kb")
    awk -v r="$r" -v us="$wall_us" -v e="$elapsed" -v kb="$rss_kb" 'BEGIN { printf "%-5s %12.1f %14s %14.1f\n", r, us / 1000, e, kb * 1024 / 1e6 }'
done
python3 - "${walls[*]}" "${rsss[*]}" "$DIR/out.json" <<'PY'
import json, statistics, sys
walls = [int(x) / 1000 for x in sys.argv[1].split()]   # ms
rss = [int(x) * 1024 / 1e6 for x in sys.argv[2].split()]  # MB (10^6 B)
out = json.load(open(sys.argv[3]))
print()
print(f"lab read: {out['tensors']} tensors, {out['params']:,} parameters, {out['bytes']:,} B; "
      f"decode lower bound on {out['device']['name']}: {out['decode_step_lower_bound_s'] * 1e3:.2f} ms")
w, m = statistics.median(walls), max(walls)
r, rm = statistics.median(rss), max(rss)
print(f"wall time: median {w:.1f} ms, max {m:.1f} ms   target < 100 ms: {'MET' if m < 100 else 'MISSED'}")
print(f"max RSS:   median {r:.1f} MB, max {rm:.1f} MB   target < 50 MB:  {'MET' if rm < 50 else 'MISSED'}")
print("(wall: date +%s%N around /usr/bin/time, so it includes starting lab; MB = 10^6 B)")
PY
