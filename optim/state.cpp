// Optimizer state <-> safetensors.
#include <ddl/nn/safetensors.h>
#include <ddl/optim/state.h>

namespace ddl::optim {

void save_optimizer(const Optimizer& opt, const std::string& path) {
  nn::save_safetensors(path, opt.state_tensors(), opt.state_metadata());
}

void load_optimizer(Optimizer& opt, const std::string& path) {
  const nn::TensorFile f = nn::load_safetensors(path);
  opt.load_state(f.tensors, f.metadata);
}

}  // namespace ddl::optim
