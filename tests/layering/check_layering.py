#!/usr/bin/env python3
"""Checks that the build enforces the layering (STYLE.md; docs/build.md, "Layering").

For every layer library it takes the compile command meson uses for one of the layer's
own sources (build/compile_commands.json: same compiler, flags and include paths) and
runs it on probe files: each layer's header must be reachable exactly when the layer may
include it, and ddl_config.h always. The two cases the layering exists for are also fully
compiled (-fsyntax-only): dist/ including "data/dataset.h" and tensor/ including
"autograd/variable.h" must fail, an allowed include must compile. It checks include
paths only, not what a library links.

usage: check_layering.py BUILD_DIR
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys
import tempfile

# The rule, as STYLE.md states it; meson.build's layers_below must agree.
ALLOWED = {
    'trace': [],
    'tensor': ['trace'],
    'autograd': ['tensor', 'trace'],
    'nn': ['autograd', 'tensor', 'trace'],
    'optim': ['nn', 'autograd', 'tensor', 'trace'],
    'data': ['tensor', 'trace'],
    'dist': ['optim', 'nn', 'autograd', 'tensor', 'trace'],
    'report': ['dist', 'optim', 'nn', 'autograd', 'tensor', 'trace'],
}
# One public header per layer, included as a user would.
HEADER = {
    'trace': 'trace/trace.h',
    'tensor': 'tensor/tensor.h',
    'autograd': 'autograd/variable.h',
    'nn': 'nn/module.h',
    'optim': 'optim/optimizer.h',
    'data': 'data/dataset.h',
    'dist': 'dist/dist.h',
    'report': 'report/progress.h',
}
# trace/ is the bottom layer; it sees only the header-only ddl::Error of tensor/error.h.
EXTRA_ALLOWED = {'trace': ['tensor/error.h']}


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
        f.write(f'#include "{include}"\nint ddl_layering_probe;\n')
    flag = ['-E', '-o', os.devnull] if mode == 'preprocess' else ['-fsyntax-only']
    r = subprocess.run(cmd + flag + ['-c', path], cwd=cwd, capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def main():
    build = sys.argv[1]
    with open(os.path.join(build, 'compile_commands.json')) as f:
        entries = json.load(f)
    commands = {layer: layer_command(entries, layer) for layer in ALLOWED}
    cases = []  # (layer, include, should_compile, mode)
    for layer, below in ALLOWED.items():
        cases.append((layer, 'ddl_config.h', True, 'preprocess'))
        for other, header in HEADER.items():
            cases.append((layer, header, other == layer or other in below, 'preprocess'))
        for header in EXTRA_ALLOWED.get(layer, []):
            cases.append((layer, header, True, 'preprocess'))
    cases += [('dist', 'data/dataset.h', False, 'compile'), ('dist', 'optim/sgd.h', True, 'compile'),
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
    print(f'check_layering: {len(cases) - failures} of {len(cases)} cases as the layering says')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
