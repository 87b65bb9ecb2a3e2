// Whole-file reading for the dataset readers: plain or gzip (zlib inflates
// transparently, decided by the file's content, not its name). Internal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddl::data::detail {

// The file's bytes, inflated when gzip-compressed. Throws ddl::Error naming
// `format` and the path when the file is missing, not a regular file, unreadable, a
// corrupt gzip stream, or longer than `max_bytes` once inflated (a gzip bomb stops there).
std::vector<uint8_t> read_file(const std::string& path, const char* format, uint64_t max_bytes);
std::vector<uint8_t> read_file(const std::string& path, const char* format);  // max_bytes: max_file_bytes()

// The first `n` bytes (fewer when the file is shorter), inflated when gzip-compressed.
std::vector<uint8_t> read_head(const std::string& path, const char* format, size_t n);

// The most bytes a dataset file may inflate to: DDL_DATA_MAX_BYTES when set (a positive
// integer), else 4 GiB. Throws ddl::Error when the variable is malformed.
uint64_t max_file_bytes();

bool file_exists(const std::string& path);

// Big-endian 32-bit unsigned integer at p (IDX headers).
inline uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace ddl::data::detail
