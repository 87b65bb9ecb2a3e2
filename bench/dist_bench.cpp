// Distributed benchmarks, run under ddlrun (rank 0 prints one JSON line):
//   ddlrun --nproc 2 build/bench/ddl-bench allreduce --numel 9231114 --iters 20 [--algo gloo|ring]
//   ddlrun --nproc 2 build/bench/ddl-bench ddp-step --model vgg11_bn --batch 64 --threads 1 --steps 10 [--no-overlap]
// ddp-step reports the median over steps of the slowest rank's step time; with
// --no-overlap the gradients are all-reduced only after backward (one flat
// all-reduce), which shows what overlapping communication with backward buys;
// bucket_fill_ms is rank 0's median time in DDP's gradient hooks (DDPStats::last_fill_ms).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/sync/common.h>
#include <ddl/dist/sync/ring.h>

namespace {

std::string flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (name == argv[i]) return argv[i + 1];
  return fallback;
}
bool has_flag(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i)
    if (name == argv[i]) return true;
  return false;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

int allreduce_bench_main(int argc, char** argv) {
  using namespace ddl;
  auto group = dist::init_process_group("gloo");
  const int64_t numel = std::stoll(flag(argc, argv, "--numel", "9231114"));
  const int iters = std::stoi(flag(argc, argv, "--iters", "20"));
  // gloo: the group's all_reduce (Gloo's ring, or shared memory on one host); ring: the
  // hand-written ring of dist/sync/ring.h on send/recv.
  const std::string algo = flag(argc, argv, "--algo", "gloo");
  if (algo != "gloo" && algo != "ring") {
    std::fprintf(stderr, "ddl-bench allreduce: --algo is gloo or ring, got '%s'\n", algo.c_str());
    return 2;
  }
  Tensor t = ones({numel});
  const auto all_reduce = [&] { algo == "ring" ? dist::ring_all_reduce(*group, t) : group->all_reduce(t); };
  all_reduce();  // warm-up: connections, buffers
  std::vector<double> times;
  const std::string trace_file = flag(argc, argv, "--trace", "");
  if (!trace_file.empty()) dist::start_trace(trace_file);
  for (int i = 0; i < iters; ++i) {
    group->barrier();
    const auto start = Clock::now();
    all_reduce();
    times.push_back(ms_since(start));
  }
  if (!trace_file.empty()) dist::write_trace(trace_file);
  // The slowest rank's time per iteration.
  Tensor slowest = from_vector(times);
  group->all_reduce(slowest, dist::ReduceOp::Max);
  const double ms = median(to_vector<double>(slowest));
  if (group->rank() == 0)
    std::printf(
        "{\"bench\":\"allreduce\",\"framework\":\"ddl\",\"algo\":\"%s\",\"world\":%d,\"numel\":%ld,\"ms\":%.2f,"
        "\"algbw_gbps\":%.3f}\n",
        algo.c_str(), group->size(), static_cast<long>(numel), ms, static_cast<double>(numel) * 4 / (ms * 1e-3) / 1e9);
  dist::destroy_process_group();
  return 0;
}

int ddp_step_main(int argc, char** argv) {
  using namespace ddl;
  const std::string model_name = flag(argc, argv, "--model", "vgg11_bn");
  const int64_t batch = std::stoll(flag(argc, argv, "--batch", "64"));
  const int steps = std::stoi(flag(argc, argv, "--steps", "10"));
  const bool overlap = !has_flag(argc, argv, "--no-overlap");
  set_num_threads(std::stoi(flag(argc, argv, "--threads", "1")));
  auto group = dist::init_process_group("gloo");
  manual_seed(0);
  auto model = nn::make_model(model_name, 10, 3, 32);
  std::unique_ptr<dist::DistributedDataParallel> ddp;
  if (overlap) ddp = std::make_unique<dist::DistributedDataParallel>(model, group);
  nn::Module& net = overlap ? static_cast<nn::Module&>(*ddp) : *model;
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).momentum(0.9).weight_decay(5e-4));
  Generator gen(1 + static_cast<uint64_t>(group->rank()));
  const Tensor x = randn({batch, 3, 32, 32}, gen), y = randint(0, 10, {batch}, gen);
  std::vector<Variable> params = model->parameters();
  auto step = [&] {
    Variable loss = cross_entropy(net.forward(Variable(x)), y);
    opt.zero_grad();
    loss.backward();
    if (!overlap) {  // one flat all-reduce after backward
      std::vector<Tensor> grads;
      for (auto& p : params) grads.push_back(p.grad());
      dist::detail::coalesced(grads, [&](const Tensor& flat) { group->all_reduce(flat, dist::ReduceOp::Avg); });
    }
    opt.step();
  };
  step();
  std::vector<double> times, fills;
  const std::string trace_file = flag(argc, argv, "--trace", "");
  if (!trace_file.empty()) dist::start_trace(trace_file);
  for (int i = 0; i < steps; ++i) {
    const auto start = Clock::now();
    step();
    times.push_back(ms_since(start));
    if (ddp) fills.push_back(ddp->stats().last_fill_ms);
  }
  if (!trace_file.empty()) dist::write_trace(trace_file);  // collective: before the max below
  Tensor slowest = from_vector(times);
  group->all_reduce(slowest, dist::ReduceOp::Max);
  const double ms = median(to_vector<double>(slowest));
  if (group->rank() == 0)
    std::printf(
        "{\"bench\":\"ddp-step\",\"framework\":\"ddl\",\"model\":\"%s\",\"world\":%d,\"batch\":%ld,\"threads\":%d,"
        "\"overlap\":%s,\"ms_per_step\":%.1f,\"comm_wait_ms\":%.1f,\"bucket_fill_ms\":%.2f}\n",
        model_name.c_str(), group->size(), static_cast<long>(batch), get_num_threads(), overlap ? "true" : "false", ms,
        ddp ? ddp->stats().last_wait_ms : 0.0, fills.empty() ? 0.0 : median(fills));
  ddp.reset();
  dist::destroy_process_group();
  return 0;
}
