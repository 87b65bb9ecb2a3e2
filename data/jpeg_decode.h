// JPEG decoding with libjpeg-turbo (read_image's JPEG path). Every libjpeg error, and a
// truncated file, becomes a ddl::Error naming the file; the size is checked from the header
// before anything is decompressed. Not a general JPEG API: no scaling, no metadata, no
// EXIF orientation (PIL's Image.open ignores it too). Internal to data/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl::data::detail {

// Whether `bytes` start with a JPEG start-of-image marker (FF D8).
bool is_jpeg(const std::vector<uint8_t>& bytes);

// Decodes a JPEG to uint8 [channels, H, W]: 1 grey, 3 RGB, 4 RGB with alpha 255. Throws
// ddl::Error naming `path` when libjpeg reports an error, the data ends early, or the image
// has more than `max_pixels` pixels (checked from the header, before decompressing).
Tensor decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& path, int64_t channels, int64_t max_pixels);

}  // namespace ddl::data::detail
