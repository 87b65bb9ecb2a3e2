# Sourced by the labs tests once GRADE, tmp and `name` (the test's name for messages) are
# set: fail, grade (runs ddl-grade, keeps its output in $tmp/OUT.txt, sets rc) and expect.
fail() {
  echo "$name: FAIL: $*" >&2
  exit 1
}
grade() {  # $1: output name; the rest: ddl-grade's arguments. Sets rc.
  local out=$1
  shift
  set +e
  "$GRADE" "$@" > "$tmp/$out.txt" 2>&1
  rc=$?
  set -e
}
expect() {  # $1 output name, $2 exit status, $3 text the output must hold
  [ "$rc" = "$2" ] || { cat "$tmp/$1.txt"; fail "$1: exit status $rc, expected $2"; }
  grep -qF -- "$3" "$tmp/$1.txt" || { cat "$tmp/$1.txt"; fail "$1: the output lacks '$3'"; }
}
