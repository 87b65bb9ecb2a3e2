// One training step of apps/examples/char_lm's language models, built by the code the
// example uses (ddl::nn::char_lm::make_model, nn/models/char_lm.h): the pre-norm causal
// Transformer (d_model 128, 4 heads, 4 layers, feed-forward 512) or the 2-layer LSTM (embedding 64, hidden 256), on
// random tokens of a 114-symbol vocabulary (the fortunes corpus'), with cross-entropy, backward, gradient clipping and
// AdamW, as the example's loop. bench/torch_seq_step.py is the same step in PyTorch. Prints one JSON line with the
// median ms per step.
//   ddl-bench seq-step --model lstm|transformer [--batch 32] [--seq 128] [--steps 5] [--threads N]
#include <cstdio>
#include <string>

#include "bench/bench_util.h"
#include <ddl/ddl.h>
#include <ddl/nn/models/char_lm.h>

int seq_step_main(int argc, char** argv) {
  ddl::nn::char_lm::ModelConfig cfg;
  cfg.vocab = 114;
  int64_t batch = 32, steps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--model")
      cfg.kind = next();
    else if (a == "--batch")
      batch = std::stoll(next());
    else if (a == "--seq")
      cfg.context = std::stoll(next());
    else if (a == "--steps")
      steps = std::stoll(next());
    else if (a == "--threads" || a == "--clock")
      next();
    else {
      std::fprintf(stderr, "seq-step: unknown flag %s\n", a.c_str());
      return 1;
    }
  }
  DDL_CHECK(batch >= 1 && cfg.context >= 2 && steps >= 1, "seq-step: need --batch >= 1, --seq >= 2, --steps >= 1");
  const int threads = ddl::bench::threads_arg(argc, argv, ddl::get_num_threads());
  ddl::set_num_threads(threads);
  using namespace ddl;
  manual_seed(0);
  const auto model = ddl::nn::char_lm::make_model(cfg);  // throws for a --model it does not know
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-3).betas({0.9, 0.99}).weight_decay(0.01));
  Generator gen(1);
  const int64_t n = batch * cfg.context;
  const Tensor tokens = randint(0, cfg.vocab, {batch, cfg.context}, gen), targets = randint(0, cfg.vocab, {n}, gen);
  const double secs = bench::median_seconds(static_cast<int>(steps), [&] {
    const Variable loss = cross_entropy(model->forward(Variable(tokens)).reshape({n, cfg.vocab}), targets);
    opt.zero_grad();
    loss.backward();
    optim::clip_grad_norm_(model->parameters(), 1.0);
    opt.step();
  });
  std::printf(
      "{\"bench\":\"seq-step\",\"framework\":\"ddl\",\"model\":\"%s\",\"batch\":%ld,\"seq\":%ld,\"threads\":%d,"
      "\"ms_per_step\":%.1f}\n",
      cfg.kind.c_str(), static_cast<long>(batch), static_cast<long>(cfg.context), threads, secs * 1e3);
  return 0;
}
