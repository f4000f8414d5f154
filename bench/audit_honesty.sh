#!/usr/bin/env bash
# audit_honesty.sh: how often does an honest run fail its audit?
#
# Records N (default 20) honest runs of a lesson on this machine, one per student (h01, h02, ...),
# then re-measures every one of them with `lab audit --sample 100%` on the same machine (locally,
# or with --slurm on the cluster's partition) at the shipped tolerance, and prints the share
# flagged `does_not_reproduce` (target: at most 1 in 20), with each run's worst ratio against the
# factor it was allowed. A benchmark, not a test: it exits 0 whatever the share, 2 when
# something it needs is missing, 64 on bad usage.
#   bench/audit_honesty.sh [--lesson 02.05] [--n 20] [--full] [--slurm PARTITION] [--tolerance F] [--keep DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
lesson=02.05 n=20 quick=--quick slurm="" tolerance="" keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --lesson) lesson=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --full) quick=""; shift ;;
    --slurm) slurm=$2; shift 2 ;;
    --tolerance) tolerance=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
lab=${BUILD:-build}/cli/lab
[ -x "$lab" ] || { echo "no $lab: build first (scripts/setup.sh)" >&2; exit 2; }
dir=${keep:-$(mktemp -d)}
[ -z "$keep" ] && trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/subs"
export LAB_NO_PROGRESS=1 LAB_TOKEN="" LAB_STUDENT="" LAB_CONFIG_DIR=${LAB_CONFIG_DIR:-$PWD/configs}

echo "recording $n honest runs of $lesson ${quick:-(full)} on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
start=$(date +%s)
for i in $(seq -w 1 "$n"); do
  mkdir -p "$dir/subs/h$i"
  "$lab" run "$lesson" $quick --device cpu --student "h$i" --out "$dir/subs/h$i/run.json" >/dev/null
done
recorded=$(date +%s)
args=(audit "$dir/subs" --sample 100% --seed 1 --json --out "$dir/audit.json")
[ -n "$tolerance" ] && args+=(--tolerance "$tolerance")
[ -n "$slurm" ] && args+=(--slurm --partition "$slurm" --work "$dir/work")
"$lab" "${args[@]}" >/dev/null || true   # exit 1 when any does not reproduce: reported below
end=$(date +%s)
python3 - "$dir/audit.json" "$n" $((recorded - start)) $((end - recorded)) <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
flagged = [r for r in doc["results"] if r["verdict"] == "does_not_reproduce"]
print(f'recorded in {sys.argv[3]} s, audited {doc["where"]} in {sys.argv[4]} s; tolerance x/÷ {doc["tolerance"]:g}')
print(f'{"student":<8} {"verdict":<20} {"worst row":<40} {"ratio":>7} {"allowed":>8}')
worst_share = []
for r in sorted(doc["results"], key=lambda r: r["student"]):
    rows = [c for c in r["comparison"] if c["ratio"] > 0]
    import math
    w = max(rows, key=lambda c: abs(math.log(c["ratio"])) / math.log(c["allowed"])) if rows else None
    if w: worst_share.append(abs(math.log(w["ratio"])) / math.log(w["allowed"]))
    print(f'{r["student"]:<8} {r["verdict"]:<20} {(w["what"] if w else "-"):<40} {(w["ratio"] if w else 0):>7.3f} {(w["allowed"] if w else 0):>8.3f}')
from collections import Counter
print(f'\nverdicts: {dict(Counter(r["verdict"] for r in doc["results"]))}')
print(f'flagged: {len(flagged)} of {len(doc["results"])} honest runs ({100 * len(flagged) / max(1, len(doc["results"])):.0f}%; target at most 1 in 20)')
if worst_share:
    worst_share.sort()
    print(f'worst row per run, as a share of its allowance (log ratio / log allowed): median {worst_share[len(worst_share)//2]:.2f}, max {worst_share[-1]:.2f}')
PY
