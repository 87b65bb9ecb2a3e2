// Scratch folders and raw tensor bytes for tests that write files and compare them bit for bit.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include <ddl/tensor/core/tensor.h>

namespace ddl::test {

// An empty folder <tmp>/<prefix>_<pid>_<name>, made anew (a leftover of a killed run is removed).
inline std::string fresh_dir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// The raw bytes of a tensor, as a file holds them.
inline std::string tensor_bits(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.raw_data()), c.nbytes());
}

}  // namespace ddl::test
