// The safetensors file format (https://github.com/huggingface/safetensors):
// 8-byte little-endian header length N, N bytes of JSON mapping each tensor
// name to {dtype, shape, data_offsets: [begin, end]} (plus an optional
// "__metadata__" map of strings), then the raw little-endian tensor bytes.
// Writes are atomic: a temporary file, fsync, then rename.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl::nn {

struct TensorFile {
  std::vector<std::pair<std::string, Tensor>> tensors;  // in file order
  std::map<std::string, std::string> metadata;
};

// Writes CPU copies of `tensors` (names must be unique) to `path`, atomically, with file mode
// `mode` less the umask (snapshots pass 0600: a run's state is its owner's).
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {}, unsigned mode = 0644);

// Reads and validates a whole file: header size, JSON, dtypes, shapes, offsets
// (in bounds, non-overlapping, covering the data). Errors name the file and the tensor.
TensorFile load_safetensors(const std::string& path);

}  // namespace ddl::nn
