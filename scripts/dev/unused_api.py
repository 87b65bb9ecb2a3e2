#!/usr/bin/env python3
"""Lists functions declared in the library layers' headers whose name occurs nowhere else
in the tree's C++ (tests, apps, bench and labs included): a name seen only in its
declaration and definition (or, for one defined in its header, only there) is a candidate
for deletion. It reads names, not meaning: an unused function whose name another symbol
shares is missed, and a candidate may still be public API worth keeping (docs/libtorch.md's
names, documented calls: the in_docs column says whether a chapter mentions it).

usage: scripts/dev/unused_api.py   (from anywhere; prints one candidate a line)
"""
import collections
import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
LAYERS = ('trace/', 'tensor/', 'autograd/', 'nn/', 'optim/', 'data/', 'dist/', 'report/', 'cluster/')
KEYWORDS = set('if for while switch return sizeof static_assert decltype alignof noexcept operator defined '
               'template typename explicit'.split())
SIG = r'[\w:<>,\*&\s]+?[\s\*&](\w+)\s*\((?:[^;{}()]|\([^()]*\))*\)\s*(?:const)?\s*(?:noexcept)?\s*(?:override)?\s*'
HEAD = r'(?:^|[;{}])\s*(?:template\s*<[^;{]*?>\s*)?(?:(?:inline|static|constexpr|virtual|friend|extern)\s+)*'
DECLARED = re.compile(HEAD + SIG + r'(?:=\s*\w+\s*)?;', re.M)  # defined elsewhere: 2 sightings
DEFINED = re.compile(HEAD + SIG + r'\{', re.M)  # defined in the header: 1 sighting


def strip_comments(s):
    return re.sub(r'/\*.*?\*/', '', re.sub(r'//[^\n]*', '', s), flags=re.S)


def main():
    files = subprocess.run(['git', '-C', ROOT, 'ls-files'], capture_output=True, text=True, check=True).stdout.split()
    code = {f: strip_comments(open(os.path.join(ROOT, f), encoding='utf-8', errors='replace').read())
            for f in files if f.endswith(('.h', '.cpp', '.cu', '.cuh')) and not f.startswith('subprojects/')}
    docs = '\n'.join(open(os.path.join(ROOT, f), encoding='utf-8', errors='replace').read()
                     for f in files if f.endswith('.md'))
    seen = collections.Counter(re.findall(r'\b\w+\b', '\n'.join(code.values())))
    found = {}
    for f, text in code.items():
        if not f.startswith(LAYERS) or not f.endswith(('.h', '.cuh')):
            continue
        for pattern, alone in ((DECLARED, 2), (DEFINED, 1)):
            for m in pattern.finditer(text):
                name = m.group(1)
                if name in KEYWORDS or name.isupper() or name.startswith('_') or len(name) < 3:
                    continue
                if seen[name] <= alone:
                    found.setdefault(name, set()).add(f)
    for name in sorted(found):
        in_docs = 'yes' if re.search(r'\b' + name + r'\b', docs) else 'no'
        print(f'{name:32s} in_docs={in_docs:3s} {", ".join(sorted(found[name]))}')


if __name__ == '__main__':
    main()
