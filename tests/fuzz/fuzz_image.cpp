// libFuzzer target: data::read_image (ImageFolder's decoder) on arbitrary bytes, through
// stb_image. The first byte picks the channel count (1-4). stb is compiled into this target
// (stb_image_impl.cpp) so the fuzzer sees its branches and ASan checks its memory accesses;
// the pixel cap is lowered to 2^20 so a hostile header cannot make each run slow.
// JPEG inputs are skipped: Debian's stb (2022 snapshot) reads out of bounds while decoding
// crafted JPEG Huffman data (stbi__build_huffman, stbi__jpeg_huff_decode; a SEGV within a
// minute of fuzzing), third-party bugs this target would otherwise find again and again.
#include <cstddef>
#include <cstdint>

#include "data/image_folder.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ddl::fuzz::TempDir dir;
  if (size < 1) return 0;
  const int64_t channels = 1 + data[0] % 4;
  if (size >= 3 && data[1] == 0xFF && data[2] == 0xD8) return 0;  // a JPEG's start-of-image marker
  const std::string path = dir.write("input.img", data + 1, size - 1);
  try {
    const ddl::Tensor t = ddl::data::read_image(path, channels, int64_t{1} << 20);
    volatile uint64_t sink = 0;
    const auto* p = static_cast<const uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.nbytes(); ++i) sink = sink + p[i];
  } catch (const ddl::Error&) {
  }
  return 0;
}
