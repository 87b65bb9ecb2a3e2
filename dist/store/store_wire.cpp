// Encoding and checked decoding of TCPStore messages (see store_wire.h).
#include <cstring>

#include <ddl/dist/store/store_wire.h>

namespace ddl::dist::detail {

WireWriter& WireWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return *this;
}

WireWriter& WireWriter::i64(int64_t v) {
  auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  return *this;
}

WireWriter& WireWriter::str(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  buf_ += s;
  return *this;
}

std::string WireWriter::frame() const {
  WireWriter head;
  head.u32(static_cast<uint32_t>(buf_.size()));
  return head.buf_ + buf_;
}

void WireReader::need(size_t n) const {
  if (static_cast<size_t>(end_ - p_) < n)
    throw WireError("message truncated: needs " + std::to_string(n) + " more bytes, has " + std::to_string(end_ - p_));
}

uint8_t WireReader::u8() {
  need(1);
  return static_cast<uint8_t>(*p_++);
}

uint32_t WireReader::u32() {
  need(4);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
  p_ += 4;
  return v;
}

int64_t WireReader::i64() {
  need(8);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
  p_ += 8;
  return static_cast<int64_t>(v);
}

std::string WireReader::str(uint32_t max_bytes) {
  uint32_t n = u32();
  if (n > max_bytes)
    throw WireError("string of " + std::to_string(n) + " bytes exceeds the limit of " + std::to_string(max_bytes));
  need(n);
  std::string s(p_, n);
  p_ += n;
  return s;
}

void WireReader::finish() const {
  if (p_ != end_) throw WireError(std::to_string(end_ - p_) + " unexpected trailing bytes");
}

uint32_t decode_frame_length(const char header[4]) {
  WireReader r(header, 4);
  uint32_t n = r.u32();
  if (n == 0 || n > kMaxFrameBytes)
    throw WireError("frame length " + std::to_string(n) + " outside [1, " + std::to_string(kMaxFrameBytes) + "]");
  return n;
}

}  // namespace ddl::dist::detail
