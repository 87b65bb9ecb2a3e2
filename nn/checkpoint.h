// Saving and loading a module's state (parameters and buffers, by name) in
// safetensors, compatible with PyTorch's state_dict of the same network.
#pragma once

#include <map>
#include <string>

#include <ddl/nn/module.h>

namespace ddl::nn {

void save_state(const Module& module, const std::string& path, const std::map<std::string, std::string>& metadata = {});

// Every tensor of the module must be in the file with the same shape; dtypes
// convert only between float types. Extra tensors in the file are an error
// unless `strict` is false; so is a NaN or infinite value in a tensor the module
// takes, counted after conversion to the module's dtype, unless `allow_nonfinite` (a diverged run's weights would train
// or score garbage silently). Nothing is modified when any check fails. Returns the file's metadata.
std::map<std::string, std::string> load_state(Module& module, const std::string& path, bool strict = true,
                                              bool allow_nonfinite = false);

// How many elements of `t` are NaN and how many infinite (0, 0 for integer tensors).
std::pair<int64_t, int64_t> count_nonfinite(const Tensor& t);

}  // namespace ddl::nn
