#!/usr/bin/env python3
"""Makes each layer's include view: OUT/<view>/ddl/ holds relative symlinks to the
layer folders it may include and to the generated ddl_config.h, nothing else, so
`#include <ddl/nn/module.h>` resolves there as it does in an install.
Run by meson at configure time (root meson.build); each layer library gets
only its own view as an include path, so an upward or sideways include fails
to compile (docs/build.md, "Layering"). Does not decide the layering itself:
the allowed folders come from meson.build.

usage: layer_views.py OUT SOURCE_ROOT BUILD_ROOT view=entry,entry[,folder/file.h] ...
An entry names a folder or file under SOURCE_ROOT (a layer lists its own folder too).
The links are relative, so a copied checkout with its build folder inside it uses its
own headers, not the original's.
"""
import os
import sys


def link(target, name):
    target = os.path.relpath(target, os.path.dirname(name))
    # Idempotent: a reconfigure leaves an unchanged link alone (same mtime for ninja).
    if os.path.islink(name) and os.readlink(name) == target:
        return
    if os.path.lexists(name):
        os.remove(name)
    os.makedirs(os.path.dirname(name), exist_ok=True)
    os.symlink(target, name)


def main():
    out, src, build = sys.argv[1:4]
    for spec in sys.argv[4:]:
        name, _, allowed = spec.partition('=')
        view = os.path.join(out, name)
        wanted = {os.path.join('ddl', 'ddl_config.h'): os.path.join(build, 'ddl_config.h')}
        for entry in [a for a in allowed.split(',') if a]:
            wanted[os.path.join('ddl', entry)] = os.path.join(src, entry)
        for rel, target in wanted.items():
            link(target, os.path.join(view, rel))
        # Drop what a previous configure allowed and this one does not.
        for root, dirs, files in os.walk(view):
            for entry in dirs + files:
                path = os.path.join(root, entry)
                rel = os.path.relpath(path, view)
                if os.path.islink(path) and rel not in wanted:
                    os.remove(path)


if __name__ == '__main__':
    main()
