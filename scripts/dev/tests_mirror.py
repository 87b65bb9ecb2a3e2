#!/usr/bin/env python3
"""Makes tests/ mirror the source tree, and gives bench/ the example model it built from apps/.

What it does, each step idempotent (run it again on a tree others have added to):
  - tests/unit/ is split by what each test tests: tests/tensor/ (suite tensor) and
    tests/autograd/ (suite autograd). Known files follow the table UNIT below; a file added
    later is classified by rule (classify()). tests/meson.build's unit_tests lists (also
    `unit_tests += [...]` lines added later) become the lists of tests/tensor/meson.build
    and tests/autograd/meson.build; any other 'unit/x.cpp' entry follows its file, and a
    test left in suite unit (tests/docs/'s LibTorch checks) goes to suite docs;
  - the library suites' tests that run the train_cifar program (table TO_APPS) move to
    tests/apps/ and suite apps;
  - apps/examples/char_lm/models.{h,cpp} (which bench/ compiled from the example) move to
    nn/models/char_lm.{h,cpp}, part of libddl, so both include <ddl/nn/models/char_lm.h>;
  - every path in docs, scripts, tests and comments follows its file; clang-format on the
    C++ files changed.
Prose (tests/README.md, the chapters' wording) and the model's namespace are hand edits,
committed apart.

usage: scripts/dev/tests_mirror.py   (from anywhere; prints what it did)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moves  # noqa: E402

# What each test of tests/unit tests: 'tensor' (tensor/: kernels, views, dtypes, dispatch,
# the allocator, op values) or 'autograd' (the engine, Variables, gradients, autocast, the
# ops only autograd/ops/ has).
AUTOGRAD = '''anomaly autocast autocast_ops autograd_engine autograd_inplace autograd_spelling
conv_double_backward custom_function dropout embedding grad_elementwise grad_parity grad_pool_nd
grad_reduce_matmul grad_views higher_order linalg_grad loss_dtypes margin_losses norm_edge
reduce_more variable_porting xor_mlp'''.split()
TENSOR = '''adaptive_upsample batch_norm caching_allocator conv conv_algo_choice conv_int conv_transpose
conv_winograd cpu_levels einsum elementwise elementwise_parity factory_parity factory_random half
index_parity indexing int8_int16 join libtorch_spelling linalg_ops math_ops matmul norm_precision pool
pool_edge print_errors random_counters reduce reduce_parity rounding_ops scalar_dims shape_overflow
softmax_loss sort_scan tensor_core tensor_methods views'''.split()
UNIT = {**{n: 'tensor' for n in TENSOR}, **{n: 'autograd' for n in AUTOGRAD}}

# Tests of library suites that run build/apps/train_cifar: old path -> new path.
TO_APPS = {
    'tests/dist/test_comm_hooks.sh': 'tests/apps/test_comm_hooks.sh',
    'tests/dist/test_torchrun.sh': 'tests/apps/test_torchrun.sh',
    'tests/dist/test_torchrun_c10d.sh': 'tests/apps/test_torchrun_c10d.sh',
    'tests/dist/test_token_launchers.sh': 'tests/apps/test_token_launchers.sh',
    'tests/dist/test_token_slurm.sh': 'tests/apps/test_token_slurm.sh',
    'tests/dist/test_train_cifar_device.cpp': 'tests/apps/test_train_cifar_device.cpp',
    'tests/report/test_reports_browser.sh': 'tests/apps/test_reports_browser.sh',
    'tests/report/check_report_dom.py': 'tests/apps/check_report_dom.py',
    'tests/trace/test_trace_job.sh': 'tests/apps/test_trace_job.sh',
    'tests/trace/check_trace.py': 'tests/apps/check_trace.py',
}
# bench/ and the example share the model from the library.
MODEL = {
    'apps/examples/char_lm/models.h': 'nn/models/char_lm.h',
    'apps/examples/char_lm/models.cpp': 'nn/models/char_lm.cpp',
}

SUITE_HEAD = {
    'tensor': '# Suite tensor: tensor/ (views, dtypes, kernels and their values, dispatch, the allocator,\n'
              '# instruction-set levels). One Catch2 executable per file; see tests/README.md.\n',
    'autograd': '# Suite autograd: autograd/ (the engine, Variables, gradient checks, higher-order\n'
                '# gradients, custom functions, anomaly mode, autocast, the ops of autograd/ops/).\n',
}


def classify(path):
    """The suite of a test file of tests/unit: the table, else by what it includes and names."""
    name = os.path.basename(path)
    stem = re.sub(r'^test_|\.cpp$', '', name)
    if stem in UNIT:
        return UNIT[stem]
    text = open(path, encoding='utf-8', errors='replace').read()
    head = '\n'.join(text.splitlines()[:8])
    if stem.startswith(('grad_', 'autograd_', 'autocast')) or '<ddl/autograd/' in text or 'autograd/' in head:
        return 'autograd'
    return 'tensor'


def do_moves():
    moved = []
    for rel in moves.files():
        if rel.startswith('tests/unit/'):
            moves.move(rel, f'tests/{classify(os.path.join(moves.ROOT, rel))}/{rel[len("tests/unit/"):]}', moved)
    for table in (TO_APPS, MODEL):
        for src, dst in table.items():
            moves.move(src, dst, moved)
    return moved


def moved_pairs():
    """Every old -> new path this script stands for, whether moved now or earlier."""
    pairs = dict(TO_APPS)
    pairs.update(MODEL)
    for suite in ('tensor', 'autograd'):
        for rel in moves.files():
            if rel.startswith(f'tests/{suite}/') and rel.count('/') == 2 and not rel.endswith('meson.build'):
                pairs['tests/unit/' + rel.split('/')[2]] = rel
    return pairs


def text_rules(pairs):
    # Includes first: the path rules below would otherwise turn a quoted include of the
    # model into a quoted "nn/..." one, which the layering test refuses.
    rules = [
        (r'#include\s+"(apps/examples/char_lm/models|nn/models/char_lm)\.h"', '#include <ddl/nn/models/char_lm.h>',
         lambda rel: rel.endswith(moves.CPP_EXT)),
        # tests/meson.build's programs saw tests/ as their folder ("common/gradcheck.h"); from
        # their new folders they name tests/common/ from the root, as most tests already do.
        (r'#include\s+"common/', '#include "tests/common/',
         lambda rel: rel.startswith(('tests/tensor/', 'tests/autograd/', 'tests/apps/')) and rel.endswith(moves.CPP_EXT)),
    ]
    for src, dst in sorted(pairs.items(), key=lambda p: -len(p[0])):
        # A path with or without its extension (ninja targets: tests/unit/test_reduce).
        s, d = os.path.splitext(src)[0], os.path.splitext(dst)[0]
        rules.append((r'(?<![\w])' + re.escape(s) + r'(?![\w])', d, None))
    rules += [
        (r'#include\s+"models\.h"', '#include <ddl/nn/models/char_lm.h>',
         lambda rel: rel.startswith('apps/examples/char_lm/') or rel == 'nn/models/char_lm.cpp'),
        # The sanitizer builds' suite list (tests/sanitize/run.sh).
        (r'suites=\(unit ', 'suites=(tensor autograd docs ', lambda rel: rel == 'tests/sanitize/run.sh'),
    ]
    return rules


def list_block(var, names):
    return f'{var} = [\n' + ''.join(f"  '{n}',\n" for n in names) + ']\n'


def suite_meson(suite, names):
    rel = f'tests/{suite}/meson.build'
    var = f'{suite}_tests'
    if os.path.exists(os.path.join(moves.ROOT, rel)):
        text = moves.read(rel)
        m = re.search(var + r' = \[\n.*?\n?\]\n', text, re.S)
        text = text[:m.start()] + list_block(var, names) + text[m.end():]
    else:
        text = (SUITE_HEAD[suite] + list_block(var, names) +
                f"foreach t : {var}\n"
                f"  test(t, executable('test_' + t, 'test_' + t + '.cpp', link_with: [catch_main, test_common],\n"
                f"    dependencies: test_deps), suite: '{suite}', timeout: 300)\n"
                f"endforeach\n")
    return moves.write(rel, text)


def existing_names(suite):
    rel = f'tests/{suite}/meson.build'
    if not os.path.exists(os.path.join(moves.ROOT, rel)):
        return []
    m = re.search(suite + r'_tests = \[(.*?)\]', moves.read(rel), re.S)
    return re.findall(r"'(\w+)'", m.group(1)) if m else []


def fix_tests_meson():
    """tests/meson.build: the unit_tests lists go to the suites' own meson.build files."""
    changed = []
    rel = 'tests/meson.build'
    text = moves.read(rel)
    orig = text
    names = []
    for m in re.finditer(r"^unit_tests \+?= \[(.*?)\]\n", text, re.S | re.M):
        names += re.findall(r"'(\w+)'", m.group(1))
    text = re.sub(r"^unit_tests \+?= \[.*?\]\n", '', text, flags=re.S | re.M)
    m = re.search(r'^foreach t : unit_tests\n.*?^endforeach\n', text, re.S | re.M)
    if m:
        text = text[:m.start()] + "subdir('tensor')\nsubdir('autograd')\n" + text[m.end():]
    # Other entries naming a file of unit/: its new folder, its new suite.
    for old in re.findall(r"'unit/(test_\w+\.cpp)'", text):
        for suite in ('tensor', 'autograd'):
            if os.path.exists(os.path.join(moves.ROOT, 'tests', suite, old)):
                text = text.replace(f"'unit/{old}'", f"'{suite}/{old}'")
    text = retag_suites(text, lambda body: next((s for s in ('tensor', 'autograd') if f"'{s}/test_" in body), None))
    text = retag_suites(text, lambda body: 'docs' if "'docs/" in body else None)
    if text != orig:
        moves.write(rel, text)
        changed.append(rel)
    for suite in ('tensor', 'autograd'):
        listed = existing_names(suite)
        wanted = listed + [n for n in names if n not in listed and
                           os.path.exists(os.path.join(moves.ROOT, 'tests', suite, f'test_{n}.cpp'))]
        if (wanted or listed) and suite_meson(suite, wanted):
            changed.append(f'tests/{suite}/meson.build')
    return changed


def retag_suites(text, pick):
    """suite: 'unit' -> pick(statement) for each test() or foreach block pick names."""
    out, pos = [], 0
    for m in re.finditer(r"suite: 'unit'", text):
        if m.start() < pos:
            continue
        # The block the test belongs to: from its comment (or blank line) above.
        start = max(text.rfind('\n#', 0, m.start()), text.rfind('\n\n', 0, m.start()))
        suite = pick(text[start:m.end()]) if start >= 0 else None
        if suite:
            out.append(text[pos:m.start()] + f"suite: '{suite}'")
            pos = m.end()
    return ''.join(out) + text[pos:]


def fix_moved_meson(pairs):
    """A meson.build naming a moved file relative to its own folder names it from the root,
    and a test() of a file now in tests/apps/ is in suite apps."""
    changed = []
    for rel in moves.files():
        if os.path.basename(rel) != 'meson.build' or rel.startswith(moves.SKIP_PREFIXES):
            continue
        text = moves.read(rel)
        orig = text
        here = os.path.dirname(rel)
        for src, dst in pairs.items():
            if os.path.dirname(src) == here and not src.startswith('tests/unit/'):
                text = re.sub(r"(?<![/\w])'" + re.escape(os.path.basename(src)) + "'",
                              f"meson.project_source_root() / '{dst}'", text)
            if src in MODEL and src.endswith('.cpp') and here in ('apps', 'bench'):
                # The library has it now: programs that compiled it drop it.
                for item in ('examples/char_lm/models.cpp', '../apps/examples/char_lm/models.cpp',
                             '../nn/models/char_lm.cpp'):
                    found = True
                    while found:
                        text, found = moves.drop_list_item(text, item)
        for dst in TO_APPS.values():
            for m in list(re.finditer(re.escape("'" + dst + "'"), text)):
                start = text.rfind('test(', 0, m.start())
                end = moves.statement(text, start)
                body = re.sub(r"suite: '(dist|report|trace)'", "suite: 'apps'", text[start:end])
                text = text[:start] + body + text[end:]
        if text != orig:
            moves.write(rel, text)
            changed.append(rel)
    # The model joins libddl_nn's sources and installed headers.
    rel = 'nn/meson.build'
    text = moves.read(rel)
    orig = text
    if os.path.exists(os.path.join(moves.ROOT, 'nn/models/char_lm.cpp')) and "'models/char_lm.cpp'" not in text:
        i = text.index('ddl_nn = static_library(')
        text = (text[:i] + "nn_sources += files('models/char_lm.cpp')  # apps/examples/char_lm's and bench's models\n"
                + text[i:].rstrip('\n') + "\ninstall_headers('models/char_lm.h', subdir: 'ddl/nn/models')\n")
    if text != orig:
        moves.write(rel, text)
        changed.append(rel)
    return changed


def main():
    moved = do_moves()
    pairs = moved_pairs()
    changed = moves.rewrite(text_rules(pairs))
    meson_changed = fix_tests_meson() + fix_moved_meson(pairs)
    moves.clang_format(changed)
    for src, dst in moved:
        print(f'moved {src} -> {dst}')
    for rel in sorted(set(changed + meson_changed)):
        print(f'rewrote {rel}')
    if not moved and not changed and not meson_changed:
        print('tests_mirror: nothing to do (already moved)')


if __name__ == '__main__':
    main()
