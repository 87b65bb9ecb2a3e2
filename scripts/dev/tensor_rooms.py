#!/usr/bin/env python3
"""Moves tensor/'s top-level files into rooms and rewrites every reference to them.

tensor/ had four kinds of file side by side: the core types, the op frontends, the headers
the CPU and CUDA kernels share, and the error type every layer throws. This script moves
them (git mv) by the table ROOMS below:

  tensor/core/     Tensor, Storage, Shape, DType, Device, allocators, factories, random, threads
  tensor/ops/      op frontends: argument checks, output allocation, dispatch to a kernel slot
  tensor/kernels/  kernel slots and functor headers shared by tensor/cpu/ and tensor/cuda/
  base/            ddl::Error and DDL_CHECK, layer 0, below trace/ (tensor/error.* moves there)

tensor/ops.h (the umbrella), tensor/cpu/, tensor/cuda/ and tensor/meson.build stay.

Then it rewrites every mention of an old path in every file git knows or would add (C++,
CUDA, meson.build, docs, tests, bench, apps, labs, packaging), so a file added later, on
another branch, is carried along when the script runs again:
  - `tensor/NAME` wherever it stands alone or after `ddl/` (includes, docs, scripts);
  - in a meson.build, a quoted string that names an old file relative to that meson.build's
    folder ('reduce.cpp' in tensor/meson.build becomes 'ops/reduce.cpp').
C++ files it changed are re-formatted with clang-format (their include blocks re-sort).

It is idempotent: a moved file is skipped, a rewritten path no longer matches. A top-level
file of tensor/ that the table does not name stops it before anything moves (add it to
ROOMS, or name a room for all of them with --unmapped-to). Run from anywhere inside the
checkout:

    python3 scripts/dev/tensor_rooms.py            # move and rewrite
    python3 scripts/dev/tensor_rooms.py --check    # exit 1 if anything is left to do
    python3 scripts/dev/tensor_rooms.py --unmapped-to tensor/ops   # new top-level files too
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# room -> names of files that were at tensor/'s top level.
ROOMS = {
    'tensor/core': [
        'allocator.h', 'caching_allocator.cpp', 'caching_allocator.h', 'checked_shape.h', 'copy.cpp', 'copy.h',
        'device.cpp', 'device.h', 'device_timer.cpp', 'device_timer.h', 'devices.cpp', 'devices.h', 'dispatch.h',
        'dtype.cpp', 'dtype.h', 'factory.cpp', 'factory.h', 'factory_value.h', 'half.h', 'linspace.cpp',
        'literal.cpp', 'literal.h', 'options_arg.h', 'parallel.cpp', 'parallel.h', 'print.cpp', 'random.cpp',
        'random.h', 'shape.cpp', 'shape.h', 'storage.cpp', 'storage.h', 'tensor.cpp', 'tensor.h',
        'tensor_methods.cpp', 'tensor_options.h',
    ],
    'tensor/ops': [
        'adaptive_pool.cpp', 'adaptive_pool.h', 'conv.cpp', 'conv.h', 'conv_transpose.cpp', 'conv_transpose.h',
        'einsum.cpp', 'einsum.h', 'einsum_impl.h', 'elementwise.cpp', 'elementwise.h', 'elementwise_impl.h',
        'extreme.h', 'gather_scatter.cpp', 'indexing.cpp', 'indexing.h', 'join.cpp', 'join.h', 'linalg.cpp',
        'linalg.h', 'linalg_decomp.cpp', 'linalg_decomp.h', 'math_ops.cpp', 'math_ops.h', 'multi_tensor_step.h',
        'norm.cpp', 'norm.h', 'norm_relu.h',
        'pool.cpp', 'pool.h', 'reduce.cpp', 'reduce.h', 'reduce_more.cpp', 'reduce_more.h', 'roll_tile.cpp',
        'roll_tile.h', 'scan.cpp', 'scan.h', 'sgd_update.cpp', 'sgd_update.h', 'shape_ops.cpp', 'shape_ops.h',
        'softmax.cpp', 'softmax.h', 'sort.cpp', 'sort.h', 'upsample.cpp', 'upsample.h',
    ],
    'tensor/kernels': [
        'elementwise_kernel.h', 'functors.h', 'gemm_kernel.h', 'host_device.h', 'random_functors.h',
        'reduce_functors.h', 'reduce_kernel.h', 'softmax_functors.h', 'upsample_coords.h',
    ],
    'base': ['error.cpp', 'error.h'],
}
# What stays at tensor/'s top level.
STAYS = {'ops.h', 'meson.build', 'README.md', 'cpu', 'cuda', 'core', 'ops', 'kernels'}

MAPPING = {f'tensor/{name}': f'{room}/{name}' for room, names in ROOMS.items() for name in names}
SELF = 'scripts/dev/tensor_rooms.py'
CPP_SUFFIXES = ('.h', '.hpp', '.cpp', '.cc', '.cu', '.cuh', '.inc')
PATH_RE = None


def compile_path_re():
    """`tensor/NAME` standing alone or after ddl/ (never tests/tensor/NAME or cpu/tensor/NAME);
    longest names first so reduce_more.h is not read as reduce."""
    global PATH_RE
    names = sorted((old[len('tensor/'):] for old in MAPPING), key=len, reverse=True)
    PATH_RE = re.compile(r'(?:(?<![\w./-])|(?<=ddl/))tensor/(' + '|'.join(re.escape(n) for n in names) + r')(?![\w])')


MESON_STRING_RE = re.compile(r"'([^'\n]+)'")


def git(root, *args):
    return subprocess.run(['git', '-C', root] + list(args), check=True, capture_output=True, text=True).stdout


def unmapped(root):
    top = os.path.join(root, 'tensor')
    return sorted(n for n in os.listdir(top) if n not in STAYS and f'tensor/{n}' not in MAPPING)


def moves(root):
    """(old, new) pairs still to move; stops on a pair where both exist."""
    todo = []
    for old, new in sorted(MAPPING.items()):
        o, n = os.path.join(root, old), os.path.join(root, new)
        if os.path.exists(o) and os.path.exists(n):
            sys.exit(f'tensor_rooms: both {old} and {new} exist; merge them by hand first')
        if os.path.exists(o):
            todo.append((old, new))
    return todo


def rewrite_text(rel, text):
    out = PATH_RE.sub(lambda m: MAPPING['tensor/' + m.group(1)], text)
    if os.path.basename(rel) == 'meson.build':
        here = os.path.dirname(rel)

        def meson_string(m):
            s = m.group(1)
            if s.startswith('/') or '@' in s:
                return m.group(0)
            target = os.path.normpath(os.path.join(here, s))
            if target in MAPPING:
                return "'" + os.path.relpath(MAPPING[target], here or '.') + "'"
            return m.group(0)

        out = MESON_STRING_RE.sub(meson_string, out)
    return out


def candidate_files(root):
    listed = git(root, 'ls-files', '-z', '--cached', '--others', '--exclude-standard').split('\0')
    for rel in sorted(set(f for f in listed if f)):
        if rel == SELF or rel.startswith('subprojects/'):
            continue
        path = os.path.join(root, rel)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        yield rel, path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--check', action='store_true', help='change nothing; exit 1 if a move or rewrite is left')
    ap.add_argument('--unmapped-to', metavar='ROOM', choices=sorted(r for r in ROOMS if r.startswith('tensor/')),
                    help='move top-level files of tensor/ that ROOMS does not name into ROOM')
    args = ap.parse_args()
    root = git(os.path.dirname(os.path.abspath(__file__)), 'rev-parse', '--show-toplevel').strip()

    extra = unmapped(root)
    if extra and args.unmapped_to:
        dirs = [n for n in extra if os.path.isdir(os.path.join(root, 'tensor', n))]
        if dirs:
            sys.exit('tensor_rooms: tensor/ has folders the table does not know: ' + ', '.join(dirs))
        for name in extra:
            print(f'tensor_rooms: tensor/{name} is not in ROOMS: into {args.unmapped_to} (add it to the table)')
            MAPPING[f'tensor/{name}'] = f'{args.unmapped_to}/{name}'
        extra = []
    compile_path_re()
    if extra:
        sys.exit('tensor_rooms: tensor/ has top-level files the table does not place: ' + ', '.join(extra) +
                 '\nadd each to a room in ROOMS (scripts/dev/tensor_rooms.py) and run again')

    todo = moves(root)
    for old, new in todo:
        print(f'move {old} -> {new}')
        if not args.check:
            os.makedirs(os.path.dirname(os.path.join(root, new)), exist_ok=True)
            tracked = git(root, 'ls-files', '--', old).strip()
            if tracked:
                git(root, 'mv', old, new)
            else:
                shutil.move(os.path.join(root, old), os.path.join(root, new))

    changed = []
    for rel, path in candidate_files(root):
        try:
            with open(path, encoding='utf-8') as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue  # binary or unreadable: no includes to rewrite
        new_text = rewrite_text(rel, text)
        if new_text != text:
            changed.append(rel)
            if not args.check:
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(new_text)
    for rel in changed:
        print(f'rewrite {rel}')

    cpp = [rel for rel in changed if rel.endswith(CPP_SUFFIXES) and not rel.endswith('.inc')]
    if cpp and not args.check:
        if shutil.which('clang-format'):
            for i in range(0, len(cpp), 100):
                subprocess.run(['clang-format', '-i'] + cpp[i:i + 100], cwd=root, check=True)
        else:
            print('tensor_rooms: clang-format not found: re-sort the include blocks of the files above',
                  file=sys.stderr)
    print(f'tensor_rooms: {len(todo)} files moved, {len(changed)} files rewritten')
    if args.check and (todo or changed):
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
