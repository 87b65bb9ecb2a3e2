"""What the tree-moving scripts of scripts/dev/ share: listing the tree's files, moving one
(git mv when it is tracked), and rewriting text in every file from a list of rules.

Every step is idempotent: a file already at its place is left alone, a rule whose old text
is gone changes nothing, so a script can be run again on a tree others have since added to
(their new files are carried along by the scripts' classification rules).
Not a program: emulator_room.py and tests_mirror.py import it.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CPP_EXT = ('.h', '.cpp', '.cu', '.cuh')
TEXT_EXT = CPP_EXT + ('.md', '.sh', '.py', '.txt', '.build', '.json', '.in', '.cmake', '.sbatch')
# Never rewritten: the scripts hold the old paths in their tables; vendored code.
SKIP_PREFIXES = ('scripts/dev/', 'subprojects/', '.git')


def git(*args, check=True):
    return subprocess.run(['git', '-C', ROOT] + list(args), check=check, capture_output=True, text=True).stdout


def files():
    """Tracked files and untracked ones git does not ignore, relative to the root."""
    out = git('ls-files', '-z') + git('ls-files', '-z', '--others', '--exclude-standard')
    return sorted({f for f in out.split('\0') if f and os.path.isfile(os.path.join(ROOT, f))})


def is_tracked(rel):
    return bool(git('ls-files', '--', rel).strip())


def move(src, dst, moved):
    """src -> dst (both relative). Already moved: nothing. Both present: an error unless equal."""
    s, d = os.path.join(ROOT, src), os.path.join(ROOT, dst)
    if not os.path.exists(s):
        return
    if os.path.exists(d):
        if open(s, 'rb').read() == open(d, 'rb').read():
            git('rm', '-q', '--', src, check=False) if is_tracked(src) else os.remove(s)
            moved.append((src, dst))
            return
        sys.exit(f'move: both {src} and {dst} exist and differ; merge them by hand, then run again')
    os.makedirs(os.path.dirname(d), exist_ok=True)
    if is_tracked(src):
        git('mv', '--', src, dst)
    else:
        shutil.move(s, d)
    moved.append((src, dst))
    # An emptied folder goes too (git keeps none, the work tree would).
    parent = os.path.dirname(s)
    while parent != ROOT and os.path.isdir(parent) and not os.listdir(parent):
        os.rmdir(parent)
        parent = os.path.dirname(parent)


def rewrite(rules, only=None, skip=()):
    """Applies rules [(regex, replacement, predicate(rel) or None)] to every text file.

    only: a predicate on the relative path choosing the files; skip: paths left alone.
    Returns the files changed.
    """
    changed = []
    for rel in files():
        if rel.startswith(SKIP_PREFIXES) or rel in skip or not rel.endswith(TEXT_EXT) and \
                os.path.basename(rel) != 'meson.build':
            continue
        if only and not only(rel):
            continue
        path = os.path.join(ROOT, rel)
        try:
            text = open(path, encoding='utf-8').read()
        except UnicodeDecodeError:
            continue
        new = text
        for pattern, repl, pred in rules:
            if pred is None or pred(rel):
                new = re.sub(pattern, repl, new)
        if new != text:
            with open(path, 'w', encoding='utf-8') as f:
                f.write(new)
            changed.append(rel)
    return changed


def read(rel):
    with open(os.path.join(ROOT, rel), encoding='utf-8') as f:
        return f.read()


def write(rel, text):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    old = open(path, encoding='utf-8').read() if os.path.exists(path) else None
    if old != text:
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        return True
    return False


def statement(text, start):
    """The end (exclusive) of the meson call whose '(' is the first after start."""
    i = text.index('(', start)
    depth = 0
    quote = False
    while i < len(text):
        c = text[i]
        if c == "'" and text[i - 1] != '\\':
            quote = not quote
        elif not quote and c == '(':
            depth += 1
        elif not quote and c == ')':
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError('unbalanced meson call')


def drop_list_item(text, item):
    """Removes the quoted meson list item 'item' (and its comma); a line it leaves empty goes."""
    q = re.escape("'" + item + "'")
    for pattern in (q + r',[ \t]*', r',[ \t]*\n?[ \t]*' + q, q):
        m = re.search(pattern, text)
        if m:
            line_start = text.rfind('\n', 0, m.start()) + 1
            line_end = text.find('\n', m.end())
            line_end = len(text) if line_end < 0 else line_end
            text = text[:m.start()] + text[m.end():]
            line_end -= m.end() - m.start()
            if text[line_start:line_end].strip() == '':
                text = text[:line_start] + text[line_end + 1:]
            return text, True
    return text, False


def clang_format(changed):
    cpp = [os.path.join(ROOT, f) for f in changed if f.endswith(CPP_EXT) and os.path.exists(os.path.join(ROOT, f))]
    if cpp and shutil.which('clang-format'):
        subprocess.run(['clang-format', '-i'] + cpp, check=True)
    elif cpp:
        print('clang-format not found: run it on the changed C++ files', file=sys.stderr)
