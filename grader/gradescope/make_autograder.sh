#!/usr/bin/env bash
# Builds a Gradescope autograder zip for one lesson, laid out as Gradescope unpacks it: the zip's
# top level becomes /autograder/source, so setup.sh and run_autograder sit there, the lab
# repository in source/ beneath them (/autograder/source/source), and the course's key and
# configs beside them. Packing by hand put the repository one level off (docs/gradescope.md).
#
#   make_autograder.sh LESSON OUT.zip [--key course.key] [--configs DIR] [--identity FIELD]
#
# The repository is the committed tree of this checkout (git archive HEAD), or, outside git, its
# files without build folders. The zip is written whole or not at all.
set -euo pipefail
usage() { echo "usage: $0 LESSON OUT.zip [--key course.key] [--configs DIR] [--identity email_local|email|sid|name]" >&2; exit 2; }
[ $# -ge 2 ] || usage
lesson=$1 out=$2; shift 2
key="" configs="" identity=""
while [ $# -gt 0 ]; do
  case $1 in
    --key) [ $# -ge 2 ] || usage; key=$2; shift 2 ;;
    --configs) [ $# -ge 2 ] || usage; configs=$2; shift 2 ;;
    --identity) [ $# -ge 2 ] || usage; identity=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ $lesson =~ ^[0-9]{2}\.[0-9]{2}$ ]] || { echo "error: '$lesson' is not a lesson ID (such as 02.05)" >&2; exit 2; }
[ -z "$key" ] || [ -f "$key" ] || { echo "error: $key: no such course key (lab token --new-key course.key writes one)" >&2; exit 2; }
[ -z "$configs" ] || [ -d "$configs" ] || { echo "error: $configs: no such folder (it holds course.yaml and grading/<ID>.yaml)" >&2; exit 2; }
case $identity in ""|email_local|email|sid|name) ;; *) echo "error: --identity '$identity': one of email_local, email, sid, name" >&2; exit 2 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd -P)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/setup.sh" "$stage/setup.sh"
# The lesson (and identity field) set in the copy: one zip per assignment, nothing to edit after.
sed -e "s/^LESSON=\"\${LAB_LESSON:-}\"/LESSON=\"\${LAB_LESSON:-$lesson}\"/" \
    ${identity:+-e "s/\${LAB_IDENTITY:-email_local}/\${LAB_IDENTITY:-$identity}/g"} \
    "$here/run_autograder" > "$stage/run_autograder"
chmod 755 "$stage/run_autograder" "$stage/setup.sh"
grep -q "LAB_LESSON:-$lesson}" "$stage/run_autograder" || { echo "error: could not set the lesson in run_autograder" >&2; exit 1; }
mkdir "$stage/source"
# This checkout's committed tree when it is a git repository of its own (not a folder inside another).
if [ "$(git -C "$repo" rev-parse --show-toplevel 2>/dev/null)" = "$repo" ]; then
  git -C "$repo" archive HEAD | tar -x -C "$stage/source"
else
  tar -C "$repo" --exclude='./build*' --exclude=./.git -cf - . | tar -x -C "$stage/source"
fi
if [ ! -f "$stage/source/configs/grading/$lesson.yaml" ] && [ ! -f "$configs/grading/$lesson.yaml" ]; then
  echo "error: no grading spec for lesson $lesson: neither configs/grading/$lesson.yaml nor ${configs:-(--configs)}/grading/$lesson.yaml" >&2
  exit 2
fi
[ -z "$key" ] || install -m 600 "$key" "$stage/course.key"
[ -z "$configs" ] || cp -r "$configs" "$stage/course-configs"
mkdir -p "$(dirname "$out")"
python3 - "$stage" "$out" <<'PY'
import os, sys, zipfile
stage, out = sys.argv[1], sys.argv[2]
tmp = out + ".part"
with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
    for top, dirs, files in os.walk(stage):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(top, name)
            info = zipfile.ZipInfo.from_file(path, os.path.relpath(path, stage))
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as f:
                z.writestr(info, f.read())
os.replace(tmp, out)
PY
echo "wrote $out: setup.sh, run_autograder (lesson $lesson${identity:+, identity $identity}), source/ (lab)${key:+, course.key}${configs:+, course-configs/}"
[ -n "$key" ] || echo "note: no --key: the autograder refuses to grade for credit unless LAB_COURSE_KEY is set in the assignment or LAB_PRACTICE=1"
