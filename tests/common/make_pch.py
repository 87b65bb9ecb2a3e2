#!/usr/bin/env python3
"""Compiles the tests' precompiled header (test_pch.h) with clang and the exact command line of
a test object: meson's compile_commands.json entry for PROBE, its source and outputs swapped
for the header's. clang refuses a precompiled header built with other flags (Clang User's
Manual, "Precompiled Headers"), and PROBE is compiled with the tests' own flags, so a changed
option rebuilds PROBE and with it this header.
Usage: make_pch.py BUILD_DIR PROBE HEADER OUTPUT DEPFILE"""
import json, os, shlex, subprocess, sys

build, probe, header, output, depfile = sys.argv[1:6]
with open(os.path.join(build, "compile_commands.json")) as f:
    entries = [e for e in json.load(f)
               if os.path.realpath(os.path.join(e["directory"], e["file"])) == os.path.realpath(probe)]
if len(entries) != 1:
    sys.exit(f"make_pch.py: {len(entries)} entries for {probe} in {build}/compile_commands.json, expected 1")
entry = entries[0]
words = shlex.split(entry["command"])
command, skip = [], False
for word in words:
    if skip:
        skip = False
    elif word in ("-o", "-MQ", "-MF", "-MT", "-c"):
        skip = True  # the option and its value: the probe's object, dependency file and source
    elif word not in ("-MD", "-MMD"):
        command.append(word)
# The header's templates are instantiated once, in the PCH, not in every object that uses it.
command += ["-fpch-instantiate-templates", "-x", "c++-header", os.path.abspath(header), "-o", os.path.abspath(output)]
command += ["-MD", "-MQ", output, "-MF", os.path.abspath(depfile)]  # -MQ: ninja's name for the output
sys.exit(subprocess.run(command, cwd=entry["directory"]).returncode)
