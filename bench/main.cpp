// ddl-bench: micro-benchmarks of the CPU engine. Each subcommand prints one
// JSON line; bench/RESULTS.md records them with the commands that made them.
//   ddl-bench peak [--threads N]   fp32 FMA peak of this machine
//   ddl-bench gemm [--threads N]   sgemm GFLOP/s, 1024^3 and VGG-11 im2col shapes
//   ddl-bench conv [--threads N]   conv2d forward+backward at VGG-11 CIFAR layers, batch 64
//   ddl-bench train-step --model M --batch B --threads N --steps S [--eval] [--device cuda] [--autocast bf16]
//   ddlrun --nproc 2 ddl-bench allreduce --numel N --iters I
//   ddlrun --nproc 2 ddl-bench ddp-step --model M --batch B --threads T --steps S [--no-overlap]
//   ddl-bench loader [--workers N]  DataLoader throughput, CIFAR-shaped images with augmentation
//   ddl-bench trace-overhead --model M --batch B --threads N --steps S   train steps with --trace off vs on
//   ddl-bench seq-step --model lstm|transformer [--batch B --seq T]   a character-level LM training step
//   ddl-bench autograd [--threads N]   the engine's cost per recorded op: backward, grad, double backward, anomaly
// train-step, allreduce and ddp-step take --trace FILE.json: the timeline of the timed steps.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "bench/bench_util.h"

int peak_main(int argc, char** argv);
int gemm_bench_main(int argc, char** argv);
int conv_bench_main(int argc, char** argv);
int train_step_main(int argc, char** argv);
int loader_bench_main(int argc, char** argv);
int allreduce_bench_main(int argc, char** argv);
int ddp_step_main(int argc, char** argv);
int trace_overhead_main(int argc, char** argv);
int seq_step_main(int argc, char** argv);
int autograd_bench_main(int argc, char** argv);
int zero_memory_main(int argc, char** argv);

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::printf(
        "usage: ddl-bench "
        "{peak|gemm|conv|train-step|loader|allreduce|ddp-step|trace-overhead|seq-step|autograd|zero-memory} "
        "[--threads N] [--clock wall|cpu] ...\n");
    return argc < 2 ? 1 : 0;
  }
  const std::string cmd = argv[1];
  ddl::bench::clock_arg(argc, argv);
  try {
    if (cmd == "peak") return peak_main(argc - 1, argv + 1);
    if (cmd == "gemm") return gemm_bench_main(argc - 1, argv + 1);
    if (cmd == "conv") return conv_bench_main(argc - 1, argv + 1);
    if (cmd == "train-step") return train_step_main(argc - 1, argv + 1);
    if (cmd == "loader") return loader_bench_main(argc - 1, argv + 1);
    if (cmd == "allreduce") return allreduce_bench_main(argc - 1, argv + 1);
    if (cmd == "ddp-step") return ddp_step_main(argc - 1, argv + 1);
    if (cmd == "trace-overhead") return trace_overhead_main(argc - 1, argv + 1);
    if (cmd == "seq-step") return seq_step_main(argc - 1, argv + 1);
    if (cmd == "autograd") return autograd_bench_main(argc - 1, argv + 1);
    if (cmd == "zero-memory") return zero_memory_main(argc - 1, argv + 1);
  } catch (const std::exception& e) {  // bad flags, no GPU, a failed peer: one clear line
    std::fprintf(stderr, "ddl-bench %s: %s\n", cmd.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "ddl-bench: unknown subcommand '%s' (see --help)\n", cmd.c_str());
  return 1;
}
