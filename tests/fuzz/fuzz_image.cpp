// libFuzzer target: data::read_image (ImageFolder's decoder) on arbitrary bytes: JPEG through
// libjpeg-turbo (data/jpeg_decode.cpp), every other format through stb_image after ddl's
// header checks. The first byte picks the channel count (1-4). stb is compiled into this
// target (stb_image_impl.cpp) so the fuzzer sees its branches and ASan checks its memory
// accesses; libjpeg-turbo is Debian's shared library (ASan sees what it does through libc
// and ddl's callbacks, not its own reads). The pixel cap is lowered to 2^20 so a hostile
// header cannot make each run slow.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include <ddl/data/image_folder.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ddl::fuzz::TempDir dir;
  if (size < 1) return 0;
  const int64_t channels = 1 + data[0] % 4;
  const std::string path = dir.write("input.img", data + 1, size - 1);
  try {
    const ddl::Tensor t = ddl::data::read_image(path, channels, int64_t{1} << 20);
    volatile uint64_t sink = 0;
    const auto* p = static_cast<const uint8_t*>(t.raw_data());
    const size_t n = t.nbytes();  // once: numel() per byte made a 3 MB image take 22 s under load
    for (size_t i = 0; i < n; ++i) sink = sink + p[i];
  } catch (const ddl::Error&) {
  }
  return 0;
}
