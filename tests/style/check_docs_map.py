#!/usr/bin/env python3
"""Keeps docs/README.md, the map of the docs, true to the tree.

Fails when a chapter (a tracked docs/**/*.md) is not linked from docs/README.md, when a source
folder (each top-level folder, and each folder one level down in the library's layers and
apps/) is not named there as `folder/`, or when the map names a folder that does not exist.
A new chapter or a new room (say dist/<name>/) therefore comes with its line in the map.

Usage: check_docs_map.py SOURCE_ROOT. Exits 0 when the map matches, 1 listing what differs.
"""
import os
import re
import subprocess
import sys

# Top-level folders whose subfolders are rooms a reader looks for in the map.
ROOMS_IN = ['apps', 'autograd', 'data', 'dist', 'nn', 'optim', 'report', 'tensor', 'trace', 'scripts']
NOT_SOURCE = {'subprojects', 'docs'}


def tracked(root):
    out = subprocess.run(['git', '-C', root, 'ls-files', '-z'], check=True, capture_output=True).stdout
    return [f for f in out.decode().split('\0') if f]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    try:
        files = tracked(root)
    except (OSError, subprocess.CalledProcessError):
        print('skipped: not a git checkout (the map is checked against the tracked files)')
        return 77
    with open(os.path.join(root, 'docs/README.md'), encoding='utf-8') as f:
        text = f.read()
    bad = []
    links = set(re.findall(r'\]\(([^)#]+)\)', text))
    for f in files:
        if f.startswith('docs/') and f.endswith('.md') and f != 'docs/README.md' and f[len('docs/'):] not in links:
            bad.append(f'{f}: a chapter docs/README.md does not link')
    folders = set()
    for f in files:
        parts = f.split('/')
        if len(parts) > 1 and parts[0] not in NOT_SOURCE and not parts[0].startswith('.'):
            folders.add(parts[0] + '/')
            if parts[0] in ROOMS_IN and len(parts) > 2:
                folders.add('/'.join(parts[:2]) + '/')
    named = set(re.findall(r'`([A-Za-z0-9_./-]+/)`', text))
    for d in sorted(folders - named):
        bad.append(f'{d}: a source folder docs/README.md does not name (as `{d}`)')
    existing = {'/'.join(f.split('/')[:i]) + '/' for f in files for i in range(1, f.count('/') + 1)}
    for d in sorted(named - existing):
        bad.append(f'{d}: named in docs/README.md but not in the tree')
    for b in bad:
        print(b)
    if bad:
        print(f'{len(bad)} difference(s) between docs/README.md and the tree')
        return 1
    print(f'check_docs_map: {len(links)} chapters linked, {len(folders)} folders named')
    return 0


if __name__ == '__main__':
    sys.exit(main())
