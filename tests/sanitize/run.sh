#!/usr/bin/env bash
# Builds one sanitizer build directory (only the targets its tests need) and runs those
# tests there. Usage: tests/sanitize/run.sh {asan|tsan} [--build-only | meson test args...]
#   asan: build-asan, clang, AddressSanitizer + UndefinedBehaviorSanitizer (+ leaks), and
#         the libFuzzer targets (-Dfuzz=true), each fuzzed DDL_FUZZ_SECONDS (default 30).
#   tsan: build-tsan, g++, ThreadSanitizer, over the threaded parts only; no OpenMP (libgomp
#         is not instrumented, so its barriers would read as races).
# build-asan links with lld: its programs carry the sanitizer runtimes, and GNU ld took 1.4-1.7 s
# for one test program where lld takes 0.5 s (5.2 s against 1.1 s for libddl.so).
# Both compile at -O1, the optimization the sanitizers' manuals suggest: clang's ASan + UBSan
# build of the largest kernel file takes 141 s at -O3 and 78 s at -O1.
# A sanitizer report fails the test (halt_on_error); results land in <dir>/meson-logs/testlog.json.
set -uo pipefail
cd "$(dirname "$0")/../.."
kind=$1
shift
here=tests/sanitize
case $kind in
  asan)
    dir=build-asan
    setup=(env CC=clang CXX=clang++ CXX_LD=lld CXXFLAGS="-gline-tables-only -fno-omit-frame-pointer -Wno-unknown-warning-option"
           meson setup "$dir" -Doptimization=1 -Ddebug=false -Db_ndebug=false -Db_sanitize=address,undefined -Db_lundef=false
           -Dcuda=disabled -Dfuzz=true)
    # The multi-process tests run here too: their ranks exec the test program afresh
    # (Note [Ranks re-execute the test] in tests/common/harness.h), so no child of a
    # threaded parent meets Clang 14's fork-unsafe allocator (llvm-project PR 75290).
    # Not in CI, for time (on a 2-core VM the whole suite came near CI's 90 min limit): docs
    # (API spelling) and reference, the whole reference sweep under UBSan (171 s at -O1, and
    # 26 large objects). By hand: DDL_ASAN_SUITES="reference" tests/sanitize/run.sh asan
    suites=(${DDL_ASAN_SUITES:-tensor autograd trace nn optim data dist report fuzz})
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:strict_string_checks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    ;;
  tsan)
    dir=build-tsan
    setup=(env CXXFLAGS="-g1" meson setup "$dir" -Doptimization=1 -Ddebug=false -Db_ndebug=false -Db_sanitize=thread
           -Db_lundef=false -Dcuda=disabled -Dopenmp=false)
    # The threaded parts: data loader, stores (server threads), process groups and the
    # shared-memory all_reduce, DDP's hooks and buckets.
    # The process-rank tests too: their ranks exec afresh (Note [Ranks re-execute the test]
    # in tests/common/harness.h), so TSan follows every rank from its start. Left out with
    # the single-threaded ones: dist_timeouts and dist_rendezvous_stray, whose checks of
    # which deadline fires first assume uninstrumented speed.
    suites=(data dist -data_sampler -data_transforms -data_datasets -data_mnist -data_fashion_mnist -data_cifar
            -data_image_folder -dist_env -dist_torch_store -dist_connect_deadline -dist_timeouts
            -dist_rendezvous_stray -ddlrun -ddlrun_terminal_text -dist_store_auth)
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/$here/tsan.supp}
    ;;
  *)
    echo "usage: $0 {asan|tsan}" >&2
    exit 2
    ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
  "${setup[@]}" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; exit 1; }
  rm -f "$dir.setup.log"
fi
# Brings meson's files up to date first, so the introspection below sees today's targets.
ninja -C "$dir" build.ninja > /dev/null || exit 1
mapfile -t targets < <($here/pick_tests.py "$dir" targets "${suites[@]}")
mapfile -t tests < <($here/pick_tests.py "$dir" tests "${suites[@]}")
ninja -C "$dir" "${targets[@]}" || exit 1
[ "${1:-}" = --build-only ] && exit 0
meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 "${tests[@]}" "$@"
status=$?
# LLVM's OpenMP runtime (clang's build) registers each process in /dev/shm and removes the
# file at exit; processes the tests kill leave theirs. Remove those of processes now gone.
for f in /dev/shm/__KMP_REGISTERED_LIB_*; do
  [ -e "$f" ] || continue
  pid=${f#/dev/shm/__KMP_REGISTERED_LIB_}
  pid=${pid%%_*}
  kill -0 "$pid" 2>/dev/null || rm -f "$f"
done
exit $status
