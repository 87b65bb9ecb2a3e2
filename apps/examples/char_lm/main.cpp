// A character-level language model trained with DDP, written only against ddl's public
// API (docs/char_lm.md). One process, or several under ddlrun:
//   build/apps/char_lm --model transformer --epochs 1
//   build/apps/ddlrun --nproc 2 build/apps/char_lm --model lstm --epochs 1
// Each epoch every rank trains on its shard of the windows (DistributedSampler), DDP
// averages the gradients, and all ranks then score the whole validation split together.
// Prints the validation loss in nats per character, and a sample of generated text.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "corpus.h"
#include "options.h"
#include <ddl/dist/dist.h>
#include <ddl/ft/ft.h>
#include <ddl/nn/models/char_lm.h>

using namespace ddl;

namespace {

// Mean cross-entropy over the validation windows, each rank scoring its shard.
double validation_loss(nn::Module& model, const char_lm::Corpus& corpus, const char_lm::Options& o,
                       dist::ProcessGroup* group) {
  NoGradGuard no_grad;
  model.eval();
  auto val = std::make_shared<char_lm::CharWindows>(corpus.val, o.model.context);
  const int rank = group ? group->rank() : 0, world = group ? group->size() : 1;
  auto sampler = std::make_shared<data::DistributedSampler>(val->size(), world, rank, /*shuffle=*/false);
  data::DataLoader loader(val, data::DataLoaderOptions(o.batch).sampler(sampler));
  Tensor sums = zeros({2}, DType::Float64);  // loss * tokens, tokens
  for (const data::Batch& b : loader) {
    const Variable logits = model.forward(Variable(b.data));
    const int64_t n = b.target.numel();
    const double loss = cross_entropy(logits.reshape({n, -1}), b.target.reshape({n})).item();
    sums.add_(from_vector<double>({loss * double(n), double(n)}));
  }
  if (group) group->all_reduce(sums);
  model.train();
  return sums.data<double>()[0] / sums.data<double>()[1];
}

// Draws `count` characters after `prompt`, one at a time, at temperature 0.8.
std::string sample(nn::Module& model, const char_lm::Corpus& corpus, const std::string& prompt, int64_t count,
                   int64_t context, Generator& gen) {
  NoGradGuard no_grad;
  model.eval();
  std::string text = corpus.encode(prompt);
  for (int64_t i = 0; i < count; ++i) {
    const std::string tail = text.substr(text.size() > size_t(context) ? text.size() - context : 0);
    Tensor tokens = empty({1, int64_t(tail.size())}, DType::Int64);
    for (size_t j = 0; j < tail.size(); ++j) tokens.data<int64_t>()[j] = int64_t(corpus.vocab.find(tail[j]));
    const Tensor last = model.forward(Variable(tokens)).data().select(1, int64_t(tail.size()) - 1);  // [1, V]
    const Tensor p = softmax(mul(last, 1 / 0.8), 1).contiguous();
    double u = rand({1}, gen).item(), acc = 0;
    int64_t pick = 0;
    for (; pick + 1 < p.numel(); ++pick)
      if ((acc += p.data<float>()[pick]) > u) break;
    text += corpus.vocab[size_t(pick)];
  }
  model.train();
  return text;
}

int64_t parameter_count(const nn::Module& m) {
  int64_t n = 0;
  for (const Variable& p : m.parameters()) n += p.data().numel();
  return n;
}

}  // namespace

int main(int argc, char** argv) try {
  char_lm::Options o = char_lm::parse_options(argc, argv);
  std::shared_ptr<dist::ProcessGroup> group;
  if (std::getenv("WORLD_SIZE")) group = dist::init_process_group("gloo");  // under ddlrun or torchrun
  const int rank = group ? group->rank() : 0, world = group ? group->size() : 1;
  if (o.threads > 0) set_num_threads(o.threads);
  const char_lm::Corpus corpus = char_lm::load_corpus(o.corpus);
  o.model.vocab = int64_t(corpus.vocab.size());

  manual_seed(o.seed);  // the same initial weights everywhere (DDP also broadcasts rank 0's)
  std::shared_ptr<nn::Module> model = char_lm::make_model(o.model);
  std::shared_ptr<nn::Module> trained = model;
  if (group) trained = std::make_shared<dist::DistributedDataParallel>(model, group);

  auto train = std::make_shared<char_lm::CharWindows>(corpus.train, o.model.context);
  auto sampler = std::make_shared<data::DistributedSampler>(train->size(), world, rank, true, o.seed, true);
  data::DataLoader loader(train, data::DataLoaderOptions(o.batch).sampler(sampler).drop_last(true));
  const int64_t steps = o.max_steps > 0 ? std::min(o.max_steps, o.epochs * loader.size()) : o.epochs * loader.size();
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(o.lr).betas({0.9, 0.99}).weight_decay(0.01));
  optim::OneCycleLR schedule(opt, o.lr, steps, {.pct_start = 0.1, .cycle_momentum = false});
  if (rank == 0)
    std::printf(
        "char_lm: %s, %lld parameters, vocabulary %zu, %lld train / %lld val characters from %lld files, "
        "%d rank(s), %lld steps of %lld x %lld tokens per rank\n",
        o.model.kind.c_str(), (long long)parameter_count(*model), corpus.vocab.size(), (long long)corpus.train.numel(),
        (long long)corpus.val.numel(), (long long)corpus.files, world, (long long)steps, (long long)o.batch,
        (long long)o.model.context);

  // Fault tolerance (docs/fault_tolerance.md): with --snapshot, every rank resumes from the
  // same snapshot when one exists; ranks that disagree all stop with one message.
  ft::State state{.model = model.get(),
                  .optimizer = &opt,
                  .position = {.seed = o.seed, .world_size = world, .batch_size = o.batch}};
  ft::Position& pos = state.position;
  if (!o.snapshot.empty() && ft::resume(o.snapshot, state, group.get()).resumed) {
    schedule.set_step(pos.global_step);
    if (rank == 0)
      std::printf("resumed from %s at epoch %lld, step %lld\n", o.snapshot.c_str(), (long long)pos.epoch + 1,
                  (long long)pos.global_step);
  }
  auto snapshot = [&](int64_t epoch, int64_t step_in_epoch) {
    pos.epoch = epoch, pos.step_in_epoch = step_in_epoch;
    if (!o.snapshot.empty()) ft::save(o.snapshot, state, group.get());
  };

  const auto start = std::chrono::steady_clock::now();
  int64_t& step = pos.global_step;
  if (rank == 0)
    std::printf("a model that knows nothing scores ln(%zu) = %.4f nats/char\n", corpus.vocab.size(),
                std::log(double(corpus.vocab.size())));
  for (int64_t epoch = pos.epoch, first = pos.epoch; step < steps; ++epoch) {
    int64_t in_epoch = epoch == first ? pos.step_in_epoch : 0;
    for (auto batch = ft::resume_batches(loader, {.epoch = epoch, .step_in_epoch = in_epoch}); batch != loader.end();
         ++batch) {
      if (step == steps) break;
      const data::Batch& b = *batch;
      const Variable logits = trained->forward(Variable(b.data));  // [B, T, V]
      const int64_t n = b.target.numel();
      const Variable loss = cross_entropy(logits.reshape({n, -1}), b.target.reshape({n}));
      opt.zero_grad();
      loss.backward();  // DDP averages the gradients across ranks here
      optim::clip_grad_norm_(model->parameters(), 1.0);
      opt.step();
      schedule.step();
      ++step, ++in_epoch;
      if (o.snapshot_every > 0 && step % o.snapshot_every == 0) snapshot(epoch, in_epoch);
      if (rank == 0 && (step % o.log_every == 0 || step == steps)) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("step %lld/%lld: train loss %.4f, lr %.2e, %.0f tokens/s per rank\n", (long long)step,
                    (long long)steps, loss.item(), opt.param_groups()[0].lr(), double(step * n) / s);
        std::fflush(stdout);
      }
    }
    if (step < steps || in_epoch == loader.size())
      snapshot(epoch + 1, 0);  // an epoch done
    else
      snapshot(epoch, in_epoch);  // --max-steps ended it
  }
  const double val = validation_loss(*model, corpus, o, group.get());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank == 0) {
    std::printf("final: val loss %.4f nats/char (%.3f bits/char) after %lld steps, %.1f s\n", val, val / std::log(2.0),
                (long long)step, s);
    Generator gen(o.seed);
    std::cout << "sample:\n" << sample(*model, corpus, "The ", o.sample_chars, o.model.context, gen) << "\n";
  }
  if (o.target_val_loss > 0 && val > o.target_val_loss) {
    if (rank == 0) std::fprintf(stderr, "char_lm: val loss %.4f above the target %.4f\n", val, o.target_val_loss);
    return 3;
  }
  if (group) dist::destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::cerr << "char_lm: error: " << e.what() << "\n";
  return 1;
}
