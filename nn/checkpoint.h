// Saving and loading a module's state (parameters and buffers, by name) in
// safetensors, compatible with PyTorch's state_dict of the same network.
#pragma once

#include <map>
#include <string>

#include "nn/module.h"

namespace ddl::nn {

void save_state(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata = {});

// Every tensor of the module must be in the file with the same shape; dtypes
// convert only between float types. Extra tensors in the file are an error
// unless `strict` is false. Nothing is modified when any check fails.
// Returns the file's metadata.
std::map<std::string, std::string> load_state(Module& module, const std::string& path, bool strict = true);

}  // namespace ddl::nn
