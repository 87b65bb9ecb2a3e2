// The TCPStore wire protocol: every message is a frame `u32 length | body`, little-endian.
// Request bodies start with an opcode, replies with a status; strings are `u32 n | n bytes`.
// The reader checks every length against the bytes left and fixed limits, so a
// malformed or hostile message is rejected (WireError) instead of trusted.
// See docs/dist.md, "The store protocol", for the message table.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddl::dist::detail {

inline constexpr uint32_t kWireMagic = 0x53'4C'44'44;  // "DDLS"
inline constexpr uint32_t kWireVersion = 1;
inline constexpr uint32_t kMaxKeyBytes = 4096;
inline constexpr uint32_t kMaxValueBytes = 64u << 20;  // 64 MiB
inline constexpr uint32_t kMaxKeysPerRequest = 1 << 16;
inline constexpr uint32_t kMaxFrameBytes = kMaxValueBytes + 2 * kMaxKeyBytes + 64;
// HELLO: op, magic, version, token (a string no longer than a key), then optionally who
// ("rank 1 on host n2", for the server's refusal; at most kMaxWhoBytes). The only frame a
// server accepts before the token is checked.
inline constexpr uint32_t kMaxWhoBytes = 256;
inline constexpr uint32_t kMaxHelloBytes = 1 + 4 + 4 + 4 + kMaxKeyBytes + 4 + kMaxWhoBytes;

enum class Op : uint8_t { Hello = 1, Set = 2, Get = 3, Add = 4, Check = 5, Wait = 6 };
// Refused: the HELLO's job token did not match (the client says so, then gives up).
// PeerRefused: another rank of the job was refused, so this wait cannot end well.
enum class Status : uint8_t { Ok = 0, Timeout = 1, Error = 2, Refused = 3, PeerRefused = 4 };

struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class WireWriter {
 public:
  WireWriter& u8(uint8_t v) {
    buf_.push_back(static_cast<char>(v));
    return *this;
  }
  WireWriter& u32(uint32_t v);
  WireWriter& i64(int64_t v);
  WireWriter& str(const std::string& s);
  // The frame to send: length prefix + body.
  std::string frame() const;

 private:
  std::string buf_;
};

class WireReader {
 public:
  WireReader(const char* p, size_t n) : p_(p), end_(p + n) {}
  uint8_t u8();
  uint32_t u32();
  int64_t i64();
  std::string str(uint32_t max_bytes);
  // Throws unless every byte was consumed: trailing garbage is malformed too.
  void finish() const;
  bool at_end() const { return p_ == end_; }

 private:
  void need(size_t n) const;
  const char* p_;
  const char* end_;
};

// The body length in a frame header; throws WireError when it is 0 or over kMaxFrameBytes.
uint32_t decode_frame_length(const char header[4]);

}  // namespace ddl::dist::detail
