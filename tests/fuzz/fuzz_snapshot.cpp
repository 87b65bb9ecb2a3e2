// libFuzzer target: the snapshot metadata of train_cifar (ft/snapshot.cpp):
// load_snapshot on arbitrary bytes into a small model and an SGD with momentum, so the
// position fields, the hyperparameter checks, the model's and the optimizer's state are all
// parsed. A ddl::Error is the expected answer to a bad file; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz_util.h"
#include <ddl/ft/snapshot.h>
#include <ddl/nn/layers.h>
#include <ddl/optim/sgd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ddl::fuzz::TempDir dir;
  const std::string path = dir.write("snapshot.safetensors", data, size);
  // Fresh each time: a rejected snapshot may have loaded part of the state.
  ddl::nn::Linear model(3, 2);
  ddl::optim::SGD opt(model.parameters(), ddl::optim::SGDOptions(0.1).momentum(0.9));
  ddl::ft::TrainingPosition pos;
  pos.seed = 1;
  pos.batch_size = 4;
  try {
    ddl::ft::load_snapshot(path, model, opt, pos);
  } catch (const ddl::Error&) {
  }
  return 0;
}
