// ImageFolder listing and image decoding: JPEG through libjpeg-turbo (jpeg_decode.cpp),
// every other format through stb_image after ddl's own header checks (libstb holds the
// implementation: STB_IMAGE_IMPLEMENTATION must not be defined here). stbi_load_from_memory
// is thread-safe as long as nobody flips stb's global settings.
#include <stb_image.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <limits>

#include <ddl/data/file_io.h>
#include <ddl/data/image_folder.h>
#include <ddl/data/jpeg_decode.h>
#include <ddl/tensor/core/factory.h>

namespace fs = std::filesystem;

namespace ddl::data {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A binary PNM (P5/P6) header read as stb_image 2.27 (Debian's) reads it: width, height and
// maxval, each after whitespace and '#' comments. stb accumulates each number in an int
// unchecked (undefined past 2^31) and reads past its buffer converting maxval > 255 (16-bit)
// to 8 bits; both found by tests/fuzz/fuzz_image. Refuse them before stb sees the file.
void check_pnm_header(const std::vector<uint8_t>& b, const std::string& path) {
  static const char* const kField[] = {"width", "height", "maxval"};
  size_t i = 2;
  for (const char* field : kField) {
    for (;;) {
      while (i < b.size() && std::isspace(b[i])) ++i;
      if (i >= b.size() || b[i] != '#') break;
      while (i < b.size() && b[i] != '\n' && b[i] != '\r') ++i;
    }
    size_t digits = 0;
    int64_t value = 0;
    for (; i < b.size() && std::isdigit(b[i]); ++i, ++digits)
      if (digits < 9) value = value * 10 + (b[i] - '0');
    DDL_CHECK(digits <= 9, "read_image: '", path, "': the PNM header's ", field, " has ", digits,
              " digits; a corrupt or hostile header?");
    if (field == kField[2])
      DDL_CHECK(value <= 255, "read_image: '", path, "' is a 16-bit PNM image (maxval ", value,
                "), which this build's stb_image cannot decode safely; convert it to 8 bits (e.g. pnmdepth 255)");
  }
}

// A PNG's chunk lengths, checked against the file before stb_image 2.27 reads them: it adds
// a chunk's length to its read pointer unchecked (undefined behaviour past the buffer, and a
// length of 2^31 or more turns negative), found by tests/fuzz/fuzz_image. Empty IDAT chunks
// are dropped: they hold no image data, and stb copies an empty one into its not yet
// allocated buffer (memcpy(NULL, p, 0), undefined; also found by fuzz_image).
void check_png_chunks(std::vector<uint8_t>& b, const std::string& path) {
  size_t i = 8;  // after the signature
  while (i + 8 <= b.size()) {
    const uint32_t length = detail::read_be32(b.data() + i);
    DDL_CHECK(length <= 0x7fffffffu && length <= b.size() - i - 8, "read_image: '", path, "': the PNG chunk at offset ",
              i, " claims ", length, " bytes, more than the file holds; a corrupt or hostile file?");
    const bool end = std::memcmp(b.data() + i + 4, "IEND", 4) == 0;
    if (length == 0 && std::memcmp(b.data() + i + 4, "IDAT", 4) == 0) {
      const auto at = b.begin() + static_cast<std::ptrdiff_t>(i);
      b.erase(at, at + static_cast<std::ptrdiff_t>(std::min<size_t>(12, b.size() - i)));
      continue;
    }
    i += size_t{12} + length;  // length, type, data, CRC
    if (end) break;
  }
}

// stb takes any run of 0xFF fill bytes before the SOI marker as a JPEG (stbi__get_marker)
// and then builds Huffman tables from it, out of bounds on crafted input (fuzz_image, even
// from stbi_info): such files go to libjpeg too, which refuses what does not start FF D8.
bool stb_would_read_as_jpeg(const std::vector<uint8_t>& b) {
  size_t i = 0;
  while (i < b.size() && b[i] == 0xFF) ++i;
  return i > 0 && i < b.size() && b[i] == 0xD8;
}

}  // namespace

Tensor read_image(const std::string& path, int64_t channels, int64_t max_pixels) {
  DDL_CHECK(channels >= 1 && channels <= 4, "read_image: channels must be 1 to 4, got ", channels);
  std::vector<uint8_t> bytes = detail::read_file(path, "read_image");
  DDL_CHECK(!bytes.empty(), "read_image: '", path, "' is empty, expected an encoded image");
  DDL_CHECK(bytes.size() <= static_cast<size_t>(std::numeric_limits<int>::max()), "read_image: '", path, "' has ",
            bytes.size(), " bytes, more than stb_image can read");
  if (detail::is_jpeg(bytes) || stb_would_read_as_jpeg(bytes))
    return detail::decode_jpeg(bytes, path, channels, max_pixels);
  if (bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6')) check_pnm_header(bytes, path);
  static const uint8_t kPngSignature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPngSignature, 8) == 0) check_png_chunks(bytes, path);
  int w = 0, h = 0, comp = 0;
  // The header's size first: decoding is where a small file becomes gigabytes.
  if (stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &comp))
    DDL_CHECK(int64_t{w} * h <= max_pixels, "read_image: '", path, "' is a ", w, "x", h, " image (", int64_t{w} * h,
              " pixels), more than the ", max_pixels,
              " allowed (ImageFolderOptions::max_pixels); a corrupt or hostile header?");
  uint8_t* pixels =
      stbi_load_from_memory(bytes.data(), static_cast<int>(bytes.size()), &w, &h, &comp, static_cast<int>(channels));
  DDL_CHECK(pixels != nullptr, "read_image: cannot decode '", path, "' (", bytes.size(),
            " bytes): ", stbi_failure_reason(), "; expected a PNG, JPEG, BMP, TGA, GIF, PNM or PSD image");
  // pixels: [H, W, C] -> out: [C, H, W]
  Tensor out = empty({channels, h, w}, DType::UInt8);
  uint8_t* o = out.data<uint8_t>();
  const int64_t hw = int64_t{h} * w;
  for (int64_t p = 0; p < hw; ++p)
    for (int64_t c = 0; c < channels; ++c) o[c * hw + p] = pixels[p * channels + c];
  stbi_image_free(pixels);
  return out;
}

ImageFolder::ImageFolder(const std::string& root, Transform transform, ImageFolderOptions options)
    : Dataset(std::move(transform)), options_(std::move(options)) {
  DDL_CHECK(options_.channels >= 1 && options_.channels <= 4, "ImageFolder: channels must be 1 to 4, got ",
            options_.channels);
  DDL_CHECK((options_.resize_height > 0) == (options_.resize_width > 0),
            "ImageFolder: set both resize_height and resize_width, or neither");
  std::error_code ec;
  DDL_CHECK(fs::is_directory(root, ec), "ImageFolder: '", root, "' is not a directory (expected root/<class>/<image>)");
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.is_directory()) folders.push_back(entry.path().filename().string());
  std::sort(folders.begin(), folders.end());
  DDL_CHECK(!folders.empty(), "ImageFolder: '", root, "' has no class sub-folders (expected root/<class>/<image>)");
  classes_ = options_.classes.empty() ? folders : options_.classes;
  for (const std::string& folder : folders) {
    const auto at = std::find(classes_.begin(), classes_.end(), folder);
    DDL_CHECK(at != classes_.end(), "ImageFolder: '", (fs::path(root) / folder).string(), "' is not one of the ",
              classes_.size(),
              " classes given (those of the training split?); its images "
              "would have no label");
    const int64_t c = at - classes_.begin();
    std::vector<std::string> files;
    const fs::path dir = fs::path(root) / folder;
    for (const auto& entry : fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink)) {
      if (!entry.is_regular_file()) continue;
      const std::string ext = lower(entry.path().extension().string());
      if (std::find(options_.extensions.begin(), options_.extensions.end(), ext) != options_.extensions.end())
        files.push_back(entry.path().string());
    }
    DDL_CHECK(!files.empty(), "ImageFolder: class folder '", dir.string(), "' holds no image files");
    std::sort(files.begin(), files.end());
    for (auto& f : files) samples_.emplace_back(std::move(f), c);
  }
}

Example ImageFolder::load(int64_t index) const {
  const auto& [path, label] = samples_[static_cast<size_t>(index)];
  Tensor image = read_image(path, options_.channels, options_.max_pixels);
  if (options_.resize_height > 0 &&
      (image.size(1) != options_.resize_height || image.size(2) != options_.resize_width)) {
    TransformContext unused(0, 0, index);
    image = Resize(options_.resize_height, options_.resize_width)(image, unused);
  }
  return {image, scalar_tensor(static_cast<double>(label), DType::Int64)};
}

}  // namespace ddl::data
