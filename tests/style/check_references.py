#!/usr/bin/env python3
"""Fails when a tracked file points at something a reader of the tree cannot follow.

Comments, test headers, scripts and docs cite public sources (papers, course pages, PyTorch
docs, man pages) or a file or chapter of this tree; never an issue tracker's numbers, a work
session, a review, a date of when something changed, or notes kept outside the tree (such as
a STYLE.md or FACTS.md beside the checkout). The deny-list below is small on purpose: each
pattern is one that has appeared before. subprojects/ (third-party wraps) is not checked.

Usage: check_references.py SOURCE_ROOT. Exits 0 when clean, 1 with file:line: text otherwise.
"""
import os
import re
import subprocess
import sys

DENY = [
    (r'\bissues? ?[#-]?\d+', 'an issue number'),
    (r'\b(?:this|that|the (?:nn|distributed|foundation|gpu|cuda|tensor|autograd|data|optim|dist)) issue\b',
     'an issue by name'),
    (r"\bthe issue's\b", 'an issue by name'),
    (r'\bseed 0\d\d\b', 'an internal seed document'),
    (r'\bdeliverable\b', 'an internal deliverable'),
    (r'\b(?:this|last|previous|same|next|earlier|a later) session\b', 'a work session'),
    (r"\bsessions? \d+(?:'s)?", 'a work session'),
    (r'\b(?:this|last) week\b|\byesterday\b|\bearlier today\b', 'a date relative to the writing'),
    (r'\bthe reviewer\b|\breview findings\b|\blater reviews\b', 'a review a reader cannot see'),
    (r'\b(?:STYLE|FACTS)\.md\b', 'notes outside the tree'),
    (r'/work/|\.library/|\bcommon\.md\b', 'a path outside the tree'),
    (r'\bthe (?:brief|coordinator)\b', 'internal process'),
]
PATTERNS = [(re.compile(p, re.IGNORECASE), why) for p, why in DENY]

# (file, line text) pairs allowed to keep a pointer until they are reworded; each entry must
# still match (a stale one fails too, so the list only shrinks). Empty: keep it so.
KNOWN = set()

SELF = 'tests/style/check_references.py'


def tracked_files(root):
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z'], check=True, capture_output=True).stdout
        return [f for f in out.decode().split('\0') if f]
    except (OSError, subprocess.CalledProcessError):  # a release tarball: walk it
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith(('.', 'build'))]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    bad, used = [], set()
    for rel in sorted(tracked_files(root)):
        if rel.startswith('subprojects/') or rel == SELF:
            continue
        try:
            with open(os.path.join(root, rel), encoding='utf-8') as f:
                lines = f.read().splitlines()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary data (golden tensors, images) or a file deleted in the work tree
        for n, line in enumerate(lines, 1):
            for rx, why in PATTERNS:
                if rx.search(line):
                    known = next((k for k in KNOWN if k[0] == rel and k[1] in line), None)
                    if known:
                        used.add(known)
                    else:
                        bad.append(f'{rel}:{n}: {why}: {line.strip()[:160]}')
                    break
    for k in sorted(KNOWN - used):
        bad.append(f'{k[0]}: the KNOWN entry "{k[1]}" no longer matches: remove it from {SELF}')
    for b in bad:
        print(b)
    if bad:
        print(f'{len(bad)} line(s) point at something outside the tree: cite the public source '
              '(paper, course, PyTorch docs, man page) or a chapter of docs/ instead')
        return 1
    print('check_references: no internal pointers')
    return 0


if __name__ == '__main__':
    sys.exit(main())
