// libFuzzer target: what a rank receives while ranks agree on a resume (ft/
// resume_wire.h): 24 bytes of rank 0's transfer header (three int64: magic, size, piece),
// then another rank's record as the all-gather delivers it (cut at its first '\0'). The
// header is either refused with a ddl::Error or gives pieces that cover the size exactly,
// each within kPieceBytes; any record decodes, and decodes again to itself once encoded.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <ddl/base/error.h>
#include <ddl/ft/resume_wire.h>

using namespace ddl::ft::detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 24) return 0;
  int64_t words[kTransferWords];
  std::memcpy(words, data, sizeof words);
  try {
    const TransferHeader h = decode_header(words);
    const int64_t n = h.pieces();
    const bool covers = h.size <= 0 ? n == 0 : n >= 1 && (n - 1) * h.piece < h.size && h.size <= n * h.piece;
    if (!covers || h.piece > kPieceBytes) {
      std::fprintf(stderr, "header size %lld piece %lld gives %lld pieces\n", static_cast<long long>(h.size),
                   static_cast<long long>(h.piece), static_cast<long long>(n));
      std::abort();
    }
  } catch (const ddl::Error&) {
  }
  const char* rest = reinterpret_cast<const char*>(data) + 24;
  const std::string text(rest, strnlen(rest, size - 24));
  const ResumeRecord r = decode_record(text);
  const ResumeRecord again = decode_record(encode_record(r));
  if (!(again.kind == r.kind && again.path == r.path && again.where == r.where && again.detail == r.detail) ||
      (r.kind != 'N' && r.kind != 'S' && r.kind != 'E') || !again.same_state(r) || r.line().empty())
    std::abort();
  return 0;
}
