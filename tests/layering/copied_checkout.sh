#!/usr/bin/env bash
# A copied checkout with its build folder inside it compiles its own headers, not the
# original tree's (docs/build.md, "Layering"): the include views in build/layer_views/ are
# relative links, so a pre-built tree handed out and edited elsewhere sees its own edits.
#
# It copies the sources and the build folder's ninja state (not the objects) to a temporary
# folder, plants an #error in the copy's base/error.h and rebuilds one object of trace/ in
# the copy, which reaches that header through layer_views/trace/ddl/base. The rebuild must
# fail on the planted line. Through a link that still pointed at the original tree it would
# compile the original header and succeed.
#
# usage: copied_checkout.sh BUILD_ROOT SOURCE_ROOT
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
case "$build/" in
"$src"/*) ;;
*)
  echo "the build folder is not inside the checkout: a copy cannot carry it (skipped)"
  exit 77
  ;;
esac
command -v ninja >/dev/null || { echo "ninja not found (skipped)"; exit 77; }
rel_build=${build#"$src"/}
# One object of trace/ (a unity group's when the layer libraries are unity builds).
# awk reads the whole list: a reader that stopped early would fail ninja on SIGPIPE (pipefail).
target=$(ninja -C "$build" -t targets all | awk -F: '!t && $1 ~ /^trace\/libddl_trace\.a\.p\/.*\.o$/ { t = $1 } END { print t }')
[ -n "$target" ] || { echo "FAIL no object of trace/libddl_trace.a in $build's build.ninja"; exit 1; }

tmp=$(mktemp -d "/tmp/ddl-copied-checkout-$$-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
copy="$tmp/checkout"
mkdir -p "$copy/$rel_build"
# The sources (no build folders, no git objects), then the build folder's ninja state and
# include views; tar keeps modification times, so ninja finds build.ninja up to date.
tar -C "$src" --exclude=./.git --exclude="./$rel_build" --exclude='./build*' -cf - . | tar -C "$copy" -xf -
for f in build.ninja .ninja_log .ninja_deps; do
  [ -e "$build/$f" ] || { echo "skipped: $build has no $f (not built by ninja yet)"; exit 77; }
done
tar -C "$build" -cf - build.ninja meson-private layer_views ddl_config.h .ninja_log .ninja_deps |
  tar -C "$copy/$rel_build" -xf -

marker="ddl_copied_checkout_marker_$$"
printf '#error %s\n' "$marker" >> "$copy/base/error.h"
if out=$(ninja -C "$copy/$rel_build" "$target" 2>&1); then
  echo "$out" | tail -5
  echo "FAIL the copy built $target without its own base/error.h (the include view leads out of the copy)"
  exit 1
fi
if ! grep -q "$marker" <<< "$out"; then
  echo "$out" | tail -10
  echo "FAIL the copy's build of $target failed, but not on the line planted in the copy's base/error.h"
  exit 1
fi
grep -q "$marker" "$src/base/error.h" && { echo "FAIL the original base/error.h was changed"; exit 1; }
echo "ok   the copied checkout compiled its own base/error.h through layer_views/trace"
