// What ranks exchange to agree on a resume (see Note [Resume agreement] in resume.cpp):
// the text record each rank all-gathers, and the header rank 0 broadcasts before its
// snapshot's bytes. Pure functions of bytes, so a fuzzer can reach them; they do no I/O.
#pragma once

#include <cstdint>
#include <string>

namespace ddl::ft::detail {

struct ResumeRecord {
  char kind = 'N';     // 'N' no snapshot, 'S' snapshot loaded, 'E' error
  std::string path;    // shown in messages, not compared
  std::string where;   // "epoch 1, step 8, global step 8" (epochs counted from 1, as printed elsewhere)
  std::string detail;  // seed, world size, RNG offset and digest; or the error
  bool same_state(const ResumeRecord& o) const { return kind == o.kind && where == o.where && detail == o.detail; }
  std::string line() const;
};

std::string encode_record(const ResumeRecord& r);
// Any bytes decode: an unknown kind becomes 'E' (so a garbled record stops every rank).
ResumeRecord decode_record(const std::string& s);

// Rank 0's snapshot goes in pieces of at most kPieceBytes, so no rank holds more than one
// piece of it in memory; kMaxSnapshotBytes bounds what a receiver agrees to write to disk.
inline constexpr int64_t kPieceBytes = int64_t{16} << 20;
inline constexpr int64_t kMaxSnapshotBytes = int64_t{1} << 40;
inline constexpr int64_t kTransferMagic = 0x64646c736e617031;  // "ddlsnap1"
inline constexpr int kTransferWords = 3;                       // magic, size, piece

struct TransferHeader {
  int64_t size = -1;  // the file's bytes; -1: rank 0 could not read its file
  int64_t piece = kPieceBytes;
  int64_t pieces() const { return size <= 0 ? 0 : (size + piece - 1) / piece; }
};

void encode_header(const TransferHeader& h, int64_t (&words)[kTransferWords]);
// Throws ddl::Error for a wrong magic, a size outside [-1, kMaxSnapshotBytes] or a piece
// outside [1, kPieceBytes].
TransferHeader decode_header(const int64_t (&words)[kTransferWords]);

}  // namespace ddl::ft::detail
