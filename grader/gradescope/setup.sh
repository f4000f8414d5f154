#!/usr/bin/env bash
# Gradescope autograder setup (runs once when the autograder image is built, on Gradescope's
# Ubuntu 22.04 base, as root). Builds lab from the source without CUDA: grading never runs
# kernels, it re-derives each student's recorded run.
#
# Gradescope unpacks the autograder zip into /autograder/source; make_autograder.sh puts the lab
# repository in its source/ folder (/autograder/source/source) and the course's configs in
# course-configs/ beside it. A zip packed with the repository at its top level works too.
# `setup.sh --check` only says where it finds each part (AUTOGRADER_ROOT overrides /autograder).
set -euo pipefail
zip_root="${AUTOGRADER_ROOT:-/autograder}/source"
if [ -f "$zip_root/source/meson.build" ]; then repo="$zip_root/source"
elif [ -f "$zip_root/meson.build" ]; then repo="$zip_root"
else
  echo "error: no lab repository in $zip_root/source (nor in $zip_root): pack the zip with grader/gradescope/make_autograder.sh" >&2
  exit 2
fi
course_configs=""
for d in "$zip_root/course-configs" "$repo/course-configs"; do [ -d "$d" ] && { course_configs=$d; break; }; done
if [ "${1:-}" = --check ]; then
  echo "lab repository: $repo"
  echo "course configs: ${course_configs:-none (the shipped configs)}"
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  ninja-build pkg-config g++ python3-pip libboost-dev libboost-program-options-dev libyaml-cpp-dev \
  catch2 nlohmann-json3-dev libfmt-dev zlib1g-dev libssl-dev libopenblas-dev libxml2-dev
# Ubuntu 22.04's meson (0.61) is older than lab needs (>= 1.0.1): take a newer one from PyPI.
python3 -m pip install --quiet 'meson>=1.0.1,<2'
cd "$repo"
meson setup /autograder/build -Dgpu=disabled -Dtests=false -Dbuildtype=release --prefix=/usr/local
meson compile -C /autograder/build
meson install -C /autograder/build
# The grader needs every spec, those with hidden questions too (meson install leaves them out
# for students' machines).
cp "$repo"/configs/grading/*.yaml /usr/local/share/lab/configs/grading/
# The course's own grading specs and salt replace the shipped ones when present.
if [ -n "$course_configs" ]; then cp -r "$course_configs"/. /usr/local/share/lab/configs/; fi
lab list
