// libFuzzer target: nn::load_safetensors on arbitrary bytes (header length, JSON header,
// dtypes, shapes, offsets, body). A ddl::Error is the expected answer to a bad file; any
// other exception, a crash, a sanitizer report or a leak is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include <ddl/nn/safetensors.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ddl::fuzz::TempDir dir;
  const std::string path = dir.write("input.safetensors", data, size);
  try {
    const ddl::nn::TensorFile file = ddl::nn::load_safetensors(path);
    // Read every byte a loaded tensor claims, so ASan checks the bounds the loader promised.
    volatile uint64_t sink = 0;
    for (const auto& [name, t] : file.tensors) {
      const auto* p = static_cast<const uint8_t*>(t.raw_data());
      for (size_t i = 0; i < t.nbytes(); ++i) sink = sink + p[i];
    }
  } catch (const ddl::Error&) {
  }
  return 0;
}
