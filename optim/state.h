// Saving and restoring an optimizer's state (momentum buffers, Adam moments,
// step counts, group options) in safetensors, next to the model checkpoint.
#pragma once

#include <string>

#include <ddl/optim/optimizer.h>

namespace ddl::optim {

void save_optimizer(const Optimizer& opt, const std::string& path);
// The optimizer must have the same groups and parameter shapes as the saved one.
void load_optimizer(Optimizer& opt, const std::string& path);

}  // namespace ddl::optim
