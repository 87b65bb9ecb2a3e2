#!/usr/bin/env python3
"""Keeps tests/README.md's table of suites true to the build.

Fails when a suite of this build (meson introspect --tests) has no row `| \\`name\\` |` in
tests/README.md's table, or when a row names a suite that no meson.build of the tree gives
any test (`suite: 'name'`), such as a suite that was renamed. A suite only some builds
define (fuzz, with -Dfuzz=true) keeps its row: it is still written in a meson.build.

Usage: check_suites.py BUILD_DIR SOURCE_ROOT. Exits 0 when they match, 1 listing what differs.
"""
import json
import os
import re
import subprocess
import sys


def build_suites(build):
    out = subprocess.run(['meson', 'introspect', build, '--tests'], check=True, capture_output=True, text=True)
    return {s.split(':', 1)[-1] for t in json.loads(out.stdout) for s in t['suite']}


def written_suites(root):
    found = set()
    for r, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith('.') and d not in ('subprojects', 'build') and
                   not os.path.exists(os.path.join(r, d, 'meson-private'))]
        if 'meson.build' in files:
            with open(os.path.join(r, 'meson.build'), encoding='utf-8') as f:
                found |= set(re.findall(r"(?:\bsuite:|'suite':)\s*'([\w-]+)'", f.read()))
    return found


def main():
    build, root = sys.argv[1], sys.argv[2]
    with open(os.path.join(root, 'tests', 'README.md'), encoding='utf-8') as f:
        rows = set(re.findall(r'^\| `([\w-]+)` \|', f.read(), re.M))
    bad = [f'suite {s}: defined by the build, no row in tests/README.md' for s in sorted(build_suites(build) - rows)]
    bad += [f'suite {s}: a row in tests/README.md, but no meson.build defines it'
            for s in sorted(rows - written_suites(root))]
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f'check_suites: {len(rows)} suites in tests/README.md, all defined')
    return 0


if __name__ == '__main__':
    sys.exit(main())
