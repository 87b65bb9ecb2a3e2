// One training step of a character-level language model: an LSTM (Embedding 65x128,
// LSTM 128->256 x2, Linear) or a Transformer (token and position embeddings 128,
// 4 causal encoder layers of 4 heads and feed-forward 512, dropout 0.1, Linear), on
// random tokens, with cross-entropy, backward and Adam. bench/torch_seq_step.py is
// the same step in PyTorch. Prints one JSON line with the median ms per step.
//   ddl-bench seq-step --model lstm|transformer [--batch 32] [--seq 64] [--steps 5] [--threads N]
#include <cstdio>
#include <string>

#include "bench/bench_util.h"
#include "ddl.h"

int seq_step_main(int argc, char** argv) {
  std::string model = "lstm";
  int64_t batch = 32, seq = 64, steps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--model")
      model = next();
    else if (a == "--batch")
      batch = std::stoll(next());
    else if (a == "--seq")
      seq = std::stoll(next());
    else if (a == "--steps")
      steps = std::stoll(next());
    else if (a == "--threads" || a == "--clock")
      next();
    else {
      std::fprintf(stderr, "seq-step: unknown flag %s\n", a.c_str());
      return 1;
    }
  }
  DDL_CHECK(model == "lstm" || model == "transformer", "seq-step: --model must be lstm or transformer, got ", model);
  const int threads = ddl::bench::threads_arg(argc, argv, ddl::get_num_threads());
  ddl::set_num_threads(threads);
  using namespace ddl;
  manual_seed(0);
  const int64_t vocab = 65;
  nn::Embedding tok(vocab, 128), pos(seq, 128);
  nn::LSTM lstm(128, 256, {.num_layers = 2, .batch_first = true});
  nn::TransformerEncoder encoder(
      nn::TransformerEncoderLayer(128, 4, {.dim_feedforward = 512, .dropout = 0.1, .batch_first = true}), 4);
  nn::Linear head(model == "lstm" ? 256 : 128, vocab);
  std::vector<Variable> params;
  for (nn::Module* m : model == "lstm" ? std::vector<nn::Module*>{&tok, &lstm, &head}
                                       : std::vector<nn::Module*>{&tok, &pos, &encoder, &head})
    for (auto& p : m->parameters()) params.push_back(p);
  optim::Adam adam(params, {.lr = 1e-3});
  Generator gen(1);
  const Tensor tokens = randint(0, vocab, {batch, seq}, gen), targets = randint(0, vocab, {batch * seq}, gen);
  const Tensor positions = arange(seq).unsqueeze(0).expand({batch, seq}).contiguous();
  nn::AttentionMasks causal{nn::causal_mask(seq), {}};
  const double secs = bench::median_seconds(static_cast<int>(steps), [&] {
    Variable h = model == "lstm" ? lstm(tok.forward(tokens))
                                 : encoder.forward(add(tok.forward(tokens), pos.forward(positions)), causal);
    Variable loss = cross_entropy(head(h).reshape({batch * seq, vocab}), targets);
    adam.zero_grad();
    loss.backward();
    adam.step();
  });
  std::printf(
      "{\"bench\":\"seq-step\",\"framework\":\"ddl\",\"model\":\"%s\",\"batch\":%ld,\"seq\":%ld,\"threads\":%d,"
      "\"ms_per_step\":%.1f}\n",
      model.c_str(), static_cast<long>(batch), static_cast<long>(seq), threads, secs * 1e3);
  return 0;
}
