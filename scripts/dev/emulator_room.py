#!/usr/bin/env python3
"""Moves the network emulator out of the launcher into a room of its own: apps/ddlrun/hosts/
becomes the top-level cluster/, a library (ddl_cluster, cluster_dep) that ddlrun links and
any other program may; ddlrun's job launching stays in apps/ddlrun/.

What it does, each step idempotent (run it again on a tree others have added to):
  - git mv every file of apps/ddlrun/hosts/ (also ones added later: the rule is the whole
    folder) to cluster/, and apps/common/link_rate.h (the tc rates the emulator parses) too;
  - rewrites includes ("apps/ddlrun/hosts/x.h" -> <ddl/cluster/x.h>), the namespace
    (ddl::launcher::hosts and hosts:: -> ddl::cluster and cluster::; ddl::apps::link_rate_bits
    -> ddl::cluster::link_rate_bits) and every path in docs, scripts, tests and comments;
  - meson: drops the moved sources from the programs that compiled them and gives those
    cluster_dep; writes cluster/meson.build's source list (every cluster/*.cpp); adds cluster
    to the root meson.build's layers (its include view sees trace/ only) and subdir('cluster');
  - clang-format on the C++ files it changed.
It does not edit prose beyond paths (docs/cluster.md, docs/README.md's folder table, the
layering test's table): those are hand edits, committed apart.

usage: scripts/dev/emulator_room.py   (from anywhere; prints what it did)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moves  # noqa: E402

OLD_DIR = 'apps/ddlrun/hosts/'
NEW_DIR = 'cluster/'
# Files moved besides the folder: old path -> new path.
EXTRA = {'apps/common/link_rate.h': 'cluster/link_rate.h'}

CLUSTER_MESON_HEAD = """\
# libddl_cluster: N emulated hosts on this machine (docs/cluster.md): network namespaces, veth
# pairs and a bridge, tc link shaping, cgroups, holder processes, the rootless setup, power
# off and on, the job records of `ddlrun --cleanup`. A library of its own, not part of libddl
# (it needs root and touches the machine): ddlrun links it through cluster_dep, as a test,
# the study or a lab program may. It sees std and trace/ only, and never starts workers.
"""
CLUSTER_MESON_TAIL = """\
ddl_cluster = static_library('ddl_cluster', cluster_sources, include_directories: layer_inc['cluster'],
  dependencies: [threads_dep])
# trace/'s symbols come from libddl, as for every program (one copy of its state).
cluster_dep = declare_dependency(link_with: ddl_cluster, dependencies: [ddl_dep, threads_dep])
"""


def do_moves():
    moved = []
    for rel in moves.files():
        if rel.startswith(OLD_DIR):
            moves.move(rel, NEW_DIR + rel[len(OLD_DIR):], moved)
    for src, dst in EXTRA.items():
        moves.move(src, dst, moved)
    return moved


def text_rules(names):
    """names: the base names now in cluster/ (cluster.h, spec.cpp, ...)."""
    cpp = lambda rel: rel.endswith(moves.CPP_EXT)  # noqa: E731
    known = '|'.join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return [
        # Includes first, then names, then any remaining path (docs, comments, scripts).
        (r'#include\s+"apps/ddlrun/hosts/([\w.]+)"', r'#include <ddl/cluster/\1>', cpp),
        (r'#include\s+"apps/common/link_rate\.h"', r'#include <ddl/cluster/link_rate.h>', cpp),
        # A local alias of the old namespace goes; its uses are spelled out in full, which
        # resolves from any scope (a parameter or member named cluster cannot hide it).
        (r'\n[ \t]*namespace hosts = ddl::launcher::hosts;[^\n]*', '', cpp),
        # A forward declaration inside ddl::launcher moves out in front of it.
        (r'(namespace ddl::launcher \{\n\n?)namespace hosts \{\n((?:(?:class|struct) \w+;\n)+)\}[^\n]*\n\n?',
         r'namespace ddl::cluster {\n\2}  // namespace ddl::cluster\n\n\1', cpp),
        (r'\bddl::launcher::hosts\b', 'ddl::cluster', cpp),
        (r'(?<![\w:])(launcher::)?hosts::', 'ddl::cluster::', cpp),
        (r'\b(ddl::)?apps::link_rate_bits\b', r'\1cluster::link_rate_bits', cpp),
        (r'(?<![\w:])link_rate_bits\(', 'ddl::cluster::link_rate_bits(',
         lambda rel: cpp(rel) and rel != 'cluster/link_rate.h'),
        (r'namespace ddl::apps \{', 'namespace ddl::cluster {', lambda rel: rel == 'cluster/link_rate.h'),
        (r'\}  // namespace ddl::apps\b', '}  // namespace ddl::cluster', lambda rel: rel == 'cluster/link_rate.h'),
        (r'apps/ddlrun/hosts/', NEW_DIR, None),
        (r'apps/common/link_rate\.h', 'cluster/link_rate.h', None),
        # "hosts/cluster.h" in ddlrun's comments and the chapter: the file's new home.
        (r'(?<![\w/.-])hosts/(' + known + r')\b', r'cluster/\1', None),
    ]


def fix_program_meson(rel, names):
    """Drops 'ddlrun/hosts/x.cpp' (or any '.../hosts/x.cpp' of a moved file) from rel's
    programs; each program that lost one gets cluster_dep."""
    text = moves.read(rel)
    orig = text
    for item in re.findall(r"'((?:[\w./]*/)?ddlrun/hosts/[\w]+\.cpp)'", text):
        start = text.find("'" + item + "'")
        # The executable() holding it: the last 'executable(' before it.
        call = text.rfind('executable(', 0, start)
        text, _ = moves.drop_list_item(text, item)
        if call >= 0:
            end = moves.statement(text, call)
            body = text[call:end]
            if 'cluster_dep' not in body:
                if re.search(r'dependencies:\s*\[', body):
                    body = re.sub(r'dependencies:\s*\[', 'dependencies: [cluster_dep, ', body, count=1)
                else:
                    body = re.sub(r'dependencies:\s*(\w+)', r'dependencies: [\1, cluster_dep]', body, count=1)
                text = text[:call] + body + text[end:]
    if text != orig:
        moves.write(rel, re.sub(r'[ \t]+\n', '\n', text))
        return True
    return False


def cluster_meson():
    srcs = sorted(f[len(NEW_DIR):] for f in moves.files()
                  if f.startswith(NEW_DIR) and f.endswith('.cpp') and f.count('/') == 1)
    block = 'cluster_sources = files(\n' + ''.join(f"  '{s}',\n" for s in srcs) + ')\n'
    rel = NEW_DIR + 'meson.build'
    path = os.path.join(moves.ROOT, rel)
    if os.path.exists(path):
        text = moves.read(rel)
        m = re.search(r'cluster_sources = files\(.*?\n\)\n', text, re.S)
        text = text[:m.start()] + block + text[m.end():] if m else text
    else:
        text = CLUSTER_MESON_HEAD + block + CLUSTER_MESON_TAIL
    return moves.write(rel, text)


def root_meson():
    text = moves.read('meson.build')
    orig = text
    m = re.search(r"^layers = \[([^\]]*)\]", text, re.M)
    if m and "'cluster'" not in m.group(1):
        text = text[:m.end(1)] + ", 'cluster'" + text[m.end(1):]
    m = re.search(r'^layers_below = \{\n(.*?)^\}', text, re.M | re.S)
    if m and "'cluster':" not in m.group(1):
        line = "  'cluster': ['trace', 'tensor/error.h'],  # emulated hosts (cluster/): std and trace only\n"
        text = text[:m.end(1)] + line + text[m.end(1):]
    if "subdir('cluster')" not in text:
        line = "subdir('cluster')  # emulated hosts (docs/cluster.md): a library of its own, not in libddl\n"
        i = text.index("subdir('tests')\n")
        text = text[:i] + line + text[i:]
    if text != orig:
        moves.write('meson.build', text)
        return True
    return False


def main():
    moved = do_moves()
    names = {os.path.basename(f) for f in moves.files() if f.startswith(NEW_DIR) and f.count('/') == 1}
    names.discard('meson.build')
    changed = moves.rewrite(text_rules(names))
    meson_changed = [rel for rel in moves.files() if os.path.basename(rel) == 'meson.build'
                     and not rel.startswith(moves.SKIP_PREFIXES) and fix_program_meson(rel, names)]
    if cluster_meson():
        meson_changed.append('cluster/meson.build')
    if root_meson():
        meson_changed.append('meson.build')
    moves.clang_format(changed)
    for src, dst in moved:
        print(f'moved {src} -> {dst}')
    for rel in sorted(set(changed + meson_changed)):
        print(f'rewrote {rel}')
    if not moved and not changed and not meson_changed:
        print('emulator_room: nothing to do (already moved)')


if __name__ == '__main__':
    main()
