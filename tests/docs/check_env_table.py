#!/usr/bin/env python3
"""Checks docs/dist.md's table of environment variables ("## Environment variables")
against the source: every DDL_* variable the C++/CUDA source outside tests/ names must be
in the table, and every DDL_* variable in the table must be named by that source.

"Names" means a string literal that is exactly the variable ("DDL_TIMEOUT"): that is how
every getenv, env helper and launcher environment of the tree spells one, and a name in a
comment does not count. Other variables (RANK, SLURM_*, ...) are in the table too but
not checked: the launchers' lists are long and their names are not ddl's to choose.

Before the real check it checks itself on a small made-up tree: a variable read but not
listed, and one listed but not read, must both be reported.

usage: check_env_table.py [SOURCE_ROOT]
"""
import os
import re
import sys
import tempfile

SOURCE_EXT = ('.cpp', '.h', '.cc', '.hpp', '.cu', '.cuh')
SKIP_DIRS = {'tests', '.git', 'subprojects', 'third_party', 'node_modules'}
LITERAL = re.compile(r'"(DDL_[A-Z0-9_]+)"')
NAME = re.compile(r'`([A-Z][A-Z0-9_]*)`')
SECTION = '## Environment variables'


def source_names(root):
    """{name: [files]} of the DDL_* literals under root (build folders and tests/ left out)."""
    found = {}
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel == '.':
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith('build')]
        for f in files:
            if not f.endswith(SOURCE_EXT):
                continue
            path = os.path.join(d, f)
            with open(path, encoding='utf-8', errors='replace') as fh:
                text = fh.read()
            for m in LITERAL.finditer(text):
                found.setdefault(m.group(1), []).append(os.path.relpath(path, root))
    return found


def table_names(doc_path):
    """The variables in the first column of the section's table; raises if there is none."""
    with open(doc_path, encoding='utf-8') as fh:
        lines = fh.read().split('\n')
    try:
        start = lines.index(SECTION)
    except ValueError:
        raise SystemExit('FAIL %s has no "%s" section' % (doc_path, SECTION))
    names, in_table = set(), False
    for line in lines[start + 1:]:
        if line.startswith('## '):
            break
        if line.startswith('|'):
            in_table = True
            first = line.split('|')[1]
            names.update(NAME.findall(first))
        elif in_table:
            break  # one table: the first one in the section
    if not names:
        raise SystemExit('FAIL %s: the "%s" section has no table of variables' % (doc_path, SECTION))
    return names


def problems(root, doc_path):
    read = source_names(root)
    listed = table_names(doc_path)
    out = []
    for name in sorted(set(read) - listed):
        out.append('%s is read by %s but not in the table of %s' % (name, ', '.join(sorted(set(read[name]))[:3]),
                                                                  os.path.relpath(doc_path, root)))
    for name in sorted(n for n in listed - set(read) if n.startswith('DDL_')):
        out.append('%s is in the table of %s but no source outside tests/ names it'
                   % (name, os.path.relpath(doc_path, root)))
    return out


def self_check():
    """The checker must see a missing row and a stale one, and pass a matching table."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, 'dist'))
        os.makedirs(os.path.join(root, 'docs'))
        os.makedirs(os.path.join(root, 'tests'))
        with open(os.path.join(root, 'dist', 'a.cpp'), 'w') as f:
            f.write('// DDL_IN_A_COMMENT\nconst char* v = std::getenv("DDL_READ");\nauto w = get("DDL_ALSO");\n')
        with open(os.path.join(root, 'tests', 't.cpp'), 'w') as f:
            f.write('setenv("DDL_TEST_ONLY", "1", 1);\n')
        doc = os.path.join(root, 'docs', 'dist.md')

        def table(rows):
            with open(doc, 'w') as f:
                f.write('# x\n\n%s\n\n| variable | meaning |\n|---|---|\n' % SECTION)
                f.write(''.join('| %s | m |\n' % r for r in rows) + '\n| `DDL_NOT_A_ROW` | later table |\n')

        table(['`DDL_READ`, `DDL_ALSO`', '`RANK`'])
        ok = problems(root, doc) == []
        table(['`DDL_READ`', '`DDL_STALE`'])
        got = problems(root, doc)
        ok = ok and len(got) == 2 and got[0].startswith('DDL_ALSO is read by dist/a.cpp') and \
            got[1].startswith('DDL_STALE is in the table')
    if not ok:
        raise SystemExit('FAIL the checker does not tell a missing or a stale row')
    print('ok   the checker finds a missing row and a stale one in a made-up tree')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
    root = os.path.abspath(root)
    self_check()
    doc = os.path.join(root, 'docs', 'dist.md')
    found = problems(root, doc)
    for p in found:
        print('FAIL ' + p)
    if found:
        print('Add the variable to the table in docs/dist.md ("%s"): meaning, default, who sets it.' % SECTION)
        return 1
    print('ok   docs/dist.md lists every DDL_* variable the source reads (%d), and no other'
          % len(source_names(root)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
