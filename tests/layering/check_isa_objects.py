#!/usr/bin/env python3
"""The instruction-set kernel libraries (tensor/meson.build, tensor/cpu/cpu_level.h) may
export only their level's entry points. Any other global or weak symbol, such as an
inline function or template instantiated with AVX-512 flags, could be picked by the
linker for portable code too and fault with SIGILL on a CPU without that level.

usage: check_isa_objects.py LEVEL=ARCHIVE ...   (exit 1 and a list when a symbol leaks)
"""
import subprocess
import sys

# Data the C++ runtime emits in every object with exceptions (a pointer, not code).
HARMLESS = {"DW.ref.__gxx_personality_v0"}


def leaks(level, archive):
    out = subprocess.run(["nm", "-C", "--defined-only", archive], check=True, capture_output=True, text=True).stdout
    bad, entries = [], 0
    for line in out.splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) != 3 or not parts[1].isupper():
            continue  # archive member headers, local symbols
        name = parts[2]
        if name in HARMLESS:
            continue
        if name.startswith("ddl::cpu::isa::") and name.split("(")[0].endswith("_" + level):
            entries += 1
            continue
        bad.append(f"{archive}: {parts[1]} {name}")
    if entries == 0:
        bad.append(f"{archive}: no ddl::cpu::isa::*_{level} entry point (wrong archive?)")
    return bad


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    bad = []
    for arg in sys.argv[1:]:
        level, archive = arg.split("=", 1)
        bad += leaks(level, archive)
    for b in bad:
        print("leaked symbol:", b)
    if bad:
        print("Keep everything but the entry points in an anonymous namespace (tensor/cpu/sgemm_levels.h).")
        return 1
    print("isa objects: only entry points exported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
