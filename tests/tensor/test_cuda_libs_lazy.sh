#!/usr/bin/env bash
# In a CUDA build, a process that does no GPU work never loads cuBLAS (tensor/cuda/cublas_api.h):
# libddl.so does not list it, and a CPU matmul leaves it unloaded (ld.so's LD_DEBUG=libs log
# names every library whose initialiser runs). Without CUDA: skipped.
# Usage: test_cuda_libs_lazy.sh BUILD_DIR MATMUL_TEST
set -uo pipefail
build=$1 matmul_test=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
grep -q '#define DDL_HAVE_CUDA 1' "$build/ddl_config.h" || {
  echo "skipped: this build has no CUDA backend"
  exit 77
}
needed=$(readelf -d "$build/libddl.so" | grep NEEDED) || fail "readelf found no NEEDED entries in libddl.so"
grep -q libcudart <<< "$needed" || fail "libddl.so of a CUDA build does not list libcudart: $needed"
! grep -q libcublas <<< "$needed" || fail "libddl.so lists cuBLAS, so every process loads it: $(grep cublas <<< "$needed")"

dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
# One float32 GEMM case: CPU kernels only. ld.so writes its log to $dir/ld.<pid>.
LD_DEBUG=libs LD_DEBUG_OUTPUT="$dir/ld" "$matmul_test" "float32 GEMM agrees with a float64 reference on odd shapes and views" \
  > "$dir/out.txt" 2>&1 || { cat "$dir/out.txt"; fail "$matmul_test failed"; }
cat "$dir"/ld.* > "$dir/ld.txt" 2> /dev/null || fail "ld.so wrote no log: LD_DEBUG had no effect"
grep -q 'calling init: .*libddl.so' "$dir/ld.txt" || fail "ld.so's log does not show libddl.so starting"
! grep -q 'calling init: .*libcublas' "$dir/ld.txt" || fail "a CPU-only process loaded cuBLAS: $(grep -m1 'init: .*libcublas' "$dir/ld.txt")"
echo "ok: cuBLAS not loaded by a CPU process"
