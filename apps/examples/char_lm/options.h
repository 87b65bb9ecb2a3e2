// char_lm's command line.
#pragma once

#include <string>

#include <ddl/nn/models/char_lm.h>

namespace char_lm {

// The models live in the library (nn/models/char_lm.h), where bench/ finds them too.
using ddl::nn::char_lm::make_model;
using ddl::nn::char_lm::ModelConfig;

struct Options {
  ModelConfig model;
  std::string corpus = "/usr/share/games/fortunes";
  int64_t epochs = 1, max_steps = 0, batch = 32, log_every = 50, sample_chars = 300;
  double lr = 3e-3, target_val_loss = 0;
  int threads = 0;
  uint64_t seed = 0;
  std::string snapshot;        // --snapshot PATH: resume from it, save to it (docs/fault_tolerance.md)
  int64_t snapshot_every = 0;  // --snapshot-every N steps (0: at the end of each epoch and of training)
};

// Exits with usage (status 0 for --help, 2 for a bad flag or value).
Options parse_options(int argc, char** argv);

}  // namespace char_lm
