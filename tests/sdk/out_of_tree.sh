#!/usr/bin/env bash
# The whole instructor path, out of tree: install lab (DESTDIR, a private root), scaffold a
# lesson with `lab new`, build it with meson against the installed SDK (pkg-config lab-sdk),
# validate it, run it through LAB_PLUGIN_PATH, check its expectations, and grade an answers file
# against its run. Usage: out_of_tree.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"
meson install -C "$build" --destdir "$root" --no-rebuild --quiet >/dev/null
prefix=$(find "$root" -path '*/bin/lab' -type f | head -1 | xargs dirname | xargs dirname)
lab="$prefix/bin/lab"
pc=$(dirname "$(find "$root" -name lab-sdk.pc | head -1)")
export XDG_CACHE_HOME="$work/cache" PKG_CONFIG_PATH="$pc" PKG_CONFIG_SYSROOT_DIR="$root"
echo "installed lab: $lab"

"$lab" new 97.01 --title "A scaffolded lesson" --dir "$work/src"
# A title that would break the generated C++ string literal is refused (exit 2), nothing written.
if "$lab" new 97.02 --title "$(printf 'two\nlines')" --dir "$work/src2" 2>/dev/null; then echo "a two-line title was accepted"; exit 1; fi
[ ! -e "$work/src2" ] || { echo "a refused lab new wrote $work/src2"; exit 1; }
cd "$work/src/lesson_97_01"
# The CUDA companion compiles when nvcc is on PATH (CI); it is not needed to run on the CPU.
meson setup build -Dgpu=auto >/dev/null
compiled=$(meson compile -C build 2>&1) || { echo "$compiled"; exit 1; }
# The SDK's pkg-config flags carry the C++ standard; the scaffold must not pass another to nvcc.
if echo "$compiled" | grep -q "incompatible redefinition"; then echo "$compiled"; echo "nvcc got two -std flags"; exit 1; fi
export LAB_PLUGIN_PATH="$PWD/build"

"$lab" validate build/lab_97_01.so --spec 97.01.yaml
# The scaffold is the smallest complete lesson: under 100 non-blank lines of code.
lines=$(cat lab_97_01.cpp lab_97_01_cuda.cu kernels.hpp | grep -c .)
[ "$lines" -lt 100 ] || { echo "the scaffold has $lines non-blank lines (budget: under 100)"; exit 1; }

# `lab validate` derives the lesson's plan on model devices: a metric declared and never
# produced is named, exit 2. (Built beside the good lesson, then put back.)
cp lab_97_01.cpp lab_97_01.cpp.orig
python3 - lab_97_01.cpp <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
decl = 'i.placed = {{.name = "scale", .graded = {"bytes_per_s"}}};'
assert decl in text, "the scaffold's placed declaration moved"
text = text.replace(decl, decl + '\n        i.metrics = {{.name = "scale.efficiency", .unit = "ratio", .description = "never set"}};')
open(path, "w").write(text)
PY
meson compile -C build >/dev/null
set +e
"$lab" validate build/lab_97_01.so --spec 97.01.yaml > "$work/validate.out" 2>&1
code=$?
set -e
cat "$work/validate.out"
[ "$code" -eq 2 ] || { echo "lab validate exited $code for a lesson that never produces a declared metric (want 2)"; exit 1; }
grep -q "'scale.efficiency' is declared for this device and run type, but derive() never sets it (on every model device and run type)" "$work/validate.out"
mv lab_97_01.cpp.orig lab_97_01.cpp
touch lab_97_01.cpp  # mv keeps the older time: make meson rebuild it
meson compile -C build >/dev/null
"$lab" validate build/lab_97_01.so --spec 97.01.yaml >/dev/null
"$lab" list | grep -q '^97.01 '
"$lab" run 97.01 --quick --student tester --out "$work/run.json" >/dev/null
"$lab" check 97.01 --quick

# Grade: the installed configs plus the new lesson's spec.
cp -r "$prefix/share/lab/configs" "$work/configs"
cp 97.01.yaml "$work/configs/grading/"
export LAB_CONFIG_DIR="$work/configs"
"$lab" answers 97.01 --run "$work/run.json" > "$work/answers.yaml"
bw=$("$lab" show "$work/run.json" --json --reveal | python3 -c 'import json,sys; print(json.load(sys.stdin)["metrics"]["scale.bytes_per_s"]["value"])')
python3 - "$work/answers.yaml" "$bw" <<'PY'
import sys
path, bw = sys.argv[1], float(sys.argv[2])
text = open(path).read().replace("scale_bandwidth:\n", f"scale_bandwidth: {bw / 1e9:.4g} GB/s\n")
open(path, "w").write(text)
PY
"$lab" submit 97.01 "$work/answers.yaml" --run "$work/run.json" --json > "$work/grade.json"
python3 - "$work/grade.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
assert g["graded"], g["problems"]
assert g["score"] == g["max_score"] == 2, g
print(f"graded the scaffolded lesson: {g['score']} / {g['max_score']}")
PY
echo "the instructor path works out of tree"
