#!/usr/bin/env bash
# Gradescope autograder setup (runs once when the autograder image is built, on Gradescope's
# Ubuntu 22.04 base, as root). Builds lab from the source in /autograder/source without CUDA:
# grading never runs kernels, it re-derives each student's recorded run.
set -euo pipefail
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  ninja-build pkg-config g++ python3-pip libboost-dev libboost-program-options-dev libyaml-cpp-dev \
  catch2 nlohmann-json3-dev libfmt-dev zlib1g-dev libssl-dev libopenblas-dev libxml2-dev
# Ubuntu 22.04's meson (0.61) is older than lab needs (>= 1.0.1): take a newer one from PyPI.
python3 -m pip install --quiet 'meson>=1.0.1,<2'
cd /autograder/source
meson setup /autograder/build -Dgpu=disabled -Dtests=false -Dbuildtype=release --prefix=/usr/local
meson compile -C /autograder/build
meson install -C /autograder/build
# The grader needs every spec, those with hidden questions too (meson install leaves them out
# for students' machines).
cp /autograder/source/configs/grading/*.yaml /usr/local/share/lab/configs/grading/
# The course's own grading specs and salt replace the shipped ones when present.
if [ -d /autograder/source/course-configs ]; then cp -r /autograder/source/course-configs/. /usr/local/share/lab/configs/; fi
lab list
