// libFuzzer target: MNIST's IDX readers (data/mnist.cpp) on arbitrary bytes. The first byte
// picks the reader (bit 0: images or labels) and whether the rest is gzip-compressed before
// it is written (bit 1), so the fuzzer explores IDX headers behind the gzip path too; raw
// corrupt gzip streams come from the .gz seeds with bit 1 clear.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_util.h"
#include <ddl/data/mnist.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ddl::fuzz::TempDir dir;
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (mode & 2) {
    uLongf n = compressBound(bytes.size()) + 32;
    std::vector<uint8_t> gz(n);
    // windowBits 15 + 16: a gzip wrapper, as the .gz files carry.
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    z.next_in = bytes.data();
    z.avail_in = static_cast<uInt>(bytes.size());
    z.next_out = gz.data();
    z.avail_out = static_cast<uInt>(gz.size());
    const int rc = deflate(&z, Z_FINISH);
    n = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) return 0;
    gz.resize(n);
    bytes.swap(gz);
  }
  const std::string path = dir.write("input-idx", bytes.data(), bytes.size());
  try {
    const ddl::Tensor t = (mode & 1) ? ddl::data::read_idx_labels(path) : ddl::data::read_idx_images(path);
    volatile uint64_t sink = 0;
    const auto* p = static_cast<const uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.nbytes(); ++i) sink = sink + p[i];
  } catch (const ddl::Error&) {
  }
  return 0;
}
