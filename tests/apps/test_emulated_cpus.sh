#!/usr/bin/env bash
# The portable build on CPUs this machine is not: QEMU's user-mode emulator (qemu-x86_64,
# Debian's qemu-user; its TCG runs AVX2 and FMA since QEMU 7.2, never AVX-512, and raises
# SIGILL for an instruction the chosen CPU model lacks) runs the same binaries as
# - Haswell-v4: AVX2 and FMA, no AVX-512, as the AVX2-only machines ddl runs on;
# - Nehalem-v2: x86-64-v2 (SSE4.2, no AVX), the oldest CPU the build promises to run on.
# On each, ddl picks its kernels from what the CPU reports (docs/build.md, "CPU kernels and
# instruction sets"), never faults, and train_cifar trains to the same bits as this machine
# does with that level forced by DDL_CPU_LEVEL (so the kernels' own test, run here at every
# level, speaks for them there too; under emulation only its quick cases run: its float64
# references take 20 s of CPU time there).
# Speed under emulation means nothing and is not looked at.
# Usage: test_emulated_cpus.sh NATIVE_BUILD(true|false); env TRAIN_CIFAR, CPU_LEVELS_TEST.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${CPU_LEVELS_TEST:?}"
native=${1:?}
here=$(cd "$(dirname "$0")" && pwd)
skip() {
  echo "skipped: $*"
  exit 77
}
[ "$(uname -m)" = x86_64 ] || skip "not an x86-64 machine"
[ "$native" = false ] || skip "a -Dnative=true build is compiled for this CPU only and faults on older ones by design"
command -v qemu-x86_64 > /dev/null || skip "qemu-x86_64 is not installed (scripts/setup.sh installs qemu-user)"
version=$(qemu-x86_64 --version | sed -n 's/.*version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r major minor <<< "$version"
[ -n "$major" ] && { [ "$major" -gt 7 ] || { [ "$major" -eq 7 ] && [ "$minor" -ge 2 ]; }; } ||
  skip "QEMU ${major:-?}.${minor:-?} cannot run AVX2 (7.2 added it)"
DDL_TEST_CPU_LEVEL=avx2 "$CPU_LEVELS_TEST" 'cpu levels are named*' > /dev/null 2>&1
[ $? -ne 77 ] || skip "this machine cannot run the avx2 kernels, so it has no runs to compare the emulated ones with"
. "$here/lib.sh"

# emulate CPU COMMAND...: the command on an emulated CPU, with its exit status; QEMU's notes
# about host-only CPUID bits it leaves out (pcid, x2apic, ...) are dropped from its stderr,
# which is filtered after it ends, so the caller's checks read the whole of it.
emulate() {
  local cpu=$1 status
  shift
  qemu-x86_64 -cpu "$cpu" "$@" 2> "$dir/emulated-stderr"
  status=$?
  grep -v "TCG doesn't support requested feature" "$dir/emulated-stderr" >&2
  return $status
}
train=("$TRAIN_CIFAR" --dataset fashion-mnist --model resnet9_small --epochs 1 --batch-size 4 --threads 2
  --train-samples 8 --test-samples 4 --lr 0.01 --log-every 1 --no-progress)

for pair in Haswell-v4:avx2 Nehalem-v2:baseline; do
  cpu=${pair%%:*} level=${pair#*:}
  emulate "$cpu" "${train[@]}" --save "$dir/$cpu.safetensors" > "$dir/$cpu.txt" 2>&1
  status=$?
  check "$cpu: train_cifar exits 0 (status $status; 132 is SIGILL)" "[ $status -eq 0 ]"
  check "$cpu: its header says the $level kernels run ($(grep -m1 'CPU kernels' "$dir/$cpu.txt"))" \
    "grep -q 'CPU kernels: $level ' '$dir/$cpu.txt'"
  if DDL_CPU_LEVEL=$level "${train[@]}" --save "$dir/here-$level.safetensors" > "$dir/here-$level.txt" 2>&1; then
    check "$cpu: the weights equal this machine's with DDL_CPU_LEVEL=$level, bit for bit" \
      "cmp -s '$dir/$cpu.safetensors' '$dir/here-$level.safetensors'"
  else
    cat "$dir/here-$level.txt"
    check "this machine runs train_cifar with DDL_CPU_LEVEL=$level" false
  fi
done

# A level the CPU lacks, asked for: an error naming it, not SIGILL.
DDL_CPU_LEVEL=avx2 emulate Nehalem-v2 "${train[@]}" > "$dir/forced.txt" 2>&1
status=$?
check "Nehalem-v2 with DDL_CPU_LEVEL=avx2: exit 1, not a signal (status $status)" "[ $status -eq 1 ]"
check "... and the error says the CPU cannot run avx2 and its best level is baseline" \
  "grep -q 'DDL_CPU_LEVEL=avx2: this CPU cannot run it (the best it runs is baseline)' '$dir/forced.txt'"

# The AVX2 kernels' quick cases on the AVX2-only CPU; its AVX-512 run reports skipped there.
DDL_TEST_CPU_LEVEL=avx2 emulate Haswell-v4 "$CPU_LEVELS_TEST" 'sgemm_packed*,*thread count,2x2 max pool*' \
  > "$dir/levels.txt" 2>&1
status=$?
check "Haswell-v4: the avx2 kernels' packed-sgemm, thread-count and max-pool cases pass (status $status)" \
  "[ $status -eq 0 ] && grep -q 'in 3 test cases' '$dir/levels.txt'"
DDL_TEST_CPU_LEVEL=avx512 emulate Haswell-v4 "$CPU_LEVELS_TEST" > "$dir/levels512.txt" 2>&1
status=$?
check "Haswell-v4: the avx512 kernels' test is skipped, best level avx2 (status $status)" \
  "[ $status -eq 77 ] && grep -q 'best level: avx2' '$dir/levels512.txt'"

[ $fail -eq 0 ] || for f in "$dir"/*.txt; do
  echo "--- $(basename "$f")"
  tail -n 20 "$f"
done
exit $fail
