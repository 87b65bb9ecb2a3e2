#!/usr/bin/env python3
"""Checks that the build enforces the layering (docs/build.md, "Layering").

For every layer library it takes the compile command meson uses for one of the layer's
own sources (build/compile_commands.json: same compiler, flags and include paths) and
runs it on probe files: each layer's header must be reachable exactly when the layer may
include it, and ddl_config.h always. The two cases the layering exists for are also fully
compiled (-fsyntax-only): dist/ including <ddl/data/dataset.h> and tensor/ including
<ddl/autograd/variable.h> must fail, an allowed include must compile. It checks include
paths only, not what a library links.

Include paths cannot stop a quoted include that climbs out of a folder
("../data/sampler.h" resolves next to the including file), nor a quoted "nn/module.h"
that a user's own nn/ folder would shadow: the source scan below refuses both in every
C++ file of the tree, and in a layer's folder any quoted include that does not name a file
in the including file's own folder or below it. It also refuses any link in the build's
include views that is absolute (a copied checkout would compile the original's headers).
Before it scans the tree it scans a small planted tree, so a scan that finds nothing
cannot pass for one that works.

usage: check_layering.py BUILD_DIR [SOURCE_ROOT]
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# The rule, as docs/build.md ("Layering") states it; meson.build's layers_below must agree.
ALLOWED = {
    'base': [],
    'trace': ['base'],
    'tensor': ['trace', 'base'],
    'autograd': ['tensor', 'trace', 'base'],
    'nn': ['autograd', 'tensor', 'trace', 'base'],
    'optim': ['nn', 'autograd', 'tensor', 'trace', 'base'],
    'data': ['tensor', 'trace', 'base'],
    'dist': ['optim', 'nn', 'autograd', 'tensor', 'trace', 'base'],
    'report': ['dist', 'optim', 'nn', 'autograd', 'tensor', 'trace', 'base'],
    'ft': ['dist', 'data', 'optim', 'nn', 'autograd', 'tensor', 'trace', 'base'],
    'cluster': ['trace', 'base'],  # emulated hosts: a library apps link, not part of libddl
}
# One public header per layer, included as a user would.
HEADER = {
    'base': 'base/error.h',
    'trace': 'trace/trace.h',
    'tensor': 'tensor/core/tensor.h',
    'autograd': 'autograd/variable.h',
    'nn': 'nn/module.h',
    'optim': 'optim/optimizer.h',
    'data': 'data/dataset.h',
    'dist': 'dist/dist.h',
    'report': 'report/progress.h',
    'ft': 'ft/ft.h',
    'cluster': 'cluster/cluster.h',
}


def layer_command(entries, layer):
    """The argv meson compiles one of the layer's C++ sources with, minus its output flags."""
    prefix = f'{layer}/libddl_{layer}.a.p/'
    for e in entries:
        args = e['arguments'] if 'arguments' in e else shlex.split(e['command'])
        if not e['file'].endswith('.cpp') or '-o' not in args:
            continue
        if not args[args.index('-o') + 1].startswith(prefix):
            continue
        out, skip = [], 0
        for i, a in enumerate(args):
            if skip:
                skip -= 1
            elif a in ('-o', '-MQ', '-MF', '-MT'):
                skip = 1
            elif a in ('-MD', '-MMD', '-c') or a == e['file'] or i == len(args) - 1 and a.endswith('.cpp'):
                continue
            elif a.startswith('-fdiagnostics-color'):
                continue
            else:
                out.append(a)
        return out, e['directory']
    sys.exit(f'check_layering: no compile command for a {layer}/ source in compile_commands.json')


def try_compile(cmd, cwd, probe_dir, name, include, mode):
    path = os.path.join(probe_dir, name + '.cpp')
    with open(path, 'w') as f:
        f.write(f'#include <ddl/{include}>\nint ddl_layering_probe;\n')
    flag = ['-E', '-o', os.devnull] if mode == 'preprocess' else ['-fsyntax-only']
    r = subprocess.run(cmd + flag + ['-c', path], cwd=cwd, capture_output=True, text=True)
    return r.returncode == 0, r.stderr


LAYER_DIRS = tuple(ALLOWED) + ('ddl.h', 'ddl_config.h', 'torch.h')
QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def scan_sources(root):
    """Quoted includes that climb ("../x.h") or name a ddl header ("nn/module.h", not <ddl/nn/module.h>),
    and, in a layer's folder, quoted includes of anything but a file in the including file's folder or below."""
    bad = []
    files = []
    for top in LAYER_DIRS[:len(ALLOWED)] + ('apps', 'tests', 'bench', 'labs'):
        for r, dirs, names in os.walk(os.path.join(root, top)):
            files += [os.path.relpath(os.path.join(r, n), root) for n in names
                      if n.endswith(('.h', '.cpp', '.cu', '.cuh'))]
    for rel in sorted(files):
        if rel.startswith(os.path.join('tests', 'install', 'user_project') + os.sep):
            continue  # a user's project whose own data/ and nn/ headers share ddl's names on purpose
        try:
            text = open(os.path.join(root, rel), encoding='utf-8').read()
        except (OSError, UnicodeDecodeError):
            continue
        in_layer = rel.split(os.sep)[0] in ALLOWED
        here = os.path.dirname(os.path.join(root, rel))
        for inc in QUOTED.findall(text):
            if inc.startswith(('../', '/')) or '/../' in inc or inc.split('/')[0] in LAYER_DIRS:
                bad.append(f'{rel}: #include "{inc}"')
            elif in_layer and not os.path.isfile(os.path.join(here, inc)):
                # It would resolve through an include path, i.e. outside the file's own folder.
                bad.append(f'{rel}: #include "{inc}" (not a file beside it; use <ddl/...>)')
    return bad


def scan_self_test():
    """The scan on a planted tree: each bad include must be found, the good one not."""
    planted = {
        'nn/climb.cpp': '#include "../data/sampler.h"\n',  # climbs out of nn/
        'nn/sideways.cpp': '#include "sampler.h"\n',  # no nn/sampler.h: found through -I
        'nn/layer_path.cpp': '#include "data/sampler.h"\n',  # a layer path, quoted
        'nn/sub/ok.cpp': '#include "ok.inc"\n',  # beside it: allowed
        'nn/sub/ok.inc': '',
        'data/sampler.h': '',
        'apps/tool/main.cpp': '#include "apps/tool/util.h"\n',  # apps/ may use root paths
    }
    with tempfile.TemporaryDirectory(prefix='ddl-layering-scan-') as tree:
        for rel, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
            with open(os.path.join(tree, rel), 'w') as f:
                f.write(text)
        found = sorted(b.split(':')[0] for b in scan_sources(tree))
    want = ['nn/climb.cpp', 'nn/layer_path.cpp', 'nn/sideways.cpp']
    if found != want:
        print(f'FAIL the include scan found {found} in its planted tree, should find {want}')
        return 1
    return 0


def absolute_links(build):
    views = os.path.join(build, 'layer_views')
    found = []
    for r, dirs, files in os.walk(views):
        for n in dirs + files:
            p = os.path.join(r, n)
            if os.path.islink(p) and os.path.isabs(os.readlink(p)):
                found.append(p)
    return found


def main():
    build = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(here))
    if scan_self_test():
        return 1
    bad = scan_sources(root) + [f'absolute link {p}' for p in absolute_links(build)]
    for b in bad:
        print(f'FAIL {b}')
    with open(os.path.join(build, 'compile_commands.json')) as f:
        entries = json.load(f)
    commands = {layer: layer_command(entries, layer) for layer in ALLOWED}
    cases = []  # (layer, include, should_compile, mode)
    for layer, below in ALLOWED.items():
        cases.append((layer, 'ddl_config.h', True, 'preprocess'))
        for other, header in HEADER.items():
            cases.append((layer, header, other == layer or other in below, 'preprocess'))
    cases += [('dist', 'data/dataset.h', False, 'compile'), ('dist', 'optim/sgd.h', True, 'compile'),
              ('trace', 'tensor/core/tensor.h', False, 'compile'), ('trace', 'base/error.h', True, 'compile'),
              ('tensor', 'autograd/variable.h', False, 'compile'), ('tensor', 'trace/trace.h', True, 'compile')]

    failures = 0
    with tempfile.TemporaryDirectory(prefix='ddl-layering-') as probe_dir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            futures = []
            for i, (layer, include, should, mode) in enumerate(cases):
                cmd, cwd = commands[layer]
                futures.append(pool.submit(try_compile, cmd, cwd, probe_dir, f'probe{i}', include, mode))
            for (layer, include, should, mode), fut in zip(cases, futures):
                ok, err = fut.result()
                # A refused include must fail for the right reason: the header is not found.
                right_reason = ok or (include in err and 'No such file' in err)
                verdict = 'compiles' if ok else 'fails'
                if ok != should or not right_reason:
                    failures += 1
                    want = 'compile' if should else 'fail (header not found)'
                    print(f'FAIL {layer}/ including "{include}" ({mode}): {verdict}, should {want}')
                    if err:
                        print('  ' + '\n  '.join(err.strip().splitlines()[:6]))
                else:
                    print(f'ok   {layer}/ including "{include}" ({mode}): {verdict}')
    print(f'check_layering: {len(cases) - failures} of {len(cases)} cases as the layering says; '
          f'{len(bad)} bad includes or absolute links')
    return 1 if failures or bad else 0


if __name__ == '__main__':
    sys.exit(main())
