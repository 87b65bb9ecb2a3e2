// fsdp_memory: memory per rank of FullyShardedDataParallel with Adam, against ZeRO
// stage 3's model-state formula (Rajbhandari et al. 2020, section 5): fp32 parameters,
// gradients and Adam's two moments, (4 + 4 + 8)·Ψ/N bytes per rank, plus the full
// parameters of the units gathered at once. Run under ddlrun:
//   ddlrun --nproc N build/bench/fsdp_memory vgg11_bn|transformer [batch]
// Prints one JSON line per rank. Activations are not part of the formula: the batch is
// kept small, and the allocator's peak is printed beside the model-state figures.
#include <sys/resource.h>

#include <cstdio>
#include <string>

#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/nn/models/char_lm.h>

using namespace ddl;

int main(int argc, char** argv) try {
  const std::string which = argc > 1 ? argv[1] : "vgg11_bn";
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 2;
  set_num_threads(1);
  auto group = dist::init_process_group("gloo");
  const int64_t before = cpu::memory_stats().allocated_bytes;

  manual_seed(0);
  std::shared_ptr<nn::Module> model;
  Tensor x, y;
  Generator g(1);
  if (which == "transformer") {
    ddl::nn::char_lm::ModelConfig c;  // char_lm's defaults: d_model 128, 4 heads, 4 layers, ff 512, context 128
    c.vocab = 96;
    model = ddl::nn::char_lm::make_model(c);
    x = randint(0, c.vocab, {batch, c.context}, g);
    y = randint(0, c.vocab, {batch * c.context}, g);
  } else {
    model = nn::make_model(which, 10, 3);
    x = randn({batch, 3, 32, 32}, g);
    y = randint(0, 10, {batch}, g);
  }
  const int64_t psi = model->parameter_count();
  const int64_t buffers = [&] {
    int64_t n = 0;
    for (const auto& b : model->buffers()) n += b.data().nbytes();
    return n;
  }();
  dist::FullyShardedDataParallel fsdp(model, group);
  int64_t largest = 0;
  for (const auto& u : fsdp.units()) largest = std::max(largest, u.shard_numel * group->size() * 4);
  const int64_t after_wrap = cpu::memory_stats().allocated_bytes - before;
  optim::Adam opt(fsdp.parameters(), optim::AdamOptions(1e-3));
  int64_t state_bytes = 0;
  for (int step = 0; step < 3; ++step) {
    Variable logits = fsdp(Variable(x));
    if (which == "transformer") logits = logits.reshape({-1, logits.size(-1)});
    Variable loss = cross_entropy(logits, y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    // Shards, their gradients and Adam's moments (and the inputs, the buffers): what stays.
    state_bytes = cpu::memory_stats().allocated_bytes - before - x.nbytes() - y.nbytes();
  }
  const int n = group->size();
  const double formula = 16.0 * static_cast<double>(psi) / n + static_cast<double>(largest);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "{\"model\":\"%s\",\"rank\":%d,\"world\":%d,\"batch\":%ld,\"params\":%ld,\"units\":%zu,"
      "\"largest_unit_mb\":%.2f,\"formula_mb\":%.2f,\"after_wrap_mb\":%.2f,\"model_state_mb\":%.2f,"
      "\"buffers_mb\":%.3f,\"peak_gathered_mb\":%.2f,\"model_state_plus_gathered_mb\":%.2f,"
      "\"allocator_peak_mb\":%.2f,\"peak_rss_mb\":%.1f}\n",
      which.c_str(), group->rank(), n, static_cast<long>(batch), static_cast<long>(psi), fsdp.units().size(),
      largest / 1e6, formula / 1e6, after_wrap / 1e6, state_bytes / 1e6, buffers / 1e6,
      fsdp.stats().peak_gathered_bytes / 1e6, (state_bytes + fsdp.stats().peak_gathered_bytes) / 1e6,
      (cpu::memory_stats().peak_allocated_bytes - before) / 1e6, ru.ru_maxrss / 1024.0);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "fsdp_memory: error: %s\n", e.what());
  return 1;
}
