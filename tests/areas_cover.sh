#!/usr/bin/env bash
# Every test case of a Catch2 executable is in at least one of the areas (tags) meson runs it
# by: a test case tagged with none of them would never run under `meson test`.
# Usage: areas_cover.sh EXE AREA...
set -uo pipefail
exe=$1
shift
spec=""
for area in "$@"; do spec+="~[$area]"; done
# Catch2 v2 exits with the number of test cases listed, so the exit status is not an error here;
# an executable that lists nothing at all is.
if [ -z "$("$exe" --list-test-names-only | sed '/^[[:space:]]*$/d')" ]; then
  echo "$exe lists no test cases"
  exit 1
fi
names=$("$exe" --list-test-names-only "$spec")
names=$(printf '%s\n' "$names" | sed '/^[[:space:]]*$/d')
if [ -n "$names" ]; then
  echo "$(basename "$exe"): test cases in none of the areas meson runs ($*):"
  printf '%s\n' "$names"
  echo "fix: tag each with one of those areas, or add its tag to the list in tests/meson.build"
  exit 1
fi
echo "$(basename "$exe"): every test case is in an area meson runs"
