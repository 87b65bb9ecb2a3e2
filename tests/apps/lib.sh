# Sourced by the apps test scripts once `here` (their folder) is set: a scratch folder
# `dir`, removed on exit, and check / checks, which print "ok"/"FAIL" lines and set `fail`.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
checks() { python3 "$here/check_outputs.py" "$@" | sed 's/^/  /'; }  # its ok/FAIL lines, indented; fails with it
