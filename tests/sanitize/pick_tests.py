#!/usr/bin/env python3
"""Picks the tests a sanitizer build runs and the ninja targets they need, from meson's
introspection of BUILD_DIR. Usage: pick_tests.py BUILD_DIR {targets|tests} SUITE... [-NAME...]
Only compiled test programs (and the fuzz targets' runs, and the reference sweep's runner
under compare.py) are picked: the end-to-end shell scripts run once, in the normal build. A -NAME argument leaves that test out."""
import json, os, subprocess, sys

build, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
suites = {"ddl:" + a for a in args if not a.startswith("-")}
excluded = {a[1:] for a in args if a.startswith("-")}


def introspect(kind):
    out = subprocess.run(["meson", "introspect", build, "--" + kind], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


files = {t["id"]: t["filename"] for t in introspect("targets")}
root = os.path.realpath(build) + os.sep
tests, targets = [], set()
for t in introspect("tests"):
    compiled = os.path.realpath(t["cmd"][0]).startswith(root) or {"ddl:fuzz", "ddl:reference"} & set(t["suite"])
    if not compiled or t["name"] in excluded or not suites.intersection(t["suite"]):
        continue
    tests.append(t["name"])
    for dep in t.get("depends", []):
        for f in files.get(dep, []):
            targets.add(os.path.relpath(f, root))
print("\n".join(sorted(targets) if what == "targets" else tests))
