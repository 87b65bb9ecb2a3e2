// Memory per rank of ZeRO stages 1 and 2 against plain data parallelism (stage 0: DDP with
// a whole Adam on every rank), with Adam, for train_cifar's VGG-11-BN (CIFAR-10 images) or
// char_lm's Transformer (random tokens). Run under ddlrun, one process per rank:
//   ddlrun --nproc N build/bench/ddl-bench zero-memory --model vgg11_bn|transformer --stage 0|1|2
//          [--batch 4] [--steps 2] [--bucket-kb 4096]
// Rank 0 prints one JSON line: bytes of parameters, gradients (at their peak in a step),
// optimizer state, the ZeRO formula for them, and the peak RSS, each the maximum over ranks.
#include <sys/resource.h>

#include <cstdio>
#include <string>

#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/zero/zero_optimizer.h>
#include <ddl/nn/models/char_lm.h>

namespace {
std::string flag_value(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}
}  // namespace

int zero_memory_main(int argc, char** argv) {
  using namespace ddl;
  const std::string model_name = flag_value(argc, argv, "--model", "vgg11_bn");
  const int stage = std::stoi(flag_value(argc, argv, "--stage", "1"));
  const int64_t batch = std::stoll(flag_value(argc, argv, "--batch", "4"));
  const int steps = std::stoi(flag_value(argc, argv, "--steps", "2"));
  const int64_t bucket_kb = std::stoll(flag_value(argc, argv, "--bucket-kb", "4096"));
  DDL_CHECK(stage >= 0 && stage <= 2 && batch >= 1 && steps >= 1, "zero-memory: need --stage 0|1|2, --batch >= 1");
  auto group = dist::init_process_group("gloo");
  const int world = group->size();
  manual_seed(0);
  Generator gen(1 + group->rank());
  std::shared_ptr<nn::Module> model;
  Tensor x, y;
  int64_t classes = 10;
  if (model_name == "transformer") {
    ddl::nn::char_lm::ModelConfig cfg;
    cfg.vocab = classes = 114;
    model = ddl::nn::char_lm::make_model(cfg);
    x = randint(0, cfg.vocab, {batch, cfg.context}, gen);
    y = randint(0, cfg.vocab, {batch * cfg.context}, gen);
  } else {
    model = nn::make_model(model_name, classes, 3, 32);
    x = randn({batch, 3, 32, 32}, gen);
    y = randint(0, classes, {batch}, gen);
  }
  int64_t psi = 0;
  for (const auto& p : model->parameters()) psi += p.numel();
  const auto adam = [](std::vector<Variable> p) { return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-4)); };
  std::shared_ptr<nn::Module> net = model;
  std::unique_ptr<optim::Optimizer> opt;
  dist::ZeroRedundancyOptimizer* zero = nullptr;
  if (stage == 0) {
    net = std::make_shared<dist::DistributedDataParallel>(model, group);
    opt = adam(model->parameters());
  } else {
    auto z = std::make_unique<dist::ZeroRedundancyOptimizer>(
        model->parameters(), group, adam, dist::ZeroOptions().stage(stage).bucket_bytes(bucket_kb * 1024));
    zero = z.get();
    opt = std::move(z);
  }
  int64_t peak_grads = 0;
  for (int s = 0; s < steps; ++s) {
    Variable logits = net->forward(Variable(x));
    if (model_name == "transformer") logits = logits.reshape({-1, classes});
    const Variable loss = cross_entropy(logits, y);
    opt->zero_grad();
    loss.backward();
    int64_t grads = 0;  // stage 0: every parameter's gradient after backward (DDP's buckets besides)
    for (const auto& p : model->parameters())
      if (p.grad().defined()) grads += static_cast<int64_t>(p.grad().nbytes());
    peak_grads = std::max(peak_grads, grads);
    opt->step();
  }
  int64_t state = 0;
  if (zero) {
    const dist::ZeroMemory m = zero->memory();
    peak_grads = m.peak_grads;
    state = m.optimizer_state;
  } else {
    for (const auto& [name, t] : opt->state_tensors()) state += static_cast<int64_t>(t.nbytes());
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  // The maximum over ranks of each figure.
  const Tensor v = from_vector(std::vector<double>{double(peak_grads), double(state), double(ru.ru_maxrss) * 1024});
  group->all_reduce(v, dist::ReduceOp::Max);
  const auto m = to_vector<double>(v);
  const double p4 = 4.0 * psi;
  const double f_grads = stage == 2 ? p4 / world : p4, f_state = stage == 0 ? 2 * p4 : 2 * p4 / world;
  if (group->rank() == 0)
    std::printf(
        "{\"bench\":\"zero-memory\",\"model\":\"%s\",\"params\":%ld,\"world\":%d,\"stage\":%d,\"batch\":%ld,\"bucket_"
        "kb\":%ld,"
        "\"param_mb\":%.2f,\"peak_grad_mb\":%.2f,\"formula_grad_mb\":%.2f,\"adam_state_mb\":%.2f,"
        "\"formula_state_mb\":%.2f,\"total_mb\":%.2f,\"formula_total_mb\":%.2f,\"peak_rss_mb\":%.1f}\n",
        model_name.c_str(), static_cast<long>(psi), world, stage, static_cast<long>(batch),
        static_cast<long>(bucket_kb), p4 / 1e6, m[0] / 1e6, f_grads / 1e6, m[1] / 1e6, f_state / 1e6,
        (p4 + m[0] + m[1]) / 1e6, (p4 + f_grads + f_state) / 1e6, m[2] / 1e6);
  dist::destroy_process_group();
  return 0;
}
