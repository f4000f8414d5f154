#!/usr/bin/env python3
"""Meson install script: installs the grading specs students may have.

DESIGN.md: grading specs with hidden questions are not installed for students (the hidden
questions and their tolerances would give the answers away); the grading operator installs them
on the grader (Gradescope's setup.sh copies the course's own configs). A spec is hidden when any
question says `hidden: true`.
"""
import os
import re
import shutil
import sys

src, rel_dest = sys.argv[1], sys.argv[2]
dest = os.path.join(os.environ.get("MESON_INSTALL_DESTDIR_PREFIX", ""), rel_dest)
os.makedirs(dest, exist_ok=True)
hidden = re.compile(r"^\s*hidden:\s*(true|yes|on)\s*$", re.MULTILINE | re.IGNORECASE)
for name in sorted(os.listdir(src)):
    if not name.endswith((".yaml", ".yml")):
        continue
    path = os.path.join(src, name)
    with open(path, encoding="utf-8") as f:
        if hidden.search(f.read()):
            print(f"not installing {name}: it has hidden questions (install it on the grader only)")
            continue
    shutil.copy2(path, os.path.join(dest, name))
