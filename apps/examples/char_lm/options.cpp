// A small flag parser: --name value pairs, each checked and range-checked.
#include "options.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>

namespace char_lm {

namespace {
const char* kUsage =
    "usage: char_lm [--model transformer|lstm] [--epochs N] [--max-steps N] [--batch B] [--context T]\n"
    "               [--lr X] [--layers N] [--d-model E] [--heads H] [--hidden H] [--dropout P] [--threads N]\n"
    "               [--seed S] [--corpus DIR] [--log-every N] [--sample-chars N] [--target-val-loss X]\n"
    "               [--snapshot PATH] [--snapshot-every STEPS]\n";

[[noreturn]] void fail(const std::string& msg) {
  std::fprintf(stderr, "char_lm: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

int64_t integer(const std::string& flag, const std::string& v, int64_t lo, int64_t hi) {
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end || x < lo || x > hi)
    fail(flag + " wants an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'");
  return x;
}

double real(const std::string& flag, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(x >= lo && x <= hi))
    fail(flag + " wants a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'");
  return x;
}
}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  using Setter = std::function<void(const std::string&, const std::string&)>;
  const std::map<std::string, Setter> flags = {
      {"--model",
       [&](auto& f, auto& v) {
         if (v != "transformer" && v != "lstm") fail(f + " must be transformer or lstm, got '" + v + "'");
         o.model.kind = v;
       }},
      {"--epochs", [&](auto& f, auto& v) { o.epochs = integer(f, v, 1, 1000); }},
      {"--max-steps", [&](auto& f, auto& v) { o.max_steps = integer(f, v, 0, 1 << 30); }},
      {"--batch", [&](auto& f, auto& v) { o.batch = integer(f, v, 1, 4096); }},
      {"--context", [&](auto& f, auto& v) { o.model.context = integer(f, v, 2, 4096); }},
      {"--lr", [&](auto& f, auto& v) { o.lr = real(f, v, 1e-8, 10); }},
      {"--layers", [&](auto& f, auto& v) { o.model.layers = o.model.lstm_layers = integer(f, v, 1, 64); }},
      {"--d-model", [&](auto& f, auto& v) { o.model.d_model = integer(f, v, 1, 8192); }},
      {"--heads", [&](auto& f, auto& v) { o.model.heads = integer(f, v, 1, 256); }},
      {"--hidden", [&](auto& f, auto& v) { o.model.hidden = integer(f, v, 1, 8192); }},
      {"--dropout", [&](auto& f, auto& v) { o.model.dropout = real(f, v, 0, 0.99); }},
      {"--threads", [&](auto& f, auto& v) { o.threads = int(integer(f, v, 0, 1024)); }},
      {"--seed", [&](auto& f, auto& v) { o.seed = uint64_t(integer(f, v, 0, INT64_MAX)); }},
      {"--corpus", [&](auto&, auto& v) { o.corpus = v; }},
      {"--log-every", [&](auto& f, auto& v) { o.log_every = integer(f, v, 1, 1 << 30); }},
      {"--sample-chars", [&](auto& f, auto& v) { o.sample_chars = integer(f, v, 0, 100000); }},
      {"--target-val-loss", [&](auto& f, auto& v) { o.target_val_loss = real(f, v, 0, 100); }},
      {"--snapshot", [&](auto&, auto& v) { o.snapshot = v; }},
      {"--snapshot-every", [&](auto& f, auto& v) { o.snapshot_every = integer(f, v, 0, 1 << 30); }},
  };
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    const auto it = flags.find(flag);
    if (it == flags.end()) fail("unknown flag '" + flag + "'");
    if (i + 1 >= argc) fail(flag + " needs a value");
    it->second(flag, argv[++i]);
  }
  if (o.model.d_model % o.model.heads != 0)
    fail("--d-model (" + std::to_string(o.model.d_model) + ") must be a multiple of --heads (" +
         std::to_string(o.model.heads) + ")");
  o.model.ff = 4 * o.model.d_model;
  return o;
}

}  // namespace char_lm
