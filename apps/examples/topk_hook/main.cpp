// Trains a small MLP data-parallel on a synthetic task with the top-k hook of topk_hook.h
// (or plain DDP with --ratio 1), printing the loss and the all-reduce/all-gather bytes:
//   ddlrun --nproc 2 build/apps/topk_hook --ratio 0.1 --steps 200
#include <CLI/CLI.hpp>
#include <cstdio>

#include "apps/examples/topk_hook/topk_hook.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;

int main(int argc, char** argv) try {
  CLI::App app{"DDP with a user's top-k communication hook (run it under ddlrun)"};
  double ratio = 0.1;
  int64_t steps = 200;
  app.add_option("--ratio", ratio, "share of each bucket sent (1: plain DDP)")->check(CLI::Range(1e-6, 1.0));
  app.add_option("--steps", steps, "SGD steps")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  auto group = dist::init_process_group("gloo");
  manual_seed(0);  // the same teacher and initial student on every rank
  auto teacher = nn::Linear(20, 1);
  auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(20, 64), std::make_shared<nn::Tanh>(), std::make_shared<nn::Linear>(64, 1)});
  dist::DistributedDataParallel ddp(model, group);
  if (ratio < 1) ddp.register_comm_hook(user::topk_hook(ratio));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  Generator data(100 + group->rank());  // each rank its own samples
  for (int64_t step = 0; step < steps; ++step) {
    const Tensor x = randn({32, 20}, data), y = teacher.forward(Variable(x)).data();
    const Variable loss = mse_loss(ddp.forward(Variable(x)), Variable(y));
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (group->rank() == 0 && (step == 0 || step + 1 == steps))
      std::printf("step %lld loss %.5f\n", static_cast<long long>(step + 1), loss.data().item());
  }
  const dist::CommStats s = group->stats();
  if (group->rank() == 0)
    std::printf("bytes sent: all_reduce %lld, all_gather %lld\n",
                static_cast<long long>(s[dist::OpKind::AllReduce].bytes_sent),
                static_cast<long long>(s[dist::OpKind::AllGather].bytes_sent));
  dist::destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "topk_hook: error: %s\n", e.what());
  return 1;
}
