#!/usr/bin/env bash
# slurm_overhead.sh: what does a 200-task `lab audit --slurm` spend beyond the lesson runs?
#
# Makes N (default 200) submissions from one honest quick run of a short lesson (02.09, about 2 s)
# re-sealed per student by bench/make_submissions.cpp's method (here: lab runs N times would take
# too long, so one run is copied under N students; they are near-copies, which the audit samples
# anyway), audits all of them on the cluster's partition with a throttle, and prints:
#   wall     the audit's wall time, submission to report
#   lessons  the sum of the re-measures' own durations (each record's duration_s), and that sum
#            over the throttle (tasks at once): the least time the lesson runs could take
#   overhead wall - lessons / throttle: what Slurm and lab add (submission, scheduling, each
#            task's lab start-up, tracking, collection)
# Target: overhead under 2 minutes for 200 tasks. Needs a cluster (scripts/slurm_cluster.sh start).
#   bench/slurm_overhead.sh [--n 200] [--partition debug] [--throttle 2] [--lesson 02.09]
set -euo pipefail
cd "$(dirname "$0")/.."
n=200 partition=debug throttle=2 lesson=02.09
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n=$2; shift 2 ;;
    --partition) partition=$2; shift 2 ;;
    --throttle) throttle=$2; shift 2 ;;
    --lesson) lesson=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
lab=${BUILD:-build}/cli/lab
[ -x "$lab" ] || { echo "no $lab: build first" >&2; exit 2; }
scontrol ping 2>/dev/null | grep -q UP || { echo "no Slurm cluster answers: scripts/slurm_cluster.sh start" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export LAB_CONFIG_DIR=${LAB_CONFIG_DIR:-$PWD/configs} LAB_NO_PROGRESS=1 LAB_TOKEN="" LAB_STUDENT="" LAB_SLURM_POLL_S=${LAB_SLURM_POLL_S:-1}
mkdir -p "$dir/subs"
"$lab" run "$lesson" --quick --device cpu --student s0001 --out "$dir/one.json" >/dev/null
for i in $(seq -f '%04g' 1 "$n"); do mkdir -p "$dir/subs/s$i"; cp "$dir/one.json" "$dir/subs/s$i/run.json"; done
start=$(date +%s.%N)
"$lab" audit "$dir/subs" --sample 100% --seed 1 --slurm --partition "$partition" --throttle "$throttle" --share-nodes \
  --work "$dir/work" --json --out "$dir/audit.json" >/dev/null 2>"$dir/audit.err" || true
end=$(date +%s.%N)
python3 - "$dir" "$start" "$end" "$throttle" <<'PY'
import json, os, sys, glob
d, start, end, throttle = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
doc = json.load(open(f"{d}/audit.json"))
lessons = sum(r["seconds"] for r in doc["results"])
ends = [os.path.getmtime(p) for p in glob.glob(f"{d}/work/results/*.json")]
wall = end - start
done = sum(1 for r in doc["results"] if r["verdict"] in ("reproduces", "does_not_reproduce"))
print(f"{len(doc['results'])} tasks ({done} compared), throttle {throttle}")
print(f"wall {wall:.1f} s; sum of lesson runs {lessons:.1f} s, {lessons / throttle:.1f} s at {throttle} at once")
print(f"overhead beyond the lesson runs: {wall - lessons / throttle:.1f} s ({(wall - lessons / throttle) / max(1, len(doc['results'])):.2f} s per task)")
print(f"collection after the last result: {end - max(ends):.1f} s" if ends else "no results")
PY
