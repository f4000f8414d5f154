#!/usr/bin/env bash
# Installs what lab needs on Debian 12 / Ubuntu 22.04+ (as root or with sudo), then configures
# and builds it in build/. CUDA is compiled in when nvcc is found (/usr/local/cuda/bin or PATH).
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium: the HTML reports' browser test (tests/cli/report_browser.cpp) loads each page in it,
# headless; without it that test is skipped.
packages=(meson ninja-build pkg-config g++ libboost-dev libboost-program-options-dev libyaml-cpp-dev
          catch2 nlohmann-json3-dev libfmt-dev zlib1g-dev libssl-dev libopenblas-dev libxml2-dev
          libvalijson-dev chromium)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
gpu=disabled
command -v nvcc >/dev/null 2>&1 && gpu=enabled
if [ -f build/build.ninja ]; then
  meson configure build -Dgpu=$gpu >/dev/null
else
  native=()
  if [ $gpu = enabled ]; then
    # nvcc through scripts/nvcc-depfile, so that editing a .cuh header rebuilds the .cu files
    # that include it (meson 1.0 asks nvcc for no dependency file). The machine file stays in
    # build/: meson reads it again whenever it regenerates the build.
    mkdir -p build
    printf "[binaries]\ncuda = ['%s', '%s']\n" "$PWD/scripts/nvcc-depfile" "$(command -v nvcc)" > build/lab-native.ini
    native=(--native-file build/lab-native.ini)
  fi
  meson setup build -Dgpu=$gpu "${native[@]}"
fi
meson compile -C build
