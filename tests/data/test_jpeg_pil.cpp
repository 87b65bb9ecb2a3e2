// JPEG decoding checked against PIL (Debian's python3-pil, which links the same
// libjpeg-turbo): a folder of JPEGs (stb_image_write's baseline 4:2:0 and 4:4:4, PIL's
// progressive and greyscale) decodes through ImageFolder to exactly PIL's pixels. Skipped
// (exit 77) when /usr/bin/python3 has no PIL. The script: tests/data/pil_jpeg.py.
#include <stb_image_write.h>  // libstb holds the implementation

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "temp_dir.h"
#include "tests/common/skip.h"
#include <ddl/data/image_folder.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;
using ddl::test::TempDir;

namespace {

void write_jpg(const std::string& path, int w, int h, int quality) {
  std::vector<uint8_t> p(static_cast<size_t>(w * h * 3));
  for (size_t i = 0; i < p.size(); ++i)
    p[i] = static_cast<uint8_t>((i * 13 + i / 7) % 256);  // busy: every block differs
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  REQUIRE(stbi_write_jpg(path.c_str(), w, h, 3, p.data(), quality) != 0);
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

}  // namespace

TEST_CASE("a JPEG folder decodes to exactly PIL's pixels", "[data][image][jpeg][pil]") {
  const char* script = std::getenv("DDL_PIL_JPEG_SCRIPT");
  REQUIRE(script != nullptr);
  if (std::system("/usr/bin/python3 -c 'import PIL' 2>/dev/null") != 0) DDL_SKIP("/usr/bin/python3 has no PIL");
  TempDir dir;
  write_jpg(dir / "stb/subsampled.jpg", 37, 23, 75);  // stb writes 4:2:0 at quality <= 90
  write_jpg(dir / "stb/full.jpg", 40, 16, 95);        // and 4:4:4 above
  const std::string cmd = "/usr/bin/python3 '" + std::string(script) + "' '" + dir.str() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);

  ImageFolderOptions rgb_only;
  rgb_only.extensions = {".jpg"};
  ImageFolder ds(dir.str(), {}, rgb_only);
  REQUIRE(ds.size() == 4);  // pil/grey, pil/progressive, stb/full, stb/subsampled
  int checked = 0;
  for (int64_t i = 0; i < ds.size(); ++i) {
    const std::string path = ds.samples()[static_cast<size_t>(i)].first;
    const std::string raw = slurp(path + ".raw");
    const size_t nl = raw.find('\n');
    REQUIRE(nl != std::string::npos);
    const std::string mode = raw.substr(0, nl);
    const int64_t channels = mode == "L" ? 1 : 3;
    INFO(path << " (PIL mode " << mode << ")");
    REQUIRE((mode == "L" || mode == "RGB"));
    // PIL's bytes are [H, W, C]; ddl's [C, H, W].
    const Tensor img = channels == 1 ? read_image(path, 1) : ds.get(i).data;
    const int64_t h = img.size(1), w = img.size(2);
    REQUIRE(raw.size() - nl - 1 == static_cast<size_t>(channels * h * w));
    const auto got = to_vector<int>(img);
    int64_t differing = 0;
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < h * w; ++p)
        differing += got[static_cast<size_t>(c * h * w + p)] !=
                     static_cast<uint8_t>(raw[nl + 1 + static_cast<size_t>(p * channels + c)]);
    CHECK(differing == 0);
    ++checked;
  }
  CHECK(checked == 4);
}
