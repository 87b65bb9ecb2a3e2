#!/usr/bin/env bash
# Proves, without a GPU, that the carried folder alone (scripts/gpu_deps.sh) builds and tests ddl
# on a machine without a package registry: a bare Debian 12 root (debootstrap minbase) holding
# only g++, python3, meson and ninja gets the committed tree plus the carry folder, then, with no
# network (unshare -n: loopback only), configures, builds and runs the whole suite; with
# GPU_CARRY_CUDA=1 it also configures and compiles the CUDA backend against /usr/local/cuda
# mounted read-only (nothing runs on a GPU). Slow (a full build on this machine's cores), so it
# is no meson test: run it by hand (root), and see docs/cuda.md for the last result.
# Usage: tests/gpu_carry/run.sh [LOGDIR]   env: GPU_CARRY_BASE=DIR reuses a debootstrapped root,
#        GPU_CARRY_JOBS (default 2), GPU_CARRY_CUDA=1, GPU_CARRY_TARGETS="ninja targets" (build
#        only those and run no tests: a quicker CUDA compile check), GPU_CARRY_RELEASE (default
#        bookworm; trixie has g++ 14, newer than the GPU machine's g++ 13, to find what a newer
#        compiler rejects), GPU_CARRY_WERROR=0 (warnings are not errors, as in gpu_check.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
logs=$(realpath -m "${1:-/tmp/gpu-carry-logs}")
jobs=${GPU_CARRY_JOBS:-2}
release=${GPU_CARRY_RELEASE:-bookworm}
werror=--werror
[ "${GPU_CARRY_WERROR:-1}" = 0 ] && werror=-Dwerror=false
mkdir -p "$logs"
[ "$(id -u)" -eq 0 ] || { echo "gpu_carry: needs root (debootstrap, chroot, mounts)"; exit 77; }
command -v debootstrap >/dev/null || { echo "gpu_carry: needs debootstrap (apt-get install debootstrap)"; exit 77; }
[ -f .gpu-deps/env.sh ] || { echo "gpu_carry: run scripts/gpu_deps.sh first"; exit 1; }

root=$(mktemp -d /tmp/gpu-carry-root.XXXXXX)
cleanup() {
  # Unmount everything below the root, deepest first, then remove it (never follow a mount).
  for m in $(awk -v r="$root" '$2 ~ "^"r {print $2}' /proc/mounts | sort -r); do umount -l "$m" || true; done
  if ! awk -v r="$root" '$2 ~ "^"r {f=1} END {exit !f}' /proc/mounts; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT INT TERM

t0=$(date +%s)
if [ -n "${GPU_CARRY_BASE:-}" ]; then
  cp -a "$GPU_CARRY_BASE"/. "$root/"
else
  debootstrap --variant=minbase --include=g++,python3,meson,ninja-build "$release" "$root" \
    http://deb.debian.org/debian >"$logs/debootstrap.log" 2>&1
fi
echo "gpu_carry: $(chroot "$root" g++ --version | head -1)"
echo "gpu_carry: root ready in $(($(date +%s) - t0)) s: $(chroot "$root" dpkg-query -W -f='${Package}\n' | wc -l) packages," \
  "no -dev library but libc's: $(chroot "$root" dpkg-query -W -f='${Package}\n' | grep -- '-dev$' | tr '\n' ' ')"

# What a GPU run gets: the committed tree and the carry folder, nothing else.
mkdir -p "$root/src"
git archive HEAD | tar -x -C "$root/src"
cp -a .gpu-deps "$root/src/"
echo "gpu_carry: tree $(du -sb "$root/src" --exclude=.gpu-deps | cut -f1) bytes, carry $(du -sb .gpu-deps | cut -f1) bytes"

# What any machine has and debootstrap leaves out: a localhost line. /dev/shm is private, so
# other jobs of this machine (ddlrun --cleanup) cannot touch the tests' segments; /tmp stays
# on disk (a test counts disk bytes written there).
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
cuda_opt=-Dcuda=disabled
if [ "${GPU_CARRY_CUDA:-0}" = 1 ]; then
  mkdir -p "$root/usr/local/cuda"
  mount --bind -o ro "$(realpath /usr/local/cuda)" "$root/usr/local/cuda"
  cuda_opt=-Dcuda=enabled
fi

cat >"$root/src/.gpu-carry-inside.sh" <<EOF
set -uo pipefail
cd /src
. .gpu-deps/env.sh
export PATH=/usr/local/cuda/bin:\$PATH HOME=/tmp DDL_TESTS_NO_INSTALL=1
t=\$(date +%s)
meson setup /src/build-carry --buildtype=release $werror $cuda_opt >/logs/configure.log 2>&1 || { tail -30 /logs/configure.log; exit 1; }
grep -A12 "^ddl\|User defined options" /logs/configure.log | grep -E "cuda|nccl|openmp" || true
echo "configure \$((\$(date +%s) - t)) s"; t=\$(date +%s)
nice ninja -C /src/build-carry -j$jobs ${GPU_CARRY_TARGETS:-} >/logs/build.log 2>&1 || { grep -B2 -A12 "FAILED" /logs/build.log | head -60; exit 1; }
echo "build \$((\$(date +%s) - t)) s"; t=\$(date +%s)
[ -n "${GPU_CARRY_TARGETS:-}" ] && exit 0
meson test -C /src/build-carry --no-rebuild --num-processes $jobs --print-errorlogs >/logs/test.log 2>&1
rc=\$?
echo "test \$((\$(date +%s) - t)) s"
grep -E "^(Ok|Expected Fail|Fail|Unexpected Pass|Skipped|Timeout):" /logs/test.log
grep -E " (FAIL|TIMEOUT|SKIP) " /logs/test.log | sed 's/  */ /g'
exit \$rc
EOF
mkdir -p "$root/logs"
mount --bind "$logs" "$root/logs"
# No network: a fresh namespace has only a loopback, brought up for the tests' local TCP.
unshare -n sh -c "ip link set lo up 2>/dev/null; chroot '$root' /bin/bash /src/.gpu-carry-inside.sh" 2>&1 | tee "$logs/summary.txt"
rc=${PIPESTATUS[0]}
echo "gpu_carry: exit $rc after $(($(date +%s) - t0)) s; logs in $logs"
exit "$rc"
