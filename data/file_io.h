// Whole-file reading for the dataset readers: plain or gzip (zlib inflates
// transparently, decided by the file's content, not its name). Internal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddl::data::detail {

// The file's bytes, inflated when gzip-compressed. Throws ddl::Error naming
// `format` and the path when the file is missing, unreadable or a corrupt gzip stream.
std::vector<uint8_t> read_file(const std::string& path, const char* format);

bool file_exists(const std::string& path);

// Big-endian 32-bit unsigned integer at p (IDX headers).
inline uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace ddl::data::detail
