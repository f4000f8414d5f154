#!/usr/bin/env bash
# Sets up (scripts/setup.sh), runs the whole test suite, and ends with one line
# "N passed, N failed, N skipped" summarised from meson's test log (meson prints none).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
# The Slurm tests (cli/slurm) submit real jobs to a single-node cluster on this machine, started
# here and stopped after. Where it cannot start (no root or sudo), they are skipped, unless
# LAB_REQUIRE_SLURM=1 (CI) makes that a failure.
slurm_started=0
if bash scripts/slurm_cluster.sh start; then
  slurm_started=1
elif [ "${LAB_REQUIRE_SLURM:-0}" = 1 ]; then
  echo "the local Slurm cluster did not start (LAB_REQUIRE_SLURM=1)"; exit 1
fi
meson test -C build --print-errorlogs "$@"
status=$?
[ $slurm_started = 1 ] && bash scripts/slurm_cluster.sh stop
python3 - <<'PY'
import json
counts = {"passed": 0, "failed": 0, "skipped": 0}
with open("build/meson-logs/testlog.json") as log:
    for line in log:
        result = json.loads(line).get("result")
        if result in ("OK", "EXPECTEDFAIL"):
            counts["passed"] += 1
        elif result == "SKIP":
            counts["skipped"] += 1
        else:
            counts["failed"] += 1
print(f'{counts["passed"]} passed, {counts["failed"]} failed, {counts["skipped"]} skipped')
PY
exit $status
